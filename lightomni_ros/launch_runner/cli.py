# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni launch``: run a ROS 2 launch file without ros2launch (see :mod:`lightomni_ros.launch_runner`)."""

from __future__ import annotations

import argparse

from .runner import SIGINT_GRACE_S


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``launch`` verb."""
    p = sub.add_parser('launch', help='run a *.launch.py file here (same file as `ros2 launch` on a robot)',
                       description='Start every node of a launch file as its own process, configure and activate '
                                   'lifecycle nodes with autostart, and stop them all on Ctrl-C or when one fails.')
    p.add_argument('file', help='launch file, or a name in the package share (e.g. lightomni.launch.py)')
    p.add_argument('arguments', nargs='*', metavar='name:=value', help='launch arguments')
    p.add_argument('--duration', type=float, default=None, help='stop after this many seconds')
    p.add_argument('--log-dir', default=None, help='where node logs go (default: ~/.ros/log/lightomni_launch_<time>)')
    p.add_argument('--sigint-timeout', type=float, default=SIGINT_GRACE_S,
                   help='seconds to wait after SIGINT before SIGTERM (a node ends its model call in flight first)')
    p.add_argument('--sigterm-timeout', type=float, default=5.0, help='seconds to wait after SIGTERM before SIGKILL')
    p.add_argument('--transition-timeout', type=float, default=300.0,
                   help='seconds a lifecycle transition may take (models load in configure)')
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Resolve the file (path, or the package's launch/ folder) and run it."""
    import pathlib

    from . import runner, shim

    path = pathlib.Path(args.file)
    if not path.exists():   # a name, as `ros2 launch lightomni_ros NAME` takes it
        try:
            shared = shim.package_share('lightomni_ros') / 'launch' / args.file
        except shim.LaunchError as exc:
            print(f'error: launch file {args.file!r} is not a file here, and {exc}; run `lightomni doctor`')
            return 2
        if not shared.is_file():
            names = sorted(p.name for p in shared.parent.glob('*.launch.py'))
            print(f'error: launch file {args.file!r} is neither a file here nor in {shared.parent} (there: {names})')
            return 2
        path = shared
    return runner.launch(path, args.arguments, duration=args.duration, log_dir=args.log_dir,
                         sigint_timeout=args.sigint_timeout, sigterm_timeout=args.sigterm_timeout,
                         transition_timeout=args.transition_timeout)
