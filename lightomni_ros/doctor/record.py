# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""What a doctor check returns, and what every check may read (the options of one run)."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

OK, WARN, ERROR = 'ok', 'warn', 'error'


@dataclasses.dataclass
class Check:
    """One finding: ``status`` is ok, warn or error; ``fix`` says what to do when it is not ok."""

    name: str
    status: str
    detail: str
    fix: str = ''

    def __post_init__(self) -> None:
        if self.status not in (OK, WARN, ERROR):
            raise ValueError(f'status must be ok, warn or error, not {self.status!r}')
        if self.status != OK and not self.fix:
            raise ValueError(f'check {self.name!r}: a {self.status} needs a fix')


@dataclasses.dataclass
class Context:
    """The options of one doctor run, and what one check found that a later one needs."""

    config_dir: pathlib.Path | None = None     # None: the installed package's config folder
    memory_dir: str = ''                       # '' : memory.memory_dir of consolidation.yaml
    models_dir: str = ''                       # '' : models.models_dir of the configs, then $LIGHTOMNI_MODELS_DIR
    frame: tuple[int, int] = (1280, 720)       # the largest camera frame (rgb8) the DDS check expects
    hash_models: bool = True                   # sha256 of the weights (cached by size and mtime)
    discovery_s: float = 2.0                   # how long the graph check listens for nodes
    graph: bool = True                         # look for a running graph at all
    found: dict[str, Any] = dataclasses.field(default_factory=dict)

    def config_folder(self) -> pathlib.Path | None:
        """The node configs in force: ``--config-dir``, else ``share/lightomni_ros/config`` (None when not found)."""
        if self.config_dir is not None:
            return self.config_dir
        from lightomni_ros.launch_runner import shim

        try:
            return shim.package_share('lightomni_ros') / 'config'
        except shim.LaunchError:
            return None

    def params(self, node: str) -> dict[str, Any]:
        """The ``ros__parameters`` of ``<config>/<node>.yaml`` (nested by section; {} when absent or unreadable)."""
        import yaml

        folder = self.config_folder()
        path = folder / f'{node}.yaml' if folder is not None else None
        if path is None or not path.is_file():
            return {}
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError):
            return {}
        for value in data.values() if isinstance(data, dict) else ():
            if isinstance(value, dict) and isinstance(value.get('ros__parameters'), dict):
                return value['ros__parameters']
        return {}
