# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Data synthesis: determinism, a held-out split sharing no template, labels, facts and answers that agree."""

from __future__ import annotations

import dataclasses
import json
import random
import re

import pytest

from lightomni_ros.core.reflex import prompts as P
from lightomni_ros.core.reflex.grounding import content_words
from lightomni_ros.core.reflex.sleep import topic_from_reply
from lightomni_ros.core.reflex.types import SegmentInput
from lightomni_ros.train import pairs, phrasing, restate, synth, templates, world
from lightomni_ros.train.eval_answers import has, matches
from lightomni_ros.train.questions import REFUSALS
from lightomni_ros.train.stream import UTC

SMALL = synth.SynthConfig(streams=3, segments=30)


@pytest.fixture(scope='module')
def train():
    return synth.generate('train', cfg=synth.SynthConfig(streams=8, segments=44, probes=4, window_questions=4))


@pytest.fixture(scope='module')
def wide():
    """More streams, where a test counts shares of draws (eight streams leave them too few)."""
    return synth.generate('train', cfg=synth.SynthConfig(streams=24, segments=44))


@pytest.fixture(scope='module')
def held():
    cfg = synth.SynthConfig(streams=4, segments=44, noise_kinds=synth.HELDOUT_NOISE, window_questions=4)
    return synth.generate('heldout', cfg=cfg)


def test_same_seed_same_data_other_seed_other_data():
    a = synth.generate('train', 0, SMALL)
    b = synth.generate('train', 0, SMALL)
    c = synth.generate('train', 1, SMALL)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert [e['transcript'] for e in a['examples']] != [e['transcript'] for e in c['examples']]


def test_no_template_name_or_thing_is_shared_between_the_splits(train, held):
    """The held-out split has its own phrasings, names, objects, places, events, topics and broadcasts."""
    assert not templates.flat('train') & templates.flat('heldout')
    for key, phrasings_ in templates.TEMPLATES['train'].items():
        assert not set(phrasings_) & set(templates.TEMPLATES['heldout'].get(key, ())), key
    for what in ('names', 'objects', 'places', 'events', 'topics', 'tasks', 'devices', 'broadcasts'):
        assert not set(world.VOCAB['train'][what]) & set(world.VOCAB['heldout'][what]), what
    assert not set(world.TRIVIA['train']) & set(world.TRIVIA['heldout'])
    # no composed training phrasing is a held-out one, and no held-out request repeats a training one
    tq = {e['query'] for e in train['examples'] if e['query']}
    addressed = {e['query'] for e in held['examples'] if e['speech']}
    assert addressed and not addressed & tq
    assert not {m['id'] for m in train['memories']} & {m['id'] for m in held['memories']}
    names = set(world.VOCAB['heldout']['names'])
    assert names & {n for e in held['examples'] for n in e['names'].values()}
    assert not names & {n for e in train['examples'] for n in e['names'].values()}


def test_labels_are_consistent(train):
    mem = {m['id']: m for m in train['memories']}
    kinds = {e['kind'] for e in train['examples']}
    assert {'idle', 'state', 'intro', 'remember', 'typed_note', 'remind', 'correction', 'opinion', 'to_person',
            'device', 'general', 'ask_other', 'ask_object', 'ask_event', 'ask_heard', 'ask_said'} <= kinds
    quiet = {'idle', 'state', 'about', 'object_state', 'object_move', 'opinion', 'to_person', 'self_talk', 'device'}
    for e in train['examples']:
        assert e['search'] <= e['speech']
        if e['kind'] in quiet:
            assert e['speech'] == 0 and e['source'] != 'robot', e
        if e['speech']:
            assert e['source'] == 'robot' and e['response']
        if e['gold']:
            assert e['search'] == 1 and e['gold'] in e['memory_ids'], e
            assert mem[e['gold']]['text'] == e['gold_text']
        if e['answer']:
            assert e['search'] == 1
            assert (e['gold'] is not None) == e['answer']['answerable']
            if not e['answer']['answerable']:
                assert e['response'] in REFUSALS
        if e['typed_text']:
            assert not e['transcript'] and e['speech'] == 1
        assert all(m in mem for m in e['memory_ids'])
    s0 = [e for e in train['examples'] if e['stream'] == 0 and not e['noise']]
    for x, y in zip(s0, s0[1:]):
        assert set(x['memory_ids']) <= set(y['memory_ids'])


