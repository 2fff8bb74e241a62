# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Pure memory logic: SQLite store and migrations, FAISS indexes, the S_g merge tree, summaries, time intents."""

from __future__ import annotations

import math
import sqlite3
import zoneinfo

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lightomni_ros.core.consolidation.summarizer import EXTRACTIVE, ExtractiveSummarizer, profile_request
from lightomni_ros.core.memory import vectors
from lightomni_ros.core.memory.global_state import MergeTree, SgNode, approx_tokens, check_invariants
from lightomni_ros.core.memory.profiles import Profile
from lightomni_ros.core.memory.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError

UTC = zoneinfo.ZoneInfo('UTC')


# -- store --------------------------------------------------------------------------------------------------------
def test_store_pragmas_and_foreign_keys(tmp_path):
    s = Store(tmp_path / 'm.db')
    assert s.db.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
    assert s.db.execute('PRAGMA foreign_keys').fetchone()[0] == 1
    assert s.version == SCHEMA_VERSION
    eid = s.insert_row('semantic', {'start': 1.0, 'end': 2.0, 'content': '<face_1> likes tea', 'norm': 'x'})
    s.db.execute("INSERT INTO semantic_faces(entry_id, face_id) VALUES(?, '<face_1>')", (eid,))
    with pytest.raises(sqlite3.IntegrityError):
        s.db.execute("INSERT INTO semantic_faces(entry_id, face_id) VALUES(999, '<face_2>')")
    s.db.execute('DELETE FROM semantic WHERE id=?', (eid,))
    assert s.db.execute('SELECT count(*) FROM semantic_faces').fetchone()[0] == 0  # cascaded
    s.close()


def test_store_migrates_old_file_and_refuses_newer(tmp_path):
    path = tmp_path / 'old.db'
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    db.execute("INSERT INTO semantic(start, end, content, norm) VALUES(1, 2, 'kept across the upgrade', 'x')")
    db.execute('PRAGMA user_version=1')
    db.commit()
    db.close()
    s = Store(path)
    assert s.version == SCHEMA_VERSION
    (row,) = s.db.execute('SELECT content, mentions FROM semantic').fetchall()
    assert tuple(row) == ('kept across the upgrade', 1)
    s.db.execute(f'PRAGMA user_version={SCHEMA_VERSION + 1}')
    s.close()
    with pytest.raises(StoreError, match='newer'):
        Store(path)
    (tmp_path / 'junk.db').write_bytes(b'not a database' * 100)
    with pytest.raises(StoreError):
        Store(tmp_path / 'junk.db')


def test_transaction_rolls_back(tmp_path):
    s = Store(tmp_path / 'm.db')
    with pytest.raises(RuntimeError):
        with s.transaction():
            s.enqueue(1, {'a': 1}, 0.0)
            raise RuntimeError('crash inside')
    assert s.pending_count() == 0


