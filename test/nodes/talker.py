# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Test node: publishes ``chatter`` at 10 Hz; with ``--exit-after S`` exits with ``--code`` after S seconds."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from rclpy.node import Node
from std_msgs.msg import String

from lightomni_ros.nodes.process import run_node


def never_ending_thread() -> None:
    """A non-daemon thread stuck for good: the interpreter would wait for it at exit."""
    threading.Event().wait()


def never_returning_destroy() -> None:
    """A clean-up step stuck for good."""
    threading.Event().wait()


def main() -> int:
    """Run the talker."""
    ap = argparse.ArgumentParser()
    ap.add_argument('--exit-after', type=float, default=0.0)
    ap.add_argument('--code', type=int, default=0)
    ap.add_argument('--ignore-sigint', default='false',
                    help="true: ignore SIGINT (a node stuck in a callback); 'all': SIGTERM too (needs SIGKILL)")
    ap.add_argument('--stuck', choices=['', 'exit', 'stop'], default='',
                    help="exit: a thread the interpreter waits for at exit never ends; stop: destroying the node "
                         "never returns (clean-up stuck)")
    args, ros_args = ap.parse_known_args()

    def make() -> Node:
        if args.ignore_sigint in ('true', 'all'):  # after init: rclpy installs its own SIGINT handler there
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if args.ignore_sigint == 'all':
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        node = Node('talker')
        pub = node.create_publisher(String, 'chatter', 10)
        count = [0]

        def tick() -> None:
            count[0] += 1
            pub.publish(String(data=f'hello {count[0]} from {node.get_parameter("greeting").value}'))
        node.declare_parameter('greeting', 'nobody')
        node.create_timer(0.1, tick)
        if args.exit_after:
            node.create_timer(args.exit_after, lambda: sys.exit(args.code))
        if args.stuck == 'exit':
            threading.Thread(target=never_ending_thread, name='never_ending', daemon=False).start()
        if args.stuck == 'stop':
            node.destroy_node = never_returning_destroy
        node.get_logger().info(f'talker up as {node.get_fully_qualified_name()}')
        return node

    return run_node(make, [sys.argv[0], *ros_args], threads=1)


if __name__ == '__main__':
    sys.exit(main())