def test_facts_questions_and_answers_agree(train):
    """Gold facts hold their keywords, answers hold the gold memory's keywords, corrections supersede."""
    mem = {m['id']: m for m in train['memories']}
    answered = corrected = 0
    for e in train['examples']:
        if e['noise']:
            continue
        assert e['topic']['semantic'] + e['topic']['remembered'] == [f['text'] for f in e['facts']]
        for f in e['facts']:
            assert matches(f['text'], f['keywords']), f
            if f['subject']:
                assert has(f['text'], f['subject']), f
        if e['source'] == 'device':
            assert not e['facts'], 'speech of a device is nobody\'s fact'
        if e['answer'] and e['answer']['answerable']:
            answered += 1
            kws = e['answer']['keywords']
            assert matches(e['response'], kws), e
            assert matches(mem[e['gold']]['text'], kws) or e['answer']['kind'] in ('ask_self', 'ask_name'), e
            assert not any(has(e['response'], w) for w in e['answer']['wrong'])
            shown = {e['gold'].rsplit('/', 1)[1], str(mem[e['gold']].get('episode'))}
            assert any(c['ref'].split(':', 1)[1] in shown for c in e['context'])
            corrected += bool(e['answer']['wrong'])
    assert answered >= 30 and corrected >= 1


def test_the_gold_fact_is_sometimes_shown_only_as_the_episode_that_heard_it(wide):
    """What the store holds when the memory pass missed a fact: the answer must come from the heard words."""
    mem = {m['id']: m for m in wide['memories']}
    by_fact = by_episode = 0
    for e in wide['examples']:
        if e['noise'] or not (e['answer'] and e['answer']['answerable']) or mem[e['gold']].get('episode') is None:
            continue
        refs = [c['ref'] for c in e['context']]
        gold = mem[e['gold']]
        if f'{gold["kind"]}:{e["gold"].rsplit("/", 1)[1]}' in refs:
            by_fact += 1
            continue
        by_episode += 1
        episode = f'episodic:{gold["episode"]}'
        assert refs.count(episode) == 1, refs
        heard = next(c['text'] for c in e['context'] if c['ref'] == episode)
        assert 'heard "' in heard and matches(e['response'], e['answer']['keywords']), e
    share = by_episode / max(1, by_fact + by_episode)
    assert by_fact + by_episode >= 60 and abs(share - pairs.EPISODE_ONLY) < 0.15, (by_fact, by_episode)


def test_the_episode_draws_leave_the_streams_unchanged(monkeypatch):
    """The generation pairs draw from their own generator: segments, labels and memories do not move."""
    a = synth.generate('train', 0, SMALL)
    monkeypatch.setattr(pairs, 'EPISODE_ONLY', 0.0)
    b = synth.generate('train', 0, SMALL)
    strip = [{k: v for k, v in e.items() if k != 'context'} for e in a['examples']]
    assert strip == [{k: v for k, v in e.items() if k != 'context'} for e in b['examples']]
    assert a['memories'] == b['memories'] and a['pairs']['memory'] == b['pairs']['memory']
    assert [p['target'] for p in a['pairs']['generation']] == [p['target'] for p in b['pairs']['generation']]
    assert a['pairs']['generation'] != b['pairs']['generation']


def test_segments_without_frame_labels_leave_the_streams_unchanged(train):
    """Some segments have no frame labels (a dark camera): drawn apart, so people, words and labels stay put."""
    a = synth.generate('train', 0, SMALL)
    b = synth.generate('train', 0, dataclasses.replace(SMALL, no_labels=0.0))
    assert all(e['visual_tags'] for e in b['examples']) and any(not e['visual_tags'] for e in a['examples'])
    keep = ('kind', 'transcript', 'typed_text', 'face_ids', 'speaker_face', 'speech', 'search', 'answer')
    assert [[e[k] for k in keep] for e in a['examples']] == [[e[k] for k in keep] for e in b['examples']]
    # a radio heard in the dark: neither people nor a scene, only what was said by someone unseen
    dark = [p for p in train['pairs']['memory'] if not p['visual_tags'] and not p['face_ids'] and p['transcript']]
    assert dark and all(p['target']['visual'] == 'nobody in view, an unseen speaker talking' for p in dark)


