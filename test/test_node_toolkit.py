# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The node toolkit's subscriptions: no QoS event handlers in the executor's wait set, QoS mismatches in diagnostics.

Real rclpy and Fast DDS, two contexts in one process on the test's own domain.
"""

from __future__ import annotations

import json
import pathlib

import pytest
import rclpy
from rclpy.context import Context
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from harness import wait_for
from lightomni_ros.core.timing import StageTimer
from lightomni_ros.nodes.common import RELIABLE_QOS, WARN, BackgroundNode, Diagnostics, QuietNode, qos_problems


def test_subscriptions_bring_no_event_handlers_unless_asked(domain_id: int) -> None:
    """A toolkit node's subscription adds no waitable; callbacks the caller passes are still honoured."""
    ctx = Context()
    rclpy.init(context=ctx, domain_id=domain_id)
    try:
        node = QuietNode('quiet', context=ctx)
        before = len(list(node.waitables))         # the publisher handlers of /parameter_events and /rosout
        node.create_subscription(String, 'a', lambda m: None, RELIABLE_QOS)
        assert len(list(node.waitables)) == before
        seen: list = []
        node.create_subscription(String, 'b', lambda m: None, RELIABLE_QOS,
                                 event_callbacks=SubscriptionEventCallbacks(incompatible_qos=seen.append))
        assert len(list(node.waitables)) > before
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=ctx)


def test_an_incompatible_publisher_is_a_diagnostics_warning(domain_id: int) -> None:
    """A best-effort publisher on a topic subscribed reliably is reported: which topic, which publisher, why."""
    listener = BackgroundNode('listener', domain_id=domain_id)
    talker = BackgroundNode('talker', domain_id=domain_id)
    try:
        listener.node.create_subscription(String, '/mismatch', lambda m: None, RELIABLE_QOS)
        talker.node.create_publisher(String, '/mismatch',
                                     QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT))
        text = wait_for(lambda: next((t for t in qos_problems(listener.node) if '/talker' in t), None), 30.0,
                        what='the incompatible publisher discovered by name')
        assert text == ('/mismatch: publisher /talker offers QoS this subscription cannot use (Best effort publisher '
                        'and reliable subscription); its messages never arrive')
        diag = Diagnostics(listener.node, 'toolkit', StageTimer(), period_s=3600.0)
        diag.publish()
        status = diag.status()
        assert status.level == bytes([WARN]) and 'qos: /mismatch' in status.message
        talker.node.create_subscription(String, '/fine', lambda m: None, RELIABLE_QOS)
        listener.node.create_publisher(String, '/fine', RELIABLE_QOS)
        wait_for(lambda: talker.node.get_publishers_info_by_topic('/fine'), 30.0, what='the /fine publisher')
        assert qos_problems(talker.node) == []
    finally:
        talker.close()
        listener.close()


@pytest.mark.timeout(180)
def test_bench_executor_writes_both_styles_for_both_groups(domain_id: int, tmp_path: pathlib.Path) -> None:
    """`lightomni bench executor --quick` measures default and quiet subscriptions under both callback groups."""
    from lightomni_ros import cli

    path = tmp_path / 'executor.json'
    assert cli.main(['bench', 'executor', '--quick', '--json', str(path)]) == 0
    figures = json.loads(path.read_text())
    for group in ('mutually_exclusive', 'reentrant'):
        for style in ('default', 'quiet'):
            assert 0.0 <= figures[group][style]['delivered_frac'] <= 1.0
            assert figures[group][style]['worker_loops_per_s'] > 0
        assert figures[group]['quiet']['delivered_frac'] > 0 and figures[group]['worker_speedup'] > 0
