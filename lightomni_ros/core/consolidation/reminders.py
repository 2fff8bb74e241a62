# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Time intents ("remind me to ... in three minutes", "at 5 pm", "tomorrow morning") and due/late reminder firing.

Parsing is relative to a reference time (the end of the segment the request was heard in), so a replayed bag gives
the same due times as the live run. Firing is at most once per reminder: the row is marked fired in the same
transaction that returns it, and a reminder already past due at start-up fires then, with its delay stated.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
from dataclasses import dataclass

from ..memory.longterm import LongTermMemory
from ..memory.store import REMINDER_FIRED, REMINDER_PENDING, ReminderRow
from ..topic import ReminderIntent, TopicData
from .errors import RequestError

log = logging.getLogger('lightomni.consolidation')
REMINDER_SAME_S = 5.0      # a reminder with the same text due this close to a stored one is that one

_NUM = {'a': 1, 'an': 1, 'one': 1, 'two': 2, 'three': 3, 'four': 4, 'five': 5, 'six': 6, 'seven': 7, 'eight': 8,
        'nine': 9, 'ten': 10, 'eleven': 11, 'twelve': 12, 'thirteen': 13, 'fourteen': 14, 'fifteen': 15,
        'sixteen': 16, 'seventeen': 17, 'eighteen': 18, 'nineteen': 19, 'twenty': 20, 'thirty': 30, 'forty': 40,
        'fifty': 50, 'sixty': 60, 'ninety': 90, 'couple of': 2, 'a couple of': 2, 'few': 3, 'a few': 3}
_UNIT_S = {'second': 1, 'sec': 1, 'minute': 60, 'min': 60, 'hour': 3600, 'hr': 3600, 'day': 86400, 'week': 604800}
_PART_OF_DAY = {'morning': 9, 'noon': 12, 'afternoon': 15, 'evening': 19, 'tonight': 20, 'night': 20}

_NUMBER = r'(?:\d+(?:\.\d+)?|(?:a )?couple of|(?:a )?few|' + '|'.join(
    sorted((k for k in _NUM if ' ' not in k), key=len, reverse=True)) + r')(?:[ -](?:one|two|three|four|five|six|' \
    r'seven|eight|nine))?'
_UNIT = r'(?:second|sec|minute|min|hour|hr|day|week)s?'
_DURATION = re.compile(rf'\bin\s+(?P<dur>(?:half an hour|an? hour and a half|{_NUMBER}\s+{_UNIT}'
                       rf'(?:\s*(?:,|and)\s*{_NUMBER}\s+{_UNIT})*))\b', re.I)
_CLOCK = re.compile(r'\bat\s+(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s*(?P<ap>a\.?m\.?|p\.?m\.?|o\'?clock)?(?![\w:])',
                    re.I)
_NOON = re.compile(r'\bat\s+(?P<w>noon|midnight)\b', re.I)
_DAYPART = re.compile(r'\b(?P<day>tomorrow|today|this)\s+(?P<part>morning|afternoon|evening|night)\b|'
                      r'\b(?P<tonight>tonight)\b', re.I)
_TOMORROW = re.compile(r'\btomorrow\b', re.I)
_ASK = re.compile(r'\bremind\s+(?:me|us|him|her|them)\b(?:\s+(?:to|that|about|of))?\s*', re.I)


@dataclass
class TimeIntent:
    """A parsed reminder request."""

    due: float
    text: str


def _number(word: str) -> float:
    word = word.lower().strip()
    try:
        return float(word)
    except ValueError:
        pass
    parts = re.split(r'[ -]', word)
    if ' '.join(parts[-2:]) in _NUM or ' '.join(parts) in _NUM:
        return float(_NUM.get(' '.join(parts), _NUM.get(' '.join(parts[-2:]), 0)))
    return float(sum(_NUM.get(p, 0) for p in parts))


