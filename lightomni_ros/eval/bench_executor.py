# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench executor``: what rclpy's default subscription event handlers cost a multi-threaded node.

A child process publishes std_msgs/String messages of 3.2 kB (the size of a 100 ms chunk of 16 kHz int16 audio) at
50 Hz over real DDS (the shipped Fast DDS profile). This process subscribes on a 4-thread MultiThreadedExecutor, as the
nodes spin, once with rclpy's default QoS event handlers and once as the nodes subscribe (``QuietSubscriptions``), for
each kind of callback group the nodes use, while a pure-Python thread counts loop iterations (the stand-in for a
node's worker and model threads). Figures per variant: the share of the published messages delivered in the window
(keep last 10, so late takes lose messages) and the worker's loop rate; per callback group the ratios quiet / default.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

from .bench import Report

RATE_HZ = 50.0
PAYLOAD_BYTES = 3200
THREADS = 4
PUBLISHER = '''
import sys, time
from lightomni_ros import dds
dds.apply_defaults()
import rclpy
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node('bench_executor_talker')
pub = node.create_publisher(String, sys.argv[1], 10)
msg = String(data='x' * int(sys.argv[3]))
period = 1.0 / float(sys.argv[2])
t = time.monotonic()
while True:
    pub.publish(msg)
    t += period
    time.sleep(max(0.0, t - time.monotonic()))
'''


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Flags of this area."""
    p.add_argument('--executor-window-s', type=float, default=5.0,
                   help='executor: seconds each variant is measured (--quick: 2)')


def run(args: argparse.Namespace, report: Report) -> None:
    """Measure both subscription styles under both callback groups; report delivery and worker rate."""
    from lightomni_ros import dds

    dds.apply_defaults()
    window = 2.0 if args.quick else args.executor_window_s
    topic = f'/lightomni_bench_executor_{os.getpid()}'
    errors = tempfile.TemporaryFile()      # not a pipe: an unread pipe that fills would stall the publisher
    talker = subprocess.Popen([sys.executable, '-c', PUBLISHER, topic, str(RATE_HZ), str(PAYLOAD_BYTES)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    report.note(f'{RATE_HZ:g} Hz of 3.2 kB messages from another process into a {THREADS}-thread executor, keep last '
                f'10; a Python thread beside it; {window:g} s per variant')
    try:
        for group in ('mutually_exclusive', 'reentrant'):
            figures = {}
            for style in ('default', 'quiet'):
                delivered, loops = _measure(topic, window, quiet=style == 'quiet', reentrant=group == 'reentrant')
                if talker.poll() is not None:
                    errors.seek(0)
                    raise RuntimeError(f'the publisher process ended: {errors.read().decode()[-400:]}')
                figures[style] = (delivered, loops)
                report.figure(f'{group}.{style}.delivered_frac', round(delivered, 3))
                report.figure(f'{group}.{style}.worker_loops_per_s', round(loops), '1/s')
            report.figure(f'{group}.worker_speedup', round(figures['quiet'][1] / max(1.0, figures['default'][1]), 2),
                          'x', 'quiet / default')
    finally:
        talker.kill()
        talker.wait()
        errors.close()


def _measure(topic: str, window: float, *, quiet: bool, reentrant: bool) -> tuple[float, float]:
    """One variant: (delivered / published in the window, worker loops per second)."""
    import rclpy
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node
    from std_msgs.msg import String

    from lightomni_ros.nodes.common import QuietNode

    ctx = Context()
    rclpy.init(context=ctx)
    node = (QuietNode if quiet else Node)('bench_executor_listener', context=ctx)
    got: list[float] = []
    sub = node.create_subscription(String, topic, lambda m: got.append(time.monotonic()), 10,
                                   callback_group=ReentrantCallbackGroup() if reentrant else None)
    executor = MultiThreadedExecutor(num_threads=THREADS, context=ctx)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        deadline = time.monotonic() + 30.0
        while not got and time.monotonic() < deadline:      # discovery
            time.sleep(0.05)
        if not got:
            raise RuntimeError(f'no message on {topic} within 30 s')
        start = time.monotonic()
        loops = 0
        while time.monotonic() - start < window:
            sum(range(1000))
            loops += 1
        end = time.monotonic()
        delivered = sum(start <= t < end for t in got) / (RATE_HZ * (end - start))
        return min(1.0, delivered), loops / (end - start)
    finally:
        node.destroy_subscription(sub)
        executor.shutdown(timeout_sec=5.0)
        spinner.join(timeout=5.0)
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)
