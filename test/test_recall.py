# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Recall of a span of time through the real runtimes: "what happened this morning?" reads that morning only."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from lightomni_ros.core.agent import AgentConfigs, LightOmni
from lightomni_ros.core.consolidation.config import ConsolidationConfig
from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs
from lightomni_ros.core.reflex.config import BackboneConfig, ExportConfig
from lightomni_ros.core.reflex.recall import clip_quote, is_summary_question, summary_answer, told, window_events
from lightomni_ros.core.reflex.runtime import ReflexConfigs
from lightomni_ros.core.reflex.types import MemoryItem
from lightomni_ros.core.topic import TopicData

DAY = dt.datetime(2026, 3, 2, tzinfo=dt.timezone.utc).timestamp()     # a Monday, midnight UTC
EVENTS = [  # (hour of the day, day offset, who is in view, what was heard)
    (11.0, -1, '<face_4>', 'Dan fixed the flat tyre of the red bike in the garage.'),
    (9.0, 0, '<face_1>', 'Ana said the plumber repaired the boiler in the cellar.'),
    (10.5, 0, '<face_2>', 'Bob brought the new printer for the office upstairs.'),
    (15.0, 0, '<face_3>', 'Carla called about the unpaid invoice from the garden centre.'),
]


@pytest.fixture(scope='module')
def agent(tmp_path_factory):
    cfg = AgentConfigs(consolidation=ConsolidationConfigs(consolidation=ConsolidationConfig(timezone='UTC')),
                       reflex=ReflexConfigs(export=ExportConfig(backend='torch'),
                                            backbone=BackboneConfig(max_new_tokens=24, threads=2)))
    a = LightOmni(tmp_path_factory.mktemp('recall') / 'memory', cfg, perception=False, sleep_work=False,
                  time_scale=0.0)
    for i, (hour, day, face, said) in enumerate(EVENTS, 1):
        t = DAY + day * 86400 + hour * 3600
        a.memory.enqueue(TopicData(segment_id=i, start=t, end=t + 20, face_ids=[face], audio=said,
                                   visual=f'{face} in the hall', producer='test'))
    a.memory.process_all()
    a.now = DAY + 17 * 3600
    yield a
    a.close()


def _episodic_ids(act) -> list[int]:
    return [int(m.split(':')[1]) for m in act.memory_ids if m.startswith('episodic:')]


def test_summary_questions_are_told_apart() -> None:
    assert is_summary_question('What happened this morning?') and is_summary_question('summarize my day')
    assert is_summary_question('what did we do yesterday') and is_summary_question('How was my afternoon?')
    assert not is_summary_question('where did I put my keys this morning?')
    assert summary_answer(['09:00 a', '10:30 b'], 'this morning') == 'This morning: at 09:00 a; then at 10:30 b.'
    # a time is said when a new stretch starts, not for every minute
    assert summary_answer(['18:51 Ana said "hi."', '18:51 Bob said "yes."', '18:52 c', 'd', '19:30 e'], 'today') == \
        'Today: at 18:51 Ana said "hi."; then Bob said "yes."; then c; then d; then at 19:30 e.'
    assert summary_answer([], 'yesterday') == 'I do not remember anything yesterday.'


