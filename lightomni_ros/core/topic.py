# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Topic^t = {M_s^t, M_e^t}: what one interaction contributes to long-term memory (mirrors ``lightomni_ros/Topic``).

The sleep-time memory pass (reflex) writes it, the Topic message carries it, consolidation stores it; the same record
all the way, with a JSON round trip for the durable queue.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


def segment_key(segment_id: int, start: float) -> tuple[int, float]:
    """What identifies a segment across nodes and restarts: its id and its start to the millisecond.

    The start survives the round trip through ``builtin_interfaces/Time`` only to the nanosecond, not bit for bit.
    ValueError for an id no store can hold (a uint64 past 2^63 - 1) or a start that is not a finite time.
    """
    sid, t = int(segment_id), float(start)
    if not 0 <= sid < 2**63 or not math.isfinite(t):
        raise ValueError(f'segment ({segment_id}, {start}) cannot be keyed: id out of range or start not finite')
    return sid, round(t, 3)


@dataclass(kw_only=True)
class ReminderIntent:
    """A time intent ("remind me to ... in three minutes"): ``due`` is epoch seconds (0 = parse ``text`` for it)."""

    text: str
    due: float = 0.0
    face_id: str = ''


@dataclass(kw_only=True)
class TopicData:
    """What one interaction contributes to long-term memory."""

    segment_id: int
    start: float
    end: float
    face_ids: list[str] = field(default_factory=list)
    semantic: list[str] = field(default_factory=list)
    remembered: list[str] = field(default_factory=list)
    visual: str = ''
    audio: str = ''
    response: str = ''
    raw_refs: list[str] = field(default_factory=list)
    reminders: list[ReminderIntent] = field(default_factory=list)
    producer: str = ''                 # "memory-adapter" or "fallback-parser"
    problem: str = ''                  # why the fallback parser wrote it ('' when the model output parsed)
    dropped: list[str] = field(default_factory=list)   # facts of the model output that nothing in the segment said
    unseen_visual: str = ''            # the model's description of what was seen, replaced: the segment did not show it
    repaired: str = ''                 # the model's reply when it was no JSON and its complete fields were read alone
    reading: int = 0                   # the beam reading kept on a second look (0: the greedy one; sleep.reread)
    read_alone: int = 0                # statements read alone on a second look, their facts added (sleep.untold)
    placed: int = 0                    # facts of where a thing was put, read by rule (placement.with_placements)
    timed: int = 0                     # facts of when an event is, read by rule (schedule.with_schedule)

    def check(self) -> None:
        """Raise ValueError naming the first malformed field."""
        if not 0 <= self.segment_id < 2**63:
            raise ValueError('segment_id must be in 0..2^63-1')
        if not (self.start >= 0 and self.end >= 0):
            raise ValueError('start/end must be valid times')
        if self.end < self.start:
            raise ValueError(f'end ({self.end}) is before start ({self.start})')
        for name in ('face_ids', 'semantic', 'remembered', 'raw_refs'):
            if not all(isinstance(x, str) for x in getattr(self, name)):
                raise ValueError(f'{name} must be a list of strings')

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (the pending queue's payload)."""
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> 'TopicData':
        """Inverse of :meth:`to_json` (unknown keys are an error)."""
        d = dict(d)
        d['reminders'] = [ReminderIntent(**r) for r in d.get('reminders', [])]
        t = cls(**d)
        t.check()
        return t


__all__ = ['TopicData', 'ReminderIntent', 'segment_key']
