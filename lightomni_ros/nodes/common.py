# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The node toolkit: QoS profiles, parameters from a config bundle, service calls, interface registry, diagnostics.

Every node is a thin driver of one core runtime; what nodes need beyond it lives here once: declaring a runtime's
config bundle as ROS parameters, one service call with a time-out and clean cancellation, one registry of created
interfaces destroyed together, diagnostics at a fixed rate, and the background node that replays, benchmarks and
tests use to talk to a graph. A node's ``main()`` is in :mod:`.process`.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, TypeVar

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.client import Client
from rclpy.context import Context
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.service import Service
from rclpy.subscription import Subscription
from rclpy.timer import Timer
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSCompatibility, QoSProfile, ReliabilityPolicy,
                       qos_check_compatible, qos_profile_sensor_data)

from ..core import config as cfgmod
from ..core.timing import StageTimer

C = TypeVar('C')
R = TypeVar('R')
# DiagnosticStatus levels as ints (the message field is a one-byte `bytes`).
OK, WARN, ERROR = 0, 1, 2

#: Camera and microphone inputs: best effort, keep last 5 (a late frame is worth less than a fresh one).
SENSOR_QOS = qos_profile_sensor_data
#: Actions, segments, topics: every message matters.
RELIABLE_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
#: State (global state, face gallery): late joiners get the latest value.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


def declare_config(node: Node, cls: type[C], prefix: str = '') -> C:
    """Declare one ROS parameter per config field (same name, default and description) and build the config.

    Raises :class:`lightomni_ros.core.config.ConfigError` with the parameter's name when a value is invalid.
    """
    values: dict[str, Any] = {}
    for row in cfgmod.describe(cls):
        name = prefix + row['name']
        desc = row['doc']
        if row['choices']:
            desc += f' (one of {list(row["choices"])})'
        if not node.has_parameter(name):
            node.declare_parameter(name, row['default'], ParameterDescriptor(description=desc))
        values[row['name']] = node.get_parameter(name).value
    try:
        return cfgmod.from_dict(cls, values)
    except cfgmod.ConfigError as e:
        raise cfgmod.ConfigError(f'{prefix}{e}') from e


def declare_configs(node: Node, bundle_cls: type[C]) -> C:
    """Declare every section of a runtime's config bundle as parameters and build the bundle (ConfigError when bad)."""
    sections = cfgmod.sections(bundle_cls)
    return bundle_cls(**{name: declare_config(node, cls, prefix) for prefix, (name, cls) in sections.items()})


def declare_at_start(node: Node, bundle_cls: type[C]) -> C | None:
    """Declare a bundle's parameters when the node is created (so they can be listed and set before configure).

    An invalid value is logged and gives None here; on_configure declares again and fails with the reason.
    """
    try:
        return declare_configs(node, bundle_cls)
    except cfgmod.ConfigError as e:
        node.get_logger().error(f'invalid parameter: {e}')
        return None


CANCELLED = 'cancelled'


def call_service(client: Client, request: Any, timeout_s: float,
                 cancel: threading.Event | None = None) -> tuple[Any, str]:
    """Call a service and wait: ``(response, '')``, or ``(None, why not)`` when it is missing, slow or failed.

    A call that times out, or is given up because ``cancel`` was set (the caller is stopping; the reason then
    starts with :data:`CANCELLED`), is withdrawn from the client, so a late answer is dropped instead of piling up.
    """
    name = client.srv_name.rsplit('/', 1)[-1]
    if not client.service_is_ready():
        return None, f'{name} service not available'
    done = threading.Event()
    future = client.call_async(request)
    future.add_done_callback(lambda _: done.set())
    deadline = time.monotonic() + timeout_s
    step = timeout_s if cancel is None else 0.1  # a cancellable wait looks at the flag ten times a second
    while not done.wait(min(step, max(0.0, deadline - time.monotonic()))):
        if cancel is not None and cancel.is_set():
            why = f'{CANCELLED}: {name} given up, the caller is stopping'
        elif time.monotonic() >= deadline:
            why = f'{name} timed out after {timeout_s:g} s'
        else:
            continue
        client.remove_pending_request(future)
        future.cancel()
        return None, why
    resp = future.result()
    if resp is None:
        return None, f'{name} gave no response'
    if hasattr(resp, 'success') and not resp.success:
        return None, f'{name} failed: {getattr(resp, "message", "")}'
    return resp, ''