def test_speech_nobody_singled_out_is_heard_with_a_voice_as_perception_names_it(train):
    """The memory pass reads "<voice_N>, an unseen speaker ..." as the node renders it, and the gold is unchanged."""
    from lightomni_ros.train.pairs import segment_of

    voiced = [e for e in train['examples'] if e['voice']]
    assert voiced and all(e['transcript'] and not e['typed_text'] and not e['speaker_face'] for e in voiced)
    assert {e['voice'] for e in voiced} >= {'<voice_1>', '<voice_2>'}
    for e in voiced:
        text = P.perception_text(segment_of(e))
        assert (f'{e["voice"]}, an unseen speaker' in text) == (not e['face_ids']), text
        assert not any(e['voice'] in f['text'] for f in e['facts'])
    assert any(p['voice'] for p in train['pairs']['memory'])


def test_what_a_voice_nobody_was_seen_with_tells_is_taught_beside_what_it_says_of_itself(train):
    """Statements of others or of things come again as said by nobody seen talking, with the same facts.

    The radio and TV heard alone come again beside people in view, still with none.
    """
    from lightomni_ros.train.pairs import segment_of

    mem = train['pairs']['memory']
    copies = [(a, b) for a, b in zip(mem, mem[1:]) if a['speaker_face'] and not b['speaker_face']
              and b['transcript'] == a['transcript'] and b['source'] == 'person']
    assert len(copies) >= 10 and {'about', 'event'} <= {a['kind'] for a, _ in copies}
    for a, b in copies:
        assert pairs.tells_of_others(a) and b['face_ids'] == a['face_ids']
        assert b['target']['semantic'] == a['target']['semantic'] and b['target']['remembered'] == \
            a['target']['remembered'] and b['target']['semantic'] + b['target']['remembered']
        assert ' talking' in a['target']['visual'] and ' talking' not in b['target']['visual']
        assert not any(a['speaker_face'] in f for f in b['target']['semantic'])
        text = P.perception_text(segment_of(b))
        assert 'unseen speaker' not in text and (b['voice'] or 'someone') in text, text
    assert any(b['voice'] for _, b in copies) and any(not b['voice'] for _, b in copies)
    # first-person statements and what someone says of themself are never copied: they name the one who said them
    assert not any(a['kind'] in ('state', 'intro', 'opinion') for a, _ in copies)
    company = [(a, b) for a, b in zip(mem, mem[1:]) if pairs.broadcast_alone(a) and b['source'] == 'device'
               and b['face_ids'] and b['transcript'] == a['transcript']]
    assert company
    for a, b in company:
        assert not (b['target']['semantic'] or b['target']['remembered']) and b['voice'] == a['voice']
        assert 'nobody in view' not in b['target']['visual'] and b['target']['visual'].split('; ')[1:] == \
            a['target']['visual'].split('; ')[1:]
    # off, no pair is added
    plain = synth.generate('train', 0, dataclasses.replace(SMALL, unsingled_copies=0.0))['pairs']['memory']
    assert len(plain) < len(synth.generate('train', 0, SMALL)['pairs']['memory'])


def _words(strings) -> set[str]:
    """The content words of templates, their slots left out."""
    return set().union(*(content_words(re.sub(r'\{\w+\}', ' ', t)) for t in strings))


