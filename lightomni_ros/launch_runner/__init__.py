# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Run a standard ROS 2 ``*.launch.py`` file where the ``launch``/``launch_ros`` packages are not installed.

The PyPI ROS wheels carry no ``launch``, ``launch_ros`` or ``ros2cli``. :mod:`.shim` provides the subset of their
classes that the project's launch files use (with the same names and semantics), and :mod:`.runner` starts each node
as its own process with its parameters and remaps, drives lifecycle nodes to active when asked, prefixes and keeps
their output, and stops the whole graph cleanly. On a robot the same launch files run under ``ros2 launch``.
"""
