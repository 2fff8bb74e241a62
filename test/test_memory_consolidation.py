# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The consolidator against the real parts: SQLite, FAISS and the all-MiniLM-L6-v2 embedder (no fakes)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lightomni_ros.core.consolidation.config import ConsolidationConfig
from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime, RequestError
from lightomni_ros.core.embedding import EmbeddingConfig, text_embedder
from lightomni_ros.core.memory.config import MemoryConfig
from lightomni_ros.core.topic import ReminderIntent, TopicData
from lightomni_ros.core.memory.global_state import check_invariants
from lightomni_ros.core.memory.store import KIND_EPISODIC, KIND_SEMANTIC

T0 = 1_780_000_000.0


@pytest.fixture(scope='module')
def embedder():
    return text_embedder(EmbeddingConfig(backend='minilm'))


def make(tmp_path, embedder, clock=None, **mem):
    cfg = MemoryConfig(memory_dir=str(tmp_path / 'mem'), **({'k': 3} | mem))
    kwargs = {'clock': clock} if clock else {}
    return ConsolidationRuntime(ConsolidationConfigs(memory=cfg, consolidation=ConsolidationConfig(timezone='UTC')),
                                embedder=embedder, **kwargs)


def topic(i, **kw):
    base = dict(segment_id=i, start=T0 + 30 * i, end=T0 + 30 * i + 25, visual='a living room with a sofa',
                audio=f'the weather on day {i} is fine', response='noted')
    return TopicData(**(base | kw))


def test_embedder_vectors(embedder):
    v = embedder.embed(['Alice likes green tea', 'Alice enjoys drinking green tea', 'The battery is low'])
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > 0.85 > 0.3 > v[0] @ v[2]


def test_content_filter_pinned_and_episodic(tmp_path, embedder):
    c = make(tmp_path, embedder)
    c.enqueue(topic(1, semantic=['<face_1> likes green tea'], face_ids=['<face_1>']))
    c.enqueue(topic(2, semantic=['<FACE_1> likes green tea!'], face_ids=['<face_1>']))        # normalized match
    c.enqueue(topic(3, semantic=['<face_1> really likes green tea'], face_ids=['<face_1>']))  # similar
    c.enqueue(topic(4, semantic=['the garage door is broken'], remembered=['the wifi password is banana']))
    c.enqueue(topic(5, remembered=['the wifi password is banana']))                          # pinned: never filtered
    assert c.process_all() == 5
    sem = list(c.entries.all_entries(KIND_SEMANTIC))
    assert [(e.content, e.pinned) for e in sem] == [('<face_1> likes green tea', False),
                                                    ('the garage door is broken', False),
                                                    ('the wifi password is banana', True),
                                                    ('the wifi password is banana', True)]
    assert sem[0].mentions == 3 and sem[0].start == T0 + 30 and sem[0].end == T0 + 30 * 3 + 25
    assert sem[0].render(c.tz).startswith('[2026-05-28 20:27:10]--[2026-05-28 20:28:35]: ')
    assert c.entries.count(KIND_EPISODIC) == 5 and c.entries.indexes[KIND_EPISODIC].ntotal == 5
    r = c.query(text='What is the wifi password?')
    assert 'banana' in r.semantic[0][0].content and r.semantic[0][1] > 0.5
    assert len(r.episodic) == 4 and len(r.semantic) == 4
    assert c.query(vector=embedder.embed(['broken garage'])[0]).semantic[0][0].content.startswith('the garage')
    for bad in (dict(vector=[1.0, 2.0]), dict(text=''), dict(vector=[0.0] * 384), dict(text='x', k_semantic=5000)):
        with pytest.raises(RequestError):
            c.query(**bad)
    c.close()