def test_a_spoken_summary_tells_each_event_briefly_and_whole() -> None:
    # a named speaker's introduction of their name is said once, as the speaker; the request framing goes too
    assert summary_answer(['09:00 Joe said "My name is Joe. Remember that my keys are in the blue drawer."'],
                          'today') == 'Today: at 09:00 Joe said "My keys are in the blue drawer."'
    assert summary_answer(['09:00 Joe said "I\'m Joe."'], 'today') == 'Today: at 09:00 Joe said "I\'m Joe."'
    sofia = told('saw Sofia talking; hall; heard "Good morning robot, call me Sofia. I spend my free time painting '
                 'watercolours."', ('robot',))
    assert summary_answer([f'08:02 {sofia}'], 'today') == \
        'Today: at 08:02 Sofia said "I spend my free time painting watercolours."'
    # a few words over the budget are kept rather than cut before what they tell
    assert summary_answer(['08:10 Rahul said "I celebrate my birthday in March. I have been a nurse for ten years."'],
                          'today') == ('Today: at 08:10 Rahul said "I celebrate my birthday in March. I have been a '
                                       'nurse for ten years."')
    assert summary_answer(['09:00 someone said "I\'m Joe, hi."'], 'today') == \
        'Today: at 09:00 someone said "I\'m Joe, hi."'
    # one speaker's quotes of one stretch are one event; unknown people ("someone") are never merged
    radio = ['09:00 an unseen speaker said "Rain tomorrow."', '09:01 an unseen speaker said "Then sun."',
             '09:01 someone said "Hi."', '09:01 someone said "Yes."']
    assert summary_answer(radio, 'today') == ('Today: at 09:00 an unseen speaker said "Rain tomorrow." and '
                                              '"Then sun."; then someone said "Hi."; then someone said "Yes."')
    # a merged quote keeps its own budget: cut short it would lose what it tells
    noor = ['09:00 Noor said "They set the choir practice for noon."',
            '09:01 Noor said "I stuck the notebook in the green basket."']
    assert summary_answer(noor, 'today') == ('Today: at 09:00 Noor said "They set the choir practice for noon." and '
                                             '"I stuck the notebook in the green basket."')
    # a long quote ends after a whole clause, never inside an open quote
    long = ('09:00 Olek said "I just moved in, my torch is in the green basket and the radio is on the shelf next '
            'to the window."')
    answer = summary_answer([long], 'today', max_words=14)
    assert answer == 'Today: at 09:00 Olek said "I just moved in, my torch is in the green basket and ..."'
    assert answer.count('"') % 2 == 0
    assert clip_quote('The trip is off, sadly, because of the storm over the hills tonight.', 8) == \
        'The trip is off, sadly ...'
    assert clip_quote('Ferries are cancelled because of strong winds from the north tonight.', 6) == \
        'Ferries are cancelled because of strong ...'
    assert clip_quote('Short one.', 6) == 'Short one.'


def test_a_summary_tells_who_said_what_and_puts_statements_first() -> None:
    assert told('saw Ana talking, Bob; kitchen; heard "The boiler is fixed."; answered "Okay."') == \
        'Ana said "The boiler is fixed."'
    assert told('saw <face_2> typing; desk; heard "trip on Friday"') == '<face_2> typed "trip on Friday"'
    assert told('saw nobody in view; hall; heard "Rain tomorrow."') == 'someone said "Rain tomorrow."'
    assert told('saw Ana, Bob; kitchen; answered "Hello."') == 'saw Ana, Bob; kitchen'
    # a call to the robot is no part of what happened
    assert told('saw Ana talking; hall; heard "Okay robot, tell me, the trip is on Friday."', ('robot',)) == \
        'Ana said "The trip is on Friday."'
    assert told('saw Ana talking; hall; heard "The robot is broken."', ('robot',)) == 'Ana said "The robot is broken."'
    # the framing of a request to remember and a reminder's due time leave room for what was said
    assert told('saw Ana typing; hall; heard "Please keep in mind: the earrings are on top of the fridge."') == \
        'Ana typed "The earrings are on top of the fridge."'
    assert told('saw Ana talking; hall; heard "Robot, remember that the trip moved to Friday."', ('robot',)) == \
        'Ana said "The trip moved to Friday."'
    assert told('saw Ana talking; hall; heard "Please remind me in two minutes to check the oven."') == \
        'Ana said "Please remind me to check the oven."'
    assert told('saw Ana talking; hall; heard "Remembering names is hard."') == 'Ana said "Remembering names is hard."'
    assert told('saw Joe talking; hall; heard "Hello, my name is Joe, remember that my keys are in the drawer"') == \
        'Joe said "My name is Joe, my keys are in the drawer"'
    assert told('saw Ana talking; hall; heard "I remember that day well."') == 'Ana said "I remember that day well."'
    scripts = ['saw <face_1> talking; hall; heard "Robot, where is my bag?"', 'saw <face_1>; hall',
               'saw Bob talking; hall; heard "The printer is upstairs."', 'saw <face_1>; garden',
               'saw <face_1> talking; hall; heard "I fixed the bike."']
    items = [MemoryItem(f'episodic:{i}', f'[2026-03-02 09:{i:02d}:00]--[2026-03-02 09:{i:02d}:09]: {t}')
             for i, t in enumerate(scripts)] + [MemoryItem('profile:<face_1>', '<face_1> is Ana')]
    assert window_events(items, [], 0, 0, None, max_events=2) == \
        ['09:02 Bob said "The printer is upstairs."', '09:04 Ana said "I fixed the bike."']
    assert window_events(items, [], 0, 0, None, max_events=4) == \
        ['09:00 Ana said "Robot, where is my bag?"', '09:02 Bob said "The printer is upstairs."',
         '09:03 saw Ana; garden', '09:04 Ana said "I fixed the bike."']
    # what a radio said comes after what people said
    radio = MemoryItem('episodic:9', '[2026-03-02 09:09:00]--[2026-03-02 09:09:09]: saw nobody in view, an unseen '
                                     'speaker talking; hall; heard "Order today and get a blender free."')
    assert window_events(items + [radio], [], 0, 0, None, max_events=3) == \
        ['09:02 Bob said "The printer is upstairs."', '09:04 Ana said "I fixed the bike."',
         '09:09 an unseen speaker said "Order today and get a blender free."']
    assert len(window_events(items + [radio], [], 0, 0, None, max_events=2)) == 2
    # and so does an exclamation
    sigh = MemoryItem('episodic:8', '[2026-03-02 09:08:00]--[2026-03-02 09:08:09]: saw <face_1> talking; hall; '
                                    'heard "What a long day it has been."')
    assert window_events(items + [sigh], [], 0, 0, None, max_events=2) == \
        ['09:02 Bob said "The printer is upstairs."', '09:04 Ana said "I fixed the bike."']