# -- vectors --------------------------------------------------------------------------------------------------------
def _unit(n, d, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize('threshold', [1000, 50])
def test_index_search_remove_persist(tmp_path, threshold):
    x = _unit(120, 16)
    idx = vectors.VectorIndex(16, hnsw_threshold=threshold)
    idx.add(np.arange(1, 121), x)
    assert idx.kind == ('flat' if threshold > 120 else 'hnsw')
    _, ids = idx.search(x[:5], 1)
    assert list(ids[:, 0]) == [1, 2, 3, 4, 5]
    assert idx.remove([1, 2, 999]) == 2
    assert idx.ntotal == 118
    _, ids = idx.search(x[:2], 10)
    assert 1 not in ids and 2 not in ids
    if idx.kind == 'hnsw':  # the removed vectors' bytes are overwritten, not only hidden
        xb = idx.index.index.reconstruct_n(0, idx.index.ntotal)
        assert not np.any(xb[:2])
    path = tmp_path / 'v.faiss'
    idx.save(path, {'max_id': 120})
    loaded, side = vectors.load(path, idx)
    assert side['max_id'] == 120 and loaded.ntotal == 118 and loaded.kind == idx.kind
    _, ids = loaded.search(x[2:5], 1)
    assert list(ids[:, 0]) == [3, 4, 5]
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    assert vectors.load(path, idx) is None  # corrupt: the owner rebuilds from SQLite


def test_gpu_on_without_gpu_is_a_clear_error():
    if vectors.gpu_count():
        pytest.skip('a GPU is visible')
    with pytest.raises(ValueError, match='no GPU'):
        vectors.VectorIndex(8, use_gpu='on')
    assert vectors.VectorIndex(8, use_gpu='auto').search(np.ones((1, 8)), 2)[1].tolist() == [[-1, -1]]


def test_index_rejects_wrong_dimension():
    idx = vectors.VectorIndex(8)
    with pytest.raises(ValueError):
        idx.add(np.arange(2), np.ones((2, 4)))
    with pytest.raises(ValueError):
        idx.search(np.ones((1, 4)), 3)


# -- S_g merge tree ------------------------------------------------------------------------------------------------
def _grow(k: int, n: int) -> tuple[MergeTree, list[int], list]:
    tree = MergeTree(k)
    next_id = 1
    plans = []
    for seg in range(1, n + 1):
        tree.add_leaf(SgNode(next_id, 0, seg * 30.0, seg * 30.0 + 29, seg, seg, f'segment {seg}'))
        next_id += 1
        while (plan := tree.next_merge()) is not None:
            newest = tree.levels[plan.level][-1]
            assert newest.id not in [c.id for c in plan.children], 'a merge took the newest node of its level'
            plans.append(plan)
            tree.apply(plan, tree.merged(plan, next_id, ' '.join(c.text for c in plan.children)[:80]))
            next_id += 1
    return tree, list(range(1, n + 1)), plans


@settings(max_examples=60, deadline=None)
@given(k=st.integers(2, 10), n=st.integers(0, 700))
def test_merge_invariants(k, n):
    tree, segments, plans = _grow(k, n)
    check_invariants(tree, segments)  # at most k per level; spans tile every segment, no overlap
    for plan in plans:
        assert len(plan.children) == k
    depth = tree.depth()
    if n:
        # levels grow as log_k(n): level d first appears after about k^(d-1) segments
        assert k ** (depth - 1) <= n + 1
        assert depth >= math.floor(math.log(n, k)) if n > 1 else depth == 1
        assert len(tree.nodes()) <= k * depth
    nodes = tree.nodes()
    assert [n_.first_segment for n_ in nodes] == sorted(n_.first_segment for n_ in nodes)  # oldest summary first


def test_merge_plan_goes_stale_and_render_budget():
    tree, _, _ = _grow(3, 3)
    tree.add_leaf(SgNode(100, 0, 1e6, 1e6 + 1, 4, 4, 'x' * 400))
    plan = tree.next_merge()
    assert plan is not None and tree.is_current(plan)
    tree.apply(plan, tree.merged(plan, 101, 'merged'))
    assert not tree.is_current(plan)
    with pytest.raises(ValueError):
        tree.apply(plan, tree.merged(plan, 102, 'again'))
    script, tokens, over = tree.render(40, UTC)
    assert over and 0 < tokens <= 40 and 'merged' not in script and script.endswith('xxxx')
    full, full_tokens, over_full = tree.render(10_000, UTC)
    assert not over_full and full.splitlines()[0].startswith('L1 [') and full_tokens > tokens


def test_sg_updates_change_only_a_bounded_tail():
    """A new leaf appends to the script; a merge rewrites only from its parent's level on (the prefix KV is reused)."""
    k = 4
    tree, _, _ = _grow(k, 0)
    before = tree.render(100_000, UTC)[0]
    for seg in range(1, 200):
        tree.add_leaf(SgNode(1000 + seg, 0, seg * 30.0, seg * 30.0 + 29, seg, seg, f'segment {seg}'))
        grown = tree.render(100_000, UTC)[0]
        assert grown.startswith(before)                       # a leaf only appends
        before = grown
        while (plan := tree.next_merge()) is not None:
            kept = [n for level in reversed(tree.levels[plan.level + 1:]) for n in level]
            tree.apply(plan, tree.merged(plan, 5000 + seg * 10 + plan.level, 'merged'))
            after = tree.render(100_000, UTC)[0]
            head = '\n'.join(line for line in before.splitlines()[:len(kept)])
            assert after.startswith(head)                     # the levels above the merge stay as they were
            assert len(after.splitlines()) - len(kept) <= k * tree.depth()
            before = after


# -- summaries -----------------------------------------------------------------------------------------------------
def test_extractive_summary_is_bounded_deterministic_and_labelled():
    texts = [f'saw a red ball in the kitchen; heard "item {i} is on the table"' for i in range(8)]
    s1 = ExtractiveSummarizer().merge(texts, 30)
    s2 = ExtractiveSummarizer().merge(list(texts), 30)
    assert s1 == s2 and s1.producer == EXTRACTIVE
    assert approx_tokens(s1.text) <= 30 + 8 and 'red ball' in s1.text
    upd = ExtractiveSummarizer().profile('<face_2>', ['<face_2> said: my name is Bob and I like jazz',
                                                      'heard "I work as a nurse."'], Profile('<face_2>'), 40)
    assert upd.name == 'Bob' and 'jazz' in upd.attributes['preferences']
    # an event names everyone in view: the name said there is the speaker's, and a summary never renames
    other = ['[09:00]--[09:01]: saw Mateo talking, <face_2>; heard "Good morning robot, call me Mateo."']
    assert ExtractiveSummarizer().profile('<face_2>', other, Profile('<face_2>'), 40).name == ''
    assert ExtractiveSummarizer().profile('<face_2>', ['<face_2> is called Sofia.'], Profile('<face_2>'), 40).name == \
        'Sofia'
    assert ExtractiveSummarizer().profile('<face_2>', other + ['<face_2> is called Ana.'],
                                          Profile('<face_2>', name='Sofia'), 40).name == 'Sofia'
    assert upd.attributes['occupation'] == 'nurse' and upd.producer == EXTRACTIVE
    # who was in view is no persona: with nothing but events about the person, the profile keeps the one it has
    seen = ['saw <face_3>, <face_1>; kitchen', 'saw <face_1> talking; heard "Robot, here is my cousin Astrid."']
    upd = ExtractiveSummarizer().profile('<face_1>', seen, Profile('<face_1>', name='Giulia'), 40)
    assert upd.summary == '' and 'persona' not in upd.attributes
    upd = ExtractiveSummarizer().profile('<face_1>', seen + ['Giulia works as a pilot.'],
                                         Profile('<face_1>', name='Giulia'), 40)
    assert upd.summary == 'Giulia works as a pilot.'
    # the model is asked with what is known about the person, not with how the profile was kept
    req = profile_request('<face_1>', seen, Profile('<face_1>', name='Giulia', attributes={
        'persona': '<face_1> is called Giulia.', 'updated_by': 'memory-adapter'}), 40)
    assert req.known == {'name': 'Giulia', 'persona': '<face_1> is called Giulia.'}
