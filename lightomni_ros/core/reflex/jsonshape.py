# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The memory reply's JSON shape, checked a character at a time: what a constrained decode may go on with.

A small adapter sometimes breaks its JSON ("...; sleep"}} closing a list with a brace, a key misspelt, a string cut
by a raw line break); the reply is then partly read or not at all, and the segment's facts fall back to a quote. Held
to this shape at every decode step (:func:`keeper`, the ``keep`` of :func:`~.generation.greedy_decode`), the decode
takes the most likely token that keeps the reply a prefix of a valid Topic JSON, and may end only once it is whole.
A reply cut by the token budget or a loop stays a prefix (the checks then read what it completed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

#: what a value may be: one string, a list of strings, a list of objects (anything inside), or any JSON value
STRING, STRINGS, OBJECTS, ANY = 'string', 'strings', 'objects', 'any'
_OBJECT = 'object'          # an element of OBJECTS
_VALUE_STARTS = {STRING: '"', STRINGS: '[', OBJECTS: '[', _OBJECT: '{', ANY: '"{[-0123456789tfn'}
_ELEMENTS = {STRINGS: STRING, OBJECTS: _OBJECT}
_LITERALS = ('true', 'false', 'null')
_NUMBER_PREFIX = re.compile(r'-?(0|[1-9]\d*)?(\.\d*)?([eE][+-]?\d*)?')
_NUMBER = re.compile(r'-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?')
_ESCAPES = '"\\/bfnrtu'
_HEX = '0123456789abcdefABCDEF'
_SPACE = ' \t\n\r'


@dataclass
class _Frame:
    """One open object or list: what comes next in it, and what its values may be."""

    is_object: bool
    phase: str                         # object: key_or_end, key, colon, value, next; list: value_or_end, value, next
    element: str = ANY                 # a list's element kind
    keys: tuple[str, ...] = ()         # an object's keys in the order they may come (empty: any key)
    kinds: Mapping[str, str] = field(default_factory=dict)
    last_key: int = -1                 # the index in ``keys`` of the key read last
    key: str = ''                      # the key whose value comes next


@dataclass
class ShapeParser:
    """A prefix of JSON text read so far, against a top-level object shape (key -> kind, keys in order).

    :meth:`feed` returns False at the first character no text of the shape can have there; the parser is then
    ``spent``. ``complete`` is True once the top-level object has closed (only white space may follow).
    """

    shape: Mapping[str, str]
    banned: str = ''                   # characters no string of the shape holds
    stack: list[_Frame] = field(default_factory=list)
    started: bool = False
    complete: bool = False
    spent: bool = False
    in_string: bool = False
    string_is_key: bool = False
    buffer: str = ''                   # the key read so far, or the number / literal read so far
    escape: int = 0                    # 1 after a backslash; 2..5 while reading the hex digits of \\uXXXX
    scalar: bool = False               # reading a number or a literal

    def copy(self) -> ShapeParser:
        """An independent parser in the same state."""
        return replace(self, stack=[replace(f) for f in self.stack])     # a frame's kinds are never changed

    def feed(self, text: str) -> bool:
        """Read ``text``; False when it cannot continue a reply of the shape."""
        if self.spent or not all(self._char(ch) for ch in text):
            self.spent = True
            return False
        return True

    # -- one character ----------------------------------------------------------------------------------------------
    def _char(self, ch: str) -> bool:
        if self.in_string:
            return self._string_char(ch)
        if self.scalar:
            if ch in _SPACE or ch in ',]}':
                if not self._end_scalar():
                    return False
                return ch in _SPACE or self._structural(ch)
            self.buffer += ch
            return _scalar_prefix(self.buffer)
        if ch in _SPACE:
            return True
        if self.complete:
            return False
        if not self.started:
            if ch != '{':
                return False
            self.started = True
            keys = tuple(self.shape)
            self.stack.append(_Frame(is_object=True, phase='key_or_end', keys=keys, kinds=dict(self.shape)))
            return True
        return self._structural(ch)

    def _structural(self, ch: str) -> bool:
        top = self.stack[-1]
        if top.is_object:
            return self._in_object(top, ch)
        return self._in_list(top, ch)

    def _in_object(self, top: _Frame, ch: str) -> bool:
        if top.phase in ('key_or_end', 'key'):
            if ch == '}' and top.phase == 'key_or_end':
                return self._close()
            if ch != '"':
                return False
            self.in_string, self.string_is_key, self.buffer = True, True, ''
            return True
        if top.phase == 'colon':
            if ch != ':':
                return False
            top.phase = 'value'
            return True
        if top.phase == 'value':
            return self._value_start(ch, top.kinds.get(top.key, ANY) if top.keys else ANY)
        # next
        if ch == ',':
            top.phase = 'key'
            return True
        return ch == '}' and self._close()

    def _in_list(self, top: _Frame, ch: str) -> bool:
        if top.phase in ('value_or_end', 'value'):
            if ch == ']' and top.phase == 'value_or_end':
                return self._close()
            return self._value_start(ch, top.element)
        if ch == ',':
            top.phase = 'value'
            return True
        return ch == ']' and self._close()

    def _value_start(self, ch: str, kind: str) -> bool:
        if ch not in _VALUE_STARTS[kind]:
            return False
        if ch == '"':
            self.in_string, self.string_is_key, self.buffer = True, False, ''
        elif ch == '{':
            self.stack.append(_Frame(is_object=True, phase='key_or_end'))
        elif ch == '[':
            element = _ELEMENTS.get(kind, ANY)
            self.stack.append(_Frame(is_object=False, phase='value_or_end', element=element))
        else:
            self.scalar, self.buffer = True, ch
        return True

    def _string_char(self, ch: str) -> bool:
        if self.escape == 1:
            if ch not in _ESCAPES:
                return False
            self.escape = 2 if ch == 'u' else 0
            return self._key_char('\\' + ch)
        if self.escape >= 2:
            if ch not in _HEX:
                return False
            self.escape = 0 if self.escape == 5 else self.escape + 1
            return self._key_char(ch)
        if ch == '\\':
            self.escape = 1
            return True
        if ch == '"':
            self.in_string = False
            return self._end_key() if self.string_is_key else self._value_done()
        if ord(ch) < 0x20 or ch in self.banned:      # a raw control character (a line break) is no JSON string
            return False
        return self._key_char(ch)

    def _key_char(self, ch: str) -> bool:
        """A character of a key: at a shaped object, the key so far must begin a key still allowed there."""
        if not self.string_is_key:
            return True
        self.buffer += ch
        top = self.stack[-1]
        return not top.keys or any(k.startswith(self.buffer) for k in top.keys[top.last_key + 1:])

    def _end_key(self) -> bool:
        top = self.stack[-1]
        if top.keys:
            later = top.keys[top.last_key + 1:]
            if self.buffer not in later:
                return False
            top.last_key += 1 + later.index(self.buffer)
        top.key, top.phase = self.buffer, 'colon'
        return True

    def _end_scalar(self) -> bool:
        self.scalar = False
        if not (self.buffer in _LITERALS or _NUMBER.fullmatch(self.buffer)):
            return False
        return self._value_done()

    def _value_done(self) -> bool:
        self.stack[-1].phase = 'next'
        return True

    def _close(self) -> bool:
        self.stack.pop()
        if not self.stack:
            self.complete = True
            return True
        return self._value_done()


def _scalar_prefix(text: str) -> bool:
    return any(lit.startswith(text) for lit in _LITERALS) or bool(_NUMBER_PREFIX.fullmatch(text))


#: the memory reply (prompts.MEMORY_KEYS, in that order): what was seen, facts, pinned items, reminders
MEMORY_SHAPE: Mapping[str, str] = {'visual': STRING, 'semantic': STRINGS, 'remembered': STRINGS,
                                   'reminders': OBJECTS}
#: no string of a memory reply holds a bracket or a brace (none of the 4,177 strings of the generator's train and
#: held-out topics does): one written inside a string is the model closing a string it never closed
#: ('["<face_2>, <face_1>; laptop]}'), and the decode takes the closing quote instead
MEMORY_BANNED = '[]{}'


def keeper(decode: Callable[[list[int]], str], head: str, end_ids: set[int],
           shape: Mapping[str, str] = MEMORY_SHAPE, banned: str = MEMORY_BANNED) -> Callable[[list[int]], bool] | None:
    """A ``keep`` for a decode whose reply follows ``head``: True for ids that keep ``head`` + reply of ``shape``.

    An end token (``end_ids``) is kept only once the object is whole; no string holds a character of ``banned``. The
    state after the ids a step extends is remembered, so each candidate token reads only its own text. None when
    ``head`` itself is no prefix of the shape (the decode then goes unheld).
    """
    start = ShapeParser(shape=shape, banned=banned)
    if not start.feed(head):
        return None
    bases: dict[tuple[int, ...], tuple[str, ShapeParser]] = {}

    def base_of(ids: list[int]) -> tuple[str, ShapeParser]:
        key = tuple(ids)
        if key not in bases:
            if len(bases) > 64:         # the rows of the last steps are all a decode extends
                bases.clear()
            parser = start.copy()
            text = decode(ids)
            parser.feed(text)
            bases[key] = (text, parser)
        return bases[key]

    def keep(ids: list[int]) -> bool:
        if not ids:
            return True
        base_text, base = base_of(ids[:-1])
        if base.spent:
            return False
        if ids[-1] in end_ids:
            return base.complete
        text = decode(ids)
        if text == base_text:       # a special token writes nothing: it is no step of the reply
            return False
        if text.startswith(base_text):
            return base.copy().feed(text[len(base_text):])
        return start.copy().feed(text)

    return keep
