# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni doctor``: passes on this install, and names an actionable problem in each broken set-up.

Each run is the real entry point in a child process, started from a temporary folder with no AMENT_PREFIX_PATH and
no DDS profile in its environment (it must find both itself).
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import yaml

from harness import REPO, ros_only_python, wait_for

from lightomni_ros.launch_runner.lifecycle import LifecycleClient

LIGHTOMNI = pathlib.Path(sys.executable).parent / 'lightomni'
USER_DDS = ('AMENT_PREFIX_PATH', 'FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE',
            'FASTDDS_BUILTIN_TRANSPORTS')


def bare_env(env: dict[str, str], **extra: str) -> dict[str, str]:
    """``env`` without the ament index and DDS choices (what a fresh shell has), plus ``extra``."""
    out = {k: v for k, v in env.items() if k not in USER_DDS}
    out.update(extra)
    return out


def doctor(cwd: pathlib.Path, env: dict[str, str], *args: str, python: list[str] | None = None) -> tuple[int, dict]:
    """Run ``lightomni doctor --json ARGS`` in ``cwd``; return the exit code and the parsed report."""
    cmd = (python + ['-m', 'lightomni_ros.cli'] if python else [str(LIGHTOMNI)]) + ['doctor', '--json', *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip().startswith('{'), proc.stdout + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def by_name(report: dict) -> dict[str, dict]:
    """Checks keyed by name."""
    return {c['name']: c for c in report['checks']}


def test_doctor_passes_on_this_install(spawn, tmp_path: pathlib.Path) -> None:
    """Exit 0, every area reported, nothing an error; the install is found without any environment variable."""
    code, report = doctor(tmp_path, bare_env(spawn.env()), '--discovery-s', '1')
    checks = by_name(report)
    assert code == 0 and report['ok'], [c for c in report['checks'] if c['status'] == 'error']
    assert {'ament index', 'interfaces', 'dds profile', 'model backbone_text', 'model asr', 'trained weights',
            'gpu / torch', 'onnx runtime / tensorrt', 'memory folder', 'disk (memory)', 'clock', 'time zone',
            'graph'} <= set(checks)
    assert 'added it to AMENT_PREFIX_PATH' in checks['ament index']['detail']
    assert 'the shipped profile' in checks['dds profile']['detail'] and checks['dds profile']['status'] == 'ok'
    assert 'no lightomni node running' in checks['graph']['detail']
    for c in report['checks']:
        assert c['status'] in ('ok', 'warn', 'error') and c['detail']
        assert c['status'] == 'ok' or c['fix'], c


def test_missing_interfaces_are_named_with_a_fix(spawn, tmp_path: pathlib.Path) -> None:
    """No generated interfaces and no ament entry: two errors that say to run make setup; exit 1.

    What a user has when the interface build of ``make setup`` did not run: ROS and the package's sources, no msg/srv.
    """
    python, extra = ros_only_python(tmp_path)
    env = bare_env(spawn.env(), PYTHONPATH=str(REPO), **extra)
    code, report = doctor(tmp_path, env, '--no-graph', python=python)
    checks = by_name(report)
    assert code == 1 and not report['ok']
    assert checks['interfaces']['status'] == 'error' and 'lightomni_ros.msg' in checks['interfaces']['detail']
    assert checks['ament index']['status'] == 'error'
    assert 'make setup' in checks['interfaces']['fix'] and 'colcon build' in checks['ament index']['fix']


def test_a_dds_profile_with_small_segments_is_named(spawn, tmp_path: pathlib.Path) -> None:
    """A user profile with Fast DDS's 512 KB segments: a 1280x720 frame does not fit; the fix names the size."""
    text = (REPO / 'config' / 'fastdds.xml').read_text().replace('<segment_size>4194304', '<segment_size>524288')
    profile = tmp_path / 'small.xml'
    profile.write_text(text)
    code, report = doctor(tmp_path, bare_env(spawn.env(), FASTDDS_DEFAULT_PROFILES_FILE=str(profile)), '--no-graph')
    dds = by_name(report)['dds profile']
    assert dds['status'] == 'warn' and 'does not fit' in dds['detail'] and str(profile) in dds['detail']
    assert 'segment_size >= 3145728' in dds['fix']
    assert code == 0   # degraded camera delivery, not a broken install
    code, report = doctor(tmp_path, bare_env(spawn.env(), FASTDDS_BUILTIN_TRANSPORTS='LARGE_DATA'), '--no-graph',
                          '--frame', '640x480')
    assert by_name(report)['dds profile']['status'] == 'warn'


def test_an_unusable_memory_folder_is_an_error(spawn, tmp_path: pathlib.Path) -> None:
    """A memory_dir below a regular file is an error naming the file, with the config key to fix.

    It cannot be created or written even by root: tests run as root, who passes every permission-bit check, so a
    chmod-ed folder would not fail. The path comes from the consolidation config, as on a robot.
    """
    blocker = tmp_path / 'not_a_folder'
    blocker.write_text('a file where a folder should be')
    config = tmp_path / 'config'
    shutil.copytree(REPO / 'config', config)
    data = yaml.safe_load((config / 'consolidation.yaml').read_text())
    data['/**']['ros__parameters']['memory']['memory_dir'] = str(blocker / 'memory')
    (config / 'consolidation.yaml').write_text(yaml.safe_dump(data))
    code, report = doctor(tmp_path, bare_env(spawn.env()), '--no-graph', '--config-dir', str(config))
    memory = by_name(report)['memory folder']
    assert code == 1 and memory['status'] == 'error'
    assert str(blocker) in memory['detail'] and 'regular file' in memory['detail']
    assert 'memory_dir' in memory['fix']


def test_graph_check_lists_nodes_and_their_states(spawn, tmp_path: pathlib.Path) -> None:
    """A graph launched without autostart: all three nodes found, unconfigured, with the fix to activate them."""
    env = bare_env(spawn.env())
    graph = spawn.start([str(LIGHTOMNI), 'launch', 'lightomni.launch.py', 'autostart:=false'], name='graph', env=env)
    with LifecycleClient() as client:   # the nodes are up when all three answer get_state
        for node in ('perception', 'reflex', 'consolidation'):
            wait_for(lambda: client.get_state(f'/lightomni/{node}', timeout=5.0), 180.0, what=f'{node} get_state')
    code, report = doctor(tmp_path, env, '--discovery-s', '120')
    graph_check = by_name(report)['graph']
    assert graph_check['status'] == 'warn', graph_check
    for node in ('perception', 'reflex', 'consolidation'):
        assert f'/lightomni/{node} unconfigured' in graph_check['detail']
    assert 'autostart:=true' in graph_check['fix']
    assert graph.stop() == 0