def test_the_second_wordings_are_no_phrasing_of_either_split():
    """The memory pairs' second wordings are new to training and never a held-out phrasing."""
    said = {t[0] if isinstance(t, tuple) else t for items in restate.RESTATE.values() for t in items}
    assert not said & templates.flat('heldout') and not said & templates.flat('train')
    # nor a word that only held-out templates use ("keep in mind", "heads up"): held-out statements stay new
    known = _words(list(templates.flat('train')) + [t for v in phrasing.EMBEDDED.values() for t in v]
                   + list(phrasing.LEAD_DIRECT + phrasing.LEAD_EMBEDDED))
    held_only = _words(templates.flat('heldout')) - known
    assert {'heads', 'mind', 'raised'} <= held_only
    assert not _words(said) & held_only
    for key, items in restate.RESTATE.items():
        assert key in templates.TEMPLATES['train'], key
        kept = templates.TEMPLATES['train'][key]
        assert {type(t) for t in items} == {type(t) for t in kept}, key      # objects keep their owner form


def test_a_segment_said_another_way_is_a_second_memory_pair_with_the_same_facts(train, held):
    """Training statements also come in a second wording (same target, same words for the facts); nothing else moves."""
    mem = train['pairs']['memory']
    twins = [(a, b) for a, b in zip(mem, mem[1:]) if a['start'] == b['start'] and a['target'] == b['target']]
    assert len(twins) >= 50
    kinds = set()
    for a, b in twins:
        assert (a['transcript'], a['typed_text']) != (b['transcript'], b['typed_text'])
        text = (b['transcript'] + ' ' + b['typed_text']).lower()
        assert all(k.lower() in text for f in b['facts'] for k in f['keywords']), (a, b)
        kinds.add(b['kind'])
    assert {'state', 'remember', 'intro', 'event', 'object_state', 'opinion'} <= kinds
    assert not any(e.get('restated') for e in held['examples'])
    # the second wordings draw from their own generator: without them the streams are the same
    original = synth.generate('train', 0, SMALL)
    no_bank = dict.fromkeys(restate.RESTATE, ())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(restate, 'RESTATE', no_bank)
        plain = synth.generate('train', 0, SMALL)
    assert [{k: v for k, v in e.items() if k != 'restated'} for e in original['examples']] == plain['examples']
    assert original['pairs']['generation'] == plain['pairs']['generation']
    assert [p for p in original['pairs']['memory'] if p in plain['pairs']['memory']] == plain['pairs']['memory']
    assert len(original['pairs']['memory']) > len(plain['pairs']['memory'])


def test_the_questions_second_wordings_keep_the_held_out_words_to_the_held_out_split():
    """No second wording of a question is a phrasing of either split, nor uses a word only held-out templates use."""
    words = _words
    asked = [t for items in restate.ASK.values() for t in items]
    assert not set(asked) & (templates.flat('heldout') | templates.flat('train'))
    statements = [t[0] if isinstance(t, tuple) else t for items in restate.RESTATE.values() for t in items]
    seen = words(list(templates.flat('train')) + statements + [t for v in phrasing.EMBEDDED.values() for t in v]
                 + list(phrasing.LEAD_DIRECT + phrasing.LEAD_EMBEDDED))
    held_only = words(templates.flat('heldout')) - seen
    assert {'profession', 'hometown'} <= held_only      # the check sees the held-out words it should
    assert not words(asked) & held_only
    for key, items in restate.ASK.items():     # what the question of the kind is about, in its slots
        assert key in templates.TEMPLATES['train'], key
        about = {'name'} & set(re.findall(r'\{(\w+)\}', ' '.join(templates.TEMPLATES['train'][key])))
        assert all(about <= set(re.findall(r'\{(\w+)\}', t)) for t in items), key


