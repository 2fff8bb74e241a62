# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Stored reminders: each added once however often it is heard, each fired once when due (or late, after a restart).

Time intents are read by :func:`lightomni_ros.core.timeparse.reminder_intent` relative to a reference time (the end of
the segment the request was heard in), so a replayed bag gives the same due times as the live run. Firing is at most
once per reminder: the row is marked fired in the same transaction that returns it, and a reminder already past due at
start-up fires then, with its delay stated.
"""

from __future__ import annotations

import logging

from ..memory.longterm import LongTermMemory
from ..memory.store import REMINDER_FIRED, REMINDER_PENDING, ReminderRow
from ..timeparse import reminder_intent
from ..topic import TopicData
from .errors import RequestError

log = logging.getLogger('lightomni.consolidation')
REMINDER_SAME_S = 5.0      # a reminder with the same text due this close to a stored one is that one


class ReminderBook:
    """Stored reminders: added once (however often they are heard), fired once when due."""

    def __init__(self, memory: LongTermMemory) -> None:
        self.memory = memory

    def add(self, text: str, due: float, face_id: str = '', source_segment: int = 0, now: float | None = None) -> int:
        """Store a reminder unless the same one is already stored; return its id.

        The reflex node sends a reminder when it answers the request and the sleep-time Topic carries it again:
        one due within ``REMINDER_SAME_S`` of a stored one with the same text or from the same segment is that one.
        """
        m = self.memory
        text = (text or '').strip()
        if not text or due <= 0:
            raise RequestError('a reminder needs a text and a due time')
        key = ' '.join(text.lower().split())
        with m.lock:
            for r in m.store.reminders(due_before=due + REMINDER_SAME_S):
                same = ' '.join(r.text.lower().split()) == key or \
                    bool(source_segment and r.source_segment == source_segment)
                if abs(r.due - due) <= REMINDER_SAME_S and same:
                    return r.id
            return m.store.add_reminder(ReminderRow(due=due, text=text, face_id=face_id,
                                                    created=m.clock() if now is None else now,
                                                    source_segment=source_segment))

    def add_from_topic(self, t: TopicData, now: float) -> None:
        """The time intents a Topic carries (or its audio states), each stored once."""
        intents = list(t.reminders)
        if not intents and t.audio:
            found = reminder_intent(t.audio, t.end, self.memory.tz)
            intents = [found] if found else []
        for r in intents:
            due, text = float(r.due), r.text
            if due <= 0:
                found = reminder_intent(text, t.end, self.memory.tz)
                if not found:
                    log.warning('segment %d: reminder %r has no due time and none could be parsed', t.segment_id,
                                text)
                    continue
                due, text = found.due, found.text
            face = r.face_id or (t.face_ids[0] if len(t.face_ids) == 1 else '')
            self.add(text, due, face, t.segment_id, now)

    def fire_due(self, now: float | None = None) -> list[ReminderRow]:
        """Pending reminders due by ``now``, marked fired (each fires once) with their delay."""
        m = self.memory
        now = m.clock() if now is None else now
        fired = []
        with m.lock, m.store.transaction():
            for r in m.store.reminders(REMINDER_PENDING, due_before=now):
                r.delay = max(0.0, now - r.due)
                if m.store.mark_reminder_fired(r.id, now, r.delay):
                    r.status, r.fired_at = REMINDER_FIRED, now
                    fired.append(r)
        return fired

    def spoken(self, reminder_id: int) -> bool:
        """The reflex node confirmed speaking a fired reminder (it is delivered again until then)."""
        m = self.memory
        with m.lock, m.store.transaction():
            return m.store.mark_reminder_spoken(reminder_id, m.clock())

    def unspoken(self, older_than_s: float, now: float | None = None) -> list[ReminderRow]:
        """Fired reminders not confirmed spoken ``older_than_s`` after firing (the reflex node was down)."""
        m = self.memory
        now = m.clock() if now is None else now
        with m.lock:
            return m.store.unspoken_reminders(now - older_than_s)

    def stored(self, status: int | None = None) -> list[ReminderRow]:
        """Stored reminders."""
        with self.memory.lock:
            return self.memory.store.reminders(status)


__all__ = ['ReminderBook', 'REMINDER_SAME_S']