class QuietSubscriptions:
    """Node mixin: subscriptions without rclpy's default QoS event handlers (QoS mismatches go to diagnostics).

    With rmw_fastrtps, a subscription's event handlers keep a multi-threaded executor's wait set awake while a message
    waits to be taken; until a worker thread takes it, the spin thread loops on an empty wait (measured: ~2000 loops/s)
    and holds the GIL, so worker and model threads starve and keep-last histories overflow (``lightomni bench
    executor`` measures it: with 50 Hz messages into a 4-thread executor, 0.02-0.2 of them delivered with the handlers,
    0.93 without, and a Python thread beside it 7-80x slower). The incompatible-QoS warning those handlers gave is
    raised by :func:`qos_problems` through :class:`Diagnostics` instead.
    """

    def create_subscription(self, *args: Any, event_callbacks: SubscriptionEventCallbacks | None = None,
                            **kwargs: Any) -> Subscription:
        """``Node.create_subscription`` with no event handlers unless the caller asks for some."""
        if event_callbacks is None:
            event_callbacks = SubscriptionEventCallbacks(use_default_callbacks=False)
        return super().create_subscription(*args, event_callbacks=event_callbacks, **kwargs)  # type: ignore[misc]


class QuietNode(QuietSubscriptions, Node):
    """A plain rclpy node with :class:`QuietSubscriptions`."""


def qos_problems(node: Node) -> list[str]:
    """Subscriptions of ``node`` that a discovered publisher cannot serve (incompatible QoS), one text each."""
    problems = []
    for sub in list(node.subscriptions):
        try:
            infos = node.get_publishers_info_by_topic(sub.topic_name)
        except Exception:  # noqa: BLE001 - a subscription destroyed meanwhile, or the context going down
            continue
        for info in infos:
            level, reason = qos_check_compatible(info.qos_profile, sub.qos_profile)
            if level == QoSCompatibility.ERROR:
                who = f'{info.node_namespace.rstrip("/")}/{info.node_name}'
                who = 'a publisher' if 'UNKNOWN' in who else f'publisher {who}'      # discovery not complete yet
                why = reason.removeprefix('ERROR:').strip().rstrip(';') or 'incompatible'
                problems.append(f'{sub.topic_name}: {who} offers QoS this subscription cannot use ({why}); '
                                'its messages never arrive')
    return problems