def test_a_question_asked_another_way_is_a_second_generation_pair(train, held):
    """Each training question also comes in a second wording: same memories, same reply; memory pairs unchanged."""
    gen = train['pairs']['generation']
    twins = [(a, b) for a, b in zip(gen, gen[1:]) if a['start'] == b['start'] and a['memories'] == b['memories']]
    assert len(twins) >= 100
    kinds = set()
    for a, b in twins:
        assert a['target'] == b['target'] and a['answer'] == b['answer']
        assert (a['transcript'], a['typed_text']) != (b['transcript'], b['typed_text'])
        kinds.add(b['kind'])
    assert {'ask_other', 'ask_self', 'ask_object', 'ask_event', 'ask_topic', 'ask_heard', 'ask_said',
            'ask_name'} <= kinds
    assert not any(e.get('reworded') for e in held['examples'])
    original = synth.generate('train', 0, SMALL)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(restate, 'ASK', {})
        plain = synth.generate('train', 0, SMALL)
    assert [{k: v for k, v in e.items() if k != 'reworded'} for e in original['examples']] == plain['examples']
    assert original['pairs']['memory'] == plain['pairs']['memory']
    assert [p for p in original['pairs']['generation'] if p in plain['pairs']['generation']] == \
        plain['pairs']['generation']
    assert len(original['pairs']['generation']) > len(plain['pairs']['generation'])


def test_asked_what_someone_said_the_answer_quotes_their_newest_words(train, held):
    """Asked what Ana (the radio) said: her (its) newest words, quoted; never words said to the robot."""
    n = 0
    for split in (train, held):
        before: list[dict] = []
        for e in split['examples']:
            if e['noise']:
                continue
            if before and before[-1]['stream'] != e['stream']:
                before = []
            if e['kind'] == 'ask_said' and e['answer']['answerable']:
                faces = {name: face for face, name in e['names'].items()}
                who, words = e['response'].split(' said: ', 1)
                face = faces.get(who)
                theirs = [b for b in before if (b['speaker_face'] == face and b['transcript'] if face
                                                else b['kind'] == 'device')]
                assert theirs and theirs[-1]['source'] != 'robot', e
                assert words == f'"{theirs[-1]["transcript"]}"' and theirs[-1]['transcript'] in e['gold_text']
                assert e['answer']['keywords'] and all(k in words.lower() for k in e['answer']['keywords'])
                n += 1
            before.append(e)
    assert n >= 10


def test_asked_what_happened_in_a_window_the_answer_names_its_events_in_order(train, held):
    """A window question reads the window's events as the engine renders them; the reply tells what they taught."""
    from lightomni_ros.core.reflex.grounding import reply_problem
    from lightomni_ros.core.reflex.recall import is_summary_question
    from lightomni_ros.core.reflex.types import MemoryItem
    from lightomni_ros.core.timeparse import find_window
    from lightomni_ros.train import windows
    from lightomni_ros.train.lm import pair_prompt

    n = 0
    for split in (train, held):
        asks = [p for p in split['pairs']['generation'] if p['kind'] == 'ask_window']
        assert len(asks) >= 8, 'about four per stream'
        for p in asks:
            question = p['transcript'] or p['typed_text']
            window = find_window(question, p['end'], UTC)
            assert window is not None and is_summary_question(question), question
            assert p['window'].startswith(f'What happened {window.phrase} (oldest first):\n- ')
            minutes = re.search(r'\d+', question)
            assert split['split'] == 'train' or any(question.endswith(t.format(n=minutes[0] if minutes else ''))
                                                    for t in templates.TEMPLATES['heldout']['ask_window'])
            events = p['window'].splitlines()[1:]
            # grounded the way the engine checks a summary: in the events it was shown (and the names memory knows)
            told = [MemoryItem('event', e) for e in events] + [MemoryItem(m['ref'], m['text']) for m in p['memories']]
            assert reply_problem(p['target'], question, told) == '', p['target']
            clauses = p['target'].split(', ', 1)[1].rstrip('.').split('; then ')
            assert 1 <= len(clauses) <= windows.MAX_CLAUSES
            n += 1
    assert n >= 8
    # the prompt is the engine's: the window's events take S_g's place
    p = next(p for p in train['pairs']['generation'] if p['kind'] == 'ask_window')

    class Chat:
        bos, end = '', '<end>'

        @staticmethod
        def turn(role, text):
            return f'<{role}>{text}'

        @staticmethod
        def open(role):
            return f'<{role}>'

    class Backbone:     # what the prompt functions read of a text backbone (no weights needed here)
        chat, kind = Chat(), 'text'

        @staticmethod
        def text_part(text):
            return text
    parts, target = pair_prompt(Backbone(), p, 'generation')
    assert parts[0] == P.response_prefix('', 96, Chat(), window=p['window']) and p['window'] in parts[0]
    assert target == p['target'] + '<end>'


