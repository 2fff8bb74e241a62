# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Fill any ROS message with deterministic non-default values (every field, nested and sequences included)."""

from __future__ import annotations

import importlib
import re
from typing import Any

_INT = {'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'char'}
_FLOAT = {'float', 'double'}
_SEQ = re.compile(r'^sequence<(.+?)(?:, \d+)?>$')
_ARR = re.compile(r'^(.+)\[(\d+)\]$')


def message_class(type_name: str) -> type:
    """'pkg/Type' -> the Python message class."""
    pkg, name = type_name.split('/')
    return getattr(importlib.import_module(f'{pkg}.msg'), name)


def _value(type_str: str, seed: int, depth: int) -> Any:
    m = _SEQ.match(type_str)
    if m:
        return [_value(m.group(1), seed + i, depth) for i in range(2)]
    m = _ARR.match(type_str)
    if m:
        return [_value(m.group(1), seed + i, depth) for i in range(int(m.group(2)))]
    if type_str in _INT:
        return (seed * 7 + 3) % 120 + 1
    if type_str in _FLOAT:
        return float((seed * 13) % 1000) + 0.5  # exact in float32
    if type_str == 'boolean':
        return seed % 2 == 0
    if type_str in ('octet', 'byte'):
        return bytes([(seed * 5) % 250 + 1])
    if type_str.startswith('string') or type_str.startswith('wstring'):
        return f's{seed}-\u00e9'  # non-ASCII on purpose
    if '/' in type_str:
        return fill(message_class(type_str), seed, depth + 1)
    raise ValueError(f'unhandled field type {type_str!r}')


def fill(cls: type, seed: int = 1, depth: int = 0) -> Any:
    """Instance of ``cls`` with every field set from ``seed`` (same seed -> equal messages)."""
    msg = cls()
    for i, (name, type_str) in enumerate(cls.get_fields_and_field_types().items()):
        if name == 'nanosec':
            setattr(msg, name, (seed * 1000 + i) % 999_999_999)
            continue
        setattr(msg, name, _value(type_str, seed * 31 + i, depth))
    return msg


def interface_names(kind: str) -> list[str]:
    """Names of the package's messages ('msg') or services ('srv'), from the generated module."""
    mod = importlib.import_module(f'lightomni_ros.{kind}')
    return sorted(n for n in dir(mod) if n[:1].isupper() and not n.endswith(('_Request', '_Response', '_Event')))