def test_merges_profiles_and_restart(tmp_path, embedder):
    c = make(tmp_path, embedder)
    segs = list(range(1, 15))
    for i in segs:
        c.enqueue(topic(i, face_ids=['<face_7>'], audio='my name is Carol and I like chess' if i == 2 else f'day {i}'))
    c.process_all()
    check_invariants(c.tree, segs)
    assert c.tree.depth() == 3 and c.stats.merges == 5  # 4 at level 0 (leaves 4, 7, 10, 13), 1 at level 1
    (p,) = c.profiles(['<face_7>'])
    assert p.name == 'Carol' and 'chess' in p.attributes['preferences'] and p.attributes['updated_by'] == 'extractive'
    assert p.segments_since_update == 14 - 4 * 3
    state = c.global_state()
    assert state.k == 3 and state.script.splitlines()[0].startswith('L2 ')
    c.close()
    c2 = make(tmp_path, embedder)  # reopened: same tree, same indexes (loaded, not rebuilt)
    assert [n.id for n in c2.tree.nodes()] == [n.id for n in state.nodes]
    assert c2.global_state().version == state.version
    assert c2.entries.indexes[KIND_EPISODIC].ntotal == 14
    c2.close()


def test_a_profile_says_what_memory_holds_about_the_person_not_who_else_was_there(tmp_path, embedder):
    """The persona comes from the facts that name the person; events only list everyone in view."""
    c = make(tmp_path, embedder)
    c.enqueue(topic(1, face_ids=['<face_3>', '<face_1>'], visual='<face_3> talking, <face_1>',
                    semantic=['<face_3> is called Freya.'], audio="Robot, I'm Freya."))
    c.enqueue(topic(2, face_ids=['<face_3>', '<face_1>'], visual='<face_1> talking, <face_3>',
                    semantic=['<face_1> works as a chef.'], audio='I work as a chef.'))
    c.enqueue(topic(3, face_ids=['<face_3>', '<face_1>'], visual='<face_3> talking, <face_1>',
                    semantic=['Freya works as a plumber.', 'Freyant is a town.'], audio='I fix pipes for a living.'))
    c.process_all()
    assert [e.content for e in c.entries.semantic_about('<face_3>', 'Freya', 5)] == [
        '<face_3> is called Freya.', 'Freya works as a plumber.']
    (p,) = c.profiles(['<face_3>'])
    persona = p.attributes['persona']
    assert p.name == 'Freya' and 'plumber' in persona and 'chef' not in persona and 'saw' not in persona
    c.close()


def test_a_profile_is_not_written_from_what_the_robot_answered_the_person(tmp_path, embedder):
    """Ana asked where Tariq works; the robot's answer "Tariq works as a photographer." is nothing about Ana."""
    from lightomni_ros.core.consolidation.summarizer import ExtractiveSummarizer

    seen: list[list[str]] = []

    class Recording(ExtractiveSummarizer):
        def profile(self, face_id, texts, profile, max_tokens):
            seen.append(list(texts))
            return super().profile(face_id, texts, profile, max_tokens)

    c = make(tmp_path, embedder)
    c.summarizer = Recording()
    for i in range(1, 4):
        c.enqueue(topic(i, face_ids=['<face_2>'], visual='<face_2> talking', audio='Robot, where does Tariq work?',
                        response='Tariq works as a photographer.'))
    c.process_all()
    assert seen and not any('photographer' in t for texts in seen for t in texts)
    assert any('where does Tariq work' in t for texts in seen for t in texts)    # what they said still counts
    c.close()


def test_index_rebuilt_when_missing_corrupt_or_stale(tmp_path, embedder, caplog):
    c = make(tmp_path, embedder, flush_every=10_000)
    for i in range(1, 6):
        c.enqueue(topic(i, semantic=[f'fact {i}: the {["red", "blue", "green", "black", "white"][i - 1]} box']))
    c.process_all()
    c.flush()
    c.remember('the spare key is under the mat')  # after the flush: the saved file is behind the store
    c.store.close()  # a crash: no flush
    c2 = make(tmp_path, embedder)
    assert c2.entries.indexes[KIND_SEMANTIC].ntotal == 6  # caught up from SQLite
    assert 'spare key' in c2.query(text='where is the spare key?').semantic[0][0].content
    c2.close()
    path = tmp_path / 'mem' / 'semantic.faiss'
    if c2.encrypted:     # encrypted memory keeps no index files: every opening rebuilds them from SQLite
        assert not list((tmp_path / 'mem').glob('*.faiss*'))
    else:
        path.write_bytes(path.read_bytes()[:100])
        (tmp_path / 'mem' / 'episodic.faiss').unlink()
    c3 = make(tmp_path, embedder)
    assert c2.encrypted or 'checksum mismatch' in caplog.text
    assert c3.entries.indexes[KIND_SEMANTIC].ntotal == 6 and c3.entries.indexes[KIND_EPISODIC].ntotal == 5
    assert 'spare key' in c3.query(text='where is the spare key?').semantic[0][0].content
    c3.close()


