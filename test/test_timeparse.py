# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Time expressions people use: which parser reads them best, windows of the past, due times of reminders."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from lightomni_ros.core.timeparse import find_due, find_window, normalise, reminder_intent
from lightomni_ros.eval import time_phrasings as tp

UTC = zoneinfo.ZoneInfo('UTC')
NOW = dt.datetime(2026, 3, 2, 14, 0, tzinfo=UTC).timestamp()     # a Monday, 2 pm


def at(day: int, hour: float, month: int = 3) -> float:
    return dt.datetime(2026, month, day, tzinfo=UTC).timestamp() + hour * 3600


def test_the_chosen_parser_reads_the_phrasings_best() -> None:
    """The chosen parser reads the table of phrasings at least as well as dateparser and timefhuman (all installed)."""
    scores = {name: tp.score(name) for name in tp.PARSERS}
    assert all(s is not None for s in scores.values()), 'every candidate parser is a test dependency'
    mine = scores['parsedatetime'][0]
    assert mine >= 0.85, scores['parsedatetime']
    assert all(mine >= s[0] for s in scores.values()), {k: v[0] for k, v in scores.items()}


def test_normalise_spoken_numbers() -> None:
    assert normalise('remind me in twenty-five minutes') == 'remind me in 25 minutes'
    assert normalise('who did I meet at ten') == 'who did I meet at 10:00'
    assert normalise('in half an hour') == 'in 30 minutes'
    assert normalise('in a couple of minutes') == 'in 2 minutes'
    assert normalise('at 10 am') == 'at 10 am' and normalise('at 3:30') == 'at 3:30'
    assert normalise('I am one of the nurses') == 'I am 1 of the nurses'     # harmless: no time unit follows


@pytest.mark.parametrize('question,window', [
    ('What happened this morning?', (at(2, 5), at(2, 12))),
    ('what did I do today', (at(2, 0), NOW)),
    ('summarize my day', (at(2, 0), NOW)),
    ('what did we talk about yesterday', (at(1, 0), at(2, 0))),
    ('what happened in the last hour', (NOW - 3600, NOW)),
    ('who came by in the last 20 minutes', (NOW - 1200, NOW)),
    ('what did I do before lunch', (at(2, 0), at(2, 11.5))),
    ('what happened last night', (at(1, 20), at(2, 5))),
    ('what did I eat yesterday morning', (at(1, 5), at(1, 12))),
    ('what happened earlier this afternoon', (at(2, 12), NOW)),
    ('who did I meet at ten', (at(2, 9.5), at(2, 10.5))),
    ('what happened two hours ago', (at(2, 11.5), at(2, 12.5))),
    ('what did Ana say on Friday', (at(27, 0, 2), at(28, 0, 2))),
    ('what happened the day before yesterday', (at(28, 0, 2), at(1, 0))),
])
def test_windows_of_the_past(question: str, window: tuple[float, float]) -> None:
    w = find_window(question, NOW, UTC)
    assert w is not None and (w.start, w.end) == pytest.approx(window), (w, window)


@pytest.mark.parametrize('text', tp.NO_TIME + [
    'Where are my car keys?', 'who is Barack', 'remember that Ana likes', 'Good morning robot, my name is Ana.',
    'good evening, how are you?'])
def test_no_window_without_a_time(text: str) -> None:
    assert find_window(text, NOW, UTC) is None


def test_a_greeting_does_not_hide_the_window_a_question_names() -> None:
    w = find_window('Good evening robot, what happened this morning?', NOW, UTC)
    assert w is not None and w.phrase == 'this morning'


def test_windows_are_read_in_the_given_zone() -> None:
    berlin = zoneinfo.ZoneInfo('Europe/Berlin')      # UTC+1 in March: 14:00 UTC is 15:00 there
    w = find_window('what happened this morning?', NOW, berlin)
    assert dt.datetime.fromtimestamp(w.start, berlin).hour == 5 and w.start == at(2, 4)


@pytest.mark.parametrize('text,due,task', [
    ('Remind me to take the medicine in three minutes', (2, 14, 3), 'take the medicine'),
    ('remind me to call mom at 5 pm', (2, 17, 0), 'call mom'),
    ('Please remind me to water the plants tomorrow morning', (3, 9, 0), 'water the plants'),
    ('remind me in 2 hours to stop the oven', (2, 16, 0), 'stop the oven'),
    ('remind me to eat at noon', (3, 12, 0), 'eat'),
    ('remind me to jog tomorrow at 7 am', (3, 7, 0), 'jog'),
    ('remind me about the meeting in half an hour', (2, 14, 30), 'the meeting'),
    ('remind me to leave in twenty-five minutes', (2, 14, 25), 'leave'),
    ('in ten minutes remind me to check the tea', (2, 14, 10), 'check the tea'),
    ('remind me to call Ann at 9 tonight', (2, 21, 0), 'call Ann'),
    ('remind me at 5 to go home', (2, 17, 0), 'go home'),
    ('remind me in 90 seconds to flip the pancake', (2, 14, 1.5), 'flip the pancake'),
    # the other ways of asking: "set a reminder" got no reminder, and the model's "I will remind you" was then false
    ('Excuse me robot, set a reminder to book the taxi in twenty minutes.', (2, 14, 20), 'book the taxi'),
    ('give me a reminder in ten minutes to check the tea', (2, 14, 10), 'check the tea'),
    ('ping me in five minutes to call the bank', (2, 14, 5), 'call the bank'),
])
def test_reminder_intents(text: str, due: tuple[int, int, float], task: str) -> None:
    r = reminder_intent(text, NOW, UTC, '<face_1>')
    assert r is not None and r.face_id == '<face_1>'
    assert r.due == pytest.approx(at(due[0], due[1] + due[2] / 60)), dt.datetime.fromtimestamp(r.due, UTC)
    assert r.text == task


def test_no_reminder_without_a_request_or_a_time() -> None:
    assert reminder_intent('what time is it?', NOW, UTC) is None
    assert reminder_intent('remind me to do it', NOW, UTC) is None
    assert reminder_intent('I will call you in five minutes', NOW, UTC) is None   # a time, but no request
    assert reminder_intent('I set a reminder on my phone yesterday', NOW, UTC) is None
    assert find_due('in five minutes', NOW, UTC).due == NOW + 300
