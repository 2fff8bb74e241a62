# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Reflex core on the real SmolLM2-135M-Instruct weights: reflex pass, retrieval query, response, adapters, topics."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
import torch

from lightomni_ros.core.reflex import generation, sleep
from lightomni_ros.core.reflex.grounding import is_refusal
from lightomni_ros.core.reflex.adapters import AdapterSet, create_adapters
from lightomni_ros.core.reflex.backbone import TextBackbone, assemble, render_segment
from lightomni_ros.core.reflex.cache import crop_to
from lightomni_ros.core.reflex.config import AdapterConfig, BackboneConfig
from lightomni_ros.core.reflex.engine import EngineConfigs, ReflexEngine
from lightomni_ros.core.reflex.latent import LatentHeads, fused_query
from lightomni_ros.core.reflex.people import PersonSeen
from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER, MemoryItem, Retrieved, SegmentInput
from lightomni_ros.core.consolidation.summarizer import RequestSummarizer
from lightomni_ros.core.memory.profiles import Profile
from lightomni_ros.core.summary import SummaryRequest
from lightomni_ros.core.topic import ReminderIntent


class ListMemory:
    """An in-process memory client returning fixed entries (records the queries it got)."""

    def __init__(self) -> None:
        self.queries = []

    def query(self, q):
        self.queries.append((np.asarray(q.vector), q.text, q.k_semantic, q.k_episodic, list(q.face_ids)))
        return Retrieved(semantic=[MemoryItem('semantic:3', 'Ana keeps her keys in the blue bowl.', 0.8)],
                         profiles=[MemoryItem(f'profile:{f}', f'{f} is Ana (occupation: nurse)') for f in q.face_ids])

    def people(self):
        return [PersonSeen('<face_1>', 'Ana', 90.0, 100.0), PersonSeen('<face_2>', 'Bob', 50.0, 60.0)]


@pytest.fixture(scope='module')
def engine():
    cfgs = EngineConfigs(backbone=BackboneConfig(max_new_tokens=5, memory_max_new_tokens=6, threads=2))
    eng = ReflexEngine(cfgs, ListMemory())
    eng.set_global_state(1, '[10:00--10:05] <face_1> (Ana) put her keys in the blue bowl by the door.')
    return eng


def question(sid: int = 7, typed: bool = False) -> SegmentInput:
    text = 'Robot, where did I put my keys?'
    return SegmentInput(segment_id=sid, start=100.0, end=105.0, transcript='' if typed else text,
                        typed_text=text if typed else '',
                        face_ids=['<face_1>'], visual_tags=['hallway', 'door'])


def test_question_yields_action(engine):
    d = engine.decide(question(typed=True), 0.5, 0.5, 12, 4)
    assert 0.0 <= d.p_speech <= 1.0 and 0.0 <= d.p_search <= 1.0
    assert d.speak and d.search, 'a question to the robot must be answered'
    assert d.query.shape == (engine.embedder.dim,) == (384,)
    assert abs(float(np.linalg.norm(d.query)) - 1.0) < 1e-4
    assert d.response.strip(), d
    assert d.memory_ids == ['profile:<face_1>', 'semantic:3']
    assert ('heads untrained' in d.notes) == (not engine.heads.trained)
    vec, text, ks, ke, faces = engine.memory.queries[-1]
    assert np.allclose(vec, d.query) and ks == 12 and ke == 4 and faces == ['<face_1>']
    assert {'reflex', 'retrieval', 'generation'} <= set(d.latency_ms)


def test_fused_query_moves_with_transcript(engine):
    a = engine.reflex_pass(question(8))
    b = engine.reflex_pass(SegmentInput(segment_id=9, start=0, end=5, transcript='What is the weather like today?'))
    assert a.query.shape == b.query.shape == (384,)
    assert float(a.query @ b.query) < 0.999
    # the fused query is normalize(z_ret + e(text)), not e(text) alone
    e = engine.embedder.embed(['Robot, where did I put my keys?'])[0]
    assert np.allclose(a.query, fused_query(a.z_ret, e), atol=1e-5)
    assert float(a.query @ e) < 0.999


def test_caches_serve_later_passes(engine):
    seg = question(11)
    before = engine.cache_stats()
    engine.reflex_pass(seg)
    engine.respond(seg, [], max_new_tokens=2)
    engine.memory_pass(seg, 'ok', max_new_tokens=2)
    after = engine.cache_stats()
    # encoded once (the text backbone's response and memory passes read their own named rendering)
    assert after['feature_misses'] - before['feature_misses'] == 1
    # S_g prefix: cached result equals a fresh full-sequence pass
    with torch.no_grad():
        cached = engine.reflex_pass(seg)
        emb, pos = engine.full_sequence(seg)
        hidden = engine.backbone.decoder()(inputs_embeds=emb, position_ids=pos).last_hidden_state[0]
        p, z = engine.heads(hidden[-engine.heads.n_prompts:])
    assert abs(cached.p_speech - float(p[0])) < 1e-4 and np.allclose(cached.z_ret, z.numpy(), atol=1e-3)
    engine.set_global_state(2, engine.sg_script + '\n[10:06--10:07] Ana left.')
    hits = engine.prefixes.hits
    engine.reflex_pass(seg)
    assert engine.prefixes.hits == hits, 'a new global-state version must not reuse the old prefix'


def test_typed_text_and_a_call_by_name_override_the_action_head(engine):
    """Spoken questions are the head's (radio, TV and people ask questions too) unless they call the robot by name."""
    spoken = SegmentInput(segment_id=13, start=100.0, end=104.0, transcript='Where were you on the night of the fire?')
    d = engine.decide(spoken, 1.01, 1.01, 12, 4)           # thresholds no probability reaches
    assert not d.speak and not d.search and not d.response
    typed = SegmentInput(segment_id=14, start=100.0, end=104.0, typed_text='Where is the umbrella?',
                         face_ids=['<face_1>'])
    d = engine.decide(typed, 1.01, 1.01, 12, 4)
    assert d.speak and d.search and 'speech by typed-text rule' in d.notes
    called = SegmentInput(segment_id=15, start=110.0, end=114.0, transcript='row bot, where is the umbrella?',
                          face_ids=['<face_1>'])
    d = engine.decide(called, 1.01, 1.01, 12, 4)
    assert d.speak and d.search and 'speech by wake-word rule' in d.notes
    about = SegmentInput(segment_id=16, start=120.0, end=124.0, transcript='Did the robot see the umbrella?',
                         face_ids=['<face_1>', '<face_2>'])
    assert not engine.decide(about, 1.01, 1.01, 12, 4).speak, 'speaking of the robot is not calling it'
    engine.cfgs.latent.answer_when_called = False
    try:
        assert not engine.decide(called, 1.01, 1.01, 12, 4).speak
    finally:
        engine.cfgs.latent.answer_when_called = True


def test_speech_that_does_not_name_the_robot_is_not_answered_unless_it_follows_a_reply(engine):
    """The head says speak (threshold 0); the gate keeps the robot quiet only when it was not addressed."""
    engine.address.last_reply_end = float('-inf')
    overheard = SegmentInput(segment_id=131, start=300.0, end=304.0, transcript='Where are you off to, Mateo?',
                             face_ids=['<face_1>', '<face_2>'])
    d = engine.decide(overheard, 0.0, 1.01, 12, 4)
    assert not d.speak and not d.response and not d.search
    assert any(n.startswith('quiet: not addressed') for n in d.notes), d.notes
    named = SegmentInput(segment_id=132, start=310.0, end=314.0, transcript='Hey Robot, where are my keys?',
                         face_ids=['<face_1>'])
    d = engine.decide(named, 0.0, 1.01, 12, 4)
    assert d.speak and d.response and engine.address.last_reply_end == 314.0
    follow_up = SegmentInput(segment_id=133, start=320.0, end=323.0, transcript='And my glasses?',
                             face_ids=['<face_1>'])
    others = [SegmentInput(segment_id=137, start=318.0, end=320.0, transcript='Mine are in the car.',
                           face_ids=['<face_2>']),                       # another person in the room
              SegmentInput(segment_id=138, start=319.0, end=320.0, transcript='And now the weather.')]   # a radio
    for seg in others:
        assert not engine.decide(seg, 0.0, 1.01, 12, 4).speak, 'only the person answered may follow up'
    assert engine.decide(follow_up, 0.0, 1.01, 12, 4).speak, 'a follow-up within follow_up_s is addressed'
    silence = SegmentInput(segment_id=136, start=330.0, end=360.0, face_ids=['<face_1>'], visual_tags=['kitchen'])
    d = engine.decide(silence, 0.0, 1.01, 12, 4)
    assert not d.speak and any(n.startswith('quiet: nobody spoke') for n in d.notes), d.notes
    later = SegmentInput(segment_id=134, start=400.0, end=403.0, transcript='And my glasses?', face_ids=['<face_1>'])
    assert not engine.decide(later, 0.0, 1.01, 12, 4).speak
    engine.cfgs.latent.wake_words = ''      # no names: the head alone decides
    try:
        assert engine.decide(SegmentInput(segment_id=135, start=500.0, end=503.0, transcript='Where are you off to?'),
                             0.0, 1.01, 12, 4).speak
    finally:
        engine.cfgs.latent.wake_words = 'robot, assistant'


def test_someone_alone_in_view_who_asks_you_something_is_answered_without_a_name(engine):
    """The one person in view, seen saying it, asks "you" something: with nobody else there, the robot is asked."""
    from lightomni_ros.core.segment import SpeakerTurn
    engine.address.last_reply_end = float('-inf')
    words = 'Can you tell me where the gloves are?'
    alone = SegmentInput(segment_id=161, start=900.0, end=903.0, transcript=words, face_ids=['<face_1>'],
                         speaker_face='<face_1>')
    assert engine.decide(alone, 0.0, 1.01, 12, 4).speak
    linked = SegmentInput(segment_id=162, start=910.0, end=913.0, transcript=words, face_ids=['<face_1>'],
                          turns=[SpeakerTurn(start=0.0, end=3.0, voice_id='<voice_1>', face_id='<face_1>', text=words)])
    assert engine.decide(linked, 0.0, 1.01, 12, 4).speak
    # a reminder asked for alone in view is asked of the robot too (among several people, of someone there)
    remind = 'Please remind me in fifteen minutes to check the oven.'
    engine.address.last_reply_end = float('-inf')
    assert engine.decide(SegmentInput(segment_id=169, start=915.0, end=918.0, transcript=remind,
                                      face_ids=['<face_1>'], speaker_face='<face_1>'), 0.0, 1.01, 12, 4).speak
    engine.address.last_reply_end = float('-inf')
    quiet = [SegmentInput(segment_id=163, start=920.0, end=923.0, transcript=words, face_ids=['<face_1>', '<face_2>'],
                          speaker_face='<face_1>'),                                    # someone else is there
             SegmentInput(segment_id=170, start=925.0, end=928.0, transcript=remind, face_ids=['<face_1>', '<face_2>'],
                          speaker_face='<face_1>'),
             SegmentInput(segment_id=164, start=930.0, end=933.0, transcript=words, face_ids=['<face_1>']),  # not seen
             SegmentInput(segment_id=165, start=940.0, end=943.0, transcript='Do you want to save money?',
                          face_ids=['<face_1>'], turns=[SpeakerTurn(start=0.0, end=3.0, voice_id='<voice_2>',
                                                                    text='Do you want to save money?')]),  # a radio
             SegmentInput(segment_id=166, start=950.0, end=953.0, transcript='Right, where is my phone.',
                          face_ids=['<face_1>'], speaker_face='<face_1>'),                 # asks nobody
             SegmentInput(segment_id=168, start=955.0, end=958.0, transcript='Jamal, could you close the window?',
                          face_ids=['<face_1>'], speaker_face='<face_1>')]                 # calls someone else
    for seg in quiet:
        d = engine.decide(seg, 0.0, 1.01, 12, 4)
        assert not d.speak and any(n.startswith('quiet: not addressed') for n in d.notes), (seg, d.notes)
    engine.cfgs.latent.answer_alone = False
    try:
        alone.segment_id, alone.start, alone.end = 167, 960.0, 963.0
        assert not engine.decide(alone, 0.0, 1.01, 12, 4).speak
    finally:
        engine.cfgs.latent.answer_alone = True


def test_a_follow_up_for_someone_else_or_a_remark_with_nothing_to_say_is_not_answered(engine, monkeypatch):
    """A follow-up to another person, or a remark with nothing to say, stays quiet.

    Let through as a follow-up only: a call to another person in view by name stays quiet, and so does a remark
    whose reply would only be a refusal or a confirmation it did not ask for; a question, a request to keep something,
    or a remark with something to say, is answered.
    """
    def after_reply(sid: int, text: str, faces: list[str]) -> SegmentInput:
        engine.address.replied(SegmentInput(segment_id=sid - 1, start=700.0 + sid, end=701.0 + sid,
                                            transcript='Robot, hi.', face_ids=['<face_1>'], speaker_face='<face_1>'))
        return SegmentInput(segment_id=sid, start=702.0 + sid, end=704.0 + sid, transcript=text, face_ids=faces,
                            speaker_face='<face_1>')

    called = after_reply(151, 'Ana, have you eaten yet?', ['<face_1>', '<face_2>'])    # ListMemory: <face_2> is Ana
    d = engine.decide(called, 0.0, 1.01, 12, 4)
    assert not d.speak and not d.response and 'quiet: a follow-up that calls Ana, not the robot' in d.notes, d.notes
    import lightomni_ros.core.reflex.engine as engine_module
    replies = iter(["I don't remember that.", 'It has, you worked hard today.', "I don't know."])
    monkeypatch.setattr(engine_module.ReflexEngine, 'respond', lambda self, *a, **k: (next(replies), None))
    monkeypatch.setattr(engine.cfgs.response, 'grounding_check', False)
    remark = after_reply(153, 'What a long day it has been.', ['<face_1>'])
    d = engine.decide(remark, 0.0, 1.01, 12, 4)
    assert not d.speak and not d.response and not d.chunks, d
    assert any(n.startswith('quiet: a follow-up that asks nothing') for n in d.notes), d.notes
    d = engine.decide(after_reply(155, 'What a long day it has been.', ['<face_1>']), 0.0, 1.01, 12, 4)
    assert d.speak and d.response == 'It has, you worked hard today.' and len(d.chunks) == 1
    asked = after_reply(157, 'And where did I park?', ['<face_1>'])
    assert engine.decide(asked, 0.0, 1.01, 12, 4).response == "I don't know."
    # a remark to the room right after an answer is remembered, not confirmed aloud; a request to keep it is
    replies = iter(['Thanks, I will keep that in mind.', 'Okay, I will remember that.'])
    d = engine.decide(after_reply(159, 'Heads up, the plumber comes on Wednesday.', ['<face_1>']), 0.0, 1.01, 12,
                      4)
    assert not d.speak and not d.response, d
    assert any(n.startswith('quiet: a follow-up remark that asks the robot nothing') for n in d.notes), d.notes
    d = engine.decide(after_reply(161, 'And note that the plumber comes at noon.', ['<face_1>']), 0.0, 1.01, 12, 4)
    assert d.speak and d.response == 'Okay, I will remember that.', d


