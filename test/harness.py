# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Multi-process ROS test harness (no launch_testing needed).

Each test gets its own ROS_DOMAIN_ID (localhost discovery only, the shipped Fast DDS profile), its own rclpy
Context, and child processes started in their own process groups, torn down with SIGINT -> SIGTERM -> SIGKILL.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import random
import signal
import subprocess
import sys
import time
from typing import Any, Callable, Iterable


from lightomni_ros.dds import apply_defaults as apply_dds_defaults
from lightomni_ros.launch_runner import shm
from lightomni_ros.nodes.common import BackgroundNode
from lightomni_ros.nodes.process import process_alive  # noqa: F401 - the tests check processes with it

REPO = pathlib.Path(__file__).resolve().parents[1]
_counter = itertools.count()
# Two test runs on one machine must not share domains: start at a random offset, then step.
_base = random.Random(os.getpid() ^ time.time_ns()).randrange(0, 100)


def next_domain_id() -> int:
    """A domain id in 1..100 that this run has not used yet (wraps after 100 tests)."""
    return 1 + (_base + next(_counter)) % 100


def ros_env(domain_id: int, **extra: str) -> dict[str, str]:
    """Environment for a child process on ``domain_id``."""
    env = dict(os.environ)
    env.update({
        'ROS_DOMAIN_ID': str(domain_id),
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
        'PYTHONUNBUFFERED': '1',
        'RCUTILS_COLORIZED_OUTPUT': '0',
        'AMENT_PREFIX_PATH': os.environ.get('AMENT_PREFIX_PATH', str(pathlib.Path(sys.prefix))),
    })
    apply_dds_defaults(env)
    env.update(extra)
    return env


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05,
             what: str = 'condition') -> Any:
    """Poll ``predicate`` until it returns something truthy; raise AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {timeout:g} s waiting for {what}')
        time.sleep(interval)


class RosTestNode(BackgroundNode):
    """The test's rclpy node on its own Context and domain, spun by a background executor thread."""

    def __init__(self, domain_id: int, name: str = 'test_harness') -> None:
        super().__init__(name, domain_id=domain_id)

    def collect(self, msg_type: Any, topic: str, qos: Any = 10) -> list:
        """Subscribe and return the list that received messages are appended to."""
        got: list = []
        self.node.create_subscription(msg_type, topic, got.append, qos)
        return got

    def call(self, srv_type: Any, name: str, request: Any, timeout: float = 15.0) -> Any:
        """Call a service and return its response (AssertionError on time-out)."""
        client = self.node.create_client(srv_type, name)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                raise AssertionError(f'service {name} not available after {timeout:g} s')
            future = client.call_async(request)
            wait_for(future.done, timeout, what=f'response from {name}')
            return future.result()
        finally:
            self.node.destroy_client(client)


class Child:
    """A child process in its own process group, with its output kept in a file."""

    def __init__(self, cmd: list[str], env: dict[str, str], log_path: pathlib.Path, cwd: str | None = None) -> None:
        self.cmd = cmd
        self.log_path = log_path
        self._log = log_path.open('wb')
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT, cwd=cwd,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    @property
    def output(self) -> str:
        """Everything the child printed so far."""
        self._log.flush()
        return self.log_path.read_text(errors='replace')

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the child's process group."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self, timeouts: Iterable[float] = (10.0, 5.0)) -> int:
        """SIGINT, then SIGTERM, then SIGKILL (process group); return the exit code."""
        t_int, t_term = list(timeouts)
        for sig, timeout in ((signal.SIGINT, t_int), (signal.SIGTERM, t_term), (signal.SIGKILL, 5.0)):
            if self.proc.poll() is not None:
                break
            self.signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                continue
        self.signal(signal.SIGKILL)  # anything the child left behind in its group
        self._log.close()
        return self.proc.returncode


class Spawner:
    """Starts children for one test and tears all of them down at the end."""

    def __init__(self, domain_id: int, tmp: pathlib.Path) -> None:
        self.domain_id = domain_id
        self.tmp = tmp
        self.children: list[Child] = []

    def env(self, **extra: str) -> dict[str, str]:
        """The test's child environment."""
        return ros_env(self.domain_id, **extra)

    def python(self, *args: str, name: str = 'child', env: dict[str, str] | None = None) -> Child:
        """Start ``python <args>`` with the test's environment."""
        return self.start([sys.executable, *args], name=name, env=env)

    def start(self, cmd: list[str], name: str = 'child', env: dict[str, str] | None = None,
              cwd: str | pathlib.Path | None = None) -> Child:
        """Start any command with the test's environment (in the checkout unless ``cwd`` is given)."""
        child = Child(cmd, env or self.env(), self.tmp / f'{name}-{len(self.children)}.log', cwd=str(cwd or REPO))
        self.children.append(child)
        return child

    def close(self) -> None:
        """Stop every child still running."""
        for child in self.children:
            if child.proc.poll() is None or not child._log.closed:
                child.stop()


def shm_segments() -> set[str]:
    """Names of Fast DDS shared-memory files in /dev/shm."""
    return shm.segments()


def orphan_shm_segments(before: set[str]) -> set[str]:
    """Fast DDS segments created since ``before`` that no live process holds (left behind by a dead one)."""
    return shm.orphans(before)


def make_ament_prefix(root: pathlib.Path, package: str, executables: dict[str, pathlib.Path]) -> pathlib.Path:
    """An install prefix holding ``package`` with Python scripts as executables, the way ``ros2 run`` finds them."""
    (root / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True, exist_ok=True)
    (root / 'share' / 'ament_index' / 'resource_index' / 'packages' / package).write_text('')
    lib = root / 'lib' / package
    lib.mkdir(parents=True, exist_ok=True)
    for name, script in executables.items():
        exe = lib / name
        exe.write_text(f'#!/usr/bin/env python3\nimport runpy\nrunpy.run_path({str(script)!r}, run_name="__main__")\n')
        exe.chmod(0o755)
    return root


def ros_only_python(root: pathlib.Path) -> tuple[list[str], dict[str, str]]:
    """A Python that has ROS 2 and every dependency but not this package: a robot's sourced ROS install.

    A venv of the base interpreter whose site-packages lists the dev venv's packages except ``lightomni_ros`` (the
    generated interfaces; the editable install's path file is left out too), and a library folder with the dev
    venv's ROS libraries except this package's. Returns the command and the environment to add (what the wheels'
    bootstrap would have set, without its re-exec).
    """
    site = pathlib.Path(next(p for p in sys.path if p.endswith('site-packages')))
    subprocess.run([sys._base_executable, '-m', 'venv', '--without-pip', str(root / 'venv')], check=True, timeout=120)
    view, libs = root / 'site', root / 'lib'
    view.mkdir()
    libs.mkdir()
    for entry in site.iterdir():
        if entry.name == 'lightomni_ros' or entry.suffix == '.pth' or \
                entry.name.startswith(('__editable__', 'lightomni_ros-')):
            continue
        (view / entry.name).symlink_to(entry)
    for entry in (pathlib.Path(sys.prefix) / 'lib').iterdir():
        if not entry.name.startswith(('liblightomni_ros', 'python')):
            (libs / entry.name).symlink_to(entry)
    (root / 'venv' / 'lib' / site.parent.name / 'site-packages' / 'ros.pth').write_text(f'{view}\n')
    lib_path = os.pathsep.join([str(libs)] + [str(p) for p in sorted(site.glob('ros_*.libs'))])
    return [str(root / 'venv' / 'bin' / 'python')], {'LD_LIBRARY_PATH': lib_path, '_ROS_WHEELS_BOOTSTRAP_COMPLETE': '1'}
