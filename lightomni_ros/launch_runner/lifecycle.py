# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""A small client for lifecycle nodes' ``change_state``/``get_state`` services (used by the runner and tests)."""

from __future__ import annotations

import time
from typing import Any

import rclpy
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor

TRANSITIONS = {
    'configure': Transition.TRANSITION_CONFIGURE,
    'cleanup': Transition.TRANSITION_CLEANUP,
    'activate': Transition.TRANSITION_ACTIVATE,
    'deactivate': Transition.TRANSITION_DEACTIVATE,
    'shutdown': Transition.TRANSITION_UNCONFIGURED_SHUTDOWN,
    'inactive_shutdown': Transition.TRANSITION_INACTIVE_SHUTDOWN,
    'active_shutdown': Transition.TRANSITION_ACTIVE_SHUTDOWN,
}


class LifecycleClient:
    """Drive lifecycle nodes from another process, on its own rclpy context."""

    def __init__(self, domain_id: int | None = None) -> None:
        self.context = Context()
        kwargs: dict[str, Any] = {'context': self.context}
        if domain_id is not None:
            kwargs['domain_id'] = domain_id
        rclpy.init(**kwargs)
        self.node = rclpy.create_node('lightomni_lifecycle_client', context=self.context,
                                      enable_rosout=False, start_parameter_services=False)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def __enter__(self) -> 'LifecycleClient':
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Destroy the node and shut the context down (releases DDS resources)."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def _call(self, srv_type: Any, name: str, request: Any, timeout: float) -> Any:
        client = self.node.create_client(srv_type, name)
        try:
            deadline = time.monotonic() + timeout
            while not client.wait_for_service(timeout_sec=0.1):
                self.executor.spin_once(timeout_sec=0.0)
                if time.monotonic() > deadline:
                    return None
            future = client.call_async(request)
            self.executor.spin_until_future_complete(future, timeout_sec=max(0.1, deadline - time.monotonic()))
            return future.result() if future.done() else None
        finally:
            self.node.destroy_client(client)

    def get_state(self, node_fqn: str, timeout: float = 10.0) -> str | None:
        """Label of the node's current state ('unconfigured', 'inactive', 'active', ...), None on time-out."""
        res = self._call(GetState, f'{node_fqn}/get_state', GetState.Request(), timeout)
        return None if res is None else res.current_state.label

    def change_state(self, node_fqn: str, transition: str, timeout: float = 30.0) -> tuple[bool, str]:
        """Request a transition by name; return (success, reason)."""
        if transition not in TRANSITIONS:
            return False, f'unknown transition {transition!r}'
        req = ChangeState.Request()
        req.transition.id = TRANSITIONS[transition]
        res = self._call(ChangeState, f'{node_fqn}/change_state', req, timeout)
        if res is None:
            return False, f'no answer from {node_fqn}/change_state within {timeout:g} s'
        return bool(res.success), '' if res.success else 'the node rejected the transition'