def test_a_speaker_nobody_singled_out_gets_no_first_person_fact(train):
    for e in train['examples']:
        if e['kind'] == 'state' and e['transcript'] and len(e['face_ids']) > 1 and not e['speaker_face']:
            assert not e['facts'], e


def test_an_introduction_may_say_something_about_the_speaker_by_the_name_just_given():
    # streams of introductions mostly: the module's few streams may hold none that goes on about the speaker
    cfg = synth.SynthConfig(streams=6, segments=30, weights={'intro': 1.0, 'idle': 1.0})
    intros = [e for e in synth.generate('train', cfg=cfg)['examples'] if e['kind'] == 'intro' and not e['noise']]
    about = []
    for e in intros:
        name = re.match(r'<face_\d+> is called (\w+)\.', e['facts'][0]['text']).group(1)
        # "I'm Ana. I work as a nurse." -> "Ana works as a nurse." (not "<face_1> works ...", not "I work ...")
        about += [f for f in e['facts'][1:] if f['subject'] == name and f['text'].startswith(name + ' ')]
    assert 0 < len(about) < len(intros)


def test_the_memory_target_names_the_speaker_by_id(train):
    named = [p for p in train['pairs']['memory'] if p['target']['semantic'] != p['stored']['semantic']]
    assert named
    for p in named:
        speaker = SegmentInput(segment_id=1, start=0, end=1, transcript=p['transcript'], typed_text=p['typed_text'],
                               face_ids=p['face_ids'], speaker_face=p['speaker_face']).speaker
        assert all(f.startswith(speaker) or ' is called ' in f or speaker in f for f in p['target']['semantic']
                   if f not in p['stored']['semantic'])


def test_memory_targets_parse_into_topics(train):
    """The memory JSON the adapter learns is what topic_from_reply reads back, fact for fact."""
    for p in train['pairs']['memory']:
        seg = SegmentInput(segment_id=1, start=p['start'], end=p['end'], transcript=p['transcript'],
                           typed_text=p['typed_text'], face_ids=p['face_ids'], visual_tags=p['visual_tags'],
                           speaker_face=p['speaker_face'])
        t = topic_from_reply(seg, '', '{' + P.memory_target(p['target']), names=p['names'])
        assert t.producer == 'memory-adapter' and not t.dropped and not t.unseen_visual, (t.problem, t.dropped)
        # the target names the speaker by id; what is stored names them as memory knows them
        assert t.semantic == p['stored']['semantic'] and t.visual == p['target']['visual']
        assert t.remembered == p['stored']['remembered']     # "do you remember ...?" pins nothing
        assert [r.text for r in t.reminders] == [r['text'] for r in p['target']['reminders']] or \
            not p['target']['reminders']
    gen = train['pairs']['generation']
    assert len(gen) > len([e for e in train['examples'] if e['speech'] and not e['noise']])   # probes add pairs
    assert {p['target'] for p in gen} >= set(REFUSALS)


def test_noisy_variants():
    rng = random.Random(0)
    q = 'Robot, where is the spare key?'
    noisy = synth.prefix_noise(q, templates.TEMPLATES['train']['noise'], rng)
    assert noisy.endswith(q) and len(noisy.split()) == 5 * len(q.split())
    asr = synth.asr_corrupt(q, random.Random(3))
    assert asr != q and '?' not in asr and asr == asr.lower()
    d = synth.generate('heldout', cfg=synth.SynthConfig(streams=3, segments=30, noise_kinds=synth.HELDOUT_NOISE))
    nz = [e for e in d['examples'] if e['noise']]
    assert {e['noise'] for e in nz} == {'prefix', 'asr', 'prefix+asr'}
    for e in nz:
        assert e['transcript'] != e['query'] and not e['typed_text']
        assert e['gold'] or e['speech']


