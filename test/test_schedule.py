# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""When a planned event is, read by rule (schedule.py), and how the memory pass adds it to what the adapter wrote."""

from __future__ import annotations

import pytest

from lightomni_ros.core.reflex.schedule import schedule, with_schedule
from lightomni_ros.core.reflex.sleep import topic_from_reply
from lightomni_ros.core.reflex.types import SegmentInput


@pytest.mark.parametrize('words, facts', [
    ('Lunch is at four.', ['Lunch is at four.']),
    ('Keep in mind that the vet appointment will be on Tuesday.', ['The vet appointment is on Tuesday.']),
    ('Scratch that, the party moved to Sunday.', ['The party is on Sunday.']),
    ('We booked the plumber visit for Thursday.', ['The plumber visit is on Thursday.']),
    ('Actually, the meeting is on Friday, not Thursday.', ['The meeting is on Friday.']),
    ('Mark your calendar, dinner is at 7 pm.', ['Dinner is at 7 pm.']),
    ('We have the budget review tomorrow at ten.', ['The budget review is tomorrow at ten.']),
    ('The trip is in May.', ['The trip is in May.']),
    # what schedules nothing: a question, a denial, a maybe, a pronoun, a person's place, a time that is no event
    ('Should we move lunch to two?', []),
    ('Lunch is not at two.', []),
    ('Maybe lunch is at two.', []),
    ('It is at four.', []),
    ('My sister is at school.', []),
    ('My birthday is in November.', []),
    ('Today is Monday.', []),
    ('I put the keys in the drawer.', []),
])
def test_what_a_sentence_schedules(words: str, facts: list[str]) -> None:
    assert [s.fact() for s in schedule(words)] == facts


def _seg(words: str) -> SegmentInput:
    return SegmentInput(segment_id=1, start=100.0, end=103.0, transcript=words, face_ids=['<face_1>'],
                        speaker_face='<face_1>')


def test_a_fact_of_the_event_at_that_time_stands_and_one_at_another_time_is_replaced() -> None:
    seg = _seg('Actually, lunch is at four, not three. I put the keys in the drawer.')
    assert with_schedule(['Lunch is at four.'], seg) == (['Lunch is at four.'], [])
    assert with_schedule(['Lunch is at three.', 'The keys are in the drawer.'], seg) == \
        (['The keys are in the drawer.', 'Lunch is at four.'], ['Lunch is at three.'])


def test_the_memory_pass_adds_the_time_the_adapter_missed() -> None:
    seg = _seg('Robot, tell me, they set the budget review for Thursday.')
    reply = '{"semantic": [], "visual": "<face_1> talking"}'
    topic = topic_from_reply(seg, '', reply)
    assert topic.semantic == ['The budget review is on Thursday.'] and topic.timed == 1
    off = topic_from_reply(seg, '', reply, event_times=False)
    assert off.semantic == [] and off.timed == 0
    # a correction the adapter misread is dropped for the time the words give
    fixed = topic_from_reply(_seg('Wait, I was wrong: lunch is at three, not two.'), '',
                             '{"semantic": ["Lunch is at two."], "visual": "<face_1> talking"}')
    assert fixed.semantic == ['Lunch is at three.'] and 'Lunch is at two.' in fixed.dropped
