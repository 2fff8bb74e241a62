# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Message types for bags: the rosbags typestore with our msg/ definitions, rclpy classes by name, QoS conversion.

rclpy has no dynamic message types, so a bag topic can be decoded or replayed only when its type's Python package is
importable (``std_msgs``, ``sensor_msgs``, ``lightomni_ros``, ...); :func:`message_class` answers None otherwise.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import pathlib
from typing import Any

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

log = logging.getLogger('lightomni.eval')
REPO = pathlib.Path(__file__).resolve().parents[2]
#: rmw's "infinite" duration as written by rosbag2 <= Iron (2**31-1 s, 2**32-1 ns): means "not set"
_INFINITE = (2147483647, 4294967295)


def msg_dir() -> pathlib.Path:
    """Folder with lightomni_ros's .msg files (the package share, else the source tree)."""
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        d = pathlib.Path(prefix) / 'share' / 'lightomni_ros' / 'msg'
        if prefix and any(d.glob('*.msg')):
            return d
    return REPO / 'msg'


@functools.lru_cache(maxsize=1)
def typestore() -> Any:
    """A rosbags typestore (ROS 2 Kilted) with every lightomni_ros message registered from its .msg file."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    types: dict[str, Any] = {}
    for path in sorted(msg_dir().glob('*.msg')):
        types.update(get_types_from_msg(path.read_text(), f'lightomni_ros/msg/{path.stem}'))
    store.register(types)
    return store


def normalize_type(msgtype: str) -> str:
    """``pkg/Type`` or ``pkg/msg/Type`` -> ``pkg/msg/Type``."""
    parts = msgtype.strip('/').split('/')
    return f'{parts[0]}/msg/{parts[-1]}' if len(parts) == 2 else '/'.join(parts)


def message_class(msgtype: str) -> Any | None:
    """The rclpy message class of ``pkg/msg/Type``, or None when that package is not installed here."""
    parts = normalize_type(msgtype).split('/')
    if len(parts) != 3:
        return None
    try:
        return getattr(importlib.import_module(f'{parts[0]}.{parts[1]}'), parts[2])
    except (ImportError, AttributeError):
        return None


def header_first(cls: Any) -> bool:
    """Whether the message starts with a std_msgs/Header (its stamp then sits at bytes 4..12 of the CDR)."""
    fields = list(cls.get_fields_and_field_types().items())
    return bool(fields) and fields[0] == ('header', 'std_msgs/Header')


def make_qos(reliable: bool, depth: int, transient_local: bool = False) -> Qos:
    """A rosbags Qos record (keep last ``depth``)."""
    zero = QosTime(0, 0)
    return Qos(QosHistory.KEEP_LAST, depth,
               QosReliability.RELIABLE if reliable else QosReliability.BEST_EFFORT,
               QosDurability.TRANSIENT_LOCAL if transient_local else QosDurability.VOLATILE,
               zero, zero, QosLiveliness.AUTOMATIC, zero, False)


def to_rclpy_qos(profiles: list[Qos], default_depth: int = 10) -> Any:
    """The rclpy QoS to replay a topic with, from the profiles its publishers offered when recording.

    Like ``ros2 bag play``: reliable only when every recorded publisher was reliable, transient-local only when
    every one was; history/depth/deadline/lifespan are not taken from the recording (rosbag2 writes placeholders
    such as history 3 "unknown", depth 0 and 2**31-1 s "infinite" durations there).
    """
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    rel = [p.reliability for p in profiles if p.reliability != QosReliability.UNKNOWN]
    dur = [p.durability for p in profiles if p.durability != QosDurability.UNKNOWN]
    reliable = bool(rel) and all(r == QosReliability.RELIABLE for r in rel)
    latched = bool(dur) and all(d == QosDurability.TRANSIENT_LOCAL for d in dur)
    depths = [p.depth for p in profiles if 0 < p.depth < 10000]
    return QoSProfile(depth=max(depths + [default_depth]), history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


def qos_from_rclpy(profile: Any) -> Qos:
    """Convert an rclpy QoSProfile to a rosbags Qos (for the connections of a recorded output bag)."""
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    return make_qos(profile.reliability == ReliabilityPolicy.RELIABLE, int(profile.depth or 10),
                    profile.durability == DurabilityPolicy.TRANSIENT_LOCAL)


def qos_is_placeholder(q: Qos) -> bool:
    """Whether a recorded profile carries rosbag2's 'infinite' duration placeholders."""
    return (q.deadline.sec, q.deadline.nsec) == _INFINITE or (q.lifespan.sec, q.lifespan.nsec) == _INFINITE
