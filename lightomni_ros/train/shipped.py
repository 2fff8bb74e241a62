# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Where the weights trained by this project are shipped, and their checksums (``models/SHA256SUMS``)."""

from __future__ import annotations

import hashlib
import pathlib

from lightomni_ros.core.models import ROLES, holds_trained_set

#: files written by training, relative to the models folder
SHIPPED = ('reflex_heads.safetensors', 'adapters/reaction/adapter_config.json',
           'adapters/reaction/adapter_model.safetensors', 'adapters/memory/adapter_config.json',
           'adapters/memory/adapter_model.safetensors', 'adapters/generation/adapter_config.json',
           'adapters/generation/adapter_model.safetensors', 'TRAINING.json')


def shipped_models_dir(pack: str = '') -> pathlib.Path:
    """``models/`` of the source checkout, else ``share/lightomni_ros/models`` of the installed package.

    A ``pack`` other than the default text backbone's has its own set in ``models/<pack>/`` (weights trained on one
    backbone never serve another; the reflex engine looks there when that pack is loaded).
    """
    base = _models_root()
    return base / pack if pack and pack != ROLES['backbone_text'].packs[0] else base


def shipped_sets() -> list[pathlib.Path]:
    """Every shipped set of trained weights: ``models/`` and each ``models/<pack>/`` the reflex engine would load.

    A set is recognised by :func:`~lightomni_ros.core.models.holds_trained_set`, the rule the reflex engine picks
    sets by, so the doctor checks exactly the sets the node may use.
    """
    base = _models_root()
    return [base] + sorted(d for d in base.iterdir() if holds_trained_set(d)) if base.is_dir() else [base]


def _models_root() -> pathlib.Path:
    here = pathlib.Path(__file__).resolve().parents[2] / 'models'
    if here.is_dir():
        return here
    try:
        from ament_index_python.packages import get_package_share_directory
        return pathlib.Path(get_package_share_directory('lightomni_ros')) / 'models'
    except Exception:  # noqa: BLE001 - no ament index: fall back to the checkout path (may not exist)
        return here


def sha256(path: str | pathlib.Path) -> str:
    """Hex digest of a file."""
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def write_sums(models_dir: str | pathlib.Path, files: tuple[str, ...] = SHIPPED) -> pathlib.Path:
    """Write ``SHA256SUMS`` (``sha256sum -c`` format) for the shipped files that exist."""
    d = pathlib.Path(models_dir)
    lines = [f'{sha256(d / f)}  {f}\n' for f in files if (d / f).is_file()]
    (d / 'SHA256SUMS').write_text(''.join(lines))
    return d / 'SHA256SUMS'


def check_sums(models_dir: str | pathlib.Path) -> dict[str, bool]:
    """File -> whether its checksum matches ``SHA256SUMS``."""
    d = pathlib.Path(models_dir)
    out = {}
    for line in (d / 'SHA256SUMS').read_text().splitlines():
        digest, name = line.split(None, 1)
        name = name.strip()
        out[name] = (d / name).is_file() and sha256(d / name) == digest
    return out
