# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni doctor [--json]``: run every check, print each finding with its fix; exit 1 when one is an error."""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import re
import sys

from .record import ERROR, OK, WARN, Check, Context

#: areas in the order they are reported (later ones use what earlier ones found)
AREAS = ('install', 'dds', 'models', 'accel', 'host', 'graph')


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``doctor`` verb."""
    p = sub.add_parser('doctor', help='check the install, models, DDS, GPU, memory folder, clock and a running graph',
                       description='Check this installation and any running node graph; every problem comes with '
                                   'a fix. Exit status 0 when nothing is an error (warnings allowed), 1 otherwise.')
    p.add_argument('--json', action='store_true', help='print one JSON object (for scripts)')
    p.add_argument('--config-dir', default=None, help='node configs to check (default: the installed package\'s)')
    p.add_argument('--memory-dir', default='', help='memory folder to check (default: memory.memory_dir of the '
                                                    'consolidation config)')
    p.add_argument('--models-dir', default='', help='models folder (default: models.models_dir of the configs, '
                                                    'then $LIGHTOMNI_MODELS_DIR)')
    p.add_argument('--frame', default='1280x720', help='largest rgb8 camera frame WxH the DDS transport must carry')
    p.add_argument('--no-hash', action='store_true',
                   help='compare model files by size only unless their sha256 is cached')
    p.add_argument('--discovery-s', type=float, default=2.0, help='seconds to listen for a running graph')
    p.add_argument('--no-graph', action='store_true', help='do not look for a running graph')
    p.set_defaults(func=run)


def _frame(text: str) -> tuple[int, int]:
    m = re.fullmatch(r'(\d+)[xX](\d+)', text.strip())
    if not m or not int(m[1]) or not int(m[2]):
        raise ValueError(f'--frame: expected WIDTHxHEIGHT such as 1280x720, got {text!r}')
    return int(m[1]), int(m[2])


def run_checks(ctx: Context) -> list[Check]:
    """Every area's findings; an area that fails is itself reported as an error (the others still run)."""
    out: list[Check] = []
    for area in AREAS:
        try:
            out += importlib.import_module(f'{__package__}.{area}').check(ctx)
        except Exception as exc:  # noqa: BLE001 - a broken install must still get its report
            out.append(Check(area, ERROR, f'the {area} check failed: {type(exc).__name__}: {exc}',
                             'run `make setup`; if this persists, report it with this output'))
    return out


def run(args: argparse.Namespace) -> int:
    """Check, print, exit 0 unless an error was found."""
    try:
        ctx = Context(config_dir=pathlib.Path(args.config_dir) if args.config_dir else None,
                      memory_dir=args.memory_dir, models_dir=args.models_dir, frame=_frame(args.frame),
                      hash_models=not args.no_hash, discovery_s=max(0.0, args.discovery_s), graph=not args.no_graph)
    except ValueError as exc:
        print(f'error: {exc}')
        return 2
    if ctx.config_dir is not None and not ctx.config_dir.is_dir():
        print(f'error: --config-dir {ctx.config_dir} is not a folder')
        return 2
    checks = run_checks(ctx)
    counts = {s: sum(c.status == s for c in checks) for s in (OK, WARN, ERROR)}
    if args.json:
        print(json.dumps({'ok': not counts[ERROR], 'counts': counts, 'python': sys.executable,
                          'checks': [vars(c) for c in checks]}, indent=2))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            print(f'{c.status.upper():<5}  {c.name:<{width}}  {c.detail}')
            if c.fix:
                print(f'{"":<5}  {"":<{width}}  fix: {c.fix}')
        print(f'\n{len(checks)} checks: {counts[OK]} ok, {counts[WARN]} warnings, {counts[ERROR]} errors')
    return 1 if counts[ERROR] else 0
