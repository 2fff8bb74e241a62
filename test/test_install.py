# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Entry points find their own install: nothing sourced, no environment variable, any working folder.

The venv's console scripts are covered by test_doctor.py and test_docs.py (they run from temporary folders). Here:
the executables of a colcon-style install (``<prefix>/lib/lightomni_ros/*``, what CMakeLists.txt installs with
LIGHTOMNI_INSTALL_PYTHON=ON) started by a ROS-only Python (a robot's sourced ROS 2) without ``install/setup.bash``.
The install is laid out from the checkout's files and links into the dev venv's build (the same files at the paths a
real CMake install gives; a CMake build takes minutes and was checked by hand), so what is tested is how the
executables find it.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

from harness import REPO, ros_only_python, wait_for

from lightomni_ros.launch_runner.lifecycle import LifecycleClient

EXECUTABLES = ('lightomni', 'perception_node', 'reflex_node', 'consolidation_node')


def colcon_install(prefix: pathlib.Path) -> pathlib.Path:
    """Lay out a colcon install prefix of this package (sources copied, built parts linked); return it."""
    venv = pathlib.Path(sys.prefix)
    site = pathlib.Path(next(p for p in sys.path if p.endswith('site-packages')))
    exe = prefix / 'lib' / 'lightomni_ros'
    exe.mkdir(parents=True)
    for name in EXECUTABLES + ('lightomni_prefix.py',):
        shutil.copy2(REPO / 'scripts' / name, exe / name)
    pkg = prefix / 'lib' / site.parent.name / 'site-packages' / 'lightomni_ros'
    # the sources copied (a link would lead back into the checkout), the generated msg/srv beside them
    shutil.copytree(REPO / 'lightomni_ros', pkg, ignore=shutil.ignore_patterns('__pycache__'))
    for entry in (site / 'lightomni_ros').iterdir():
        if entry.name != '__pycache__' and not (pkg / entry.name).exists():
            (pkg / entry.name).symlink_to(entry)
    for lib in (venv / 'lib').glob('liblightomni_ros__*.so'):
        (prefix / 'lib' / lib.name).symlink_to(lib)
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / 'lightomni_ros').write_text('')
    (prefix / 'share' / 'lightomni_ros').symlink_to(venv / 'share' / 'lightomni_ros')
    return prefix


def robot_env(spawn, tmp_path: pathlib.Path) -> dict[str, str]:
    """A shell with ROS sourced (ROS-only python3 first on PATH) and the workspace not sourced."""
    python, extra = ros_only_python(tmp_path / 'ros')
    env = {k: v for k, v in spawn.env(**extra).items()
           if k not in ('AMENT_PREFIX_PATH', 'PYTHONPATH', 'FASTDDS_DEFAULT_PROFILES_FILE')}
    env['PATH'] = str(pathlib.Path(python[0]).parent) + os.pathsep + env.get('PATH', '')
    probe = subprocess.run(['python3', '-c', 'import rclpy, importlib.util as u; '
                            'print(u.find_spec("lightomni_ros") is None)'], env=env, capture_output=True, text=True,
                           timeout=120, cwd=tmp_path)
    assert probe.stdout.strip() == 'True', probe.stdout + probe.stderr   # ROS there, this package not
    return env


def test_installed_lightomni_runs_without_setup_bash(spawn, tmp_path: pathlib.Path) -> None:
    """``<prefix>/lib/lightomni_ros/lightomni doctor`` from another folder: finds its package, index and profile."""
    prefix = colcon_install(tmp_path / 'install')
    env = robot_env(spawn, tmp_path)
    work = tmp_path / 'elsewhere'
    work.mkdir()
    proc = subprocess.run([str(prefix / 'lib' / 'lightomni_ros' / 'lightomni'), 'doctor', '--json', '--no-graph',
                           '--no-hash'], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout)
    checks = {c['name']: c for c in report['checks']}
    assert proc.returncode == 0, [c for c in report['checks'] if c['status'] == 'error']
    assert f'lightomni_ros in {prefix}' in checks['ament index']['detail']
    assert checks['interfaces']['status'] == 'ok'
    assert str(prefix / 'share' / 'lightomni_ros' / 'config' / 'fastdds.xml') in checks['dds profile']['detail']


def test_installed_node_executable_starts_without_setup_bash(spawn, tmp_path: pathlib.Path) -> None:
    """``consolidation_node`` of the install starts from another folder and answers as a lifecycle node."""
    prefix = colcon_install(tmp_path / 'install')
    env = robot_env(spawn, tmp_path)
    node = spawn.start([str(prefix / 'lib' / 'lightomni_ros' / 'consolidation_node')], name='node', env=env)
    with LifecycleClient() as client:
        state = wait_for(lambda: client.get_state('/consolidation', timeout=5.0) or node.proc.poll() is not None,
                         180.0, what='consolidation get_state')
    assert state == 'unconfigured', node.output
    assert node.stop() == 0, node.output
