# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Child process for the interface tests: echoes every message type and serves every service type.

``rt/<Msg>/in`` is republished on ``rt/<Msg>/out``; service ``rt/<Srv>`` answers ``fill(Response, 7)`` when the
request equals ``fill(Request, 3)`` and an empty response otherwise (so a corrupted request fails the test).
"""

from __future__ import annotations

import importlib
import pathlib
import sys

from rclpy.node import Node

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from msg_fill import fill, interface_names  # noqa: E402

from lightomni_ros.nodes.process import run_node  # noqa: E402


def make_echo() -> Node:
    """Build the echo node (publishers, subscriptions and services for every interface)."""
    node = Node('interface_echo')
    msgs = importlib.import_module('lightomni_ros.msg')
    srvs = importlib.import_module('lightomni_ros.srv')
    for name in interface_names('msg'):
        cls = getattr(msgs, name)
        pub = node.create_publisher(cls, f'rt/{name}/out', 10)
        node.create_subscription(cls, f'rt/{name}/in', pub.publish, 10)
    for name in interface_names('srv'):
        cls = getattr(srvs, name)

        def serve(request, response, cls=cls):
            return fill(cls.Response, 7) if request == fill(cls.Request, 3) else response
        node.create_service(cls, f'rt/{name}', serve)
    node.get_logger().info('echo ready')
    return node


def main() -> int:
    """Run the echo node until SIGINT."""
    return run_node(make_echo, threads=1)


if __name__ == '__main__':
    sys.exit(main())
