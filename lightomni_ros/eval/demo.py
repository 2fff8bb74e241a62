# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni demo`` (``make demo``): build the bundled sample's bag, replay it through the node graph, report.

Prints what the robot said and when, the memory it built, how many probes passed and where the report is; exits 1
when a probe fails (2 when the demo could not run).
"""

from __future__ import annotations

import argparse
import pathlib
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = REPO / 'sample' / 'scenario.yaml'


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` verb."""
    p = sub.add_parser('demo', help='build the sample scenario bag, replay it through the node graph, report',
                       description=__doc__.splitlines()[0])
    p.add_argument('--scenario', default=str(SAMPLE), help='scenario to run (default: the bundled sample)')
    p.add_argument('-o', '--output', default=str(REPO / 'out' / 'demo'), help='folder for the bag and the run')
    p.add_argument('-r', '--rate', type=float, default=1.0, help='playback speed (reminder timing needs 1)')
    p.add_argument('--no-launch', action='store_true', help='use an already running graph')
    p.add_argument('--linger', type=float, default=15.0, help='seconds to keep recording after the bag ends')
    p.add_argument('--drain', action='store_true', help='then wait until the graph has stored everything in memory '
                                                        '(lightomni replay --drain)')
    p.add_argument('--launch-arg', nargs='*', default=[], metavar='NAME:=VALUE', help='launch arguments')
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Bag, replay, print."""
    from lightomni_ros.launch_runner.runner import parse_launch_arguments
    from lightomni_ros.launch_runner.shim import LaunchError

    from . import bagwriter, replay, scenario
    from .report import sources_line

    out = pathlib.Path(args.output)
    try:
        sc = scenario.load(args.scenario)
        bag = out / f'{sc.name}_bag'
        print(f'demo: building {bag} from {args.scenario}')
        bagwriter.write_bag(sc, bag, force=True)
        run_dir = out / f'run_{time.strftime("%Y%m%d-%H%M%S")}'
        print(f'demo: replaying into the node graph at {args.rate:g}x (about {_duration(bag) / args.rate:.0f} s)')
        opts = replay.ReplayOptions(rate=args.rate, linger=args.linger, drain=args.drain)
        result = replay.run_replay(bag, run_dir, opts, launch_file=None if args.no_launch else 'lightomni.launch.py',
                                   launch_args=parse_launch_arguments(args.launch_arg))
    except (scenario.ScenarioError, bagwriter.MediaError, LaunchError, FileNotFoundError, ValueError) as exc:
        print(f'demo: error: {exc}')
        return 2
    if result.get('graph_failed'):
        print(f'demo: the node graph failed: {"; ".join(result["graph_failed"])} (logs: {result.get("launch_logs")})')
    sc_res = result.get('score')
    if not sc_res:
        print('demo: nothing was scored')
        return 2
    print('\nWhat the robot said:')
    for line in sc_res['spoken'] or [{'t': 0.0, 'text': '(nothing)', 'source': ''}]:
        tag = 'reminder' if line['source'] == 'reminder' else line.get('response_source', '')
        print(f'  {line["t"]:7.1f} s  {line["text"]}' + (f'  [{tag}]' if tag and tag != 'generated' else ''))
    mem = sc_res['memory']
    print(f'\nMemory built: {mem["episodes"]} episodes, {len(mem["semantic"])} facts, {len(mem["remembered"])} '
          f'remembered items, {len(mem["reminders"])} reminders, global state of {mem["global_state_nodes"]} nodes')
    for fact in mem['remembered'] + mem['semantic'][:10]:
        print(f'  - {fact}')
    print('\nProbes:')
    for p in sc_res['probes']:
        print(f'  {"PASS" if p["passed"] else "FAIL"}  {p["id"]:<20} {p.get("detail", "")}')
    s = sc_res['summary']
    print(f'\n{s["passed"]}/{s["total"]} probes passed; answer latency p50 {s["answer_latency_s"]["p50"]} s; '
          f'answers: {sources_line(s.get("answer_sources", {}))}')
    print(f'report: {result.get("report")}')
    return 0 if s['passed'] == s['total'] and not result.get('graph_failed') else 1


def _duration(bag: pathlib.Path) -> float:
    from . import bagwriter

    gt = bagwriter.load_ground_truth(bag)
    return float(gt['duration']) if gt else 0.0
