# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Who is who without a model: names people give, who spoke, and "who did I talk to" from the profiles."""

from __future__ import annotations

import datetime as dt

from lightomni_ros.core.text import introduced_name, introduced_other
from lightomni_ros.core.reflex.people import PersonSeen, people_answer, people_window, speaking_face, who_am_i
from lightomni_ros.core.reflex.sleep import fallback_topic
from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER, SegmentInput

UTC = dt.timezone.utc
NOW = dt.datetime(2026, 1, 5, 15, 30, tzinfo=UTC).timestamp()      # a Monday, 15:30 UTC


def at(hour: float, day: int = 5) -> float:
    return dt.datetime(2026, 1, day, tzinfo=UTC).timestamp() + hour * 3600


def test_introduced_name() -> None:
    assert introduced_name("Hi robot, I'm Barack. I love basketball.") == 'Barack'
    assert introduced_name('Hello, my name is Joe.') == 'Joe'
    assert introduced_name("i'm called Rosa") == 'Rosa'
    assert introduced_name("I'm Sorry, I am Ana") == 'Ana'
    for text in ('Greetings robot, Nadia here.', 'Hi robot, I go by Nadia.', 'Robot, the name is Nadia.',
                 'Everyone calls me Nadia.', 'Robot, this is Nadia speaking, make a note.'):
        assert introduced_name(text) == 'Nadia', text
    for text in ('Nobody here.', 'Robot, this is Nadia.', 'Okay here, take it.'):
        assert introduced_name(text) == '', text
    for text in ('I am a teacher', "I'm tired", "I'm Not sure", 'where is my name tag', ''):
        assert introduced_name(text) == '', text


def test_someone_introduced_by_another() -> None:
    assert introduced_other('Robot, here is my cousin Mateo.') == 'Mateo'
    assert introduced_other("I'd like you to meet my sister Vera") == 'Vera'
    assert introduced_other('Say hello to Wei, robot, they are staying with us.') == 'Wei'
    assert introduced_other('robot this is my new colleague Ana') == 'Ana'
    for text in ('I will meet Joe tomorrow', 'This is Tuesday', 'meet me at five', 'Here is the Robot', ''):
        assert introduced_other(text) == '', text


def test_people_window() -> None:
    assert people_window('Where are my keys?', NOW, UTC) is None
    assert people_window('Who is Barack?', NOW, UTC) is None
    # the window is read by core.timeparse: the morning runs from 5 to 12
    assert people_window('Who did I talk to this morning?', NOW, UTC) == (at(5), at(12), 'this morning')
    assert people_window('who visited me this afternoon', NOW, UTC) == (at(12), NOW, 'this afternoon')
    assert people_window('Who was here yesterday?', NOW, UTC) == (at(0, 4), at(0), 'yesterday')
    assert people_window('Who have you seen in the last hour?', NOW, UTC) == (NOW - 3600, NOW, 'in the last hour')
    assert people_window('Who did I meet?', NOW, UTC) == (at(0), NOW, 'today')


def test_people_answer() -> None:
    people = [PersonSeen('<face_1>', 'Joe', at(9.5), at(9.6)), PersonSeen('<face_0>', 'Barack', at(9), at(10)),
              PersonSeen('<face_2>', '', at(9.7), at(9.8)), PersonSeen('<face_3>', 'Ana', at(14), at(15)),
              PersonSeen('<face_4>', 'Old', at(9, day=2), at(10, day=2))]
    assert people_answer(people, at(0), at(12), 'this morning') == \
        'This morning I saw Barack, Joe and 1 person whose name I do not know.'
    assert people_answer(people, at(12), NOW, 'this afternoon', exclude=['<face_3>']) == \
        'I did not see anyone this afternoon.'
    assert people_answer(people, at(0), NOW, 'today', exclude=['<face_2>']) == 'Today I saw Barack, Joe and Ana.'


def test_who_spoke_and_what_was_seen() -> None:
    radio = SegmentInput(segment_id=1, start=0, end=5, transcript='And so my fellow Americans')
    assert radio.speaker == UNSEEN_SPEAKER
    assert SegmentInput(segment_id=2, start=0, end=5, typed_text='hello').speaker == 'someone'
    assert SegmentInput(segment_id=3, start=0, end=5, transcript='hi',
                        face_ids=['<face_1>', '<face_2>']).speaker == 'someone'
    one = SegmentInput(segment_id=4, start=0, end=5, transcript='bin blue at f two now', face_ids=['<face_5>'],
                       visual_tags=['desk'])
    assert one.speaker == '<face_5>'
    t = fallback_topic(one, '', 'test')
    assert t.visual == '<face_5> talking; desk' and t.semantic == ['<face_5> said: bin blue at f two now']
    t = fallback_topic(radio, '', 'test')
    assert t.visual == 'nobody in view, an unseen speaker talking'
    assert t.semantic == [f'{UNSEEN_SPEAKER} said: And so my fellow Americans']


def test_speaking_face_is_the_one_seen_while_the_words_were_spoken() -> None:
    # the previous visitor is still in view when the segment opens; only the new one is seen during the speech
    assert speaking_face([('<face_0>', 10.2), ('<face_1>', 13.0)], speech_start=11.0) == '<face_1>'
    assert speaking_face([('<face_0>', 12.0), ('<face_1>', 13.0)], speech_start=11.0) == '', 'both in view'
    assert speaking_face([('<face_0>', 10.8)], speech_start=11.0) == '<face_0>', 'within the keyframe slack'
    assert speaking_face([], speech_start=11.0) == ''
    seg = SegmentInput(segment_id=5, start=10, end=15, transcript='Hello, my name is Joe.',
                       face_ids=['<face_0>', '<face_1>'],
                       speaker_face='<face_1>')
    assert seg.speaker == '<face_1>'
    t = fallback_topic(seg, '', 'test')
    assert t.visual == '<face_0>, <face_1> talking' and t.semantic == ['<face_1> said: Hello, my name is Joe.',
                                                                       '<face_1> is called Joe.']


def test_who_am_i_is_answered_from_the_profile_of_who_asks() -> None:
    names = {'<face_1>': 'Kwame', '<face_2>': 'Mei'}
    assert who_am_i('Hey robot, tell me, who am I?', '<face_1>', names) == 'You are Kwame.'
    assert who_am_i('Robot, what is my name?', '<face_2>', names) == 'You are Mei.'
    assert who_am_i('Robot, who am I?', '<face_3>', names) == "I don't know your name yet."
    assert who_am_i('Robot, who is Mei?', '<face_1>', names) == ''


def test_a_turn_that_only_asks_is_no_fact() -> None:
    asked = SegmentInput(segment_id=5, start=0, end=5, typed_text='When is the team meeting?')
    t = fallback_topic(asked, '', 'test')
    assert t.semantic == [] and t.audio == 'When is the team meeting?'
    told = SegmentInput(segment_id=6, start=0, end=5, transcript="I'm Joe. Where are my keys?", face_ids=['<face_1>'])
    assert fallback_topic(told, '', 'test').semantic == ["<face_1> said: I'm Joe. Where are my keys?",
                                                         '<face_1> is called Joe.']
