# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The install: this package in the ament index (launch files, configs) and its generated msg/srv interfaces."""

from __future__ import annotations

import importlib
import os
import pathlib
import re

from lightomni_ros import env

from .record import ERROR, OK, WARN, Check, Context

SETUP_FIX = ('in the checkout run `make setup` (builds msg/srv into .venv) and use .venv/bin/lightomni; on a robot '
             '`colcon build --packages-select lightomni_ros && source install/setup.bash`')


def check(ctx: Context) -> list[Check]:
    """The ament index entry and share folder, then the interfaces."""
    return [_ament(ctx), _interfaces(ctx)]


def _ament(ctx: Context) -> Check:
    prepared = env.FIRST or env.Prepared(ament_before=os.environ.get(env.AMENT_ENV, ''))
    listed = [p for p in env.ament_prefixes() if env.registered(p)]
    own = env.own_prefixes()
    if not listed:
        where = f'AMENT_PREFIX_PATH={os.environ.get(env.AMENT_ENV, "")!r}'
        return Check('ament index', ERROR, f'lightomni_ros is not in the ament index ({where}) and no prefix above '
                                           'this program holds it: the msg/srv build did not run here',
                     SETUP_FIX)
    prefix = listed[0]
    ctx.found['share'] = share = prefix / 'share' / 'lightomni_ros'
    missing = [rel for rel in ('launch/lightomni.launch.py', 'config/consolidation.yaml', 'config/perception.yaml',
                               'config/reflex.yaml', 'config/fastdds.xml') if not (share / rel).is_file()]
    if missing:
        return Check('ament index', ERROR, f'{share} lacks {missing}', SETUP_FIX + ' (reinstalls the share folder)')
    how = (f'this program added it to AMENT_PREFIX_PATH, which was {prepared.ament_before or "unset"}: `ros2` '
           f'tools in this shell would need `export AMENT_PREFIX_PATH={prefix}`'
           if prepared.ament_added else 'listed on AMENT_PREFIX_PATH')
    if own and prefix not in own:
        return Check('ament index', WARN, f'the index finds lightomni_ros in {prefix} ({how}) but this program is '
                                          f'installed in {own[0]}: launch files and configs come from the other '
                                          'install', f'put {own[0]} first on AMENT_PREFIX_PATH, or run the '
                                                     f'lightomni of {prefix}')
    return Check('ament index', OK, f'lightomni_ros in {prefix}, launch file and configs present; {how}')


def _interfaces(ctx: Context) -> Check:
    try:
        from rclpy.serialization import serialize_message
    except ImportError as exc:
        return Check('interfaces', ERROR, f'rclpy does not import ({exc})',
                     'use the interpreter that `make setup` built (.venv/bin/python, .venv/bin/lightomni), or on '
                     'a robot `source /opt/ros/<distro>/setup.bash`')
    try:
        msg = importlib.import_module('lightomni_ros.msg')
        srv = importlib.import_module('lightomni_ros.srv')
    except ImportError as exc:
        return Check('interfaces', ERROR, f'the generated interfaces do not import ({exc})', SETUP_FIX)
    try:
        serialize_message(msg.Segment())   # loads the C type support, as a publisher would
    except Exception as exc:  # noqa: BLE001 - any failure here means nodes cannot publish
        return Check('interfaces', ERROR, f'lightomni_ros.msg imports but its type support does not load '
                                          f'({type(exc).__name__}: {exc})',
                     SETUP_FIX + '; a child process must not inherit _ROS_WHEELS_BOOTSTRAP_COMPLETE without the '
                                 "venv's LD_LIBRARY_PATH")
    stale = _stale(msg, srv, ctx)
    names = sorted(n for n in dir(msg) if n[:1].isupper()) + sorted(n for n in dir(srv) if n[:1].isupper())
    if stale:
        return Check('interfaces', ERROR, 'the generated interfaces differ from the .msg/.srv files: '
                                          + '; '.join(stale[:5]), 'run `make setup` again (rebuilds msg/srv)')
    return Check('interfaces', OK, f'{len(names)} messages and services import, type support loads, fields match '
                                   'the definitions')


def definition_fields(text: str) -> list[list[str]]:
    """Field names of a .msg (one part) or .srv (request, response) text; constants and comments skipped."""
    parts: list[list[str]] = [[]]
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if line == '---':
            parts.append([])
            continue
        tokens = line.split()
        if len(tokens) >= 2 and '=' not in tokens[1] and (len(tokens) < 3 or not tokens[2].startswith('=')):
            parts[-1].append(tokens[1])
    return parts


def _sources(ctx: Context) -> pathlib.Path | None:
    """The .msg/.srv definitions this package was built from: the source tree's, else the installed copy."""
    import lightomni_ros

    for folder in [pathlib.Path(p).parent for p in lightomni_ros.__path__] + \
            ([ctx.found['share']] if 'share' in ctx.found else []):
        if (folder / 'msg').is_dir() and (folder / 'srv').is_dir():
            return folder
    return None


def _stale(msg: object, srv: object, ctx: Context) -> list[str]:
    folder = _sources(ctx)
    if folder is None:
        return []
    out = []
    for path in sorted(folder.glob('msg/*.msg')) + sorted(folder.glob('srv/*.srv')):
        module = msg if path.suffix == '.msg' else srv
        cls = getattr(module, path.stem, None)
        if cls is None:
            out.append(f'{path.parent.name}/{path.name} has no generated class')
            continue
        parts = definition_fields(path.read_text())
        classes = [cls] if path.suffix == '.msg' else [cls.Request, cls.Response]
        for want, c in zip(parts, classes):
            have = list(c.get_fields_and_field_types())
            if [re.sub(r'\W', '', w) for w in want] != have:
                out.append(f'{path.name}: defined {want}, generated {have}')
    return out