def test_a_statement_the_heads_search_on_is_confirmed_and_a_question_is_not(engine, monkeypatch):
    """Heads that search make a confirmation look like no answer: said to a statement, refused to a question.

    With no memory that answers to quote, a statement the heads read as a question still gets its confirmation (seen
    on held-out streams: "Robot, they set the budget review for Wednesday." met silence); a question its words show
    gets a quote of a memory that answers, or "I don't know." with none.
    """
    import lightomni_ros.core.reflex.engine as engine_module
    monkeypatch.setattr(engine_module.ReflexEngine, 'respond',
                        lambda self, *a, **k: ('Okay, I will remember that.', None))
    monkeypatch.setattr(engine.cfgs.response, 'retry_beams', 0)    # the model's own second replies: no fixed reply
    engine.address.last_reply_end = float('-inf')
    told = SegmentInput(segment_id=181, start=1000.0, end=1004.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                        transcript='Robot, they moved the choir rehearsal to Thursday.')
    d = engine.decide(told, 0.0, 0.0, 12, 4)        # search threshold 0: the heads search on anything
    assert d.speak and d.search and d.response == 'Okay, I will remember that.', (d.response, d.notes)
    assert any(n.startswith('confirmed: the heads searched') for n in d.notes), d.notes
    asked = SegmentInput(segment_id=182, start=1010.0, end=1014.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                         transcript='Robot, when is the choir rehearsal?')
    d = engine.decide(asked, 0.0, 0.0, 12, 4)       # what was just told answers it
    assert d.response == 'From memory: Ana said: They moved the choir rehearsal to Thursday.', (d.response, d.notes)
    asked = SegmentInput(segment_id=183, start=1020.0, end=1024.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                         transcript='Robot, when is the dentist appointment?')
    d = engine.decide(asked, 0.0, 0.0, 12, 4)
    assert d.speak and d.response == "I don't know.", (d.response, d.notes)


def test_a_reminder_is_promised_only_when_the_words_ask_for_one(engine, monkeypatch):
    """Told "Okay robot, update: lunch got moved to two.", it said "Okay, I will remind you in two.": none was set."""
    import lightomni_ros.core.reflex.engine as engine_module
    from lightomni_ros.core.reflex.answering import false_reminder

    monkeypatch.setattr(engine_module.ReflexEngine, 'respond',
                        lambda self, *a, **k: ('Okay, I will remind you in two.', None))
    monkeypatch.setattr(engine.cfgs.response, 'retry_beams', 0)
    moved = SegmentInput(segment_id=196, start=1150.0, end=1154.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                         transcript='Okay robot, update: lunch got moved to two.')
    d = engine.decide(moved, 0.0, 1.01, 12, 4)
    assert d.response == 'Thanks, I will keep that in mind.' and d.response_source == 'template', d
    assert any('promises a reminder' in n for n in d.notes), d.notes
    assert false_reminder('Okay, I will remind you in one minute.', ['a reminder']) == ''


def test_told_something_the_robot_confirms_it_rather_than_quote_a_memory(engine, monkeypatch):
    """A request to keep something is no question, whatever the heads read; a failed reply to a statement confirms.

    Seen on held-out streams: "Excuse me robot, keep in mind that my torch is in the bathroom cabinet." got a quote
    of another memory (the heads searched on it), and "Okay robot, my family still lives in Dublin." got "Nice to
    meet you, Dublin.".
    """
    import lightomni_ros.core.reflex.engine as engine_module
    replies = iter(['Okay, I will remember that.', 'Nice to meet you, Dublin.', 'Nice to meet you, Dublin.',
                    'Nice to meet you, Rahul.'])
    monkeypatch.setattr(engine_module.ReflexEngine, 'respond', lambda self, *a, **k: (next(replies), None))
    monkeypatch.setattr(engine.cfgs.response, 'retry_beams', 0)
    engine.address.last_reply_end = float('-inf')
    told = SegmentInput(segment_id=191, start=1100.0, end=1104.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                        transcript='Robot, my torch is in the kitchen drawer.')
    engine.remember_recent(told)        # a memory a quote could read out
    # a question to someone else is what its speaker said, offered only when asked what was said; one the robot
    # answered is not kept (it was asked of the robot)
    other = SegmentInput(segment_id=190, start=1090.0, end=1094.0, face_ids=['<face_1>', '<face_2>'],
                         speaker_face='<face_1>', transcript='Joe, could you close the window?')
    engine.remember_recent(other)
    engine.remember_recent(dataclasses.replace(other, segment_id=189, transcript='Robot, what time is it?'),
                           answered=True)
    said = [m.text for m in engine.recent_candidates('What did Ana just say?')]
    assert '<face_1> said: Joe, could you close the window?' in said and not any('time is it' in t for t in said)
    assert not any('window' in m.text for m in engine.recent_candidates('Where is my torch?'))
    keep = SegmentInput(segment_id=192, start=1110.0, end=1114.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                        transcript='Excuse me robot, keep in mind that my torch is in the bathroom cabinet.')
    d = engine.decide(keep, 0.0, 0.0, 12, 4)        # search threshold 0: the heads read a question into anything
    assert d.speak and d.response == 'Okay, I will remember that.' and d.response_source == 'generated', d
    home = SegmentInput(segment_id=193, start=1120.0, end=1124.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                        transcript='Okay robot, good to know for you, my family still lives in Dublin.')
    d = engine.decide(home, 0.0, 1.01, 12, 4)
    assert d.response == 'Thanks, I will keep that in mind.' and d.response_source == 'template', d
    assert any('greets Dublin' in n for n in d.notes), d.notes
    # asked, the same reply is refused, and the memory that answers is quoted
    asked = SegmentInput(segment_id=194, start=1130.0, end=1134.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                         transcript='Robot, where does my family live?')
    d = engine.decide(asked, 0.0, 1.01, 12, 4)
    assert d.response == 'From memory: Ana said: Good to know for you, my family still lives in Dublin.', d
    # words left unpunctuated may be a question speech recognition garbled: no confirmation, the memory that answers
    garbled = SegmentInput(segment_id=195, start=1140.0, end=1144.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                           transcript='hey assistant were on earth is my torch')
    d = engine.decide(garbled, 0.0, 1.01, 12, 4)
    assert d.response.startswith('From memory: ') and 'torch' in d.response, d


def test_someone_who_introduces_themself_is_greeted_by_name(engine):
    from lightomni_ros.core.reflex.engine import greeting

    intro = SegmentInput(segment_id=141, start=600.0, end=604.0, face_ids=['<face_1>'],
                         transcript="Hi robot, I'm Barack. I love playing basketball on weekends.")
    d = engine.decide(intro, 0.0, 1.01, 12, 4)
    assert d.speak and d.response == 'Nice to meet you, Barack.' and d.response_source == 'template'
    assert greeting('Robot, is it true that I am Barack?') == '' and greeting('Robot, where are my keys?') == ''


def test_wake_words_are_whole_words_in_any_case():
    from lightomni_ros.core.reflex.addressing import calls_robot, names_robot, wake_words

    words = wake_words(' Robot, ,assistant ')
    assert words == ('robot', 'assistant')
    assert names_robot('Hey ROBOT, hi', words) and names_robot("assistant's turn", words)
    assert not names_robot('I love robotics', words) and not names_robot('', words)
    # speech recognition splits and bends the name; a near miss of another word is not the name
    assert names_robot('row bot quick question', words) and names_robot('robo, hi', words)
    assert not names_robot('Robert, come here', words) and not names_robot('the rabbit ran', words)
    # called, not spoken about: no article or possessive before the name
    assert calls_robot('Robot, where are my keys?', words) and calls_robot('can you help me, assistant', words)
    assert calls_robot('hey row bot what time is it', words)
    assert not calls_robot('I told the robot yesterday', words) and not calls_robot("my assistant's battery", words)
    assert not calls_robot("the robot's arm is stuck", words) and not calls_robot('robotics class', words)


def test_memory_pass_asks_memory_for_the_names_in_view(engine):
    engine.memory.queries.clear()
    seg = SegmentInput(segment_id=15, start=200.0, end=203.0, transcript='I left my glasses on the shelf.',
                       face_ids=['<face_1>'])
    engine.memory_pass(seg, '', max_new_tokens=2)
    vec, text, ks, ke, faces = engine.memory.queries[-1]
    assert len(vec) == 0 and (ks, ke) == (0, 0) and faces == ['<face_1>']
    assert engine.known_names(['<face_1>']) == {'<face_1>': 'Ana'}


def test_memory_pass_non_json_still_gives_topic(engine):
    said = 'Remember that the wifi password is tulip. Remind me to call Bob in three minutes.'
    seg = SegmentInput(segment_id=12, start=200.0, end=206.0, transcript=said, face_ids=['<face_1>'])
    topic = engine.memory_pass(seg, 'Sure.', max_new_tokens=3)   # 3 tokens cannot close a JSON object
    assert topic is not None and topic.producer == 'fallback-parser' and topic.problem
    assert topic.remembered == ['The wifi password is tulip.']
    assert topic.reminders and topic.reminders[0].text == 'call Bob' and topic.reminders[0].due == 206.0 + 180
    assert engine.memory_pass(seg, 'Sure.', stop=lambda: True, max_new_tokens=4) is None, 'pre-emption'


def test_a_looping_reply_ends_where_its_loop_began():
    """Greedy decoding never leaves a cycle: the repeats are cut, the block is kept once, other text is untouched."""
    block = [11, 12, 13, 14, 15]                        # "nobody in view, " as some tokens
    head = [1, 2, 3]
    looping = head + block * 3
    assert generation.loop_excess(looping) == 2 * len(block)
    assert generation.loop_excess(head + block * 2) == 0                  # said twice is no loop yet
    assert generation.loop_excess([7, 8, 9] * 3) == 0                     # too short to tell
    assert generation.loop_excess(list(range(40))) == 0
    assert generation.loop_excess([5] * 20) > 0                           # one token over and over too
    assert generation.loop_excess(head + [4, 5, 6] * 4) == 3 * 3          # 12 tokens: cut to one block


def test_batched_memory_passes_decode_as_single_passes(engine, monkeypatch):
    """Segments of different lengths decoded together give each the reply it gets alone (padding is masked)."""
    import lightomni_ros.core.reflex.engine as engine_module

    replies: list[str] = []
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_retry_beams', 0)    # the greedy readings are compared
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_read_alone', False)
    monkeypatch.setattr(engine_module, 'topic_from_reply',
                        lambda seg, response, reply, *rest, **kw: replies.append(reply) or reply)
    segs = [SegmentInput(segment_id=30 + i, start=300.0 + 10 * i, end=305.0 + 10 * i, transcript=t,
                         face_ids=faces)
            for i, (t, faces) in enumerate([
                ('My name is Ana.', ['<face_1>']),
                ('Remember that the spare key is under the green flower pot next to the garage door, and the '
                 'code of the gate is four four two one.', ['<face_2>']),
                ('The bus to the station leaves at seven.', [])])]
    for s in segs:
        engine.memory_pass(s, '', max_new_tokens=24)
    single = list(replies)
    replies.clear()
    assert len(engine.memory_passes([(s, '') for s in segs], max_new_tokens=24)) == 3
    assert replies == single and len(set(single)) == 3
    assert engine.memory_passes([(s, '') for s in segs], stop=lambda: True, max_new_tokens=24) is None


