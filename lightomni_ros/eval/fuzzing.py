# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Hypothesis strategies for any ROS message class: extreme and malformed field values that still go on the wire.

Every field gets the values that break parsers: empty and huge strings, control and right-to-left characters,
integer bounds, NaN and infinite floats, empty and long sequences, sizes that disagree with the data (an Image's
width, height and step are drawn independently of its bytes), times with nanoseconds past one second. Values stay
within what the field's type can carry, so each message serialises; truncated and random bytes are the bench's job.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from hypothesis import strategies as st

_INT = {'int8': (-2**7, 2**7 - 1), 'uint8': (0, 2**8 - 1), 'int16': (-2**15, 2**15 - 1), 'uint16': (0, 2**16 - 1),
        'int32': (-2**31, 2**31 - 1), 'uint32': (0, 2**32 - 1), 'int64': (-2**63, 2**63 - 1),
        'uint64': (0, 2**64 - 1), 'byte': (0, 255), 'octet': (0, 255), 'char': (0, 255)}
_SPECIAL_TEXT = ['', ' ', '<face_1>', '<face_>', '\u202eevil', '\x00\x01\x02', 'Ω' * 500, 'a' * 70_000,
                 'remind me to jump in 99999999999 hours', 'forget me', 'Remember that ' + 'x' * 5000,
                 '{"semantic": [}', "'; DROP TABLE semantic; --", 'file:///etc/passwd', '../../../etc/shadow',
                 'NaN', '1e309']


def _text() -> st.SearchStrategy[str]:
    chars = st.characters(blacklist_categories=('Cs',))      # surrogates cannot be encoded as UTF-8 at all
    return st.one_of(st.sampled_from(_SPECIAL_TEXT), st.text(chars, max_size=40))


def _int(kind: str) -> st.SearchStrategy[int]:
    lo, hi = _INT[kind]
    return st.one_of(st.sampled_from([lo, hi, 0, 1, max(lo, -1)]), st.integers(lo, hi))


def _float(bits: int) -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from([float('nan'), float('inf'), -float('inf'), 0.0, -0.0, 1e38 if bits == 32
                                      else 1e308]), st.floats(width=bits))


def _class(type_name: str) -> type:
    pkg, name = type_name.split('/')[0], type_name.split('/')[-1]
    return getattr(importlib.import_module(f'{pkg}.msg'), name)


def field_strategy(kind: str, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values for one rosidl field type ("string", "float32", "sequence<uint8>", "pkg/Type", "int32[4]", ...)."""
    m = re.fullmatch(r'sequence<(.+?)(?:, (\d+))?>', kind)
    if m:
        item, bound = m.group(1), int(m.group(2)) if m.group(2) else None
        if item in ('uint8', 'octet', 'byte'):
            data = st.one_of(st.binary(max_size=64), st.sampled_from([b'', b'\xff' * 100_000, bytes(3_000_000)]))
            return data if bound is None else st.binary(max_size=bound)
        if depth > 2:
            return st.just([])
        most = bound if bound is not None else (3 if '/' in item else 8)
        return st.lists(field_strategy(item, depth + 1), max_size=most)
    m = re.fullmatch(r'(.+)\[(\d+)\]', kind)
    if m:
        return st.lists(field_strategy(m.group(1), depth + 1), min_size=int(m.group(2)), max_size=int(m.group(2)))
    m = re.fullmatch(r'(?:bounded_)?string(?:<=(\d+))?', kind)
    if m or kind in ('wstring',):
        bound = int(m.group(1)) if m and m.group(1) else None
        return _text() if bound is None else st.text(max_size=bound)
    if kind in _INT:
        return _int(kind)
    if kind == 'float':
        return _float(32)
    if kind == 'double':
        return _float(64)
    if kind == 'boolean':
        return st.booleans()
    if '/' in kind:
        return message_strategy(_class(kind), depth + 1)
    raise ValueError(f'no strategy for field type {kind!r}')


def message_strategy(cls: type, depth: int = 0) -> st.SearchStrategy[Any]:
    """Messages of ``cls`` with every field drawn from :func:`field_strategy`."""
    fields = cls.get_fields_and_field_types()
    if depth > 3:
        return st.just(cls())
    return st.fixed_dictionaries({name: field_strategy(kind, depth) for name, kind in fields.items()}).map(
        lambda d: cls(**d))


__all__ = ['message_strategy', 'field_strategy']
