# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The package is consistent: package.xml <-> CMakeLists.txt <-> setup.py <-> installed layout, docs and configs."""

from __future__ import annotations

import ast
import importlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from catkin_pkg.package import parse_package
from harness import ros_only_python, wait_for

from lightomni_ros.core import config as cfgmod
from lightomni_ros.launch_runner.lifecycle import LifecycleClient
from lightomni_ros.tools import gen_docs

REPO = pathlib.Path(__file__).resolve().parents[1]
CMAKE = (REPO / 'CMakeLists.txt').read_text()


def setup_nodes() -> dict[str, str]:
    """The NODES mapping of setup.py (executable -> module:function), read without running setup()."""
    tree = ast.parse((REPO / 'setup.py').read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') == 'NODES':
            return ast.literal_eval(node.value)
    raise AssertionError('setup.py has no NODES')


def test_package_xml_is_format_3_and_matches_cmake() -> None:
    """Name, build type and every find_package()/interface dependency are declared in package.xml."""
    pkg = parse_package(str(REPO / 'package.xml'))
    assert pkg.package_format == 3 and pkg.name == 'lightomni_ros'
    assert re.search(rf'project\({pkg.name}\)', CMAKE)
    assert pkg.get_build_type() == 'ament_cmake'
    assert [str(lic) for lic in pkg.licenses] == ['Apache-2.0'] and (REPO / 'LICENSE').is_file()
    declared = {d.name for d in pkg.build_depends + pkg.buildtool_depends + pkg.exec_depends + pkg.test_depends}
    for dep in re.findall(r'find_package\((\w+)', CMAKE):
        assert dep in declared, f'find_package({dep}) not declared in package.xml'
    deps = re.search(r'DEPENDENCIES ([\w ]+)\n', CMAKE).group(1).split()
    for dep in deps:
        assert dep in {d.name for d in pkg.build_depends} and dep in {d.name for d in pkg.exec_depends}, dep
    assert 'rosidl_interface_packages' in [g.name for g in pkg.member_of_groups]
    assert 'rosidl_default_runtime' in {d.name for d in pkg.exec_depends}


def test_ros_packages_imported_by_python_are_declared() -> None:
    """Every ROS package the Python code imports (rclpy, *_msgs, ...) is an exec_depend."""
    pkg = parse_package(str(REPO / 'package.xml'))
    declared = {d.name for d in pkg.exec_depends}
    ros_pkgs = {p.name for p in (pathlib.Path(sys.prefix) / 'share' / 'ament_index' / 'resource_index'
                                 / 'packages').iterdir()}
    imported = set()
    for f in (REPO / 'lightomni_ros').rglob('*.py'):
        for m in re.finditer(r'^\s*(?:from|import) (\w+)', f.read_text(), re.M):
            imported.add(m.group(1))
    missing = sorted((imported & ros_pkgs) - declared - {'lightomni_ros'})
    assert not missing, f'imported ROS packages missing from package.xml exec_depend: {missing}'


def test_every_interface_file_is_generated() -> None:
    """CMakeLists.txt lists exactly the files in msg/ and srv/."""
    listed = set(re.findall(r'"((?:msg|srv)/\w+\.(?:msg|srv))"', CMAKE))
    on_disk = {str(p.relative_to(REPO)) for p in (REPO / 'msg').glob('*.msg')} | \
              {str(p.relative_to(REPO)) for p in (REPO / 'srv').glob('*.srv')}
    assert listed == on_disk


def test_node_executables_agree_everywhere() -> None:
    """setup.py NODES, scripts/ wrappers and CMake's install(PROGRAMS) name the same executables."""
    nodes = setup_nodes()
    programs = set(re.findall(r'^\s+scripts/(\w+)\s*$', CMAKE, re.M))
    assert programs == set(nodes) | {'lightomni'}
    for name, target in nodes.items():
        script = REPO / 'scripts' / name
        assert script.is_file() and os.access(script, os.X_OK), f'scripts/{name} missing or not executable'
        module, func = target.split(':')
        assert f'from {module} import {func}' in script.read_text(), f'scripts/{name} does not call {target}'
        assert callable(getattr(importlib.import_module(module), func))


def test_installed_layout_in_the_venv() -> None:
    """The set-up's CMake install left what ament expects: resource index marker, share/ files, generated Python."""
    prefix = pathlib.Path(sys.prefix)
    index = prefix / 'share' / 'ament_index' / 'resource_index'
    assert (index / 'packages' / 'lightomni_ros').is_file()
    assert (index / 'rosidl_interfaces' / 'lightomni_ros').is_file()
    share = prefix / 'share' / 'lightomni_ros'
    assert (share / 'package.xml').is_file()
    for d in ('launch', 'config', 'models'):
        assert (share / d).resolve() == (REPO / d).resolve(), f'share/lightomni_ros/{d} is not the source folder'
    for p in (REPO / 'msg').glob('*.msg'):
        assert (share / 'msg' / p.name).is_file()


@pytest.mark.slow
@pytest.mark.timeout(900)   # a first CMake build of the interfaces takes minutes on a loaded 2-core machine
def test_colcon_style_install_layout(spawn, tmp_path: pathlib.Path) -> None:
    """A full CMake build as colcon runs it (Python package and executables included) installs a working layout.

    Its executables also run with install/setup.bash not sourced, from another folder: a ROS-only Python (a robot's
    sourced ROS 2: rclpy and the dependencies, not this package) starts ``lightomni`` and a node executable.
    """
    # A workspace as colcon lays it out: the package source in its own folder (the venv must not sit inside the
    # source tree, or CMake refuses the exported numpy include path), a build folder kept between runs, an install.
    work = REPO / 'build' / 'colcon_check'
    src, build, prefix = work / 'src' / 'lightomni_ros', work / 'build', tmp_path / 'install'
    for item in ('CMakeLists.txt', 'package.xml', 'msg', 'srv', 'launch', 'config', 'models', 'lightomni_ros',
                 'scripts'):
        if (REPO / item).is_dir():
            shutil.copytree(REPO / item, src / item, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns('__pycache__'))
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / item, src / item)
    env = dict(os.environ, AMENT_PREFIX_PATH=sys.prefix)
    venv = sys.prefix
    steps = [
        ['cmake', '-S', str(src), '-B', str(build), f'-DCMAKE_PREFIX_PATH={venv}',
         f'-DCMAKE_INSTALL_PREFIX={prefix}', f'-DPython3_EXECUTABLE={sys.executable}', '-DBUILD_TESTING=OFF',
         '-DLIGHTOMNI_INSTALL_PYTHON=ON'],
        ['cmake', '--build', str(build), '-j2'],
        ['cmake', '--install', str(build), '--prefix', str(prefix)],
    ]
    for cmd in steps:
        res = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert res.returncode == 0, f'{" ".join(cmd)} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}'
    site = prefix / 'lib' / f'python{sys.version_info.major}.{sys.version_info.minor}' / 'site-packages'
    assert (site / 'lightomni_ros' / 'cli.py').is_file() and (site / 'lightomni_ros' / 'msg').is_dir()
    assert (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'lightomni_ros').is_file()
    for exe in set(setup_nodes()) | {'lightomni'}:
        assert os.access(prefix / 'lib' / 'lightomni_ros' / exe, os.X_OK), exe
    for d in ('launch/lightomni.launch.py', 'config', 'models/README.md', 'package.xml'):
        assert (prefix / 'share' / 'lightomni_ros' / d).exists(), d
    # The installed tree works on its own (what `ros2 run lightomni_ros lightomni --help` does).
    run_env = {'PATH': '/usr/bin:/bin', 'HOME': os.environ.get('HOME', '/tmp'), 'PYTHONPATH': str(site),
               'AMENT_PREFIX_PATH': f'{prefix}:{venv}', 'LD_LIBRARY_PATH': f'{prefix / "lib"}:{venv}/lib'}
    code = ('import lightomni_ros, lightomni_ros.msg, sys; '
            f'assert lightomni_ros.__file__.startswith({str(site)!r}), lightomni_ros.__file__; '
            'from lightomni_ros.cli import main; sys.exit(main(["--help"]))')
    res = subprocess.run([sys.executable, '-c', code], env=run_env, capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0 and 'launch' in res.stdout, res.stderr[-2000:]

    # Nothing of the workspace sourced: python3 on PATH is a ROS-only interpreter that cannot import this package.
    python, extra = ros_only_python(tmp_path / 'ros')
    robot = {k: v for k, v in spawn.env(**extra).items()
             if k not in ('AMENT_PREFIX_PATH', 'PYTHONPATH', 'FASTDDS_DEFAULT_PROFILES_FILE')}
    robot['PATH'] = str(pathlib.Path(python[0]).parent) + os.pathsep + robot.get('PATH', '')
    probe = subprocess.run(['python3', '-c', 'import rclpy, importlib.util as u; print(u.find_spec("lightomni_ros"))'],
                           env=robot, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert probe.stdout.strip() == 'None', probe.stdout + probe.stderr
    res = subprocess.run([str(prefix / 'lib' / 'lightomni_ros' / 'lightomni'), 'doctor', '--json', '--no-graph',
                          '--no-hash'], env=robot, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    checks = {c['name']: c for c in json.loads(res.stdout)['checks']}
    assert res.returncode == 0, [c for c in checks.values() if c['status'] == 'error']
    assert f'lightomni_ros in {prefix}' in checks['ament index']['detail'] and checks['interfaces']['status'] == 'ok'
    assert str(prefix / 'share' / 'lightomni_ros' / 'config' / 'fastdds.xml') in checks['dds profile']['detail']
    node = spawn.start([str(prefix / 'lib' / 'lightomni_ros' / 'consolidation_node')], name='node', env=robot,
                       cwd=tmp_path)
    with LifecycleClient() as client:
        state = wait_for(lambda: client.get_state('/consolidation', timeout=5.0) or node.proc.poll() is not None,
                         180.0, what='the installed consolidation_node answering get_state')
    assert state == 'unconfigured', node.output
    assert node.stop() == 0, node.output


def test_generated_docs_are_current() -> None:
    """docs/CONFIG.md and docs/INTERFACES.md match their sources."""
    assert gen_docs.main(['--check']) == 0, 'run `python -m lightomni_ros.tools.gen_docs`'


def _flatten(d: dict, prefix: str = '') -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f'{prefix}{k}.'))
        else:
            out[f'{prefix}{k}'] = v
    return out


def test_config_yaml_mirrors_the_dataclasses() -> None:
    """config/<node>.yaml lists exactly each node's parameters, with the dataclass defaults."""
    sections = gen_docs.node_sections()
    for node, secs in sections.items():
        path = REPO / 'config' / f'{node}.yaml'
        assert path.is_file(), f'config/{node}.yaml missing'
        params = yaml.safe_load(path.read_text())['/**']['ros__parameters']
        flat = _flatten(params)
        expected = {}
        for prefix, cls in secs.items():
            expected.update({prefix + k: v for k, v in cfgmod.to_dict(cls()).items()})
        assert set(flat) == set(expected), f'{node}: yaml keys differ: {set(flat) ^ set(expected)}'
        for key, value in expected.items():
            assert flat[key] == value, f'{node}.yaml {key}: {flat[key]!r} != dataclass default {value!r}'
