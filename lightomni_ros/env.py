# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The process environment every entry point prepares before ROS starts: the ament index, then the DDS profile.

The ament index (``AMENT_PREFIX_PATH``) is how ROS tools find a package's share folder (launch files, parameter
files, message definitions). ``make setup`` installs ours into the venv (``sys.prefix``) and colcon into its install
prefix, but nothing puts that prefix on the variable unless a setup script is sourced. So each entry point
(``lightomni``, the node executables, the media feeder) adds the prefix it was installed into, when the variable
does not already lead to this package; children (launched nodes, players) inherit it. Nothing needs sourcing.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import sys
from typing import MutableMapping

from . import dds

PACKAGE = 'lightomni_ros'
AMENT_ENV = 'AMENT_PREFIX_PATH'
OMP_POLICY_ENV = 'OMP_WAIT_POLICY'
#: Any of these set means the user chose how idle OpenMP threads wait (GNU's and Intel's runtimes).
OMP_USER_ENV = (OMP_POLICY_ENV, 'GOMP_SPINCOUNT', 'KMP_BLOCKTIME')
#: the launcher's pid, set by our launchers (the launch runner, the benchmarks) for the nodes they start, each in a
#: session of its own so that a terminal's Ctrl-C reaches the launcher only: a node stops once that process is gone,
#: so a launcher that crashed (a native fault) leaves no node behind to answer in its ROS domain
PARENT_ENV = 'LIGHTOMNI_PARENT_PID'


def launched_here(env: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """``env`` for a node this process starts and owns (it stops when this process is gone)."""
    env[PARENT_ENV] = str(os.getpid())
    return env


@dataclasses.dataclass
class Prepared:
    """What :func:`prepare` found and changed (``lightomni doctor`` reports it)."""

    ament_before: str = ''              # AMENT_PREFIX_PATH as the process got it
    ament_added: str = ''               # the prefix put in front of it ('' when none was needed or none was found)
    dds_profile: str = ''               # the shipped profile set as the default ('' when the user chose or none)


#: the first :func:`prepare` of this process's own environment (None before it ran)
FIRST: Prepared | None = None


def registered(prefix: pathlib.Path, package: str = PACKAGE) -> bool:
    """Whether ``prefix`` holds ``package`` in its ament resource index."""
    return (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / package).is_file()


def own_prefixes() -> list[pathlib.Path]:
    """Install prefixes that hold this package's ament index entry, most specific first.

    The interpreter's prefix (the venv ``make setup`` built the interfaces into), then every folder above each part
    of this package (``<prefix>/lib/python3.X/site-packages/lightomni_ros`` in a colcon install, merged or isolated).
    """
    import lightomni_ros

    found: list[pathlib.Path] = []
    starts = [pathlib.Path(sys.prefix)] + [pathlib.Path(p) for p in lightomni_ros.__path__]
    for start in starts:
        for candidate in (start, *start.parents):
            if candidate not in found and registered(candidate):
                found.append(candidate)
                break
    return found


def ament_prefixes(env: MutableMapping[str, str] | None = None) -> list[pathlib.Path]:
    """The prefixes on ``AMENT_PREFIX_PATH`` of ``env`` (default: this process), in order."""
    env = os.environ if env is None else env
    return [pathlib.Path(p) for p in env.get(AMENT_ENV, '').split(os.pathsep) if p]


def ensure_ament_prefix(env: MutableMapping[str, str] | None = None) -> str:
    """Put this package's install prefix in front of ``AMENT_PREFIX_PATH`` unless a prefix there already has it.

    A prefix already listed that holds the package is the user's choice (an overlay) and is left alone. Returns the
    prefix added, or ''.
    """
    env = os.environ if env is None else env
    if any(registered(p) for p in ament_prefixes(env)):
        return ''
    own = own_prefixes()
    if not own:
        return ''
    current = env.get(AMENT_ENV, '')
    env[AMENT_ENV] = str(own[0]) + (os.pathsep + current if current else '')
    return str(own[0])


def prepare(env: MutableMapping[str, str] | None = None) -> Prepared:
    """Prepare ``env`` (default: this process, before rclpy starts): ament index first, then the DDS profile.

    The order matters: an installed package without its sources finds ``fastdds.xml`` through the ament index.
    """
    target = os.environ if env is None else env
    before = target.get(AMENT_ENV, '')
    added = ensure_ament_prefix(target)
    profile = dds.apply_defaults(target) or ''
    result = Prepared(ament_before=before, ament_added=added, dds_profile=profile)
    if env is None:
        global FIRST
        FIRST = FIRST or result
    return result


def passive_openmp(env: MutableMapping[str, str] | None = None) -> str:
    """Let idle OpenMP threads sleep instead of spinning, unless the user chose; return the policy set ('' if none).

    The graph's processes share the robot's cores. torch and CTranslate2 (GNU OpenMP both) keep their worker threads
    spinning for a while after each parallel region, so on a small CPU a node between two layers takes the cores
    another node is decoding on (docs/GRAPH.md has the figures: about twice as fast beside a speech recogniser, a
    little slower alone). Processes that import ``lightomni_ros.nodes`` do this (the nodes, and the verbs that talk
    to a graph); training and the offline tools run alone and keep the default. The runtimes read the variable once,
    when they load: it must be set before torch or CTranslate2 is imported.
    """
    env = os.environ if env is None else env
    if any(env.get(k) for k in OMP_USER_ENV):
        return ''
    env[OMP_POLICY_ENV] = 'PASSIVE'
    return 'PASSIVE'
