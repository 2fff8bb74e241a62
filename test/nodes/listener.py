# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Test lifecycle node: subscribes ``chatter`` only while active and logs what it hears."""

from __future__ import annotations

import sys

from rclpy.lifecycle import LifecycleNode, State, TransitionCallbackReturn
from std_msgs.msg import String

from lightomni_ros.nodes.process import run_node


class Listener(LifecycleNode):
    """Lifecycle listener."""

    def __init__(self) -> None:
        super().__init__('listener')
        self.sub = None
        self.heard = 0

    def on_configure(self, state: State) -> TransitionCallbackReturn:
        """Log the transition."""
        self.get_logger().info('configured')
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: State) -> TransitionCallbackReturn:
        """Start listening."""
        self.sub = self.create_subscription(String, 'chatter', self.hear, 10)
        self.get_logger().info('activated')
        return super().on_activate(state)

    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        """Stop listening."""
        self.destroy_subscription(self.sub)
        return super().on_deactivate(state)

    def hear(self, msg: String) -> None:
        """Log every tenth message."""
        self.heard += 1
        if self.heard % 10 == 1:
            self.get_logger().info(f'heard: {msg.data}')


def main() -> int:
    """Run the listener."""
    return run_node(Listener, threads=1)


if __name__ == '__main__':
    sys.exit(main())