class Interfaces:
    """Publishers, subscriptions, services, clients and timers a node created, destroyed together (newest first)."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._handles: list[Any] = []

    def add(self, handle: R) -> R:
        """Register a created interface; return it."""
        self._handles.append(handle)
        return handle

    def destroy(self) -> None:
        """Destroy every registered interface."""
        n = self.node
        destroyers: list[tuple[type, Callable[[Any], Any]]] = [
            (Publisher, n.destroy_publisher), (Subscription, n.destroy_subscription), (Service, n.destroy_service),
            (Client, n.destroy_client), (Timer, n.destroy_timer)]
        for handle in reversed(self._handles):
            for cls, destroy in destroyers:
                if isinstance(handle, cls):
                    destroy(handle)
                    break
        self._handles = []

    def __len__(self) -> int:
        return len(self._handles)


class Diagnostics:
    """Publishes /diagnostics at a fixed rate: per-stage latency with WARN/ERROR thresholds, counters, warnings.

    Warnings raised by bad input (``warn(key, text)``) stay visible as WARN for ``warn_hold_s`` seconds, so an operator
    watching /diagnostics sees them even when the input recovered. Every ``qos_check_every`` publishes the node's
    subscriptions are checked against the publishers discovered on their topics (WARN ``qos``).
    """

    def __init__(self, node: Node, name: str, timer: StageTimer, *, period_s: float = 1.0,
                 warn_ms: dict[str, float] | None = None, error_ms: dict[str, float] | None = None,
                 warn_hold_s: float = 10.0, qos_check_every: int = 5) -> None:
        self.node = node
        self.qos_check_every = qos_check_every
        self._published = 0
        self.name = name
        self.timer = timer
        self.warn_ms = warn_ms or {}
        self.error_ms = error_ms or {}
        self.warn_hold_s = warn_hold_s
        self.counters: dict[str, float] = {}
        self.values: dict[str, str] = {}
        self._warnings: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()
        self._pub = node.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._tmr = node.create_timer(period_s, self.publish)

    def count(self, key: str, n: float = 1) -> None:
        """Add ``n`` to counter ``key``."""
        with self._lock:
            self.counters[key] = self.counters.get(key, 0) + n

    def set(self, key: str, value: Any) -> None:
        """Report a free value (e.g. the execution path in use)."""
        with self._lock:
            self.values[key] = str(value)

    def warn(self, key: str, text: str) -> None:
        """Raise a WARN (also logged, throttled) naming the problem; counted under ``warn.<key>``."""
        now = self.node.get_clock().now().nanoseconds / 1e9
        with self._lock:
            self._warnings[key] = (text, now)
            self.counters[f'warn.{key}'] = self.counters.get(f'warn.{key}', 0) + 1
        self.node.get_logger().warning(f'{key}: {text}', throttle_duration_sec=5.0)

    def status(self) -> DiagnosticStatus:
        """Build the current status message."""
        now = self.node.get_clock().now().nanoseconds / 1e9
        level, msgs, kv = OK, [], []
        for stage, s in sorted(self.timer.summary().items()):
            kv += [KeyValue(key=f'{stage}.p50_ms', value=f'{s["p50"]:.2f}'),
                   KeyValue(key=f'{stage}.p99_ms', value=f'{s["p99"]:.2f}'),
                   KeyValue(key=f'{stage}.count', value=str(s['count']))]
            if stage in self.error_ms and s['p50'] > self.error_ms[stage]:
                level = max(level, ERROR)
                msgs.append(f'{stage} p50 {s["p50"]:.0f} ms > {self.error_ms[stage]:.0f}')
            elif stage in self.warn_ms and s['p50'] > self.warn_ms[stage]:
                level = max(level, WARN)
                msgs.append(f'{stage} p50 {s["p50"]:.0f} ms > {self.warn_ms[stage]:.0f}')
        with self._lock:
            kv += [KeyValue(key=k, value=f'{v:g}') for k, v in sorted(self.counters.items())]
            kv += [KeyValue(key=k, value=v) for k, v in sorted(self.values.items())]
            for key, (text, t) in list(self._warnings.items()):
                if now - t > self.warn_hold_s:
                    del self._warnings[key]
                    continue
                level = max(level, WARN)
                msgs.append(f'{key}: {text}')
        return DiagnosticStatus(level=bytes([level]),
                                name=f'{self.node.get_name()}: {self.name}', hardware_id=self.node.get_name(),
                                message='; '.join(msgs) or 'ok', values=kv)

    def publish(self) -> None:
        """Publish one DiagnosticArray (after the periodic QoS check)."""
        if self.qos_check_every and self._published % self.qos_check_every == 0:
            for text in qos_problems(self.node):
                self.warn('qos', text)
        self._published += 1
        arr = DiagnosticArray()
        arr.header.stamp = self.node.get_clock().now().to_msg()
        arr.status = [self.status()]
        self._pub.publish(arr)

    def destroy(self) -> None:
        """Stop publishing."""
        self.node.destroy_timer(self._tmr)
        self.node.destroy_publisher(self._pub)


def report_failure(node: Node, name: str, message: str) -> None:
    """Log an error and publish it once as an ERROR on /diagnostics (a failed configure has no Diagnostics yet)."""
    node.get_logger().error(message)
    pub = node.create_publisher(DiagnosticArray, '/diagnostics', LATCHED_QOS)
    arr = DiagnosticArray()
    arr.header.stamp = node.get_clock().now().to_msg()
    arr.status = [DiagnosticStatus(level=bytes([ERROR]), name=f'{node.get_name()}: {name}',
                                   hardware_id=node.get_name(), message=message)]
    pub.publish(arr)


class BackgroundNode:
    """An rclpy node on its own Context, spun by an executor in a daemon thread, for code that drives a graph.

    Replays, benchmarks and tests publish, record and call services from their own thread while this one spins; a
    Context of its own keeps them apart from any node in the same process.
    """

    def __init__(self, name: str, *, domain_id: int | None = None, threads: int = 2, **node_kwargs: Any) -> None:
        self.context = Context()
        if domain_id is None:
            rclpy.init(context=self.context)
        else:
            rclpy.init(context=self.context, domain_id=domain_id)
        self.node: Node = QuietNode(name, context=self.context, **node_kwargs)
        self.executor = (SingleThreadedExecutor(context=self.context) if threads == 1
                         else MultiThreadedExecutor(num_threads=threads, context=self.context))
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True, name=f'{name}_spin')
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - the context is shut down under the executor at close
            pass

    def close(self) -> None:
        """Stop spinning, destroy the node and shut its context down."""
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(timeout=2.0)


def lower_thread_priority(nice: int) -> str:
    """Add ``nice`` to the calling thread's niceness (Linux keeps it per thread); '' when done, else why not.

    Background work (a reflex node's sleep time) then takes the CPU only after the work an answer waits for.
    """
    if nice <= 0:
        return ''
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except (OSError, AttributeError) as e:      # not Linux, or not allowed
        return f'{type(e).__name__}: {e}'
    return ''