def test_reminders_fire_once_and_late_after_restart(tmp_path, embedder):
    now = [T0]
    c = make(tmp_path, embedder, clock=lambda: now[0])
    c.enqueue(topic(1, audio='remind me to take the medicine in three minutes', face_ids=['<face_1>']))
    c.enqueue(topic(2, reminders=[ReminderIntent(text='call the plumber', due=T0 + 3600)]))
    c.process_all()
    (r1, r2) = c.reminders()
    assert r1.text == 'take the medicine' and r1.due == T0 + 30 + 25 + 180 and r1.face_id == '<face_1>'
    assert r2.due == T0 + 3600
    now[0] = r1.due + 0.5
    fired = c.fire_due()
    assert [r.text for r in fired] == ['take the medicine'] and fired[0].delay == pytest.approx(0.5)
    assert c.fire_due() == []  # once
    c.close()
    now[0] = T0 + 7200  # the node was down when the plumber reminder fell due
    c2 = make(tmp_path, embedder, clock=lambda: now[0])
    (late,) = c2.fire_due()
    assert late.text == 'call the plumber' and late.delay == pytest.approx(3600)
    assert c2.fire_due() == []
    c2.close()


def test_reminder_sent_at_answer_time_is_stored_once(tmp_path, embedder):
    now = [T0]
    c = make(tmp_path, embedder, clock=lambda: now[0])
    # the reflex node's reminders/new when it answers segment 4 ...
    rid = c.add_reminder('call my daughter', T0 + 60, '<face_0>', 4)
    # ... and the sleep-time Topic of the same segment, with the model's own wording and rounding
    c.enqueue(topic(4, reminders=[ReminderIntent(text='Call my daughter.', due=T0 + 61)]))
    c.enqueue(topic(5, reminders=[ReminderIntent(text='call  my DAUGHTER', due=T0 + 62)]))   # same text, other segment
    c.enqueue(topic(6, reminders=[ReminderIntent(text='call my daughter', due=T0 + 600)]))   # a later one is another
    assert [(r.id == rid, r.due) for r in c.reminders()] == [(True, T0 + 60), (False, T0 + 600)]
    with pytest.raises(ValueError):
        c.add_reminder('  ', T0 + 60)
    c.close()


def test_forget_face_leaves_nothing(tmp_path, embedder):
    c = make(tmp_path, embedder)
    c.apply_identity('<face_3>', list(np.ones(128)), 'dlib', 5, b'\xff\xd8avatar-bytes', 'jpeg')
    for i in range(1, 12):
        c.enqueue(topic(i, face_ids=['<face_3>', '<face_4>'] if i % 2 else ['<face_4>'],
                        audio='my name is Zelda and I like opera' if i == 1 else f'<face_4> talks about day {i}',
                        semantic=['<face_3> is allergic to peanuts'] if i == 3 else ['<face_3> is called Zelda.']
                        if i == 1 else [f'<face_4> reads book {i}'],
                        visual='Zelda waves at the robot' if i == 5 else 'a person at the desk'))
    c.remember('Zelda birthday is on 3 May', ['<face_3>'])
    c.enqueue(topic(20, face_ids=['<face_3>'], audio='remind me to call Zelda in 5 minutes',
                    semantic=['Zelda owns a cat']))  # still queued when the forget arrives
    for _ in range(11):
        c.process_next()
    assert c.pending_count() == 1
    assert c.profiles(['<face_3>'])[0].name == 'Zelda'
    before_vectors = c.entries.indexes[KIND_SEMANTIC].ntotal + c.entries.indexes[KIND_EPISODIC].ntotal

    res = c.forget_face('<face_3>')
    c.process_all()
    assert res.removed_profiles == 1 and res.removed_vectors > 0 and res.changed_state_nodes > 0
    assert res.redacted_entries > 0  # events shared with <face_4> keep their <face_4> part
    assert c.entries.indexes[KIND_SEMANTIC].ntotal + c.entries.indexes[KIND_EPISODIC].ntotal < before_vectors + 2

    def leaks(text: str) -> bool:
        return '<face_3>' in text or 'zelda' in text.lower() or 'peanut' in text.lower()

    for q in ('Who is Zelda?', 'Who is allergic to peanuts?', 'birthday', '<face_3>', 'opera'):
        r = c.query(text=q, k_semantic=100, k_episodic=100, face_ids=['<face_3>'])
        # only the people the remaining entries mention come back (<face_4>), never the forgotten one
        assert all(p.face_id != '<face_3>' and not leaks(p.text()) for p in r.profiles), r.profiles
        for e, _ in r.semantic + r.episodic:
            assert not leaks(e.render()) and '<face_3>' not in e.face_ids, e
    state = c.global_state()
    assert not leaks(state.script) and all('<face_3>' not in n.face_ids for n in state.nodes)
    assert c.reminders() == []
    out = tmp_path / 'backup.jsonl'
    c.export_jsonl(str(out))
    assert not leaks(out.read_text())
    assert any('<face_4>' in line for line in out.read_text().splitlines())  # the other person stays
    c.close()
    # nothing left on disk either: secure_delete + WAL checkpoint, index files rewritten
    for f in (tmp_path / 'mem').iterdir():
        raw = f.read_bytes()
        assert b'Zelda' not in raw and b'<face_3>' not in raw and b'avatar-bytes' not in raw, f.name