def test_a_doubtful_reading_gets_a_second_look():
    """A reading whose fact the checks dropped, or with no fact of a statement, is doubted.

    A beam reading whose facts all pass replaces it, one that keeps fewer facts does not; a question or a broadcast
    is not doubted.
    """
    from lightomni_ros.core.segment import SpeakerTurn
    from lightomni_ros.core.topic import TopicData
    told = SegmentInput(segment_id=1, start=0, end=5, transcript='Heads up, lunch is at four.', face_ids=['<face_3>'],
                        speaker_face='<face_3>')
    # the rule that reads event times would fill these readings (test_schedule.py): off, to see the second look
    wrong = sleep.topic_from_reply(told, '', '{"visual": "<face_3> talking", "semantic": ["<face_3> comes from the '
                                             'bedroom table."]}', event_times=False)
    assert wrong.dropped and not wrong.semantic and sleep.reread(told, wrong)
    nothing = sleep.topic_from_reply(told, '', '{"visual": "<face_3> talking"}', event_times=False)
    assert not nothing.dropped and sleep.reread(told, nothing)
    right = sleep.topic_from_reply(told, '', '{"visual": "<face_3> talking", "semantic": ["Lunch is at four."]}',
                                   event_times=False)
    assert not sleep.reread(told, right)
    kept = sleep.better_reading(wrong, [nothing, right])
    assert kept is right and kept.reading == 2 and kept.semantic == ['Lunch is at four.']
    assert sleep.better_reading(wrong, [nothing]) is wrong and wrong.reading == 0
    two = TopicData(segment_id=1, start=0, end=5, semantic=['Lunch is at four.', 'Tea is at five.'],
                    producer='memory-adapter', dropped=['<face_3> comes from Lunch.'])
    assert sleep.better_reading(two, [right]) is two      # a reading that keeps fewer facts is no better
    asked = SegmentInput(segment_id=2, start=0, end=5, transcript='Robot, when is lunch?', face_ids=['<face_3>'],
                         speaker_face='<face_3>')
    assert not sleep.reread(asked, sleep.topic_from_reply(asked, '', '{"visual": "<face_3> talking"}'))
    news = 'The pool reopens on Thursday.'
    tv = SegmentInput(segment_id=3, start=0, end=5, transcript=news,
                      turns=[SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_3>', text=news)])
    assert not sleep.reread(tv, sleep.topic_from_reply(tv, '', '{"visual": "nobody in view"}'))
    # a greedy reply that went astray (no JSON; the rules wrote the topic from the words) is read again, and a whole
    # reading with a fact replaces it; one with nothing only when nobody told anything
    astray = sleep.topic_from_reply(told, '', '{"visual": "<face_3> talking", "remembered": ["<face_3>\'sola ',
                                    event_times=False)
    assert astray.producer == 'fallback-parser' and sleep.reread(told, astray)
    assert sleep.better_reading(astray, [wrong, right]) is right and right.reading == 2
    assert sleep.better_reading(astray, [nothing], told=True) is astray
    assert sleep.better_reading(astray, [nothing], told=False) is nothing and nothing.reading == 1
    assert sleep.tells(told) and not sleep.tells(asked)


def test_a_question_tells_no_fact():
    asked = SegmentInput(segment_id=1, start=0, end=5, transcript='Okay robot, how does Freya like to spend weekends?',
                         face_ids=['<face_3>'], speaker_face='<face_3>')
    t = sleep.topic_from_reply(asked, '', '{"visual": "<face_3> talking", "semantic": ["<face_3> is called Freya."]}')
    assert t.semantic == [] and t.dropped == ['<face_3> is called Freya.']
    told = SegmentInput(segment_id=3, start=0, end=5, transcript='Did you know Gloria is a chef?',
                        face_ids=['<face_3>'])
    assert sleep.topic_from_reply(told, '', '{"visual": "<face_3>", "semantic": ["Gloria works as a chef."]}'
                                  ).semantic == ['Gloria works as a chef.']
    intro = SegmentInput(segment_id=2, start=0, end=5, transcript="Robot, I'm Freya, where is the kettle?",
                         face_ids=['<face_3>'], speaker_face='<face_3>')
    assert sleep.topic_from_reply(intro, '', '{"visual": "<face_3> talking"}').semantic == ['<face_3> is called Freya.']


def test_statements_no_fact_tells_of_are_read_alone():
    """Two statements by one speaker and a fact of one: the other is read alone; a pinned quote tells of both."""
    from lightomni_ros.core.segment import SpeakerTurn
    words = 'I react badly to pollen. At home I look after a tortoise called Sheldon. Where is my hat?'
    seg = SegmentInput(segment_id=1, start=0, end=5, transcript=words, face_ids=['<face_2>'], speaker_face='<face_2>',
                       turns=[SpeakerTurn(start=0.0, end=2.0, voice_id='<voice_1>', face_id='<face_2>',
                                          text=words[:24]),
                              SpeakerTurn(start=2.0, end=5.0, voice_id='<voice_1>', face_id='<face_2>',
                                          text=words[25:])])
    one = sleep.topic_from_reply(seg, '', '{"visual": "<face_2> talking", "semantic": ["<face_2> has a tortoise '
                                          'called Sheldon."]}')
    assert sleep.untold(seg, one) == ['I react badly to pollen.']
    alone = sleep.one_sentence(seg, 'I react badly to pollen.')
    assert alone.said() == [('<face_2>', 'I react badly to pollen.')] and alone.face_ids == seg.face_ids
    assert alone.turns[0].start == 0.0 and alone.turns[0].end == 5.0
    pinned = sleep.topic_from_reply(seg, '', '{"visual": "<face_2> talking", "remembered": ["<face_2> said: ' +
                                    words + '"]}')
    assert sleep.untold(seg, pinned) == []
    single = SegmentInput(segment_id=2, start=0, end=5, transcript='I react badly to pollen.', face_ids=['<face_2>'])
    assert sleep.untold(single, sleep.topic_from_reply(single, '', '{"visual": "<face_2>"}')) == []


def test_a_voice_heard_as_a_broadcast_is_that_broadcast_again_beside_people(engine, monkeypatch):
    """A TV heard with nobody in view, then the same voice with people watching: its news is no fact either time."""
    from lightomni_ros.core.segment import SpeakerTurn
    tok = engine.backbone.tokenizer
    news = 'The ferry to Skye is cancelled on Sunday.'
    reading = tok.encode(f'", "semantic": ["{news}"]}}')
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a, **k: (list(reading), False))
    monkeypatch.setattr(engine.backbone, 'test_model', False)
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_event_times', False)

    def heard(sid: int, voice: str, faces: list[str]) -> SegmentInput:
        return SegmentInput(segment_id=sid, start=900.0 + sid, end=905.0 + sid, transcript=news, face_ids=faces,
                            turns=[SpeakerTurn(start=0.0, end=5.0, voice_id=voice, text=news)])
    assert '<voice_7>' not in engine.heard_alone
    # beside people, a voice never heard alone may be one of them: the reading decides
    assert engine.memory_pass(heard(90, '<voice_7>', ['<face_1>', '<face_2>']), '').semantic == [news]
    alone = engine.memory_pass(heard(91, '<voice_7>', []), '')
    assert alone.semantic == [] and news in alone.dropped and '<voice_7>' in engine.heard_alone
    watched = engine.memory_pass(heard(92, '<voice_7>', ['<face_1>', '<face_2>']), '')
    assert watched.semantic == [] and news in watched.dropped
    assert engine.memory_pass(heard(93, '<voice_8>', ['<face_1>']), '').semantic == [news]
    # answered by the robot, it was said to it: kept, and the voice is not learnt as a broadcast's
    assert engine.memory_pass(heard(94, '<voice_9>', []), 'Okay, I will remember that.').semantic == [news]
    assert '<voice_9>' not in engine.heard_alone


def test_memory_pass_keeps_the_beam_reading_that_passes_the_checks(engine, monkeypatch):
    """The greedy reading lost its fact to the checks: the first beam reading whose facts pass is stored."""
    tok = engine.backbone.tokenizer
    greedy = tok.encode('", "semantic": ["<face_1> comes from the bedroom table."]}')
    beams = [tok.encode('"}'), tok.encode('", "semantic": ["Lunch is at four."]}')]
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a, **k: (list(greedy), False))
    monkeypatch.setattr(generation, 'beam_decode', lambda *a, **k: ([list(b) for b in beams], False))
    monkeypatch.setattr(engine.backbone, 'test_model', False)
    # the rules that read event times and placements would fill these readings: off, to see the second look
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_event_times', False)
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_placements', False)
    seg = SegmentInput(segment_id=40, start=400.0, end=404.0, transcript='Heads up, lunch is at four.',
                       face_ids=['<face_1>'], speaker_face='<face_1>')
    topic = engine.memory_pass(seg, '')
    assert topic.semantic == ['Lunch is at four.'] and topic.reading == 2, topic
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_retry_beams', 0)
    assert engine.memory_pass(seg, '').semantic == [] and '<face_1> comes from the bedroom table.' in \
        engine.memory_pass(seg, '').dropped
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_retry_beams', 4)
    monkeypatch.setattr(generation, 'beam_decode', lambda *a, **k: ([], True))
    assert engine.memory_pass(seg, '') is None, 'pre-empted during the second look: re-queued'
    # two statements, a fact of one: the other read alone adds its fact
    two = SegmentInput(segment_id=41, start=410.0, end=414.0, face_ids=['<face_1>'], speaker_face='<face_1>',
                       transcript='Lunch is at four. The torch is under the bed.')
    readings = iter([tok.encode('", "semantic": ["Lunch is at four."]}'),
                     tok.encode('", "semantic": ["The torch is under the bed."]}')])
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a, **k: (list(next(readings)), False))
    topic = engine.memory_pass(two, '')
    assert topic.semantic == ['Lunch is at four.', 'The torch is under the bed.'] and topic.read_alone == 1, topic


def test_summarize_merge(engine):
    out = engine.summarize(SummaryRequest(mode='merge', texts=['Ana came home.', 'Ana cooked pasta. It was late.'],
                                          max_tokens=6))
    # the model's summary, or none and why (too short, not what the texts say): the caller then writes its own
    assert (out.summary and out.producer == 'memory-adapter') or (out.summary == '' and out.problem)
    prof = engine.summarize(SummaryRequest(mode='profile', face_id='<face_1>', max_tokens=4,
                                           texts=['<face_1> said: My name is Ana and I work as a nurse.']))
    assert prof.name == 'Ana' and (prof.attributes.get('persona') or prof.problem)
    with pytest.raises(ValueError, match='face_id'):
        engine.summarize(SummaryRequest(mode='profile', texts=['x']))


def test_a_summary_does_not_read_the_global_state(engine):
    """A merge says what its texts say: months of S_g in its prompt cost sleep time and can only add other words."""
    engine.set_global_state(engine.sg_version + 1, engine.sg_script + '\n[10:30--10:40] Ana repaired the garden gate.')
    assert 'garden gate' in engine.prefix_text('reflex') and 'garden gate' not in engine.prefix_text('summary')
    engine.summarize(SummaryRequest(mode='merge', texts=['Ana came home.'], max_tokens=2))
    before = engine.prefixes.prefilled_tokens
    engine.set_global_state(engine.sg_version + 1, engine.sg_script + '\n[10:40--10:50] Ana fed the cat.')
    engine.summarize(SummaryRequest(mode='merge', texts=['Ana came home.'], max_tokens=2))
    assert engine.prefixes.prefilled_tokens == before     # the new S_g version rebuilt nothing of the summary's


def test_a_profile_summary_that_invents_is_replaced_by_the_extractive_one(engine, monkeypatch):
    """The memory adapter was not trained to describe people: what it makes up never reaches a profile."""
    texts = ['<face_1> said: My name is Ana and I work as a nurse.']
    invented = '{"persona": "Ana is a young, talented musician known for her love of pizza."}'
    ids = engine.backbone.tokenizer.encode(invented)
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a, **k: (list(ids), False))
    out = engine.summarize(SummaryRequest(mode='profile', texts=texts, face_id='<face_1>', max_tokens=40))
    assert out.summary == '' and 'not grounded' in out.problem and 'pizza' in out.problem
    assert not out.attributes and out.name == 'Ana'
    # the consolidation side then writes the extractive profile: what the texts say about the person
    why: list[str] = []
    upd = RequestSummarizer(engine.summarize, why.append).profile('<face_1>', texts, Profile('<face_1>'), 40)
    assert upd.producer == 'extractive' and 'pizza' not in upd.summary and upd.attributes['occupation'] == 'nurse'
    assert len(why) == 1 and 'not grounded' in why[0]
    # words of the texts, but about nobody: no profile
    nobody = '{"persona": "Nurse; work; name."}'
    ids = engine.backbone.tokenizer.encode(nobody)
    out = engine.summarize(SummaryRequest(mode='profile', texts=texts, face_id='<face_1>', max_tokens=40))
    assert out.summary == '' and out.problem == 'model profile does not name <face_1>'
    faithful = '{"persona": "Ana works as a nurse."}'
    ids = engine.backbone.tokenizer.encode(faithful)
    out = engine.summarize(SummaryRequest(mode='profile', texts=texts, face_id='<face_1>', max_tokens=40))
    assert out.producer == 'memory-adapter' and out.attributes['persona'] == 'Ana works as a nurse.'


@pytest.mark.parametrize('mode, written, why', [
    ('merge', 'Summarize these events in one short paragraph: - saw Ana; kitchen"}', 'repeats its instruction'),
    ('merge', 'Ana came home and cooked pasta."}', 'JSON left in it'),
    ('profile', '<face_1> works as a nurse."]}, <face_1> works as a nurse.', 'JSON left in it'),
    ('profile', '<face_1> is called Ana, a nurse.", фикаモデル', 'letters its texts lack'),
    ('profile', 'Ana is a nurse.", Ana came home. Ana is a nurse.', 'repeats itself'),
    ('profile', 'Ana is called <face_4> is called <face_1>.', 'an id as a name or a place'),
    ('merge', '<face_2> comes from <face_3> and cooked pasta.', 'an id as a name or a place'),
])
def test_a_summary_that_is_not_prose_is_replaced_by_the_extractive_one(engine, monkeypatch, mode, written, why):
    """What a memory adapter trained for the memory JSON writes when asked for a paragraph never reaches S_g."""
    texts = ['<face_1> said: My name is Ana and I work as a nurse.', 'Ana came home. Ana cooked pasta.']
    ids = engine.backbone.tokenizer.encode(written)
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a, **k: (list(ids), False))
    monkeypatch.setattr(engine.backbone, 'test_model', False)
    out = engine.summarize(SummaryRequest(mode=mode, texts=texts, face_id='<face_1>' if mode == 'profile' else '',
                                          max_tokens=40))
    assert out.summary == '' and why in out.problem, out


def test_parsing_repairs():
    seg = SegmentInput(segment_id=1, start=0, end=10, transcript='hello, I drink tea every day', face_ids=['<face_2>'],
                       visual_tags=['kitchen'])
    good = sleep.topic_from_reply(seg, 'hi', "```json\n{'visual': '<face_2>, a kitchen', "
                                             "'semantic': ['Bob likes tea',],}\n```", names={'<face_2>': 'Bob'})
    assert good.producer == 'memory-adapter' and good.semantic == ['Bob likes tea']
    assert good.visual == '<face_2>, a kitchen'
    bad = sleep.topic_from_reply(seg, 'hi', 'I cannot do that')
    assert bad.producer == 'fallback-parser' and 'not JSON' in bad.problem and bad.audio.startswith('hello')
    # a broken separator and a string cut off by the token limit: the complete fields still count
    cut = '{"visual": "<face_2> talking; kitchen"; "semantic": ["<face_2> likes to drink tea.", "<face_2> lik'
    t = sleep.topic_from_reply(seg, 'hi', cut)
    assert t.producer == 'memory-adapter' and t.repaired == cut and not t.problem
    assert t.semantic == ['<face_2> likes to drink tea.'] and t.visual == '<face_2> talking; kitchen'
    looped = sleep.topic_from_reply(seg, 'hi', '{"visual": "nobody in view, nobody in view, nobody in vi')
    assert looped.producer == 'fallback-parser'
    # the time parser reads when a reminder is due; the model's reading counts only when the parser finds none
    ask = SegmentInput(segment_id=2, start=0, end=10, transcript='Remind me to call my daughter in one minute.',
                       face_ids=['<face_0>'])
    t = sleep.topic_from_reply(ask, '', '{"visual": "<face_0> talking", "reminders": [{"text": "call my daughter", '
                                        '"in_seconds": 120}]}')
    assert [(r.text, r.due) for r in t.reminders] == [('call my daughter', 70.0)]
    vague = SegmentInput(segment_id=3, start=0, end=10, transcript='Remind me about the thing later.',
                         face_ids=['<face_0>'])
    t = sleep.topic_from_reply(vague, '', '{"visual": "<face_0> talking", "reminders": [{"text": "the thing", '
                                          '"in_seconds": 600}]}')
    assert [(r.text, r.due) for r in t.reminders] == [('the thing', 610.0)]


