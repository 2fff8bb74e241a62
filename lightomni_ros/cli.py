# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni``: one command-line entry point with verbs, in the habit of ``ros2 <verb>``.

Each verb lives in its own module exposing ``register(subparsers)`` (cheap: no heavy imports) that sets
``func`` on its parser; :data:`VERBS` lists them in the order ``--help`` shows.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Sequence

from . import env

#: verb -> module that registers it
VERBS = {
    'launch': 'lightomni_ros.launch_runner.cli',
    'bench': 'lightomni_ros.eval.bench',
    'bag': 'lightomni_ros.eval.bag_cli',
    'replay': 'lightomni_ros.eval.replay',
    'demo': 'lightomni_ros.eval.demo',
    'train': 'lightomni_ros.train.cli',
    'eval': 'lightomni_ros.train.eval_cli',
    'doctor': 'lightomni_ros.doctor.cli',
    'memory': 'lightomni_ros.tools.memory_cli',
}


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every verb registered."""
    parser = argparse.ArgumentParser(prog='lightomni', description='Light-Omni for ROS 2: long-term memory and '
                                     'reflex responses (verbs in the habit of ros2 <verb>).')
    parser.add_argument('-v', '--verbose', action='store_true', help='debug logging')
    sub = parser.add_subparsers(dest='verb', metavar='VERB', required=True)
    for module in VERBS.values():
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse and dispatch; the verb's return value is the exit code."""
    args = build_parser().parse_args(argv)
    env.prepare()      # ament index and DDS profile, before any participant; children (nodes, players) inherit it
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format='[%(name)s] %(levelname)s: %(message)s')
    return int(args.func(args) or 0)


if __name__ == '__main__':
    sys.exit(main())
