# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bag``: turn a scenario (YAML) into a rosbag2 of the node graph's input topics plus its ground truth."""

from __future__ import annotations

import argparse
import logging

log = logging.getLogger('lightomni.eval.bag')


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``bag`` verb."""
    p = sub.add_parser('bag', help='scenario (YAML) -> rosbag2 of camera, audio and text topics + ground truth',
                       description='Render a scenario (docs/SCENARIOS.md) into a rosbag2 folder: camera frames, '
                                   '16 kHz audio chunks and typed text on the launch file\'s default input topics, '
                                   'with lightomni_groundtruth.json (probes, transcripts, identities, times).')
    p.add_argument('scenario', help='scenario YAML file')
    p.add_argument('-o', '--output', default=None, help='bag folder to write (default: <scenario name>_bag)')
    p.add_argument('-s', '--storage', choices=['mcap', 'sqlite3'], default='mcap', help='storage plugin')
    p.add_argument('--camera', choices=['compressed', 'raw'], default=None,
                   help="override the scenario's camera transport (CompressedImage JPEG or Image rgb8)")
    p.add_argument('--force', action='store_true', help='overwrite an existing output folder')
    p.add_argument('--check', action='store_true', help='only validate the scenario; write nothing')
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate, render and write; exit 2 on an invalid scenario, 1 on a media error."""
    from . import bagwriter, scenario

    try:
        sc = scenario.load(args.scenario)
    except scenario.ScenarioError as exc:
        print(f'invalid scenario: {exc}')
        return 2
    if args.camera:
        sc.camera.transport = args.camera
    kinds = {k: sum(1 for it in sc.items if it.kind == k) for k in scenario.ITEM_KINDS}
    print(f'scenario {sc.name!r}: {len(sc.items)} items ({", ".join(f"{k} {v}" for k, v in kinds.items() if v)}), '
          f'{len(sc.probes)} probes')
    if args.check:
        return 0
    out = args.output or f'{sc.name}_bag'
    try:
        gt = bagwriter.write_bag(sc, out, storage=args.storage, force=args.force)
    except (bagwriter.MediaError, scenario.ScenarioError, FileExistsError) as exc:
        print(f'error: {exc}')
        return 2 if isinstance(exc, scenario.ScenarioError) else 1
    counts = ', '.join(f'{t} x{n}' for t, n in gt['message_counts'].items())
    print(f'wrote {out} ({args.storage}): {gt["duration"]:.1f} s; {counts}')
    print(f'ground truth: {out}/{bagwriter.GROUNDTRUTH}')
    return 0
