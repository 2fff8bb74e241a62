# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The time phrasings people use with a robot, and which date parser reads them: the test that chose parsedatetime.

Each phrasing names the moment (or day) it refers to relative to a fixed "now" (Monday 2 March 2026, 14:00 UTC).
Every candidate parser gets the same text after :func:`lightomni_ros.core.timeparse.normalise` (spoken numbers as
digits), and must return that moment: within a minute for clock times and durations, the right day for days. The
direction is not the parser's job (a memory question looks back, a reminder ahead: :mod:`~lightomni_ros.core.timeparse`
decides it), so a weekday found a week off in the wrong direction is moved by a week for every parser alike.
``python -m lightomni_ros.eval.time_phrasings`` prints each parser's score (parsers not installed are skipped).
"""

from __future__ import annotations

import datetime as _dt
import sys
import zoneinfo
from typing import Callable

UTC = zoneinfo.ZoneInfo('UTC')
NOW = _dt.datetime(2026, 3, 2, 14, 0, tzinfo=UTC)


def _t(day: int, hour: int, minute: int = 0, second: int = 0) -> _dt.datetime:
    return _dt.datetime(2026, 3 if day > 0 else 2, day if day > 0 else 28 + day, hour, minute, second, tzinfo=UTC)


#: (what was said, the moment it means, 'minute' or 'day' precision)
PHRASINGS: list[tuple[str, _dt.datetime, str]] = [
    ('remind me to take the medicine in three minutes', _t(2, 14, 3), 'minute'),
    ('remind me in 2 hours to stop the oven', _t(2, 16), 'minute'),
    ('in ten minutes remind me to check the tea', _t(2, 14, 10), 'minute'),
    ('remind me to leave in twenty-five minutes', _t(2, 14, 25), 'minute'),
    ('remind me about the meeting in half an hour', _t(2, 14, 30), 'minute'),
    ('in 90 seconds remind me to flip the pancake', _t(2, 14, 1, 30), 'minute'),
    ('remind me in a couple of minutes to stir the soup', _t(2, 14, 2), 'minute'),
    ('wake me up in an hour', _t(2, 15), 'minute'),
    ('remind me to call mom at 5 pm', _t(2, 17), 'minute'),
    ('remind me to jog tomorrow at 7 am', _t(3, 7), 'minute'),
    ('remind me at 6:30 pm to feed the cat', _t(2, 18, 30), 'minute'),
    ('remind me to send the letter at 4:15 pm', _t(2, 16, 15), 'minute'),
    ('what happened two hours ago', _t(2, 12), 'minute'),
    ('who was here an hour ago', _t(2, 13), 'minute'),
    ('what did Ana say 30 minutes ago', _t(2, 13, 30), 'minute'),
    ('what did I say 10 minutes ago', _t(2, 13, 50), 'minute'),
    ('what happened at 10:30 am', _t(2, 10, 30), 'minute'),
    ('who did I meet at 9 am', _t(2, 9), 'minute'),
    ('what did we talk about yesterday', _t(1, 0), 'day'),
    ('what did I do today', _t(2, 0), 'day'),
    ('remind me tomorrow to buy bread', _t(3, 0), 'day'),
    ('what happened the day before yesterday', _t(-0, 0), 'day'),
    ('what did Ana say on Friday', _t(-1, 0), 'day'),
    ('what did we decide on Saturday', _t(-0, 0), 'day'),
    ('what happened on March 1', _t(1, 0), 'day'),
    ('remind me on Wednesday to pay the rent', _t(4, 0), 'day'),
    ('what did the doctor say last Thursday', _t(-2, 0), 'day'),
    ('remind me next Monday to call the bank', _t(9, 0), 'day'),
]

#: what people say with no time in it: a parser must find nothing (a false find would narrow a question's window)
NO_TIME: list[str] = [
    'what did we talk about with Ana', 'may I ask you something', 'where did I put my second glove',
    'who is the man on the radio', 'mark my words, the printer is broken', 'we went to the shop and bought bread',
    'can you tell me what Sun said', 'the meeting is in the big room', 'I am one of the nurses here',
    'what did the doctor say about my back', 'remember that the spare key is under the mat', 'what am I holding',
]


def _pdt(text: str, now: _dt.datetime) -> list[_dt.datetime]:
    import parsedatetime

    cal = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)
    return [t.replace(tzinfo=now.tzinfo) for t, *_ in (cal.nlp(text, sourceTime=now.replace(tzinfo=None)) or ())]


def _dateparser(text: str, now: _dt.datetime) -> list[_dt.datetime]:
    from dateparser.search import search_dates

    found = search_dates(text, languages=['en'], settings={'RELATIVE_BASE': now.replace(tzinfo=None),
                                                           'RETURN_AS_TIMEZONE_AWARE': False}) or []
    return [t.replace(tzinfo=now.tzinfo) for _, t in found]


def _timefhuman(text: str, now: _dt.datetime) -> list[_dt.datetime]:
    from timefhuman import timefhuman
    from timefhuman.utils import tfhConfig

    got = timefhuman(text, config=tfhConfig(now=now.replace(tzinfo=None)))
    flat: list = []
    for g in got if isinstance(got, list) else [got]:
        flat += list(g) if isinstance(g, (list, tuple)) else [g]
    return [g.replace(tzinfo=now.tzinfo) if isinstance(g, _dt.datetime) else
            _dt.datetime.combine(g, _dt.time(), now.tzinfo) for g in flat if isinstance(g, (_dt.datetime, _dt.date))]


PARSERS: dict[str, Callable[[str, _dt.datetime], list[_dt.datetime]]] = {
    'parsedatetime': _pdt, 'dateparser': _dateparser, 'timefhuman': _timefhuman}


def correct(found: list[_dt.datetime], want: _dt.datetime, precision: str) -> bool:
    """Whether any of the parser's finds is the moment meant (a minute's tolerance, or the same day)."""
    if precision == 'day':
        week = _dt.timedelta(days=7)
        return any(d.date() == want.date() for f in found for d in (f, f - week, f + week))
    return any(abs((f - want).total_seconds()) <= 60 for f in found)


def _found(parse: Callable[[str, _dt.datetime], list[_dt.datetime]], text: str) -> list[_dt.datetime]:
    from ..core.timeparse import normalise

    try:
        return parse(normalise(text), NOW)
    except (ValueError, TypeError, AttributeError):
        return []


def score(name: str) -> tuple[float, list[str]] | None:
    """(share of all phrasings read right, the ones read wrong) for one parser; None when it is not installed.

    A phrasing with a time is right when the moment meant is among the finds; one without, when nothing is found.
    """
    parse = PARSERS[name]
    try:
        wrong = [text for text, want, precision in PHRASINGS if not correct(_found(parse, text), want, precision)]
        wrong += [f'(no time) {text}' for text in NO_TIME if _found(parse, text)]
    except ImportError:
        return None
    return 1 - len(wrong) / (len(PHRASINGS) + len(NO_TIME)), wrong


def main() -> int:
    """Print every installed parser's score."""
    for name in PARSERS:
        res = score(name)
        if res is None:
            print(f'{name:14s} not installed')
            continue
        print(f'{name:14s} {res[0]:.2f}  wrong: {res[1]}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
