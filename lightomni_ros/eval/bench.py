# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench <area>``: benchmarks that print their figures (ratios measured in one run) and write JSON.

Each area is a module ``lightomni_ros.eval.bench_<area>`` exposing::

    def add_arguments(parser: argparse.ArgumentParser) -> None   # optional, area-specific flags
    def run(args: argparse.Namespace, report: Report) -> None     # measures, calls report.figure(...)

``all`` runs every installed area in order. Figures go to stdout as a table while they are measured and, with
``--json PATH``, into one JSON object keyed by area (``bench all``) or the area's figures alone (one area).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import platform
import time
from typing import Any

#: areas in the order `bench all` runs them; an area whose module is absent is not offered
AREAS = ('memory', 'perception', 'hearing', 'reflex', 'executor', 'system', 'faults', 'soak', 'live')


def installed_areas() -> list[str]:
    """Areas whose benchmark module exists in this checkout."""
    here = pathlib.Path(__file__).parent
    return [a for a in AREAS if (here / f'bench_{a}.py').exists()]


class Report:
    """Collects figures (nested keys allowed) and prints each as it arrives."""

    def __init__(self, area: str) -> None:
        self.area = area
        self.figures: dict[str, Any] = {}
        self.notes: list[str] = []

    def figure(self, key: str, value: Any, unit: str = '', note: str = '') -> None:
        """Record ``key`` (dotted for nesting, e.g. ``latency_ms.both``) and print it."""
        node = self.figures
        parts = key.split('.')
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        shown = f'{value:.4g}' if isinstance(value, float) else str(value)
        print(f'  {self.area:<11} {key:<40} {shown:>12} {unit:<8} {note}', flush=True)

    def note(self, text: str) -> None:
        """Print and keep a free-text remark (model sizes, what is simulated, targets)."""
        self.notes.append(text)
        print(f'  {self.area:<11} # {text}', flush=True)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``bench`` verb."""
    areas = installed_areas()
    if not areas:
        return  # no benchmark has landed: the verb is absent rather than empty
    p = sub.add_parser('bench', help='run benchmarks and print their figures',
                       description='Benchmarks print figures as they are measured; ratios are measured in one run.')
    p.add_argument('area', choices=areas + ['all'], help='what to measure')
    p.add_argument('--json', dest='json_path', default=None, help='also write the figures to this JSON file')
    p.add_argument('--quick', action='store_true', help='smaller sizes (for smoke tests; figures not comparable)')
    for area in areas:
        mod = importlib.import_module(f'lightomni_ros.eval.bench_{area}')
        if hasattr(mod, 'add_arguments'):
            mod.add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the chosen area(s) and write JSON."""
    areas = installed_areas() if args.area == 'all' else [args.area]
    results: dict[str, Any] = {}
    print(f'lightomni bench {args.area}: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus',
          flush=True)
    for area in areas:
        report = Report(area)
        t0 = time.perf_counter()
        importlib.import_module(f'lightomni_ros.eval.bench_{area}').run(args, report)
        report.figure('bench_seconds', round(time.perf_counter() - t0, 1), 's')
        results[area] = report.figures | ({'notes': report.notes} if report.notes else {})
    if args.json_path:
        out = results if args.area == 'all' else results[areas[0]]
        pathlib.Path(args.json_path).write_text(json.dumps(out, indent=2, default=float))
        print(f'figures written to {args.json_path}')
    return 0