def test_a_description_of_what_was_seen_that_the_segment_did_not_show_is_replaced():
    barack = SegmentInput(segment_id=4, start=0, end=5, transcript="Hi robot, I'm Barack.", face_ids=['<face_0>'],
                          speaker_face='<face_0>', visual_tags=['prison'])
    assert sleep.seen(barack) == '<face_0> talking; prison'
    t = sleep.topic_from_reply(barack, '', '{"visual": "nobody in view, prison", "semantic": []}')
    assert t.visual == '<face_0> talking; prison' and t.unseen_visual == 'nobody in view, prison'
    assert sleep.seen_problem('nobody in view, prison', barack) == 'says nobody was in view'
    assert sleep.seen_problem('Joe talking; prison', barack, {'<face_0>': 'Barack'}) == 'names nobody who was in view'
    assert sleep.seen_problem('Barack talking; prison', barack, {'<face_0>': 'Barack'}) == ''
    assert sleep.seen_problem('<face_0>, <face_3>; prison', barack) == 'names a face that was not in view'
    # what was asked is not what was seen; a model that read the frames may describe more than the labels
    asked = SegmentInput(segment_id=5, start=0, end=5, transcript='Robot, what sport does Barack like to play?')
    assert sleep.seen(asked) == 'nobody in view, an unseen speaker talking'
    assert 'play' in sleep.seen_problem('nobody in view, Barack likes to play.', asked, {'<face_0>': 'Barack'})
    assert sleep.seen_problem('<face_0> talking; a man speaking to the camera', barack, saw_frames=True) == ''
    # several people in view and a voice perception did not link to a face: nobody may be marked talking
    from lightomni_ros.core.segment import SpeakerTurn
    pair = SegmentInput(segment_id=6, start=0, end=5, transcript='My usual order is peppermint tea.',
                        face_ids=['<face_1>', '<face_2>'], visual_tags=['laptop'],
                        turns=[SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_1>', text='My usual order is '
                                                                                          'peppermint tea.')])
    names = {'<face_2>': 'Tariq'}
    assert sleep.seen_problem('Tariq talking, <face_1>; laptop', pair, names) == \
        'marks <face_2> talking, whom perception did not hear speak'
    assert sleep.seen_problem('<face_1> talking, Tariq; laptop', pair, names).startswith('marks <face_1> talking')
    assert sleep.seen_problem('<face_2>, <face_1>; laptop', pair, names) == ''
    t = sleep.topic_from_reply(pair, '', '{"visual": "Tariq talking, <face_1>; laptop", "semantic": []}', names=names)
    assert t.visual == '<face_1>, <face_2>; laptop' and t.unseen_visual
    turn = SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_1>', face_id='<face_2>', text='I drink peppermint tea.')
    linked = SegmentInput(segment_id=7, start=0, end=5, transcript='I drink peppermint tea.',
                          face_ids=['<face_1>', '<face_2>'], turns=[turn])
    assert sleep.seen_problem('Tariq talking, <face_1>', linked, names) == ''


def test_a_text_backbone_starts_its_memory_reply_after_the_rules_description_with_the_people_named():
    """The description is what the adapter is trained to write; it misspelt rare names copying it ("Baker talking")."""
    barack = SegmentInput(segment_id=4, start=0, end=5, transcript="Hi robot, I'm Barack. I play basketball.",
                          face_ids=['<face_0>', '<face_1>'], speaker_face='<face_0>', visual_tags=['prison'])
    assert sleep.seen(barack, {'<face_1>': 'Joe'}) == 'Barack talking, Joe; prison'
    assert sleep.memory_opening(barack, names={'<face_1>': 'Joe'}) == '"visual": "Barack talking, Joe; prison'
    assert sleep.memory_opening(barack, saw_frames=True) == ''     # a model that reads the frames writes its own
    typed = SegmentInput(segment_id=5, start=0, end=5, typed_text='Note: the keys are in the drawer.',
                         face_ids=['<face_2>'])
    assert sleep.seen(typed, {}) == '<face_2> typing'
    # the adapter names the speaker by id (copied from "<face_0> said:"): the name the segment gave replaces it
    t = sleep.topic_from_reply(barack, '', '{' + sleep.memory_opening(barack) + '", "semantic": ["<face_0> is called '
                               'Barack.", "<face_0> plays basketball."]}', names={})
    assert t.semantic == ['<face_0> is called Barack.', 'Barack plays basketball.'] and not t.unseen_visual


