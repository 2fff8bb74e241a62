# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Lets an installed executable start when its workspace's setup script was not sourced.

A colcon install puts the executables in ``<prefix>/lib/lightomni_ros/`` (this file beside them), the Python package
in ``<prefix>/lib/python3.X/site-packages`` and the generated interface libraries in ``<prefix>/lib``. When
``lightomni_ros`` does not import, :func:`ensure` runs the program again, once, with that prefix on PYTHONPATH,
LD_LIBRARY_PATH (read by the loader at start, hence the new process) and AMENT_PREFIX_PATH, as
``install/setup.bash`` would have set them. ROS itself (rclpy) must still come from the sourced ROS 2 install.
"""

import importlib.util
import os
import pathlib
import sys

GUARD = '_LIGHTOMNI_PREFIX_REEXEC'


def ensure() -> None:
    """Re-execute with this install's paths when ``lightomni_ros`` is not importable; otherwise do nothing."""
    if importlib.util.find_spec('lightomni_ros') is not None or os.environ.get(GUARD):
        return
    prefix = pathlib.Path(__file__).resolve().parents[2]
    sites = [p for pattern in ('lib/python3*/site-packages', 'lib/python3*/dist-packages',
                               'local/lib/python3*/dist-packages') for p in sorted(prefix.glob(pattern))
             if (p / 'lightomni_ros').is_dir()]
    if not sites:
        return
    env = dict(os.environ)
    for key, value in (('PYTHONPATH', sites[0]), ('LD_LIBRARY_PATH', prefix / 'lib'), ('AMENT_PREFIX_PATH', prefix)):
        env[key] = str(value) + (os.pathsep + env[key] if env.get(key) else '')
    env[GUARD] = '1'
    os.execve(sys.executable, [sys.executable, *sys.argv], env)
