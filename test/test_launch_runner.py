# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The launch runner starts a standard launch file's nodes as processes and stops them cleanly."""

from __future__ import annotations

import os
import pathlib
import re
import signal
import sys

import pytest
from harness import REPO, make_ament_prefix, orphan_shm_segments, process_alive, shm_segments, wait_for

from lightomni_ros.launch_runner import runner, shim

LAUNCH = REPO / 'test' / 'launch' / 'two_nodes.launch.py'


@pytest.fixture
def prefix(tmp_path: pathlib.Path) -> str:
    """AMENT_PREFIX_PATH with the test package (talker, listener) in front of the venv."""
    root = make_ament_prefix(tmp_path / 'install', 'lightomni_test', {
        'talker': REPO / 'test' / 'nodes' / 'talker.py',
        'listener': REPO / 'test' / 'nodes' / 'listener.py',
    })
    return os.pathsep.join([str(root), os.environ.get('AMENT_PREFIX_PATH', sys.prefix)])


def start_launch(spawn, prefix: str, *args: str):
    """Run ``lightomni launch`` on the test file in a child process."""
    env = spawn.env(AMENT_PREFIX_PATH=prefix)
    return spawn.python('-m', 'lightomni_ros.cli', 'launch', str(LAUNCH), *args,
                        '--log-dir', str(spawn.tmp / 'logs'), name='launch', env=env)


def node_pids(output: str) -> dict[str, int]:
    """Pids the runner reported for its nodes."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r'started (\w+) \(pid (\d+)\)', output)}


def test_plan_resolves_parameters_remaps_and_lifecycle(prefix: str, tmp_path: pathlib.Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The description becomes command lines with names, namespace, params files, remaps and arguments."""
    monkeypatch.setenv('AMENT_PREFIX_PATH', prefix)
    nodes, _ = runner.plan(runner.load_description(LAUNCH), {'ns': 'robot', 'code': '4'}, tmp_path)
    talker, listener = nodes
    assert talker.fqn == '/robot/talker' and not talker.lifecycle
    assert listener.fqn == '/robot/listener' and listener.lifecycle and listener.autostart
    cmd = ' '.join(talker.cmd)
    assert '--code 4' in cmd and '-r __node:=talker' in cmd and '-r __ns:=/robot' in cmd and '-r chatter:=chat' in cmd
    params = pathlib.Path(talker.cmd[talker.cmd.index('--params-file') + 1]).read_text()
    assert 'greeting: launch' in params