def test_forget_entries_range_and_bad_requests(tmp_path, embedder):
    c = make(tmp_path, embedder)
    for i in range(1, 5):
        c.enqueue(topic(i, semantic=[f'the {["kitchen", "garden", "attic", "cellar"][i - 1]} light is on']))
    c.process_all()
    res = c.forget_entries(['semantic:1', 'episodic:2'])
    assert (res.removed_entries, res.removed_vectors, res.changed_state_nodes) == (2, 2, 1)
    assert all(e.id != 1 for e, _ in c.query(text='kitchen light', k_semantic=50).semantic)
    res = c.forget_range(T0 + 30 * 3, T0 + 30 * 3 + 1)
    assert res.removed_entries == 2 and res.removed_vectors == 2
    assert 'attic' not in c.global_state().script
    for bad in (['semantic:x'], ['face:1'], []):
        with pytest.raises(RequestError):
            c.forget_entries(bad)
    with pytest.raises(RequestError):
        c.forget_face('alice')
    with pytest.raises(RequestError):
        c.forget_range(10.0, 5.0)
    c.close()


def test_export_import_roundtrip(tmp_path, embedder):
    c = make(tmp_path, embedder)
    c.apply_identity('<face_1>', [0.5] * 128, 'dlib', 3)
    for i in range(1, 9):
        c.enqueue(topic(i, semantic=[f'the number of the day is {i * 37}'], face_ids=['<face_1>']))
    c.process_all()
    c.remember('the car is parked on level 3')
    path = tmp_path / 'b.jsonl'
    n = c.export_jsonl(str(path))
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(recs) == n and recs[0]['type'] == 'meta' and {r['type'] for r in recs} >= {
        'profile', 'semantic', 'episodic', 'sg_node'}
    before = c.global_state()
    c.forget_face('<face_1>')
    assert c.import_jsonl(str(path), replace=True) >= n - 1
    after = c.global_state()
    assert after.script == before.script and after.version > before.version
    assert c.profiles(['<face_1>'])[0].embedding is not None
    assert 'level 3' in c.query(text='where is the car parked?').semantic[0][0].content
    c.import_jsonl(str(path), replace=False)  # merging the same backup again: facts are not duplicated
    assert c.entries.count(KIND_SEMANTIC) == 9 and c.entries.count(KIND_EPISODIC) == 8
    for bad in ('/nonexistent/x.jsonl', str(tmp_path)):
        with pytest.raises(RequestError):
            c.import_jsonl(bad)
    (tmp_path / 'bad.jsonl').write_text('{"type": "meta", "format": "lightomni-memory"}\nnot json\n')
    with pytest.raises(RequestError, match=':2:'):
        c.import_jsonl(str(tmp_path / 'bad.jsonl'))
    c.close()


def test_qwen3_needs_its_pack_in_models_dir(tmp_path):
    with pytest.raises(FileNotFoundError, match='Qwen3-Embedding-0.6B'):
        text_embedder(EmbeddingConfig(backend='qwen3'), str(tmp_path))


