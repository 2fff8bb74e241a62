# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: a ROS domain per test, an own rclpy context, child processes with group teardown."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from harness import RosTestNode, Spawner, next_domain_id  # noqa: E402

from lightomni_ros.dds import PROFILE_ENV, profile_path  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--encrypted-memory``: every memory store the tests open is SQLCipher-encrypted (docs/PRIVACY.md)."""
    parser.addoption('--encrypted-memory', action='store_true',
                     help='run with LIGHTOMNI_MEMORY_KEY set, so memory.db is encrypted (privacy.encryption: auto)')


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
