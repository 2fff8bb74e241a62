# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: a ROS domain per test, an own rclpy context, child processes with group teardown.

``--cpu-load N`` (or ``LIGHTOMNI_TEST_CPU_LOAD=N``) runs the whole session with N CPU-bound processes beside it,
started here and stopped at the end: how CI shares its cores with other jobs (docs/CONTRIBUTING.md).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from harness import RosTestNode, Spawner, next_domain_id  # noqa: E402

from lightomni_ros.dds import PROFILE_ENV, profile_path  # noqa: E402
from lightomni_ros.env import prepare  # noqa: E402

prepare()   # the venv's ament index, as every entry point does: nothing needs exporting to run a test file

#: one busy process: float matrix work on one core until pytest (its parent) is gone
BUSY = '''
import os, sys
import numpy as np
parent = int(sys.argv[1])
a = np.random.default_rng(0).random((256, 256))
while os.getppid() == parent:
    for _ in range(20):
        a = np.tanh(a @ a)
'''
_busy: list[subprocess.Popen] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add --cpu-load and --encrypted-memory."""
    parser.addoption('--cpu-load', type=int, default=int(os.environ.get('LIGHTOMNI_TEST_CPU_LOAD') or 0),
                     metavar='N', help='run the session with N CPU-bound processes beside it (default: '
                                       '$LIGHTOMNI_TEST_CPU_LOAD or 0)')
    # every memory store the tests open is SQLCipher-encrypted (docs/PRIVACY.md)
    parser.addoption('--encrypted-memory', action='store_true',
                     help='run with LIGHTOMNI_MEMORY_KEY set, so memory.db is encrypted (privacy.encryption: auto)')


def pytest_configure(config: pytest.Config) -> None:
    """Start the busy processes before anything else runs."""
    n = max(0, config.getoption('--cpu-load'))
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    _busy.extend(subprocess.Popen([sys.executable, '-c', BUSY, str(os.getpid())], env=env,
                                  stdin=subprocess.DEVNULL) for _ in range(n))


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say that the session runs under load (and which processes make it)."""
    if _busy:
        return f'cpu load: {len(_busy)} busy process(es) beside the suite (pids {[p.pid for p in _busy]})'
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the busy processes."""
    for proc in _busy:
        proc.kill()
    for proc in _busy:
        proc.wait(timeout=10)
    _busy.clear()


@pytest.fixture(autouse=True, scope='session')
def _encrypted_memory(request: pytest.FixtureRequest):
    """Set the memory key for this process and the nodes it starts when ``--encrypted-memory`` is given."""
    if not request.config.getoption('--encrypted-memory'):
        yield
        return
    os.environ['LIGHTOMNI_MEMORY_KEY'] = 'lightomni test key'
    try:
        yield
    finally:
        os.environ.pop('LIGHTOMNI_MEMORY_KEY', None)


@pytest.fixture
def domain_id(monkeypatch: pytest.MonkeyPatch) -> int:
    """A fresh ROS_DOMAIN_ID, also set in this process's environment (for in-process nodes)."""
    did = next_domain_id()
    monkeypatch.setenv('ROS_DOMAIN_ID', str(did))
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    if path := profile_path():
        monkeypatch.setenv(PROFILE_ENV, str(path))
    return did


@pytest.fixture
def ros(domain_id: int):
    """An rclpy node on its own context in the test's domain, spun in the background."""
    node = RosTestNode(domain_id, name=f'test_{os.getpid()}')
    yield node
    node.close()


@pytest.fixture
def spawn(domain_id: int, tmp_path: pathlib.Path):
    """Start child processes in the test's domain; all are stopped (INT -> TERM -> KILL) at teardown."""
    spawner = Spawner(domain_id, tmp_path)
    yield spawner
    spawner.close()