def test_name_learned_from_an_introduction_at_once(tmp_path, embedder):
    c = make(tmp_path, embedder)        # k=3: no profile update runs after one or two segments
    c.enqueue(topic(1, face_ids=['<face_2>'], audio="Hi robot, I'm Barack. I love playing basketball."))
    c.enqueue(topic(2, face_ids=['<face_3>', '<face_4>'], audio='Hello, my name is Joe.'))
    c.process_all()
    assert c.stats.profile_updates == 0
    names = {p.face_id: p.name for p in c.profiles()}
    assert names == {'<face_2>': 'Barack', '<face_3>': '', '<face_4>': ''}, 'two faces in view: speaker unknown'
    assert c.stats.names_learned == 1
    # a later introduction by the same face does not rename; the answer to a query names who its entries mention
    c.enqueue(topic(3, face_ids=['<face_2>'], audio="I'm Bob."))
    c.process_all()
    assert c.profiles(['<face_2>'])[0].name == 'Barack'
    # two faces in view, but the fact names the speaker (perception singled them out)
    c.enqueue(topic(4, face_ids=['<face_3>', '<face_4>'], audio='Hello, my name is Joe.',
                    semantic=['<face_4> said: Hello, my name is Joe.']))
    c.process_all()
    assert {p.face_id: p.name for p in c.profiles(['<face_3>', '<face_4>'])} == {'<face_3>': '', '<face_4>': 'Joe'}
    got = c.query(text='who plays basketball?', k_semantic=2, k_episodic=2)
    assert '<face_2>' in {p.face_id for p in got.profiles}
    # someone introduces the one other face in view (the visual summary says who talked), not themself
    c.enqueue(topic(5, face_ids=['<face_5>', '<face_6>'], audio='Robot, here is my cousin Mateo.',
                    visual='<face_5> talking, <face_6>; kitchen'))
    c.process_all()
    assert {p.face_id: p.name for p in c.profiles(['<face_5>', '<face_6>'])} == {'<face_5>': '', '<face_6>': 'Mateo'}
    c.close()


def test_a_query_with_words_and_a_vector_also_finds_by_the_words(tmp_path, embedder):
    c = make(tmp_path, embedder)
    facts = ["Merak's umbrella is in the car.", 'The bus leaves at noon.', 'Ana plays tennis on Sundays.',
             'The wifi password is banana.', 'Joe works as a teacher.']
    c.enqueue(topic(1, semantic=facts))
    assert c.process_all() == 1
    # a vector far from the fact asked about (a fused query the projection misplaced) ranks other entries first
    far = embedder.embed(['tennis on Sundays and the wifi password'])[0]
    words = 'Robot, where did Merak put the umbrella?'
    both = c.query(vector=far, text=words, k_semantic=2).semantic
    assert "Merak's umbrella is in the car." in [e.content for e, _ in both]
    c.cfg.consolidation.text_search = False
    alone = c.query(vector=far, text=words, k_semantic=2).semantic
    assert "Merak's umbrella is in the car." not in [e.content for e, _ in alone]
    c.close()


def test_rankings_are_merged_by_reciprocal_rank():
    from lightomni_ros.core.consolidation.runtime import rank_merged
    from lightomni_ros.core.memory.store import SemanticEntry

    a, b, c_, d = (SemanticEntry(id=i, content=t, start=0.0, end=1.0) for i, t in enumerate('abcd', 1))
    fused = [(a, 0.30), (b, 0.28), (c_, 0.20)]
    words = [(d, 0.72), (c_, 0.60), (a, 0.10)]
    merged = rank_merged([fused, words], 3)
    # a and c are in both rankings; each keeps the score the first ranking gave it
    assert [e.content for e, _ in merged] == ['a', 'c', 'd'] and merged[0][1] == 0.30 and merged[1][1] == 0.20
    assert rank_merged([fused], 2) == fused[:2]
    # another robot's entry with the same id is another entry
    theirs = SemanticEntry(id=1, content='theirs', start=0.0, end=1.0, robot_id='r2')
    assert [e.content for e, _ in rank_merged([[(a, 0.3)], [(theirs, 0.7)]], 2)] == ['a', 'theirs']