def _duration_s(text: str) -> float:
    text = text.lower()
    if text == 'half an hour':
        return 1800.0
    if re.fullmatch(r'an? hour and a half', text):
        return 5400.0
    total = 0.0
    for m in re.finditer(rf'({_NUMBER})\s+({_UNIT})', text, re.I):
        unit = m.group(2).lower().rstrip('s')
        total += _number(m.group(1)) * _UNIT_S[unit]
    return total


def parse_time_intent(text: str, now: float, tz: _dt.tzinfo | None = None) -> TimeIntent | None:
    """Find a reminder request and its due time in ``text`` (relative to ``now``); None when there is none."""
    ask = _ASK.search(text)
    if not ask:
        return None
    local_now = _dt.datetime.fromtimestamp(now, tz).astimezone(tz)
    due: _dt.datetime | None = None
    spans: list[tuple[int, int]] = []
    m = _DURATION.search(text)
    if m:
        seconds = _duration_s(m.group('dur'))
        if seconds > 0:
            due = local_now + _dt.timedelta(seconds=seconds)
            spans.append(m.span())
    if due is None:
        day_offset = 1 if _TOMORROW.search(text) else 0
        hour = minute = None
        if (m := _NOON.search(text)):
            hour, minute = (12, 0) if m.group('w').lower() == 'noon' else (0, 0)
            spans.append(m.span())
            if hour == 0 and not day_offset:
                day_offset = 1
        elif (m := _CLOCK.search(text)):
            hour, minute = int(m.group('h')), int(m.group('m') or 0)
            ap = (m.group('ap') or '').lower().replace('.', '')
            if hour > 23 or minute > 59:
                return None
            if ap.startswith('p') and hour < 12:
                hour += 12
            elif ap.startswith('a') and hour == 12:
                hour = 0
            elif not ap.startswith(('a', 'p')) and hour < 12:
                # "at 5" without am/pm: the next 5 o'clock that is still ahead (today 5 pm before tomorrow 5 am)
                if not day_offset and local_now.hour >= hour and (local_now.hour < hour + 12):
                    hour += 12
            spans.append(m.span())
        dp = _DAYPART.search(text)
        if dp:
            part = (dp.group('part') or 'tonight').lower()
            if hour is None:
                hour, minute = _PART_OF_DAY[part], 0
            elif part in ('afternoon', 'evening', 'night') and hour < 12:
                hour += 12
            spans.append(dp.span())
        if _TOMORROW.search(text):
            spans.append(_TOMORROW.search(text).span())
        if hour is None:
            if not day_offset:
                return None
            hour, minute = _PART_OF_DAY['morning'], 0  # "tomorrow" alone: in the morning
        target = (local_now + _dt.timedelta(days=day_offset)).replace(hour=hour, minute=minute, second=0,
                                                                      microsecond=0)
        if target <= local_now:
            target += _dt.timedelta(days=1)
        due = target
    return TimeIntent(due=due.timestamp(), text=_task(text, ask.end(), spans))


def _task(text: str, start: int, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            chars[i] = ' '
    task = ''.join(chars[start:])
    # the part before "remind me" (e.g. "In ten minutes, remind me to ...") stays out
    task = re.sub(r'\s+', ' ', task).strip(' ,.;!?')
    task = re.sub(r'^(?:to|that|about|of)\s+', '', task, flags=re.I)
    task = re.sub(r'\b(?:please|thanks|thank you)\b', '', task, flags=re.I)
    return re.sub(r'\s+', ' ', task).strip(' ,.;!?') or text.strip()


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
            found = parse_time_intent(t.audio, t.end, self.memory.tz)
            if found:
                intents = [ReminderIntent(text=found.text, due=found.due)]
        for r in intents:
            due, text = float(r.due), r.text
            if due <= 0:
                found = parse_time_intent(text, t.end, self.memory.tz)
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


__all__ = ['TimeIntent', 'parse_time_intent', 'ReminderBook', 'REMINDER_SAME_S']