def test_window_query_returns_only_that_window(agent) -> None:
    start, end = DAY + 5 * 3600, DAY + 12 * 3600
    r = agent.memory.query(text='what happened?', k_episodic=10, window_start=start, window_end=end)
    assert {e.source_segment for e, _ in r.episodic} == {2, 3}
    r = agent.memory.query(text='what happened?', k_episodic=10, window_start=start, window_end=end, chronological=True)
    assert [e.source_segment for e, _ in r.episodic] == [2, 3]                   # in time order
    assert {e.source_segment for e, _ in agent.memory.query(text='printer', k_episodic=10).episodic} == {1, 2, 3, 4}


def test_what_happened_this_morning_reads_that_morning(agent) -> None:
    act = agent.ask('What happened this morning?', at=DAY + 17 * 3600)
    assert act.speak and 'window: this morning' in act.notes, act.notes
    used = _episodic_ids(act)
    assert used and all(DAY + 5 * 3600 <= e.start <= DAY + 12 * 3600
                        for e in agent.memory.entries.get(1, used).values()), used
    said = act.response.lower()
    assert re.search(r'boiler|plumber', said) and 'printer' in said, act.response    # both events, in order
    assert said.find('boil' if 'boil' in said else 'plumb') < said.find('printer')
    assert not re.search(r'invoice|bike|tyre', said), act.response                  # nothing from outside the window


def test_yesterday_is_yesterday(agent) -> None:
    act = agent.ask('What did we talk about yesterday?', at=DAY + 17 * 3600 + 60)
    assert 'window: yesterday' in act.notes, act.notes
    assert set(_episodic_ids(act)) <= {e.id for e in agent.memory.entries.all_entries(1) if e.source_segment == 1}


def test_a_refusal_is_not_the_summary_of_a_window_with_events(agent, monkeypatch) -> None:
    """A model that says "I don't remember that." while the window holds events: the events are told instead."""
    monkeypatch.setattr(agent.engine, 'respond', lambda *a, **k: ("I don't remember that.", []))
    act = agent.ask('What happened this morning?', at=DAY + 17 * 3600 + 120)
    assert act.response_source == 'extractive' and 'printer' in act.response.lower(), act.response
    assert any('a refusal, with events remembered' in n for n in act.notes), act.notes


def test_a_summary_reads_more_episodes_than_a_question(agent, monkeypatch) -> None:
    """A summary reads the window's episodes spread over it (3 x response.summary_events), not the 4 closest."""
    asked = []
    query = agent.engine.memory.query
    monkeypatch.setattr(agent.engine.memory, 'query', lambda q: asked.append(q) or query(q))
    agent.ask('What happened this morning?', at=DAY + 17 * 3600 + 180)
    agent.ask('Where is the new printer?', at=DAY + 17 * 3600 + 240)
    summary, question = [q for q in asked if q.k_episodic]
    assert summary.chronological and summary.k_episodic == 3 * agent.engine.cfgs.response.summary_events
    assert not question.chronological and question.k_episodic == 4