def test_what_a_radio_or_tv_says_is_no_fact_of_the_household():
    """A voice no face was seen with, nobody in view, nothing typed, the robot quiet: its news stays its words."""
    from lightomni_ros.core.segment import SpeakerTurn
    news = 'The swimming pool reopens on Thursday after repairs.'
    tv = SegmentInput(segment_id=8, start=0, end=5, transcript=news,
                      turns=[SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_3>', text=news)])
    reply = '{"visual": "nobody in view", "semantic": ["The swimming pool is on Thursday."], ' \
            '"remembered": ["The swimming pool reopens on Thursday."]}'
    assert sleep.broadcast(tv, '')
    t = sleep.topic_from_reply(tv, '', reply)
    assert t.semantic == [] and t.remembered == [] and 'The swimming pool is on Thursday.' in t.dropped
    assert sleep.quoted(tv) == [f'<voice_3>, {UNSEEN_SPEAKER} said: {news}']
    # with people in view the voice may be one of them: the pass's reading of the words decides, and what it kept
    # nothing of is not searched again for a fact
    company = dataclasses.replace(tv, face_ids=['<face_1>', '<face_2>'])
    assert not sleep.broadcast(company, '') and sleep.voices_only(company, '')
    told = sleep.topic_from_reply(company, '', '{"visual": "<face_1>, <face_2>", "semantic": ["The swimming pool '
                                               'reopens on Thursday."]}')
    assert told.semantic == ['The swimming pool reopens on Thursday.']
    quiet = sleep.topic_from_reply(company, '', '{"visual": "<face_1>, <face_2>", "semantic": []}')
    assert quiet.semantic == [] and not sleep.reread(company, quiet)
    # the same words to the robot (it answered), or typed, or by a face seen talking, are kept
    # (the fact says less than the item pinned beside it, so the item alone is kept)
    answered = sleep.topic_from_reply(tv, 'Okay, I will remember that.', reply)
    assert answered.remembered == ['The swimming pool reopens on Thursday.'] and not answered.semantic
    seen = SegmentInput(segment_id=9, start=0, end=5, transcript=news, face_ids=['<face_1>'], turns=[
        SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_3>', face_id='<face_1>', text=news)])
    fact = reply.replace(', "remembered": ["The swimming pool reopens on Thursday."]', '')
    assert not sleep.broadcast(seen, '') and sleep.topic_from_reply(tv, 'Okay, I will remember that.', fact).semantic
    assert sleep.topic_from_reply(seen, '', reply).remembered and sleep.topic_from_reply(seen, '', fact).semantic
    # asked to keep it, or about the voice itself: a person out of sight, kept
    keep = SegmentInput(segment_id=10, start=0, end=5, transcript='Remember that the keys are in the drawer.')
    assert sleep.topic_from_reply(keep, '', '{"visual": "nobody in view", "remembered": ["The keys are in the '
                                            'drawer."]}').remembered == ['The keys are in the drawer.']
    words = 'I work as a nurse. The pool is open on Thursday.'
    nurse = SegmentInput(segment_id=11, start=0, end=5, transcript=words,
                         turns=[SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_3>', text=words)])
    own = '{"visual": "nobody in view", "semantic": ["<voice_3> works as a nurse.", "The pool is open on Thursday."]}'
    assert sleep.topic_from_reply(nurse, '', own).semantic == ['<voice_3> works as a nurse.']


def test_a_fact_needs_a_subject_and_something_said():
    """A clause's opening is no subject; the description's people and frame labels copied are no fact.

    A frame label still supports a fact's words, and a person seen somewhere said as a fact is kept (the test above).
    """
    seg = SegmentInput(segment_id=12, start=0, end=5, face_ids=['<face_1>', '<face_4>'],
                       visual_tags=['balcony', 'bedroom'],
                       transcript='As a photographer I start work very early. The keys are in the drawer.')
    kept, dropped = sleep.heard_facts(['As a photographer works.', 'Mei; balcony, bedroom.',
                                       'The keys are in the bedroom drawer.'], seg, {'<face_4>': 'Mei'})
    # a label still supports a word of what was said
    assert kept == ['The keys are in the bedroom drawer.'] and len(dropped) == 2
    # the description's people copied before words that were said are no fact either
    seg.transcript = 'I train for table tennis twice a week.'
    kept, dropped = sleep.heard_facts(['<face_1>, Mei, <face_4>; table tennis.', 'Mei; table tennis.',
                                       '<face_1> plays table tennis.'], seg, {'<face_4>': 'Mei'})
    assert kept == ['<face_1> plays table tennis.'] and len(dropped) == 2
    # an exclamation states nothing; a statement beside it still does
    seg.transcript = 'What a long day it has been.'
    assert sleep.heard_facts(['Mei has a long day.'], seg, {'<face_4>': 'Mei'})[0] == []
    seg.transcript = 'What a day. I work as a nurse now.'
    assert sleep.heard_facts(['Mei works as a nurse.', 'Mei has a day.'], seg, {'<face_4>': 'Mei'})[0] == \
        ['Mei works as a nurse.']
    # a request's clause copied is no fact; a pinned item keeps its words, lower case and all
    ask = SegmentInput(segment_id=13, start=0, end=5, face_ids=['<face_1>', '<face_4>'],
                       transcript='Robot, tell me, set a reminder to check the oven in two minutes. The oven is '
                                  'in the kitchen.')
    t = sleep.topic_from_reply(ask, '', '{"visual": "<face_1> talking, Mei", "semantic": ["set a reminder to check '
                                        'the oven in two minutes.", "The oven is in the kitchen."]}')
    assert t.semantic == ['The oven is in the kitchen.']


def test_a_face_heard_giving_their_name_gets_the_naming_fact():
    """Perception knows who spoke and the words give the name: the fact is written when the adapter leaves it out."""
    from lightomni_ros.core.segment import SpeakerTurn
    words = 'Hello, my name is Joe, remember that my car keys are in the blue drawer'
    joe = SegmentInput(segment_id=2, start=0, end=7, transcript=words, face_ids=['<face_1>', '<face_0>'],
                       turns=[SpeakerTurn(start=2.0, end=7.0, voice_id='<voice_0>', face_id='<face_1>', text=words)])
    t = sleep.topic_from_reply(joe, '', '{"visual": "Joe talking, Barack", "semantic": ["Joe has a blue car keys in '
                                        'the drawer."], "remembered": ["my car keys are in the blue drawer"]}',
                               names={'<face_0>': 'Barack'})
    assert t.semantic[-1] == '<face_1> is called Joe.' and t.semantic.count('<face_1> is called Joe.') == 1
    t = sleep.topic_from_reply(joe, '', '{"visual": "<face_1> talking, Barack", "semantic": ["<face_1> is called '
                                        'Joe."]}', names={'<face_0>': 'Barack'})
    assert t.semantic == ['<face_1> is called Joe.']
    assert '<face_1> is called Joe.' in sleep.fallback_topic(joe, '', 'no JSON').semantic
    # an unlinked voice among several people, or a name given for someone else, names nobody
    unlinked = SegmentInput(segment_id=3, start=0, end=5, transcript="I'm Ana.", face_ids=['<face_1>', '<face_2>'],
                            turns=[SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_3>', text="I'm Ana.")])
    assert sleep.introductions(unlinked) == []
    other = SegmentInput(segment_id=4, start=0, end=5, transcript='Robot, here is my cousin Pablo.',
                         face_ids=['<face_3>'], speaker_face='<face_3>')
    assert sleep.introductions(other) == []
    # someone introduced by the face seen saying it is the one other face in view; the adapter gave the name to the
    # speaker (who may not be named yet), or to nobody
    cousin = SegmentInput(segment_id=5, start=0, end=5, transcript='Robot, here is my cousin Noor.',
                          face_ids=['<face_1>', '<face_2>'], speaker_face='<face_1>')
    assert sleep.introductions(cousin) == [('<face_2>', 'Noor')]
    t = sleep.topic_from_reply(cousin, 'Nice to meet you, Noor.', '{"visual": "<face_1> talking, <face_2>", '
                                                                  '"semantic": ["<face_1> is called Noor."]}')
    assert t.semantic == ['<face_2> is called Noor.']
    crowd = SegmentInput(segment_id=6, start=0, end=5, transcript='Robot, here is my cousin Noor.',
                         face_ids=['<face_1>', '<face_2>', '<face_3>'], speaker_face='<face_1>')
    assert sleep.introductions(crowd) == []
    # a name the words give a pet or a thing names nobody in view
    pet = SegmentInput(segment_id=8, start=0, end=5, transcript='Robot, at home I look after a dog called Pepper.',
                       face_ids=['<face_3>'], speaker_face='<face_3>')
    t = sleep.topic_from_reply(pet, '', '{"visual": "<face_3> talking", "semantic": ["<face_3> is called Pepper.", '
                                        '"<face_3> has a dog called Pepper."]}')
    assert t.semantic == ['<face_3> has a dog called Pepper.'] and t.dropped == ['<face_3> is called Pepper.']
    assert sleep.names_a_thing('Rex', 'My dog is called Rex.') and not sleep.names_a_thing('Ana', "I'm called Ana.")
    self_named = SegmentInput(segment_id=7, start=0, end=5, transcript='Robot, this is Joe speaking.',
                              face_ids=['<face_1>', '<face_2>'], speaker_face='<face_1>')
    assert sleep.introductions(self_named) == [('<face_1>', 'Joe')]       # the speaker, not the face beside them


def test_a_fact_goes_to_the_person_the_words_point_to():
    """The adapter handed facts to someone else in view: first person goes to the speaker, a name to its owner."""
    from lightomni_ros.core.reflex.attribution import attributed, said_names
    words = 'I train for basketball twice a week. I celebrate my birthday in February.'
    pair = SegmentInput(segment_id=1, start=0, end=5, transcript=words, face_ids=['<face_1>', '<face_2>'],
                        speaker_face='<face_1>')
    t = sleep.topic_from_reply(pair, '', '{"visual": "<face_1> talking, <face_2>", "semantic": ["<face_2> plays '
                                         'basketball.", "<face_1> has a birthday in February."]}')
    assert t.semantic == ['<face_1> plays basketball.', '<face_1> has a birthday in February.']
    names = {'<face_1>': 'Rahul', '<face_2>': 'Sofia', '<face_5>': 'Giulia'}
    about = SegmentInput(segment_id=2, start=0, end=5, transcript='Did you know Giulia has a job as an architect?',
                         face_ids=['<face_1>', '<face_2>'], speaker_face='<face_1>')
    assert attributed(['Sofia works as an architect.'], about, names) == (['Giulia works as an architect.'], [])
    assert attributed(['Giulia works as an architect.'], about, names) == (['Giulia works as an architect.'], [])
    told = SegmentInput(segment_id=2, start=0, end=5, transcript='Ana works as a nurse, you know.',
                        face_ids=['<face_1>', '<face_2>'], speaker_face='<face_1>')
    assert attributed(['Rahul works as a nurse.'], told, {**names, '<face_3>': 'Ana'})[0] == ['Ana works as a nurse.']
    # a sentence that opens with a name memory does not know, with no word in the first person, is about that name;
    # a fact that names what the sentence is about keeps its holder ("<face_1> thinks Paris is lovely")
    mei = SegmentInput(segment_id=2, start=0, end=5, transcript='Mei has a job as a carpenter.',
                       face_ids=['<face_1>', '<face_2>'], speaker_face='<face_1>')
    assert attributed(['<face_1> works as a carpenter.'], mei, {}) == (['Mei works as a carpenter.'], [])
    paris = SegmentInput(segment_id=2, start=0, end=5, transcript='Paris is lovely in spring.',
                         face_ids=['<face_1>'], speaker_face='<face_1>')
    assert attributed(['<face_1> thinks Paris is lovely.'], paris, {})[0] == ['<face_1> thinks Paris is lovely.']
    # a name memory does not know may be a place: the speaker's fact stays theirs, another's is dropped
    home = SegmentInput(segment_id=2, start=0, end=5, transcript='Back home in Osaka it is much warmer.',
                        face_ids=['<face_1>', '<face_2>'], speaker_face='<face_1>')
    assert attributed(['<face_1> comes from Osaka.'], home, {}) == (['<face_1> comes from Osaka.'], [])
    assert attributed(['<face_2> comes from Osaka.'], home, {}) == ([], ['<face_2> comes from Osaka.'])
    typed = SegmentInput(segment_id=3, start=0, end=5, typed_text='Note: my passport is in the drawer.',
                         face_ids=['<face_3>', '<face_4>'])
    passport = ["<face_3>'s passport is in the drawer."]
    assert attributed(passport, typed, {})[0] == passport
    # the speaker's own name, a name only called out, things nobody owns
    called = SegmentInput(segment_id=3, start=0, end=5, transcript='Giulia, I really enjoyed the cycling race.',
                          face_ids=['<face_1>', '<face_2>'], speaker_face='<face_1>')
    assert attributed(['Giulia enjoyed the cycling race.'], called, {}) == (['<face_1> enjoyed the cycling race.'], [])
    assert attributed(['Rahul enjoyed the cycling race.'], called, names)[0] == ['Rahul enjoyed the cycling race.']
    gloves = ['The gloves are in the coat pocket.']
    assert attributed(gloves, called, names)[0] == gloves
    # a place is no person; nothing points to anyone: a first-person statement that names someone memory knows, or
    # a voice no face is linked to
    place = SegmentInput(segment_id=4, start=0, end=5, transcript='No shellfish for me please. I was raised in Krakow.',
                         face_ids=['<face_3>', '<face_4>'], speaker_face='<face_3>')
    assert attributed(['<face_4> comes from Krakow.'], place, {})[0] == ['<face_3> comes from Krakow.']
    both = SegmentInput(segment_id=4, start=0, end=5, transcript='I told Ana I work as a nurse.',
                        face_ids=['<face_1>', '<face_2>', '<face_3>'], speaker_face='<face_1>')
    assert attributed(['<face_3> works as a nurse.'], both, {'<face_2>': 'Ana'}) == \
        ([], ['<face_3> works as a nurse.'])
    from lightomni_ros.core.segment import SpeakerTurn
    voice = SegmentInput(segment_id=5, start=0, end=5, transcript='I work as a nurse.',
                         face_ids=['<face_1>', '<face_2>'],
                         turns=[SpeakerTurn(start=0.0, end=5.0, voice_id='<voice_3>', text='I work as a nurse.')])
    assert attributed(['<face_2> works as a nurse.'], voice, {}) == ([], ['<face_2> works as a nurse.'])
    assert attributed(['<voice_3> works as a nurse.'], voice, {})[0] == ['<voice_3> works as a nurse.']
    # a naming fact names whoever was introduced; sentence openings are no names unless memory knows them
    intro = SegmentInput(segment_id=6, start=0, end=5, transcript='Robot, here is my cousin Pablo.',
                         face_ids=['<face_1>', '<face_3>'], speaker_face='<face_3>')
    assert attributed(['<face_1> is called Pablo.'], intro, {})[0] == ['<face_1> is called Pablo.']
    named, called_out = said_names('Update: the trip moved. Hi robot, Ana is here. Wait, Joe said so.')
    assert named == ['Ana', 'Joe'] and called_out == ['Update', 'Wait']


def test_what_the_robot_promised_to_keep_is_pinned_when_the_pass_found_nothing():
    from lightomni_ros.core.reflex.grounding import promises_to_keep
    assert promises_to_keep('Okay, I will remember that.') and promises_to_keep('Thanks, I will keep that in mind.')
    assert not promises_to_keep("I don't remember that.") and not promises_to_keep('Nice to meet you, Ana.')
    assert not promises_to_keep('They are in the blue drawer, I remember.')
    seg = SegmentInput(segment_id=1, start=0, end=5, transcript='Hey assistant, heads up, the budget review '
                       'is on Tuesday.', face_ids=['<face_1>'], speaker_face='<face_1>')
    empty = '{"visual": "<face_1> talking", "semantic": [], "remembered": []}'
    t = sleep.topic_from_reply(seg, 'Okay, I will remember that.', empty, event_times=False)
    assert t.remembered == ['<face_1> said: Hey assistant, heads up, the budget review is on Tuesday.']
    # said by the name memory knows, as the facts are
    t = sleep.topic_from_reply(seg, 'Okay, I will remember that.', empty, names={'<face_1>': 'Leila'},
                               event_times=False)
    assert t.remembered == ['Leila said: Hey assistant, heads up, the budget review is on Tuesday.']
    # the rule that reads event times finds the fact itself: that is what is kept, not the words
    t = sleep.topic_from_reply(seg, 'Okay, I will remember that.', empty)
    assert t.semantic == ['The budget review is on Tuesday.'] and t.remembered == []
    assert sleep.topic_from_reply(seg, '', empty).remembered == []
    # asked to keep it ("keep in mind that ..."), the item itself is pinned, promised or not
    asked = dataclasses.replace(seg, transcript='Hey assistant, keep in mind that the budget review is on Tuesday.')
    assert sleep.topic_from_reply(asked, '', empty).remembered == ['The budget review is on Tuesday.']
    found = '{"visual": "<face_1> talking", "remembered": ["The budget review is on Tuesday."]}'
    assert sleep.topic_from_reply(seg, 'Okay, I will remember that.', found).remembered == \
        ['The budget review is on Tuesday.']


def test_remember_that_items_are_stored_in_the_third_person_once_and_questions_pin_nothing():
    seg = SegmentInput(segment_id=1, start=0, end=5, face_ids=['<face_1>', '<face_0>'], speaker_face='<face_1>',
                       transcript='Hello, my name is Joe, remember that my car keys are in the blue drawer')
    # the pass found the name only: the pattern's item is Joe's, not "my" (whoever reads it later)
    t = sleep.topic_from_reply(seg, '', '{"visual": "<face_1> talking", "semantic": ["<face_1> is called Joe."]}')
    assert t.remembered == ["Joe's car keys are in the blue drawer."]
    fallback = sleep.topic_from_reply(seg, '', 'not json at all')
    assert fallback.producer == 'fallback-parser' and fallback.remembered == ["Joe's car keys are in the blue drawer."]
    # nobody singled out: "my" stays as said
    crowd = SegmentInput(segment_id=2, start=0, end=5, face_ids=['<face_1>', '<face_0>'],
                         transcript='Remember that my bike is outside.')
    assert sleep.remembered_in(crowd) == ['My bike is outside.']
    # "remember" that asks nothing of the robot pins nothing
    for words in ('Robot, do you remember my favourite drink?', "I'm trying to remember where the car keys are.",
                  'I cannot remember what you can do.', 'I remember when we met.'):
        assert sleep.find_remembered(words) == [], words
    assert sleep.find_remembered('I want you to remember that the pills are in the drawer.') == \
        ['the pills are in the drawer']
    # other ways of asking to keep it
    for words in ('Robot, note that the pills are in the drawer.', 'Keep in mind: the pills are in the drawer.',
                  'Please keep in mind that the pills are in the drawer.'):
        assert sleep.find_remembered(words) == ['the pills are in the drawer'], words
    assert sleep.find_remembered('Did you note that the pills are in the drawer?') == []
    # a fact written twice, or a name given to itself, is stored once / not at all
    t = sleep.topic_from_reply(
        SegmentInput(segment_id=3, start=0, end=5, transcript="Robot, I'm Kwame. I celebrate my birthday in May.",
                     face_ids=['<face_3>'], speaker_face='<face_3>'), '',
        '{"semantic": ["<face_3> is called Kwame.", "Kwame is called Kwame.", "Kwame has a birthday in May.", '
        '"kwame has a birthday in May"], "remembered": ["Kwame has a birthday in May."]}')
    assert t.semantic == ['<face_3> is called Kwame.', 'Kwame has a birthday in May.'] and t.remembered == []


def test_a_fact_that_says_less_than_a_pinned_item_is_not_stored():
    seg = SegmentInput(segment_id=3, start=0, end=4, transcript='Note that lunch is at five.', face_ids=['<face_2>'])
    t = sleep.topic_from_reply(seg, 'Okay, I will remember that.', '{"visual": "<face_2> talking", "semantic": '
                               '["<face_2> has lunch.", "<face_2> has lunch at five."], "remembered": '
                               '["lunch is at five"]}')
    assert t.remembered == ['lunch is at five'] and '<face_2> has lunch.' in t.dropped
    assert sleep.says_less("Rahul has a cat.", ["Rahul's cat is called Luna"])
    assert not sleep.says_less("Joe's charger is in the attic.", ['the charger is in the attic'])


def test_a_name_only_seen_as_a_frame_label_is_given_to_nobody():
    seg = SegmentInput(segment_id=16, start=0, end=3, face_ids=['<face_6>'], transcript='I put my book on the shelf.',
                       visual_tags=['loupe'])
    kept, dropped = sleep.heard_facts(['<face_6> is called Loupe.', "<face_6>'s book is on the shelf."], seg,
                                      {'<face_6>': 'Joe'})
    assert kept == ["<face_6>'s book is on the shelf."] and dropped == ['<face_6> is called Loupe.']
    said = SegmentInput(segment_id=17, start=0, end=3, face_ids=['<face_6>'], transcript="Hi, I'm Loupe.",
                        visual_tags=['loupe'])
    assert sleep.heard_facts(['<face_6> is called Loupe.'], said)[0] == ['<face_6> is called Loupe.']


def test_facts_nothing_in_the_segment_said_are_not_stored():
    seg = SegmentInput(segment_id=2, start=0, end=10, transcript='Bob, I spend my free time birdwatching.',
                       face_ids=['<face_1>'], visual_tags=['garden'])
    t = sleep.topic_from_reply(seg, '', '{"visual": "<face_1> talking; garden", "semantic": ["<face_1> enjoys '
                               'bird watching.", "Mei likes to drink coffee.", "Bob likes coffee.", "<face_1> is in '
                               'the garden."], "remembered": ["the keys are in the car"]}', names={'<face_2>': 'Bob'})
    assert t.producer == 'memory-adapter' and t.semantic == ['<face_1> enjoys bird watching.',
                                                             '<face_1> is in the garden.']
    # a name memory knows is no evidence ("Bob" was said, but nothing about coffee), nor is an invented pin
    assert t.dropped == ['Mei likes to drink coffee.', 'Bob likes coffee.', 'the keys are in the car']
    assert t.remembered == []
    kept, dropped = sleep.heard_facts(['<face_1> works as a carpenter.'], SegmentInput(
        segment_id=3, start=0, end=1, transcript='As a carpenter I start work early.', face_ids=['<face_1>']))
    assert kept and not dropped
    # every claimed word needs support, and the people a fact is about must be there
    kept, dropped = sleep.heard_facts(
        ['<face_1> has a cat called Luna.', 'Luna is called Mateo.', "Kwame has a software engineer's first name.",
         '<face_3> has a cat.', 'Kwame has a cat called Luna.', '<face_2> is called Kwame.',
         '<face_1> is called <face_1>.'],
        SegmentInput(segment_id=4, start=0, end=1, transcript='At home I look after a cat called Luna.',
                     face_ids=['<face_1>', '<face_2>']), names={'<face_1>': 'Kwame', '<face_4>': 'Mateo'})
    assert kept == ['<face_1> has a cat called Luna.', 'Kwame has a cat called Luna.']
    # a naming fact gives a name: not a month the speaker said, not nothing; an introduction may give a calendar word
    december = SegmentInput(segment_id=5, start=0, end=1, transcript='Robot, my birthday is in December.',
                            face_ids=['<face_1>'], speaker_face='<face_1>')
    assert sleep.heard_facts(['<face_1> is called December.', '<face_1> has a birthday in December.',
                              '<face_1> is called.'], december) == (
        ['<face_1> has a birthday in December.'], ['<face_1> is called December.', '<face_1> is called.'])
    sofia = SegmentInput(segment_id=6, start=0, end=1, transcript='Sofia, I really enjoyed the new cafe.',
                         face_ids=['<face_3>', '<face_2>'], speaker_face='<face_3>')
    assert sleep.heard_facts(['<face_3> is called Sofia.', '<face_3> enjoyed the new cafe.'], sofia) == (
        ['<face_3> enjoyed the new cafe.'], ['<face_3> is called Sofia.'])
    # a thing said after an article or a quantifier is no name; a name heard in lower case still is one
    coffee = SegmentInput(segment_id=6, start=0, end=1, transcript='I could really use some espresso right now.',
                          face_ids=['<face_2>'], speaker_face='<face_2>')
    assert sleep.heard_facts(['<face_2> is called Espresso.'], coffee) == ([], ['<face_2> is called Espresso.'])
    small = SegmentInput(segment_id=6, start=0, end=1, transcript='row bot here is my cousin olek',
                         face_ids=['<face_2>', '<face_3>'], speaker_face='<face_2>')
    assert sleep.heard_facts(['<face_3> is called Olek.'], small) == (['<face_3> is called Olek.'], [])
    april = SegmentInput(segment_id=6, start=0, end=1, transcript="Robot, I'm April.", face_ids=['<face_1>'])
    assert sleep.heard_facts(['<face_1> is called April.'], april) == (['<face_1> is called April.'], [])
    # a town is no name; a hometown fact needs its town said as one: not a frame label, a thing's place or a name
    dublin = SegmentInput(segment_id=6, start=0, end=1, transcript='Robot, my family still lives in Dublin.',
                          face_ids=['<face_3>'], speaker_face='<face_3>', visual_tags=['studio couch'])
    assert sleep.heard_facts(['<face_3> is called Dublin.', '<face_3> comes from Dublin.',
                              '<face_3> comes from studio couch.'], dublin) == (
        ['<face_3> comes from Dublin.'], ['<face_3> is called Dublin.', '<face_3> comes from studio couch.'])
    put = SegmentInput(segment_id=6, start=0, end=1, transcript='Olek, I dropped my camera in the bathroom cabinet.',
                       face_ids=['<face_3>'], speaker_face='<face_3>')
    assert sleep.heard_facts(['<face_3> comes from the bathroom cabinet.', '<face_3> comes from <face_3>.'],
                             put)[0] == []
    assert not sleep.town_heard('Olek comes from Olek.', 'Olek, I really enjoyed the film.')
    assert not sleep.town_heard('Ana comes from the cafe.', 'Kwame, the new cafe was an absolute mess.')
    assert sleep.town_heard('Ana comes from Osaka.', 'Osaka is where I was born.')
    assert sleep.town_heard('Ana comes from the Netherlands.', "I'm from the Netherlands.")
    # a place said of a thing is not where the speaker is
    thermos = SegmentInput(segment_id=6, start=0, end=1, face_ids=['<face_3>'], speaker_face='<face_3>',
                           transcript="Robot, I'm Tariq, keep in mind that the thermos is under the bed.")
    assert sleep.heard_facts(['Tariq is under the bed.', '<face_3> is under the bed.', 'The thermos is under the bed.'],
                             thermos) == (['The thermos is under the bed.'],
                                          ['Tariq is under the bed.', '<face_3> is under the bed.'])
    assert sleep.place_heard('<face_2> is in the kitchen.', "I'm in the kitchen now.", set())
    assert sleep.place_heard('Ana is in the garden.', 'Ana is in the garden with the dog.', {'ana'})
    assert not sleep.place_heard('<face_1> is at lunch.', 'Okay robot, update: lunch got moved to two.', set())
    assert sleep.place_heard('Lunch is at two.', 'Okay robot, update: lunch got moved to two.', set())
    assert not sleep.place_heard('Giulia is at three.', 'Wait, I was wrong: lunch is at three.', {'giulia'})
    assert not sleep.place_heard('<face_2> is at noon.', 'Keep in mind that lunch is at noon.', set())
    assert sleep.place_heard('<face_2> is at the station.', "We're still at the station.", set())
    # a trade said as what someone is, not as what they own
    assert not sleep.owned_heard('Tariq has a photographer.', 'I have been a photographer for ten years.')
    assert not sleep.owned_heard('<face_1> has a nurse.', 'As a nurse I start work very early.')
    assert sleep.owned_heard('<face_3> has a dog called Pepper.', 'At home I look after a dog called Pepper.')
    assert sleep.owned_heard('Ana has a bike.', "I'm a cyclist, I have a bike.")
    assert not sleep.owned_heard('Mei has a cat hair.', 'I react badly to cat hair.')
    assert sleep.owned_heard('Ana has a sister.', 'My sister lives in Leeds.')
    # a trade said as what someone is, not a robot addressed or a thing brought; an allergy said as one
    assert not sleep.trade_heard('Joe works as a robot.', 'Hello, Robot. My name is Maria and I work and I shift.')
    assert not sleep.trade_heard('Merak works as a hammer.', 'I brought my hammer in the car.')
    assert sleep.trade_heard('Joe works as a teacher.', 'Hello robot, my name is Joe and I work on a teacher.')
    # a workplace is said with work as what someone does, not as a thing
    assert not sleep.trade_heard('Merak works in the cellar.', 'I put my work in the cellar.')
    assert sleep.trade_heard('Merak works in the cellar.', 'These days I work in the cellar.')
    assert sleep.trade_heard('Ana works as a software engineer.', "I'm a software engineer.")
    assert not sleep.allergy_heard('<face_8> is allergic to red.', 'Lay red with P9 again.')
    assert all(sleep.allergy_heard('Mei is allergic to shellfish.', said) for said in (
        'I react badly to shellfish.', 'One bite of shellfish and I get sick.', "I can't eat shellfish."))
    # the allergy is said in the sentence that names what it is to, not beside another thing's sentence
    two = 'No cat hair for me please, allergy. My usual order is orange juice.'
    assert sleep.allergy_heard('<face_3> is allergic to cat hair.', two)
    assert not sleep.allergy_heard('<face_3> has allergy to orange juice.', two)
    assert not sleep.allergy_heard('<face_3> is allergic to orange juice.', two)
    assert not sleep.birthday_heard('Joe has a birthday in the attic.')
    assert sleep.birthday_heard('Ana has a birthday on the 3rd of May.')
    # a time nobody said was a birthday
    assert not sleep.birthday_heard('<face_1> has a birthday in Thursday.', 'They set the budget review for Thursday.')
    assert not sleep.birthday_heard("<face_3>'s birthday is on Friday.", 'Keep in mind: the school trip is on Friday.')
    assert sleep.birthday_heard("Ana's birthday is in May.", 'My birthday is in May.')
    assert all(sleep.birthday_heard('Ana has a birthday in May.', said) for said in (
        'I celebrate my birthday in May.', 'I was born in May.', 'My party is in May every year.'))
    # the forms and people's names alone tell nothing; a naming fact tells the name
    cafe = SegmentInput(segment_id=7, start=0, end=1, transcript='Rahul, the new cafe was an absolute mess.',
                        face_ids=['<face_1>', '<face_2>'], speaker_face='<face_2>')
    names = {'<face_1>': 'Rahul', '<face_2>': 'Sofia'}
    assert sleep.heard_facts(['Sofia likes to drink, Sofia likes to drink.', 'Sofia thinks the new cafe was a mess.'],
                             cafe, names) == (['Sofia thinks the new cafe was a mess.'],
                                              ['Sofia likes to drink, Sofia likes to drink.'])
    intro = SegmentInput(segment_id=8, start=0, end=1, transcript="Hi robot, I'm Sofia.", face_ids=['<face_2>'],
                         speaker_face='<face_2>')
    assert sleep.heard_facts(['<face_2> is called Sofia.', 'Sofia likes to drink.'], intro, {'<face_2>': 'Sofia'}) == \
        (['<face_2> is called Sofia.'], ['Sofia likes to drink.'])
    # the words said, cut short, are no fact
    clip = SegmentInput(segment_id=7, start=0, end=1, transcript='Bimblo F2 now.', face_ids=['<face_3>'],
                        speaker_face='<face_3>')
    assert sleep.heard_facts(['Bimblo F2.', '<face_3> said bimblo.'], clip) == (['<face_3> said bimblo.'],
                                                                                ['Bimblo F2.'])
    # words with no subject, and a person and a place with no verb, say nothing of anyone
    k7 = SegmentInput(segment_id=7, start=0, end=1, transcript='Been read by K7 now.', face_ids=['<face_7>'],
                      speaker_face='<face_7>')
    assert sleep.heard_facts(['Been read by K7.'], k7) == ([], ['Been read by K7.'])
    attic = SegmentInput(segment_id=7, start=0, end=1, transcript='I bought my ticket in the attic.',
                         face_ids=['<face_6>'], speaker_face='<face_6>')
    assert sleep.heard_facts(['Joe in the attic.', "Joe's ticket is in the attic."], attic, {'<face_6>': 'Joe'}) == \
        (["Joe's ticket is in the attic."], ['Joe in the attic.'])
    # a fact that opens with the list of people in view copies who was there: about nobody
    radio = SegmentInput(segment_id=7, start=0, end=1, transcript='Snow is forecast for the mountains on Saturday.',
                         face_ids=['<face_1>', '<face_2>'])
    listed = ['<face_1>, <face_2> is forecast for the mountains on Saturday.', '<face_2>, <face_1>']
    assert sleep.heard_facts(listed + ['Snow is forecast for the mountains on Saturday.'], radio) == (
        ['Snow is forecast for the mountains on Saturday.'], listed)
    assert sleep.find_reminders('in 10 seconds remind me to stretch', 5.0)[0] == ReminderIntent(
        due=15.0, text='stretch', face_id='')


def test_a_fact_keeps_the_tense_it_was_told_in():
    seg = SegmentInput(segment_id=4, start=0, end=1, transcript='Tomasz, I really enjoyed the power cut.',
                       face_ids=['<face_2>'], speaker_face='<face_2>')
    t = sleep.topic_from_reply(seg, '', '{"visual": "<face_2> talking", "semantic": ["<face_2> enjoys the power '
                               'cut."]}')
    assert t.semantic == ['<face_2> enjoyed the power cut.']
    assert sleep.in_heard_tense('Ana loves tennis.', 'I loved tennis, I love it still.') == 'Ana loves tennis.'
    assert sleep.in_heard_tense('Ana plays chess.', 'I love playing chess.') == 'Ana plays chess.'
    assert sleep.in_heard_tense('Ana likes trains.', 'I trained hard.') == 'Ana likes trains.'
    assert sleep.in_heard_tense('Nadia works as a chef.', 'Nadia has worked as a chef for ages.') == \
        'Nadia works as a chef.'
    assert sleep.in_heard_tense('Ana works as a chef.', "I've really worked hard as a chef.") == 'Ana works as a chef.'


def test_facts_name_the_people_memory_knows_or_the_pass_learned():
    seg = SegmentInput(segment_id=5, start=0, end=4, face_ids=['<face_3>', '<face_1>'], speaker_face='<face_3>',
                       transcript="Robot, I'm Freya, note that my laptop is under the bed and Joe's bike is outside.")
    t = sleep.topic_from_reply(seg, '', '{"visual": "Freya talking", "semantic": ["<face_3> is called Freya.", '
                               '"<face_1>\'s bike is outside."], "remembered": ["<face_3>\'s laptop is under the '
                               'bed."]}', names={'<face_1>': 'Joe'})
    # the introduction keeps its id (it links the name); the other facts say the names
    assert t.semantic == ['<face_3> is called Freya.', "Joe's bike is outside."]
    assert t.remembered == ["Freya's laptop is under the bed."]
    assert sleep.by_name(['<face_2> plays chess.', '<voice_1> is called Ana.', '<voice_1> likes tea.']) == \
        ['<face_2> plays chess.', '<voice_1> is called Ana.', 'Ana likes tea.']


def test_heads_roundtrip(tmp_path):
    a = LatentHeads(32, 16, 4, 8, seed=1)
    a.save(tmp_path / 'h.safetensors', trained=True)
    b = LatentHeads(32, 16, 4, 8, seed=2)
    assert b.load(tmp_path / 'h.safetensors') and b.trained
    x = torch.randn(4, 32)
    assert all(torch.allclose(u, v) for u, v in zip(a(x), b(x)))
    assert not LatentHeads(64, 16, 4, 8).load(tmp_path / 'h.safetensors'), 'shape mismatch must be refused'


def test_action_head_reading_both_halves(tmp_path):
    a = LatentHeads(32, 16, 4, 8, seed=1)
    x = torch.randn(5, 4, 32)
    p_act, z = a(x)
    a.set_action_input('act+ret')
    assert a.action.in_features == 64
    # widening starts with zero weights on h_ret: the same decisions until it is fit
    assert torch.allclose(a(x)[0], p_act, atol=1e-6) and torch.equal(a(x)[1], z)
    with torch.no_grad():
        a.action.weight[:, 32:] = 1.0
    moved = a(x)[0]
    assert not torch.allclose(moved, p_act), 'h_ret must reach the action head'
    a.save(tmp_path / 'h.safetensors', trained=True)
    b = LatentHeads(32, 16, 4, 8, seed=2)
    assert b.load(tmp_path / 'h.safetensors') and b.action_input == 'act+ret'
    assert torch.allclose(b(x)[0], moved, atol=1e-6)
    # a file without the key (written before the option) reads h_act; a wrong key or shape is refused
    c = LatentHeads(32, 16, 4, 8, seed=3)
    c.save(tmp_path / 'old.safetensors', trained=True)
    assert b.load(tmp_path / 'old.safetensors') and b.action_input == 'act'
    bad = LatentHeads(64, 16, 4, 8)
    assert not bad.load(tmp_path / 'h.safetensors') and bad.action_input == 'act' and not bad.trained
    with pytest.raises(ValueError):
        a.set_action_input('everything')


def test_prompt_does_not_carry_the_segment_id():
    # the id is a run-time counter: a prompt that showed it would differ between training and the node
    a = SegmentInput(segment_id=3, start=10.0, end=14.0, transcript='where is the umbrella?', face_ids=['<face_1>'])
    b = SegmentInput(segment_id=48213, start=10.0, end=14.0, transcript='where is the umbrella?', face_ids=['<face_1>'])
    assert render_segment(a) == render_segment(b)
    assert 'umbrella' in render_segment(a) and '4 s' in render_segment(a)


def test_adapters_switch_and_base_returns(tmp_path):
    cfg = BackboneConfig(threads=2)
    bb = TextBackbone(cfg, __import__('lightomni_ros.core.models', fromlist=['x']).ModelResolver())
    part = bb.text_part('<|im_start|>user\nHello there<|im_end|>\n')
    emb, pos, _ = assemble([part])

    def last_logits():
        with torch.no_grad():
            return bb.logits(bb.decoder()(inputs_embeds=emb, position_ids=pos).last_hidden_state[0, -1])

    base = last_logits()
    acfg = AdapterConfig(directory=str(tmp_path / 'adapters'), rank=4, alpha=8)
    create_adapters(bb, acfg, tmp_path / 'adapters', names=('reaction', 'generation'), random_b=True)
    assert torch.allclose(last_logits(), base), 'writing adapters must not change the backbone'
    ad = AdapterSet(bb, acfg)
    assert set(ad.loaded) == {'reaction', 'generation'}
    with ad.use('reaction') as a:
        r = last_logits()
    with ad.use('generation') as g:
        g_ = last_logits()
    with ad.use('memory') as m:   # absent: base model
        m_ = last_logits()
    assert (a, g, m) == ('reaction', 'generation', 'base')
    assert not torch.allclose(r, base, atol=1e-3) and not torch.allclose(r, g_, atol=1e-3)
    assert torch.allclose(m_, base, atol=1e-5)


def test_user_pass_preempts_sleep_work(engine):
    import threading

    seg = question(21)
    result = {}
    decoding = threading.Event()

    def stop() -> bool:
        decoding.set()   # asked between model calls: the memory pass is under way
        return engine.preemption.pending()

    def sleeper():
        result['topic'] = engine.memory_pass(seg, 'ok', stop=stop, max_new_tokens=200)
        result['t'] = __import__('time').perf_counter()

    eos = engine.backbone.tokenizer.eos_ids
    engine.backbone.tokenizer.eos_ids = set()     # a trained memory adapter may finish its JSON within the second
    th = threading.Thread(target=sleeper)
    th.start()
    try:
        assert decoding.wait(120), 'the memory pass never reached a model-call boundary'
        d = engine.decide(question(22), 0.5, 0.5, 12, 4)
        th.join(60)
    finally:
        engine.backbone.tokenizer.eos_ids = eos
    assert result['topic'] is None, 'the memory pass must yield to the user pass'
    # the wait is at most about one decode step of the memory pass, far below its whole run
    assert d.latency_ms['preemption_wait'] < 1500, d.latency_ms
    assert engine.preemption.delays_ms[-1] == d.latency_ms['preemption_wait']


def test_recent_interactions_are_recalled_before_consolidation(engine):
    engine.recent.clear()
    said = SegmentInput(segment_id=20, start=200.0, end=203.0, transcript='My passport is in the red suitcase.',
                        face_ids=['<face_2>'])
    engine.decide(said, 0.5, 0.5, 12, 4)
    engine.decide(SegmentInput(segment_id=21, start=204.0, end=206.0,
                               typed_text='Where is my passport?'), 0.5, 0.5, 12, 4)
    d = engine.decide(SegmentInput(segment_id=22, start=210.0, end=212.0,
                                   typed_text='Robot, where is my passport?'), 0.5, 0.5, 12, 4)
    # the statement is a candidate (not yet in the store); the earlier question is not kept
    assert 'recent:20' in d.memory_ids and 'recent:21' not in d.memory_ids
    assert d.response_source in ('generated', 'extractive') and d.response
    if d.response_source == 'extractive':
        assert 'red suitcase' in d.response and any(n.startswith('extractive: ') for n in d.notes)
    assert [m.ref for m, _, _ in engine.recent] == ['recent:20']
    # it carries its time, written as memory writes times, so a fact stored since is newer than it
    from lightomni_ros.core.text import fmt_time
    assert engine.recent[0][0].said == fmt_time(203.0, engine.tz)
    assert engine.recent_candidates('where is my passport?')[0].said == fmt_time(203.0, engine.tz)
    # the Action says which of the retrieved memories the response prompt showed
    assert 'recent:20' in d.shown_ids and set(d.shown_ids) <= set(d.memory_ids)


def test_a_reply_that_fails_the_grounding_check_is_never_said(engine, monkeypatch):
    """With no memory to quote instead, a reply that copies the prompt's segment header is never spoken.

    Asked a question, the robot says it does not know; told something, it confirms (a confirmation claims nothing).
    """
    from lightomni_ros.core.reflex import engine as engine_mod

    monkeypatch.setattr(engine, 'respond', lambda *a, **k: ('[02:00, 2 s]', None))
    monkeypatch.setattr(engine.cfgs.response, 'retry_beams', 0)    # nor a second reply of the model's
    monkeypatch.setattr(engine_mod, 'extractive_answer', lambda *a, **k: '')
    d = engine.decide(SegmentInput(segment_id=30, start=300.0, end=302.0, typed_text='Robot, what time is it?'),
                      0.5, 0.5, 12, 4)
    assert d.response == "I don't know." and d.response_source == 'template', d
    assert 'reply refused, no memory answers: reply echoes the prompt' in d.notes, d
    d = engine.decide(SegmentInput(segment_id=31, start=303.0, end=305.0, typed_text='Robot, the bus leaves at ten.'),
                      0.5, 0.5, 12, 4)
    assert d.response == 'Thanks, I will keep that in mind.' and d.response_source == 'template', d
    assert 'confirmed: told, not asked, and the reply failed the check (reply echoes the prompt)' in d.notes, d


def test_global_state_update_never_waits_for_the_model(engine):
    import threading
    import time

    v = engine.sg_version
    with engine.adapters.lock:          # a model pass in progress on another thread
        t = threading.Thread(target=engine.set_global_state, args=(v + 1, engine.sg_script + '\nAna came back.'))
        t0 = time.perf_counter()
        t.start()
        t.join(5)
        assert not t.is_alive() and time.perf_counter() - t0 < 1.0
        assert engine.sg_version == v     # adopted when the model is free, not in the middle of a pass
    engine.reflex_pass(question(30))
    assert engine.sg_version == v + 1 and engine.sg_script.endswith('Ana came back.')


def test_prefixes_are_warmed_in_sleep_time(engine):
    engine.set_global_state(engine.sg_version + 1, engine.sg_script + '\nAna watered the plants.')
    assert engine.warm_prefixes().built == (1 if engine.accelerated is not None else 2)
    assert engine.warm_prefixes().built == 0                   # nothing left to build for this S_g
    misses = engine.prefixes.misses
    engine.decide(question(40), 0.5, 0.5, 12, 4)          # reflex + response passes: both prefixes were ready
    assert engine.prefixes.misses == misses


def scratch_logits(engine, seg):
    """Logits of the reflex prompt's last token and the soft-prompt hidden states, prefilled from nothing."""
    with torch.no_grad():
        emb, pos = engine.full_sequence(seg)
        hidden = engine.backbone.decoder()(inputs_embeds=emb, position_ids=pos).last_hidden_state[0]
    return engine.backbone.logits(hidden[-1:]), hidden[-engine.heads.n_prompts:]


def reflex_logits(engine, seg):
    """The same through the engine's cached prefix (whatever it reused)."""
    with torch.no_grad(), engine.adapters.use('reaction') as active:
        parts = engine.segment_parts(seg) + [engine.soft_part()]
        hidden, cache, plen, _ = engine.prefill('reflex', parts, active)
        from lightomni_ros.core.reflex.cache import crop_to
        crop_to(cache, plen)
    return engine.backbone.logits(hidden[-1:]), hidden[-engine.heads.n_prompts:]


def test_new_global_state_reuses_the_unchanged_prefix(engine):
    """An appended S_g line: the prefix KV is copied up to the first changed token; outputs equal a fresh prefill."""
    seg = question(41)
    engine.set_global_state(engine.sg_version + 1, engine.sg_script + '\n[10:20--10:25] Ana fed the cat.')
    engine.warm_prefixes()
    old_len = len(engine.prefixes.get(('reaction', engine.sg_version, 'reflex')).ids)
    reused, prefilled = engine.prefixes.reused_tokens, engine.prefixes.prefilled_tokens
    engine.set_global_state(engine.sg_version + 1, engine.sg_script + '\n[10:30--10:31] Ana took an umbrella.')
    got = reflex_logits(engine, seg)
    entry = engine.prefixes.get(('reaction', engine.sg_version, 'reflex'))
    assert entry.complete and len(entry.ids) > old_len
    # everything before the old prefix's closing tokens was reused; only the new tail was prefilled
    assert engine.prefixes.reused_tokens - reused >= old_len - 4
    assert engine.prefixes.prefilled_tokens - prefilled <= len(entry.ids) - old_len + 4
    want = scratch_logits(engine, seg)
    for a, b in zip(got, want):
        assert torch.allclose(a, b, atol=2e-3, rtol=1e-3)


def test_chunked_warmup_yields_to_a_user_pass(engine):
    """A question arriving mid warm-up stops it between chunks, completes the prefix itself and sees the new S_g."""
    import threading

    chunk = engine.cfgs.cache.prefill_chunk_tokens
    engine.cfgs.cache.prefill_chunk_tokens = 2
    try:
        engine.warm_prefixes()
        tail = ' '.join(f'[11:{i:02d}--11:{i:02d}] Bob moved box {i} from the shelf to the table.' for i in range(40))
        engine.set_global_state(engine.sg_version + 1, engine.sg_script + '\n' + tail)
        result = {}
        warm = threading.Thread(target=lambda: result.setdefault('warm', engine.warm_prefixes()))
        started = engine.prefixes.prefilled_tokens
        warm.start()
        deadline = time.monotonic() + 120
        while engine.prefixes.prefilled_tokens == started and warm.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)     # the warm-up's first chunk is in; the question arrives now
        d = engine.decide(question(42), 0.5, 0.5, 12, 4)
        warm.join(120)
        assert not warm.is_alive() and result['warm'].preempted and result['warm'].built == 0
        assert d.sg_version == engine.sg_version and 'preemption_wait' in d.latency_ms
        entry = engine.prefixes.get(('reaction', engine.sg_version, 'reflex'))
        assert entry.complete                       # the user pass prefilled the rest as part of its prompt
        assert abs(engine.reflex_pass(question(42)).p_speech - d.p_speech) < 1e-4
        got, want = reflex_logits(engine, question(43)), scratch_logits(engine, question(43))
        assert all(torch.allclose(a, b, atol=2e-3, rtol=1e-3) for a, b in zip(got, want))
        assert not engine.warm_prefixes().preempted     # nothing waits now: the warm-up finishes what is left
    finally:
        engine.cfgs.cache.prefill_chunk_tokens = chunk


def test_who_question_is_answered_from_the_profiles(engine):
    seg = SegmentInput(segment_id=31, start=100.0, end=104.0, transcript='Robot, who did I talk to today?',
                       face_ids=['<face_1>'])
    d = engine.decide(seg, 0.5, 0.5, 12, 4)
    assert d.speak and d.response_source == 'template' and 'generation' not in d.latency_ms
    assert d.response == 'Today I saw Bob.', 'the asker is not listed'


def test_reply_stream_says_the_first_grounded_sentence_early():
    from lightomni_ros.core.reflex.streaming import ReplyStream, first_sentence

    assert first_sentence('The keys are in the bowl') == '' and first_sentence('In the bowl. They') == 'In the bowl.'
    got = []
    stream = ReplyStream(9, got.append, check=lambda s: '' if 'bowl' in s else 'not grounded')
    for text in ('The keys', 'The keys are in the bowl.', 'The keys are in the bowl. Ana', 'The keys are in the bowl. '
                 'Ana put them there.'):
        stream.partial(text)
    assert [(c.index, c.text, c.final) for c in got] == [(0, 'The keys are in the bowl.', False)]
    assert stream.finish('The keys are in the bowl. Ana put them there.') == \
        'The keys are in the bowl. Ana put them there.'
    assert [(c.index, c.text, c.final) for c in got[1:]] == [(1, 'Ana put them there.', True)]
    # the whole reply failed and was replaced: what was said stands, the reply ends with it
    cut = ReplyStream(9, None, check=None)
    cut.partial('Yes. No')
    assert cut.finish('a quoted memory') == 'Yes.' and [c.final for c in cut.chunks] == [False, True]
    # a first sentence that fails its check is not said early; the final reply is said whole
    held = ReplyStream(9, None, check=lambda s: 'not grounded')
    held.partial('Mars is red. It')
    held.partial('Mars is red. It is far. Very')
    assert held.chunks == [] and held.finish('A memory.') == 'A memory.'
    assert [(c.index, c.text, c.final) for c in held.chunks] == [(0, 'A memory.', True)]


def test_decision_streams_what_it_says(engine):
    """Every spoken decision reaches the sink in pieces that add up to its response; a silent one sends none."""
    got = []
    d = engine.decide(question(44, typed=True), 0.5, 0.5, 12, 4, on_chunk=got.append)
    assert d.speak and d.response and got == d.chunks and got[-1].final
    assert ' '.join(c.text for c in got if c.text) == d.response
    assert 0.0 <= d.latency_ms['first_chunk'] == got[0].ms
    silent = []
    quiet = engine.decide(SegmentInput(segment_id=45, start=1.0, end=2.0, transcript='Nice weather.'), 1.01, 1.01,
                          12, 4, on_chunk=silent.append)
    assert not quiet.speak and silent == [] and quiet.chunks == []


def test_sleep_time_work_runs_on_its_own_thread_count(engine, monkeypatch):
    """Memory passes decode on `backbone.sleep_threads` (1) torch threads; an answer's reply on all of them after."""
    from lightomni_ros.core.reflex import generation as gen

    seen = []
    real = gen.greedy_decode

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(gen, 'greedy_decode', spy)
    before = torch.get_num_threads()
    engine.memory_pass(question(), 'They are in the blue bowl.')
    engine.respond(question(typed=True), [])
    assert seen == [1, before] and torch.get_num_threads() == before == 2


def test_a_beam_search_finds_the_alternatives_to_the_greedy_reply(engine):
    """Its best reply at width 1 is the greedy one; wider, distinct replies best first; the prompt's cache is kept."""
    seg = question(typed=True)
    memories = [MemoryItem('semantic:3', 'Ana keeps her keys in the blue bowl.', 0.8)]
    greedy, _ = engine.respond(seg, memories, max_new_tokens=8)
    assert engine.respond_candidates(seg, memories, 1, max_new_tokens=8) == [greedy]
    wide = engine.respond_candidates(seg, memories, 3, max_new_tokens=8)
    assert 1 < len(wide) <= 3 and len(set(wide)) == len(wide), wide
    assert engine.respond(seg, memories, max_new_tokens=8)[0] == greedy, 'the cache a beam search read is intact'


def test_beams_move_only_their_generated_tokens():
    """Reordering from the prompt's end gives what reordering the whole cache gives: the prompt is every beam's."""
    from transformers import DynamicCache

    torch.manual_seed(0)
    prompt, width = 5, 3
    ours, whole = DynamicCache(), DynamicCache()
    for li in range(2):
        keys = [torch.randn(1, 2, prompt, 4).expand(width, -1, -1, -1), torch.randn(width, 2, 3, 4)]
        values = [torch.randn(1, 2, prompt, 4).expand(width, -1, -1, -1), torch.randn(width, 2, 3, 4)]
        for cache in (ours, whole):
            cache.update(keys[0], values[0], li)            # the prompt, shared (a view, as beam_decode makes it)
            cache.update(keys[1].clone(), values[1].clone(), li)     # three generated tokens, one per beam
    rows = [2, 0, 0]
    generation.reorder_generated(ours, rows, prompt)
    whole.reorder_cache(torch.tensor(rows))
    for a, b in zip(ours.layers, whole.layers):
        assert torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values)
    generation.reorder_generated(ours, [0, 1, 2], prompt)          # nothing to move
    assert all(torch.equal(a.keys, b.keys) for a, b in zip(ours.layers, whole.layers))


def test_a_retry_decodes_from_the_prompt_the_greedy_reply_was_prefilled_for(engine, monkeypatch):
    """One prefill for the greedy reply and the beams after it, with the replies of separate prefills."""
    seg = question(typed=True)
    memories = [MemoryItem('semantic:3', 'Ana keeps her keys in the blue bowl.', 0.8)]
    greedy, n = engine.respond(seg, memories, max_new_tokens=8)
    wide = engine.respond_candidates(seg, memories, 3, max_new_tokens=8)
    prefills = []
    real = engine.prefill
    monkeypatch.setattr(engine, 'prefill', lambda *a, **k: prefills.append(a[0]) or real(*a, **k))
    with engine.response_prompt(seg, memories) as prompt:
        length = int(prompt.cache.get_seq_length())
        assert engine.respond(seg, memories, max_new_tokens=8, prompt=prompt) == (greedy, n)
        assert int(prompt.cache.get_seq_length()) == length, 'the decoded tokens are cut off again'
        assert engine.respond_candidates(seg, memories, 3, max_new_tokens=8, prompt=prompt) == wide
        # another segment's prompt is not this one: it is prefilled for itself, in its place
        engine.respond(question(), memories, max_new_tokens=2, prompt=prompt)
        assert engine.respond(seg, memories, max_new_tokens=8, prompt=prompt) == (greedy, n)
    assert prefills == ['response', 'response', 'response']
    assert int(prompt.cache.get_seq_length()) < length, 'the cache is back to its prefix'
    assert engine.respond(seg, memories, max_new_tokens=8)[0] == greedy


def test_a_reply_the_check_refuses_is_replaced_by_a_grounded_beam_reply(engine, monkeypatch):
    """The greedy reply invents a place: the beam search's second reply, from the memory, is said, as generated."""
    tok = engine.backbone.tokenizer
    invented, grounded = 'Your keys are on the moon.', 'Your keys are in the blue bowl.'
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a, **k: (tok.encode(invented), False))
    widths = []

    def beams(backbone, hidden, cache, offset, limit, width, *rest):
        widths.append(width)
        return [tok.encode(invented), tok.encode(grounded)], False

    monkeypatch.setattr(generation, 'beam_decode', beams)
    d = engine.decide(question(typed=True), 0.5, 0.5, 12, 4)
    assert d.response == grounded and d.response_source == 'generated', d
    assert widths == [engine.cfgs.response.retry_beams] and 'retry' in d.latency_ms
    assert any(n.startswith('beam reply 2 of 4: the greedy one failed the check') for n in d.notes), d.notes
    # with no grounded alternative the reply is quoted from the memory, as before
    monkeypatch.setattr(generation, 'beam_decode', lambda *a, **k: ([tok.encode(invented)], False))
    d = engine.decide(question(typed=True), 0.5, 0.5, 12, 4)
    assert d.response_source == 'extractive' and 'blue bowl' in d.response, d


def test_a_reply_that_calls_the_robot_by_name_is_words_said_to_it_and_refused(engine, monkeypatch):
    """A memory of what someone told the robot, copied whole, is no answer: the beam's own reply is said."""
    from lightomni_ros.core.reflex.addressing import calls_robot_back
    tok = engine.backbone.tokenizer
    copied, own = 'Okay robot, Ana keeps her keys in the blue bowl.', 'Your keys are in the blue bowl.'
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a, **k: (tok.encode(copied), False))
    monkeypatch.setattr(generation, 'beam_decode', lambda *a, **k: ([tok.encode(copied), tok.encode(own)], False))
    d = engine.decide(question(typed=True), 0.5, 0.5, 12, 4)
    assert d.response == own and d.response_source == 'generated', d
    assert any('calls the robot by its name' in n for n in d.notes), d.notes
    assert not calls_robot_back('I am a robot, and your keys are in the blue bowl.', ('robot',))


def test_a_claim_no_memory_answers_is_refused_without_a_second_chance(engine, monkeypatch):
    """Asked what no memory answers, a claim is refused at once: only a refusal could pass a beam search's check."""
    tok = engine.backbone.tokenizer
    monkeypatch.setattr(generation, 'greedy_decode',
                        lambda *a, **k: (tok.encode('Your harmonica is in the blue bowl.'), False))
    searched = []
    monkeypatch.setattr(generation, 'beam_decode', lambda *a, **k: searched.append(1) or ([], False))
    seg = dataclasses.replace(question(typed=True), typed_text='Robot, where did I put my harmonica?')
    d = engine.decide(seg, 0.5, 0.5, 12, 4)
    assert d.speak and is_refusal(d.response) and not searched and 'retry' not in d.latency_ms, d
    assert any('no memory answers' in n for n in d.notes), d.notes


def _decoder(engine, prompt, limit: int):
    """Greedy decodes from ``prompt`` with greedy_decode's keyword arguments, its cache cut back after each."""
    length = int(prompt.cache.get_seq_length())

    def decode(**kw) -> list[int]:
        ids, _ = generation.greedy_decode(engine.backbone, prompt.hidden_last, prompt.cache, prompt.end, limit, **kw)
        crop_to(prompt.cache, length)
        return ids

    return decode


def test_a_refused_opening_is_decoded_again_without_its_first_token(engine):
    """The steered reply opens with the second most likely token and reads as if decoded so from the start.

    Refusing the opening once its second token is seen (as "I don" is) gives the reply refused at its first token:
    the tokens decoded before the restart leave nothing behind in the cache.
    """
    seg = dataclasses.replace(question(typed=True), typed_text='Robot, what colour is the umbrella of Wiremu?')
    memories = [MemoryItem('semantic:8', 'Wiremu has a yellow umbrella.', 0.8)]
    with engine.response_prompt(seg, memories) as prompt:
        decode = _decoder(engine, prompt, 6)
        plain = decode()
        assert len(plain) >= 2
        early = decode(avoid=lambda ids: ids[0] == plain[0])
        late = decode(avoid=lambda ids: len(ids) >= 2 and ids[0] == plain[0])
        ranked = torch.topk(engine.backbone.logits(prompt.hidden_last)[-1], 8).indices.tolist()
        assert early[0] == ranked[1] and early == late, (plain, early, late)
        # every opening refused: after AVOID_RESTARTS restarts the next reply is kept (the check judges it)
        assert decode(avoid=lambda ids: True)[0] == ranked[generation.AVOID_RESTARTS]


def test_the_greedy_reply_does_not_refuse_when_a_memory_answers(engine, monkeypatch):
    """Asked what a memory answers, the greedy decode may not open with "I don't"; asked what none answers, it may."""
    tok = engine.backbone.tokenizer
    seen = []

    def greedy(backbone, hidden, cache, offset, limit, stop=None, end=None, on_token=None, avoid=None, keep=None):
        seen.append(avoid)
        kept.append(keep)
        return tok.encode('Ana keeps her clarinet in the hall.'), False

    kept = []

    monkeypatch.setattr(generation, 'greedy_decode', greedy)
    monkeypatch.setattr(engine.memory, 'query', lambda q: Retrieved(
        semantic=[MemoryItem('semantic:9', 'Ana keeps her clarinet in the hall.', 0.8)]))
    ask = dataclasses.replace(question(typed=True), typed_text='Robot, where do I keep my clarinet?')
    d = engine.decide(ask, 0.5, 0.5, 12, 4)
    assert d.response == 'Ana keeps her clarinet in the hall.' and d.response_source == 'generated', d
    avoid = seen[-1]
    assert avoid is not None and avoid(tok.encode("I don't")) and avoid(tok.encode('Sorry')), seen
    assert not avoid(tok.encode('I heard')) and not avoid(tok.encode('Your clarinet'))
    # a quotation it opens says a memory's words (grounded_quotes)
    keep = kept[-1]
    assert keep is not None and keep(tok.encode('Ana said: "Ana keeps her'))
    assert not keep(tok.encode('Ana said: "Where'))
    # and a thing it places is where a memory puts it (grounded_places)
    assert keep(tok.encode('Your clarinet is in the ha')) and not keep(tok.encode('Your clarinet is in the attic'))
    unknown = dataclasses.replace(question(typed=True), typed_text='Robot, where did I put my trombone?')
    engine.decide(unknown, 0.5, 0.5, 12, 4)
    assert seen[-1] is None, 'no memory answers: "I don\'t know." is the reply to find'
    monkeypatch.setattr(engine.cfgs.response, 'refusal_free_greedy', False)
    monkeypatch.setattr(engine.cfgs.response, 'grounded_quotes', False)
    monkeypatch.setattr(engine.cfgs.response, 'grounded_places', False)
    engine.decide(ask, 0.5, 0.5, 12, 4)
    assert seen[-1] is None and kept[-1] is None


def test_asked_what_someone_said_a_quotation_is_held_to_their_words(engine, monkeypatch):
    """Asked what the radio said, the greedy reply may quote the radio, not a person in view."""
    tok = engine.backbone.tokenizer
    kept = []
    monkeypatch.setattr(generation, 'greedy_decode', lambda *a: kept.append(a[9]) or (
        tok.encode('The radio said: "Mind the gap."'), False))
    monkeypatch.setattr(engine.memory, 'query', lambda q: Retrieved(semantic=[
        MemoryItem('semantic:11', f'{UNSEEN_SPEAKER} said: Mind the gap. Trains run late.', 0.8),
        MemoryItem('semantic:12', '<face_2> said: Gap year plans are made.', 0.7)]))
    ask = dataclasses.replace(question(typed=True), typed_text='Robot, what did the man on the radio say?')
    engine.decide(ask, 0.5, 0.5, 12, 4)
    keep = kept[-1]
    assert keep(tok.encode('The radio said: "Mind the')) and keep(tok.encode('The radio said: "Trains run'))
    assert not keep(tok.encode('The radio said: "Gap year'))


def test_a_kept_reply_takes_the_likeliest_token_its_constraint_accepts(engine):
    """Each step of a held reply is the most likely of the KEEP_TOP_K tokens ``keep`` accepts."""
    seg = dataclasses.replace(question(typed=True), typed_text='Robot, what did Wiremu say about the kayak?')
    memories = [MemoryItem('semantic:10', 'Wiremu said: The kayak leaks.', 0.8)]
    with engine.response_prompt(seg, memories) as prompt:
        decode = _decoder(engine, prompt, 4)
        plain = decode()
        ranked = torch.topk(engine.backbone.logits(prompt.hidden_last)[-1], 8).indices.tolist()
        held = decode(keep=lambda ids: ids[0] not in ranked[:2])
        assert held[0] == ranked[2] and held != plain
        # none of the likeliest accepted: the likeliest of all, as unheld
        assert decode(keep=lambda ids: len(ids) > 1) == plain


def test_a_reply_is_cleaned_of_role_markers_and_a_quote_closed_twice():
    assert generation.clean_response('Hello.<|im_end|>\nuser: hi') == 'Hello.'
    assert generation.clean_response('The man said: "Bimblo F2.""') == 'The man said: "Bimblo F2."'
    assert generation.clean_response('He said: "Hi." and "Yes."') == 'He said: "Hi." and "Yes."'
    assert generation.clean_response('- Pablo thinks the party was a mess.') == 'Pablo thinks the party was a mess.'
    assert generation.clean_response('Ten - no, eleven.') == 'Ten - no, eleven.'


def test_a_fact_left_in_the_first_person_is_said_of_the_one_speaker_or_left_out():
    """Stored as said, "I have been a nurse" is whoever reads it: it becomes the speaker's, named where known."""
    from lightomni_ros.core.reflex.attribution import in_third_person
    one = SegmentInput(segment_id=1, start=0, end=5, transcript='I have been a software engineer for ten years.',
                       face_ids=['<face_2>'], speaker_face='<face_2>')
    facts = ['I have been a software engineer for ten years.', "I'm a nurse.", 'I watch football on Sundays.',
             'I put my keys in the drawer.', 'My sister lives in Paris.', "I don't eat meat.", 'The bus is late.']
    assert in_third_person(facts, one) == ([
        '<face_2> has been a software engineer for ten years.', '<face_2> is a nurse.',
        '<face_2> watches football on Sundays.', '<face_2> put their keys in the drawer.',
        "<face_2>'s sister lives in Paris.", "<face_2> doesn't eat meat.", 'The bus is late.'], [])
    # nobody singled out, or typed: whose "I" it is nobody can tell
    two = SegmentInput(segment_id=2, start=0, end=5, transcript='I work here.', face_ids=['<face_2>', '<face_3>'])
    typed = SegmentInput(segment_id=3, start=0, end=5, typed_text='I work here.', face_ids=['<face_2>'])
    assert in_third_person(['I work here.', 'The bus is late.'], two) == (['The bus is late.'], ['I work here.'])
    assert in_third_person(['I work here.'], typed) == ([], ['I work here.'])
    # through the memory pass: the fact is stored under the speaker's name
    t = sleep.topic_from_reply(one, '', '{"visual": "Pablo talking", "semantic": ["I have been a software engineer '
                                        'for ten years."]}', names={'<face_2>': 'Pablo'})
    assert t.semantic == ['Pablo has been a software engineer for ten years.'] and not t.dropped


def test_a_judgement_marked_as_the_speakers_view_is_said_as_theirs():
    """Stored without whose view it is, "the power cut was a mess, if you ask me" would be a fact of the world."""
    from lightomni_ros.core.reflex.attribution import as_opinion
    seg = SegmentInput(segment_id=1, start=0, end=5, transcript='Kwame, the power cut was an absolute mess, if you '
                       'ask me.', face_ids=['<face_4>'], speaker_face='<face_4>')
    assert as_opinion(['The power cut was an absolute mess.'], seg) == \
        ['<face_4> thinks the power cut was an absolute mess.']
    # a fact that opens with a person, or of words no marked sentence holds, stays as it is
    assert as_opinion(['<face_4> enjoyed the power cut.', 'The bus was late.'], seg) == \
        ['<face_4> enjoyed the power cut.', 'The bus was late.']
    # no mark of a view, or typed words (nobody knows who typed): as it is
    plain = dataclasses.replace(seg, transcript='The power cut was an absolute mess.')
    typed = SegmentInput(segment_id=2, start=0, end=5, typed_text='The power cut was a mess, if you ask me.',
                         face_ids=['<face_4>'])
    assert as_opinion(['The power cut was an absolute mess.'], plain) == ['The power cut was an absolute mess.']
    assert as_opinion(['The power cut was a mess.'], typed) == ['The power cut was a mess.']
    # spoken among several people, nobody known to have said it: someone's view, no fact of the world
    among = dataclasses.replace(seg, face_ids=['<face_4>', '<face_2>'], speaker_face='')
    assert as_opinion(['The power cut was an absolute mess.', 'The bus was late.'], among) == ['The bus was late.']
    # through the memory pass: the view is stored under the speaker's name
    t = sleep.topic_from_reply(seg, '', '{"visual": "Ana talking", "semantic": ["The power cut was an absolute '
                                        'mess."]}', names={'<face_4>': 'Ana'})
    assert t.semantic == ['Ana thinks the power cut was an absolute mess.'], t
