# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The Fast DDS transport profile every process of the graph uses by default (``config/fastdds.xml``).

Fast DDS reads its profile from the environment when a participant is created, so this runs before ``rclpy.init``:
in every node's entry point, the ``lightomni`` CLI (its children inherit it) and the media feeder. A profile or
transport choice already in the environment is left alone.
"""

from __future__ import annotations

import os
import pathlib
from typing import MutableMapping

PROFILE_NAME = 'fastdds.xml'
PROFILE_ENV = 'FASTDDS_DEFAULT_PROFILES_FILE'
#: Any of these set means the user chose the transports.
USER_ENV = (PROFILE_ENV, 'FASTRTPS_DEFAULT_PROFILES_FILE', 'FASTDDS_BUILTIN_TRANSPORTS')


def profile_path() -> pathlib.Path | None:
    """The shipped profile: next to the sources, else in an installed ``share/lightomni_ros/config``."""
    candidates = [pathlib.Path(__file__).resolve().parents[1] / 'config' / PROFILE_NAME]
    for prefix in filter(None, os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)):
        candidates.append(pathlib.Path(prefix) / 'share' / 'lightomni_ros' / 'config' / PROFILE_NAME)
    return next((p for p in candidates if p.is_file()), None)


def apply_defaults(env: MutableMapping[str, str] | None = None) -> str | None:
    """Point ``env`` (default: this process) at the shipped profile unless the user chose; return the path set."""
    env = os.environ if env is None else env
    if any(env.get(k) for k in USER_ENV):
        return None
    path = profile_path()
    if path is None:
        return None
    env[PROFILE_ENV] = str(path)
    return str(path)