def test_lead_ins_carry_no_label(wide, held):
    """The training split asks memory questions and questions without memory behind the same lead-ins."""
    seen: dict[str, set[int]] = {}
    embedded = 0
    for e in wide['examples']:
        if not e['speech']:
            continue
        text = e['query'].lower()
        for lead in phrasing.LEAD_DIRECT + phrasing.LEAD_EMBEDDED:
            if f' {lead.lower()} ' in f' {text} ':
                seen.setdefault(lead, set()).add(e['search'])
        embedded += any(f' {lead.lower()} ' in f' {text} ' for lead in phrasing.LEAD_EMBEDDED)
    both = [lead for lead, labels in seen.items() if labels == {0, 1}]
    assert embedded >= 20
    assert len(both) >= 0.5 * len(seen), (both, seen)
    own = ' '.join(t.lower() for t in templates.flat('heldout'))
    only_train = [lead.lower() for lead in phrasing.LEAD_EMBEDDED if lead.lower() not in own]
    assert only_train and not any(f' {lead} ' in f' {e["query"].lower()} ' for e in held['examples']
                                  for lead in only_train)
    rng = random.Random(0)
    for kind in ('general', 'ask_object', 'ask_self_job'):
        forbidden = templates.TEMPLATES['heldout'][kind]
        assert not {phrasing.choose(rng, templates.TEMPLATES['train'][kind], kind, forbidden=forbidden)
                    for _ in range(300)} & set(forbidden)


def test_a_window_summary_tells_each_event_once_where_it_last_happened():
    """A thing moved and moved back: the summary says where it ended up, once (the engine refuses a repeat)."""
    from lightomni_ros.train.windows import told_once

    assert told_once(['keys on the shelf', '', 'keys in the car', 'keys on the shelf', 'I met Ana']) == \
        ['keys in the car', 'keys on the shelf', 'I met Ana']
    assert told_once([]) == [] and told_once(['', '']) == []


def test_write_and_load(tmp_path):
    d = synth.generate('heldout', cfg=synth.SynthConfig(streams=1, segments=12))
    folder = synth.write(d, tmp_path)
    back = synth.load_split(folder)
    assert back['examples'] == json.loads(json.dumps(d['examples']))
    assert back['meta']['examples'] == len(d['examples'])
    assert len(back['pairs']['memory']) and len(back['pairs']['generation'])
    sha = back['meta']['sha256']
    folder2 = synth.write(synth.generate('heldout', cfg=synth.SynthConfig(streams=1, segments=12)), tmp_path / 'x')
    assert synth.load_split(folder2)['meta']['sha256'] == sha


def test_a_longer_held_out_split_keeps_the_first_streams_and_adds_new_ones(tmp_path, held):
    from lightomni_ros.train.eval_answers import longer_heldout

    cfg = synth.SynthConfig(streams=4, segments=44, noise_kinds=synth.HELDOUT_NOISE)
    folder = longer_heldout(tmp_path, cfg, 6)
    grown = synth.load_split(folder)['examples']
    segments = ('stream', 'kind', 'query', 'transcript', 'speech', 'search', 'face_ids', 'noise')
    first = [{k: e.get(k) for k in segments} for e in grown if e['stream'] < 4]
    assert first == [{k: e.get(k) for k in segments} for e in held['examples']]
    assert {e['stream'] for e in grown} == set(range(6))
    assert longer_heldout(tmp_path, cfg, 6) == folder    # generated once


def test_more_wordings_of_a_statement_add_pairs_and_leave_the_first_wording_as_it_was():
    """`restatements` = 2: a second other wording per statement, from its own generator; the first is unchanged."""
    one = synth.generate('train', 0, SMALL)
    two = synth.generate('train', 0, dataclasses.replace(SMALL, restatements=2))
    assert [e.get('restated', [None])[0] for e in two['examples']] == \
        [e.get('restated', [None])[0] for e in one['examples']]
    more = [e['restated'] for e in two['examples'] if len(e.get('restated', [])) == 2]
    assert len(more) >= 20 and all(a != b for a, b in more)
    assert len(two['pairs']['memory']) - len(one['pairs']['memory']) == len(more)
    assert two['pairs']['generation'] == one['pairs']['generation']
