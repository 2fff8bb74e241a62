# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Time expressions in what people say: windows of the past ("this morning") and due times ("in three minutes").

Dates, clock times, weekdays and durations are read by parsedatetime (chosen over dateparser and timefhuman by the
phrasing table in ``eval/time_phrasings.py``: see docs/CONFIG.md's time notes). This module adds what a robot needs
around it and no parser gives: spoken numbers normalised first ("at ten", "twenty-five minutes", "half an hour"),
the direction of the question (a memory question looks back, a reminder looks ahead), and the width of a window
(a part of the day, a day, "the last hour", half an hour around a clock time). All times are epoch seconds; clock
words are read in the given time zone (the consolidation node's, shared with the reflex node through GlobalState).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

import parsedatetime

from .topic import ReminderIntent

_CAL = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)
_CTX = parsedatetime.pdtContext

_UNITS = {'ones': 1, 'one': 1, 'two': 2, 'three': 3, 'four': 4, 'five': 5, 'six': 6, 'seven': 7, 'eight': 8,
          'nine': 9}
_TEENS = {'ten': 10, 'eleven': 11, 'twelve': 12, 'thirteen': 13, 'fourteen': 14, 'fifteen': 15, 'sixteen': 16,
          'seventeen': 17, 'eighteen': 18, 'nineteen': 19}
_TENS = {'twenty': 20, 'thirty': 30, 'forty': 40, 'fifty': 50, 'sixty': 60, 'ninety': 90}
#: hours of the parts of a day: (window start, window end, the hour a reminder for it is due)
PARTS_OF_DAY = {'morning': (5, 12, 9), 'noon': (11.5, 13.5, 12), 'lunch': (11.5, 14, 12), 'afternoon': (12, 18, 15),
                'evening': (17, 22, 19), 'night': (20, 29, 21)}
_PART = '|'.join(PARTS_OF_DAY)
_NUMBER_WORD = re.compile(r'\b(?:(?P<tens>' + '|'.join(_TENS) + r')(?:[ -](?P<unit>' + '|'.join(_UNITS) + r'))?|'
                          r'(?P<teen>' + '|'.join(_TEENS) + r')|(?P<one>' + '|'.join(_UNITS) + r'))\b', re.I)
_LAST = re.compile(r'\b(?:in|during|over|within)?\s*the\s+(?:last|past)\s+(?:(?P<n>\d+)\s+)?(?P<unit>minute|hour|day|'
                   r'week)s?\b|\b(?:last|past)\s+(?P<n2>\d+)\s+(?P<unit2>minute|hour|day|week)s?\b', re.I)
_UNIT_S = {'second': 1, 'minute': 60, 'hour': 3600, 'day': 86400, 'week': 604800}
_DAY_PART = re.compile(rf'\b(?P<which>this|yesterday|tomorrow|last|tonight)?\s*(?P<part>{_PART})\b|\b(?P<tonight>'
                       rf'tonight)\b|\b(?P<rel>before|after)\s+(?P<anchor>lunch|noon)\b', re.I)
_DAY = re.compile(r'\b(?P<day>today|yesterday|the day before yesterday|tomorrow|(?:my|this) day)\b', re.I)
_AMPM = re.compile(r'\b\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)|\bo\'?clock\b', re.I)
_SHORT = re.compile(r'(?:on |this |last |next )?[a-z]{1,3}\.?', re.I)
#: "good morning" greets; it names no part of the day a question is about
_GREETING = re.compile(rf'\bgood\s+(?:{_PART})\b', re.I)
#: a request for a reminder: "remind me to ...", "set a reminder to ...", "give me a reminder ...", "ping me ..."
_REMIND = re.compile(r'\b(?:remind\s+(?:me|us|him|her|them)|(?:set|give\s+me|make|add|create)\s+(?:me\s+)?an?\s+'
                     r'reminder|ping\s+me)\b(?:\s+(?:to|that|about|of|for))?\s*', re.I)


@dataclass(kw_only=True)
class TimeWindow:
    """A span of the past a question is about, and the words that said so."""

    start: float
    end: float
    phrase: str


@dataclass(kw_only=True)
class DueTime:
    """When something is due, the words that said so, and where they stand in the (normalised) text."""

    due: float
    phrase: str
    span: tuple[int, int]


def normalise(text: str) -> str:
    """Spoken numbers and durations as the parser reads them ("at ten" -> "at 10:00", "half an hour" -> "30 min")."""
    t = re.sub(r'\bhalf an hour\b', '30 minutes', text, flags=re.I)
    t = re.sub(r'\ban hour and a half\b', '90 minutes', t, flags=re.I)
    t = re.sub(r'\b(?:a )?couple of\b', '2', t, flags=re.I)
    t = re.sub(r'\b(?:a )?few\b(?= (?:second|minute|hour|day)s?\b)', '3', t, flags=re.I)
    t = re.sub(r'\ban? (?=(?:second|minute|hour|day|week)\b)', '1 ', t, flags=re.I)

    def number(m: re.Match) -> str:
        if m.group('tens'):
            return str(_TENS[m.group('tens').lower()] + _UNITS.get((m.group('unit') or '').lower(), 0))
        return str(_TEENS[m.group('teen').lower()] if m.group('teen') else _UNITS[m.group('one').lower()])
    t = _NUMBER_WORD.sub(number, t)
    # a bare hour ("at 10") is a clock time to us; the parser reads it only with minutes
    return re.sub(r'\b(at|around|about|by)\s+(1[0-2]|0?[1-9])\b(?![:.]\d|\s*(?:a\.?m|p\.?m|o\'?clock|%|second|minute|'
                  r'hour|day|week))', r'\1 \2:00', t, flags=re.I)


def _local(now: float, tz: _dt.tzinfo | None) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(now, tz)


def _parse(text: str, local_now: _dt.datetime) -> list[tuple[_dt.datetime, int, int, int, str]]:
    """The finds of parsedatetime: (time in ``local_now``'s zone, accuracy flags, start, end, words)."""
    found = _CAL.nlp(text, sourceTime=local_now.replace(tzinfo=None)) or ()
    return [(t.replace(tzinfo=local_now.tzinfo), ctx.accuracy, a, b, words) for t, ctx, a, b, words in found]


def _at(day: _dt.datetime, hours: float) -> _dt.datetime:
    midnight = day.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight + _dt.timedelta(hours=hours)


def _day_of(which: str, local_now: _dt.datetime) -> _dt.datetime:
    offset = {'yesterday': -1, 'last': -1, 'tomorrow': 1, 'the day before yesterday': -2}.get(which.lower(), 0)
    return local_now + _dt.timedelta(days=offset)


def find_window(text: str, now: float, tz: _dt.tzinfo | None = None) -> TimeWindow | None:
    """The span of the past a question is about ("what happened this morning?"), clipped at ``now``; else None."""
    t = _GREETING.sub('hello', normalise(text))
    local_now = _local(now, tz)
    window = _window_by_words(t, local_now) or _window_by_parser(t, local_now)
    if window is None:
        return None
    start, end, phrase = window
    end = min(end, local_now)
    if start >= end:
        return None
    return TimeWindow(start=start.timestamp(), end=end.timestamp(), phrase=phrase)


def _window_by_words(t: str, local_now: _dt.datetime) -> tuple[_dt.datetime, _dt.datetime, str] | None:
    """Windows no parser states: "the last hour", parts of the day, "before lunch", a whole named day."""
    if (m := _LAST.search(t)):
        n, unit = int(m.group('n') or m.group('n2') or 1), (m.group('unit') or m.group('unit2')).lower()
        return local_now - _dt.timedelta(seconds=n * _UNIT_S[unit]), local_now, m.group(0).strip()
    if (m := _DAY_PART.search(t)):
        if m.group('rel'):          # before / after lunch, today
            lo, hi, _ = PARTS_OF_DAY['lunch']
            span = (0, lo) if m.group('rel').lower() == 'before' else (hi, 24)
            return _at(local_now, span[0]), _at(local_now, span[1]), m.group(0)
        part = 'night' if m.group('tonight') else m.group('part').lower()
        which = (m.group('which') or '').lower()
        if part == 'night' and which in ('last', ''):
            which = 'yesterday' if local_now.hour >= 5 else 'the day before yesterday'
        day = _day_of(which, local_now)
        lo, hi, _ = PARTS_OF_DAY[part]
        return _at(day, lo), _at(day, hi), m.group(0).strip()
    if (m := _DAY.search(t)):
        day = _day_of(m.group('day'), local_now)
        return _at(day, 0), _at(day, 24), m.group(0)
    return None


def _window_by_parser(t: str, local_now: _dt.datetime) -> tuple[_dt.datetime, _dt.datetime, str] | None:
    """A day (weekday, date) or a moment ("at 10", "two hours ago") read by the parser, looking back."""
    for when, acc, _a, _b, words in _parse(t, local_now):
        if _SHORT.fullmatch(words.strip()):
            continue        # "may I ask", "what Sun said": a month or weekday only by its abbreviation is no time
        if acc & (_CTX.ACU_HOUR | _CTX.ACU_MIN):
            if when > local_now and not _AMPM.search(words):
                when -= _dt.timedelta(hours=12)       # "at 10" at 4 pm means this morning, not tonight
            if when > local_now:
                when -= _dt.timedelta(days=1)
            half = min(max(_dt.timedelta(minutes=30), (local_now - when) / 8), _dt.timedelta(hours=1))
            return when - half, when + half, words
        if acc & (_CTX.ACU_DAY | _CTX.ACU_WEEK):
            if when > local_now:
                when -= _dt.timedelta(days=7)          # "on Monday" in a memory question is the last Monday
            return _at(when, 0), _at(when, 24 * (7 if acc & _CTX.ACU_WEEK and not acc & _CTX.ACU_DAY else 1)), words
    return None


def find_due(text: str, now: float, tz: _dt.tzinfo | None = None) -> DueTime | None:
    """When a request is due ("in three minutes", "at 5 pm", "tomorrow morning"), looking ahead; else None."""
    t = normalise(text)
    local_now = _local(now, tz)
    part = _DAY_PART.search(t)
    for when, acc, a, b, words in _parse(t, local_now):
        if acc & _CTX.ACU_HALFDAY and part and not re.search(r'\d', words):
            lo_hour = PARTS_OF_DAY[('night' if part.group('tonight') else part.group('part') or 'night').lower()][2]
            when = _at(when, lo_hour)               # "tomorrow morning": the part's usual hour, not 6 am
        elif when <= local_now and acc & (_CTX.ACU_HOUR | _CTX.ACU_MIN) and not _AMPM.search(words) \
                and when.hour < 12:
            when += _dt.timedelta(hours=12)           # "at 5" at 2 pm: the next 5 o'clock, 5 pm
        if when <= local_now and not acc & _CTX.ACU_SEC:
            when += _dt.timedelta(days=1)             # "at noon" at 2 pm: tomorrow
        if when > local_now:
            return DueTime(due=when.timestamp(), phrase=words, span=(a, b))
    return None


def asks_for_reminder(text: str) -> bool:
    """Whether ``text`` asks for a reminder ("remind me ...", "set a reminder ..."), a time said or not."""
    return bool(_REMIND.search(normalise(text)))


def reminder_intent(text: str, now: float, tz: _dt.tzinfo | None = None, face_id: str = '') -> ReminderIntent | None:
    """A "remind me to ..." request with its due time and the task; None when the text asks for no reminder."""
    t = normalise(text)
    ask = _REMIND.search(t)
    if not ask:
        return None
    due = find_due(t, now, tz)
    if due is None:
        return None
    return ReminderIntent(text=_task(t, ask.end(), due.span), due=due.due, face_id=face_id)


def _task(text: str, start: int, span: tuple[int, int]) -> str:
    """What to be reminded of: the words after "remind me (to)" without the time expression."""
    task = text[:span[0]] + ' ' * (span[1] - span[0]) + text[span[1]:]
    task = re.sub(r'\s+', ' ', task[start:]).strip(' ,.;!?')
    task = re.sub(r'^(?:to|that|about|of)\s+', '', task, flags=re.I)
    task = re.sub(r'\b(?:please|thanks|thank you)\b', '', task, flags=re.I)
    task = re.sub(rf'\s+\b(?:at|on|by|this|tomorrow|tonight|in the)\b\s*(?:{_PART})?\s*$', '', task, flags=re.I)
    return re.sub(r'\s+', ' ', task).strip(' ,.;!?') or text.strip()


__all__ = ['TimeWindow', 'DueTime', 'find_window', 'find_due', 'reminder_intent', 'normalise', 'PARTS_OF_DAY']
