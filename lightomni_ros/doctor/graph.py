# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Whether a node graph is running on this ROS domain, which lightomni nodes it has, and their lifecycle states.

Discovery has no "done" event: the check listens for ``discovery_s`` seconds, or until it has seen a whole graph
(perception, reflex and consolidation in one namespace). A node is a lightomni node when one of its topics or
services has a ``lightomni_ros/`` type, or (unconfigured: interfaces are created on activate) when it has one of
the three names and lifecycle services; its state comes from its ``get_state`` service.
"""

from __future__ import annotations

import os
import time

from .record import OK, WARN, Check, Context

ROLES = ('perception', 'reflex', 'consolidation')


def _fqn(name: str, namespace: str) -> str:
    return namespace.rstrip('/') + '/' + name


def _types(node: object, name: str, namespace: str) -> list[str]:
    found = []
    for getter in ('get_publisher_names_and_types_by_node', 'get_subscriber_names_and_types_by_node',
                   'get_service_names_and_types_by_node'):
        try:
            found += [t for _, types in getattr(node, getter)(name, namespace) for t in types]
        except Exception:  # noqa: BLE001 - the node left while we asked
            continue
    return found


def discover(discovery_s: float) -> tuple[list[str], dict[str, list[str]]]:
    """All node names seen, and lightomni nodes -> their services, after listening up to ``discovery_s``."""
    import rclpy
    from rclpy.context import Context as RclContext

    ctx = RclContext()
    rclpy.init(context=ctx)
    node = rclpy.create_node(f'lightomni_doctor_{os.getpid()}', context=ctx, enable_rosout=False,
                             start_parameter_services=False)
    try:
        deadline = time.monotonic() + discovery_s
        ours: dict[str, list[str]] = {}
        while True:
            names = [(n, ns) for n, ns in node.get_node_names_and_namespaces() if n != node.get_name()]
            for n, ns in names:
                try:
                    services = [s for s, _ in node.get_service_names_and_types_by_node(n, ns)]
                except Exception:  # noqa: BLE001 - the node left while we asked
                    continue
                lifecycle = f'{_fqn(n, ns)}/get_state' in services
                # an unconfigured node has only its lifecycle services yet: its name tells
                if (n in ROLES and lifecycle) or any(t.startswith('lightomni_ros/') for t in _types(node, n, ns)):
                    ours[_fqn(n, ns)] = services
            spaces = {fqn.rsplit('/', 1)[0] for fqn in ours}
            whole = any(all(f'{sp}/{r}' in ours for r in ROLES) for sp in spaces)
            if whole or time.monotonic() >= deadline:
                return sorted(_fqn(n, ns) for n, ns in names), ours
            time.sleep(0.1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)


def check(ctx: Context) -> list[Check]:
    """List the graph and the lifecycle state of each lightomni node."""
    domain = os.environ.get('ROS_DOMAIN_ID', '0')
    where = f'ROS_DOMAIN_ID={domain}, discovery range {os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")}'
    if not ctx.graph:
        return [Check('graph', OK, f'not looked for (--no-graph); {where}')]
    try:
        names, ours = discover(ctx.discovery_s)
    except Exception as exc:  # noqa: BLE001 - rclpy missing or DDS failing: said, the rest of the report stands
        return [Check('graph', WARN, f'could not join the ROS graph ({type(exc).__name__}: {exc})',
                      'fix the interfaces/DDS findings above first')]
    if not ours:
        others = f'; other nodes: {names[:8]}' if names else ''
        return [Check('graph', OK, f'no lightomni node running ({where}, listened {ctx.discovery_s:g} s){others}; '
                                   'start one with `lightomni launch lightomni.launch.py`')]
    from lightomni_ros.launch_runner.lifecycle import LifecycleClient

    states = {}
    with LifecycleClient() as client:
        for fqn, services in sorted(ours.items()):
            lifecycle = f'{fqn}/get_state' in services
            states[fqn] = (client.get_state(fqn, timeout=5.0) or 'no answer') if lifecycle else 'not a lifecycle node'
    listing = ', '.join(f'{fqn} {state}' for fqn, state in states.items())
    idle = [fqn for fqn, state in states.items() if state not in ('active', 'not a lifecycle node')]
    if idle:
        return [Check('graph', WARN, f'{where}: {listing}',
                      f'{", ".join(idle)} not active: launch with autostart:=true, or configure and activate '
                      'them; a node that stays unconfigured failed on_configure (its log says why)')]
    return [Check('graph', OK, f'{where}: {listing}')]