def test_invalid_descriptions_are_rejected(prefix: str, tmp_path: pathlib.Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Unknown arguments, bad syntax and missing executables give a clear error (exit code 2)."""
    monkeypatch.setenv('AMENT_PREFIX_PATH', prefix)
    with pytest.raises(shim.LaunchError, match='unknown launch argument'):
        runner.plan(runner.load_description(LAUNCH), {'nope': '1'}, tmp_path)
    with pytest.raises(shim.LaunchError, match='name:=value'):
        runner.parse_launch_arguments(['ns=robot'])
    monkeypatch.setenv('AMENT_PREFIX_PATH', sys.prefix)
    with pytest.raises(shim.LaunchError, match="executable 'talker'"):
        runner.plan(runner.load_description(LAUNCH), {}, tmp_path)
    assert runner.launch(tmp_path / 'missing.launch.py', [], out=open(os.devnull, 'w')) == 2


def test_runs_two_nodes_and_stops_cleanly_on_ctrl_c(spawn, prefix: str) -> None:
    """Both nodes run (the lifecycle one is activated and hears the talker); SIGINT stops all with exit 0."""
    shm_before = shm_segments()
    child = start_launch(spawn, prefix)
    wait_for(lambda: '[listener]' in child.output and 'heard: hello' in child.output, 60,
             what='the activated listener hearing the talker')
    pids = node_pids(child.output)
    assert set(pids) == {'talker', 'listener'}
    assert '[talker]' in child.output and 'talker up as /demo/talker' in child.output
    os.kill(child.proc.pid, signal.SIGINT)  # Ctrl-C reaches the runner; it forwards it to each node's group
    assert child.proc.wait(30) == 0, child.output
    assert 'all nodes stopped' in child.output and 'escalating' not in child.output
    wait_for(lambda: not any(process_alive(p) for p in pids.values()), 5, what='node processes to be gone')
    logs = list((spawn.tmp / 'logs').glob('*.log'))
    assert {p.stem for p in logs} == {'talker', 'listener'}
    assert orphan_shm_segments(shm_before) == set()


def test_a_failing_node_stops_the_launch(spawn, prefix: str) -> None:
    """When one node exits non-zero, the others are stopped and the runner exits 1."""
    child = start_launch(spawn, prefix, 'exit_after:=3', 'code:=3')
    assert child.proc.wait(60) == 1, child.output
    assert 'talker exited with code 3' in child.output
    for pid in node_pids(child.output).values():
        assert not process_alive(pid)


def test_a_node_ignoring_sigint_is_escalated(spawn, prefix: str) -> None:
    """A node stuck past SIGINT gets SIGTERM, so the launch still ends without orphans."""
    child = start_launch(spawn, prefix, 'ignore_sigint:=true')
    wait_for(lambda: 'activated' in child.output, 60, what='the listener to activate')
    pids = node_pids(child.output)
    os.kill(child.proc.pid, signal.SIGTERM)
    child.proc.wait(40)
    assert 'escalating to SIGTERM' in child.output
    for pid in pids.values():
        assert not process_alive(pid)


#: a launcher that starts the talker in a session of its own, its output to a file (no pipe to break), marks it as
#: its own (``env.launched_here``) as the runner and the benchmarks do, then waits
_LAUNCHER = """
import os, subprocess, sys, time
from lightomni_ros.env import launched_here
proc = subprocess.Popen([sys.executable, sys.argv[1]], env=launched_here(dict(os.environ)),
                        stdout=open(sys.argv[2], 'wb'), stderr=subprocess.STDOUT, start_new_session=True)
print('node pid', proc.pid, flush=True)
time.sleep(600)
"""


def test_the_node_of_a_killed_launcher_stops_itself(spawn) -> None:
    """A launcher that dies without stopping its node (SIGKILL, a native fault) leaves none running."""
    log = spawn.tmp / 'talker.log'
    launcher = spawn.python('-c', _LAUNCHER, str(REPO / 'test' / 'nodes' / 'talker.py'), str(log), name='launcher')
    wait_for(lambda: 'node pid' in launcher.output and log.is_file() and 'talker up' in log.read_text(), 60,
             what='the talker to start')
    pid = int(re.search(r'node pid (\d+)', launcher.output).group(1))
    os.kill(launcher.proc.pid, signal.SIGKILL)     # the node, in a session of its own, gets no signal
    launcher.proc.wait(30)
    try:
        wait_for(lambda: not process_alive(pid), 60, what='the node to notice its launcher is gone and stop')
    finally:
        if process_alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert 'is gone: stopping' in log.read_text(), log.read_text()


def test_a_killed_node_leaves_no_shared_memory(spawn, prefix: str) -> None:
    """A node that ignores SIGINT and SIGTERM is killed; the runner removes the segments it could not release."""
    shm_before = shm_segments()
    child = start_launch(spawn, prefix, 'ignore_sigint:=all', '--sigint-timeout', '1', '--sigterm-timeout', '1')
    wait_for(lambda: 'heard: hello' in child.output, 60, what='the graph to run')
    pids = node_pids(child.output)
    os.kill(child.proc.pid, signal.SIGINT)
    assert child.proc.wait(40) == 1, 'a stop that needed SIGKILL is not a clean stop'
    assert 'escalating to SIGKILL' in child.output, child.output
    for pid in pids.values():
        assert not process_alive(pid)
    assert orphan_shm_segments(shm_before) == set()


RESPAWN = REPO / 'test' / 'launch' / 'respawn.launch.py'


def test_respawn_plan_follows_the_lifecycle_handlers(prefix: str, tmp_path: pathlib.Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The handlers (configure on process start, activate once inactive) become the node's start transitions."""
    monkeypatch.setenv('AMENT_PREFIX_PATH', prefix)
    talker, listener = runner.plan(runner.load_description(RESPAWN), {}, tmp_path)[0]
    assert talker.respawn and talker.respawn_delay == 0.5 and talker.transitions == []
    assert listener.respawn and listener.transitions == ['configure', 'activate'] and not listener.autostart
    nodes, _ = runner.plan(runner.load_description(RESPAWN), {'respawn': 'false'}, tmp_path)
    assert not nodes[1].respawn
    shipped = runner.plan(runner.load_description(REPO / 'launch' / 'lightomni.launch.py'),
                          {'respawn': 'true', 'respawn_delay': '3'}, tmp_path)[0]
    assert [(n.label, n.respawn, n.respawn_delay, n.transitions) for n in shipped] == [
        (label, True, 3.0, ['configure', 'activate']) for label in ('consolidation', 'perception', 'reflex')]


def test_killed_nodes_are_respawned_and_the_lifecycle_one_comes_back_active(spawn, prefix: str) -> None:
    """SIGKILL of each node: the runner starts it again; the listener is configured and activated anew."""
    env = spawn.env(AMENT_PREFIX_PATH=prefix)
    child = spawn.python('-m', 'lightomni_ros.cli', 'launch', str(RESPAWN), '--log-dir', str(spawn.tmp / 'logs'),
                         name='launch', env=env)
    wait_for(lambda: 'heard: hello' in child.output, 60, what='the graph to run')
    for label in ('listener', 'talker'):
        pid = node_pids(child.output)[label]
        os.killpg(pid, signal.SIGKILL)
        wait_for(lambda: re.search(rf'respawned \(start 2\) {label} \(pid (\d+)\)', child.output), 30,
                 what=f'{label} respawned')
    wait_for(lambda: child.output.count('activated') >= 2 and 'listener is back' in child.output, 60,
             what='the respawned listener active again')
    n_heard = child.output.count('heard: hello')
    wait_for(lambda: child.output.count('heard: hello') > n_heard, 30, what='the graph working again')
    os.kill(child.proc.pid, signal.SIGINT)
    child.proc.wait(30)
    assert 'all nodes stopped' in child.output
