# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The consolidator: single owner of long-term memory (Algorithm 1 "sleep time", paper 3.1, 3.2, A.1-A.3, C.2).

Topics are queued durably first (:meth:`Consolidator.enqueue` returns once the row is committed: that is the
acknowledgement), then consolidated one by one: the semantic content filter, pinned "Remember that ..." facts, the
episodic append, the level-0 S_g node, reminder rows and the per-face segment counters are written in one transaction
that also removes the queue row, so a crash at any moment either keeps the queued Topic or its complete result.
Merges of S_g and profile updates follow outside that transaction (they wait for a Summarizer); the tree's state on
disk always says which are still due, so they resume after a restart.

Thread-safe: one re-entrant lock around store and index access, released while a Summarizer or the embedder works.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import pathlib
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import faiss
import numpy as np

from ..memory import profiles as prof
from ..memory.config import MemoryConfig
from ..memory.embedder import TextEmbedder
from ..memory.global_state import MergeTree, SgNode
from ..memory.store import (KIND_EPISODIC, KIND_NAMES, KIND_SEMANTIC, REMINDER_PENDING, EpisodicEntry, ReminderRow,
                            SemanticEntry, Store, normalize)
from ..memory.vectors import VectorIndex, load as load_index
from ..timing import StageTimer
from .config import ConsolidationConfig
from .reminders import parse_time_intent
from .summarizer import ExtractiveSummarizer, Summarizer, sentences
from .topic import ReminderIntent, TopicData

log = logging.getLogger('lightomni.consolidation')

FORGOTTEN = '(forgotten)'
REMINDER_SAME_S = 5.0      # a reminder with the same text due this close to a stored one is that one
_ENTRY_ID = re.compile(r'^(semantic|episodic):(\d+)$')
#: a fact that says who spoke (the fallback parser writes them so): "<face_2> said: Hello, my name is Joe."
_SAID = re.compile(r'^(<face_\d+>) said: (.*)$', re.S)
#: a fact the memory adapter writes when someone is introduced: "<face_2> is called Ana."
_CALLED = re.compile(r"^(<face_\d+>) is called ([A-Z][\w'-]*)\.?$")
_FACT_WORD = re.compile(r'[a-z0-9]+')
_FACT_STOP = frozenset('the and for are was were has had have with that this from not but now also'.split())


def _fact_words(text: str) -> set[str]:
    """Words of a fact that carry content (for telling a repeated fact from a corrected one)."""
    return {w for w in _FACT_WORD.findall(text.lower()) if (len(w) >= 3 or w.isdigit()) and w not in _FACT_STOP}


class RequestError(ValueError):
    """A request is malformed (the node answers success=false with this text)."""


@dataclass
class QueryResult:
    """What QueryMemory returns."""

    semantic: list[tuple[SemanticEntry, float]]
    episodic: list[tuple[EpisodicEntry, float]]
    profiles: list[prof.Profile]
    latency_ms: float = 0.0


@dataclass
class ForgetResult:
    """Counts of what a forget removed or redacted."""

    removed_entries: int = 0
    redacted_entries: int = 0
    removed_profiles: int = 0
    redacted_profiles: int = 0
    removed_vectors: int = 0
    changed_state_nodes: int = 0
    removed_reminders: int = 0
    removed_pending: int = 0

    def message(self) -> str:
        """Human-readable summary."""
        return ', '.join(f'{k.replace("_", " ")}: {v}' for k, v in vars(self).items())


@dataclass
class GlobalStateView:
    """S_g as the node publishes it."""

    version: int
    k: int
    nodes: list[SgNode]
    script: str
    script_tokens: int
    over_budget: bool


@dataclass
class ConsolidationStats:
    """Counters for diagnostics."""

    topics_received: int = 0
    topics_consolidated: int = 0
    facts_appended: int = 0
    facts_extended: int = 0
    merges: int = 0
    profile_updates: int = 0
    names_learned: int = 0
    extractive_fallbacks: int = 0
    last_producer: dict[str, str] = field(default_factory=dict)


class Consolidator:
    """Long-term memory M = {M_p, M_s, M_e}, S_g and reminders on disk, with their vector indexes."""

    def __init__(self, memory: MemoryConfig, config: ConsolidationConfig, embedder: TextEmbedder,
                 summarizer: Summarizer | None = None, clock: Callable[[], float] = time.time) -> None:
        self.mcfg = memory
        self.cfg = config
        self.embedder = embedder
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self.clock = clock
        self.tz: _dt.tzinfo | None = config.tzinfo()
        self.lock = threading.RLock()
        self.timer = StageTimer()
        self.stats = ConsolidationStats()
        if memory.faiss_threads > 0:
            faiss.omp_set_num_threads(memory.faiss_threads)
        self.dir = pathlib.Path(memory.memory_dir).expanduser()
        self.store = Store(self.dir / 'memory.db')
        self._changes = 0
        self.indexes: dict[int, VectorIndex] = {}
        self._check_embedder()
        for kind in (KIND_SEMANTIC, KIND_EPISODIC):
            self.indexes[kind] = self._open_index(kind)
        self.tree = MergeTree(memory.k, self._load_nodes())
        self.on_state_change: Callable[[], None] | None = None

    # -- opening -------------------------------------------------------------------------------------------------
    def _index_path(self, kind: int) -> pathlib.Path:
        return self.dir / f'{KIND_NAMES[kind]}.faiss'

    def _new_index(self) -> VectorIndex:
        m = self.mcfg
        return VectorIndex(self.embedder.dim, hnsw_threshold=m.hnsw_threshold, hnsw_m=m.hnsw_m,
                           ef_construction=m.hnsw_ef_construction, ef_search=m.hnsw_ef_search, use_gpu=m.use_gpu)

    def _check_embedder(self) -> None:
        """Re-embed every stored entry when the embedder changed since the vectors were written."""
        stored = self.store.get_meta('embedder')
        current = f'{self.embedder.name}/{self.embedder.dim}'
        if stored == current:
            return
        if stored and (self.store.count(KIND_SEMANTIC) or self.store.count(KIND_EPISODIC)):
            log.warning('text embedder changed (%s -> %s): re-embedding all entries', stored, current)
            for kind in (KIND_SEMANTIC, KIND_EPISODIC):
                entries = list(self.store.all_entries(kind))
                for i in range(0, len(entries), 256):
                    batch = entries[i:i + 256]
                    vecs = self.embedder.embed([self._entry_text(e) for e in batch])
                    with self.store.transaction():
                        self.store.db.executemany(f'UPDATE {KIND_NAMES[kind]} SET vector=? WHERE id=?',
                                                  [(v.astype('<f4').tobytes(), e.id) for e, v in zip(batch, vecs)])
                self._index_path(kind).unlink(missing_ok=True)
        with self.store.transaction():
            self.store.set_meta('embedder', current)

    def _open_index(self, kind: int) -> VectorIndex:
        """Load the saved index when it matches the store (catching up on newer rows); otherwise rebuild it."""
        template = self._new_index()
        loaded = load_index(self._index_path(kind), template)
        deletions = self.store.get_meta(f'{KIND_NAMES[kind]}.deletions', '0')
        if loaded is not None:
            index, side = loaded
            if side.get('embedder') == self.embedder.name and str(side.get('deletions')) == deletions:
                for ids, vecs in self.store.vectors(kind, after_id=int(side.get('max_id', 0))):
                    index.add(ids, vecs)
                if index.ntotal == self.store.count(kind):
                    return index
            log.warning('%s index does not match the store; rebuilding it from SQLite', KIND_NAMES[kind])
        return self._rebuild_index(kind)

    def _rebuild_index(self, kind: int) -> VectorIndex:
        t0 = time.perf_counter()
        index = self._new_index()
        for ids, vecs in self.store.vectors(kind):
            index.add(ids, vecs)
        if index.ntotal:
            log.info('%s index rebuilt from SQLite: %d vectors in %.1f s', KIND_NAMES[kind], index.ntotal,
                     time.perf_counter() - t0)
        self._save_index(kind, index)
        return index

    def _save_index(self, kind: int, index: VectorIndex) -> None:
        index.save(self._index_path(kind), {
            'embedder': self.embedder.name, 'max_id': self.store.max_id(kind),
            'deletions': self.store.get_meta(f'{KIND_NAMES[kind]}.deletions', '0')})

    def _load_nodes(self) -> list[SgNode]:
        return [self._node(r) for r in self.store.sg_rows(live_only=True)]

    @staticmethod
    def _node(r: Any) -> SgNode:
        return SgNode(id=r['id'], level=r['level'], start=r['start'], end=r['end'], first_segment=r['first_segment'],
                      last_segment=r['last_segment'], text=r['text'], children=json.loads(r['children']),
                      face_ids=json.loads(r['face_ids']), producer=r['producer'])

    def flush(self) -> None:
        """Write the index files (the store is always durable)."""
        with self.lock:
            for kind, index in self.indexes.items():
                if index.needs_compaction:
                    self.indexes[kind] = index = self._rebuild_index(kind)
                else:
                    self._save_index(kind, index)
            self._changes = 0

    def close(self) -> None:
        """Flush and close the store."""
        with self.lock:
            self.flush()
            self.store.close()

    def _changed_vectors(self, n: int) -> None:
        self._changes += n
        if self._changes >= self.mcfg.flush_every:
            self.flush()

    # -- ingestion -------------------------------------------------------------------------------------------------
    def enqueue(self, topic: TopicData) -> int:
        """Queue a Topic and its reminders durably (the acknowledgement); return its queue id."""
        topic.check()
        with self.lock, self.store.transaction():
            qid = self.store.enqueue(topic.segment_id, topic.to_json(), self.clock())
            # reminders are stored with the acknowledgement: a backlog of consolidation must not delay them
            self._add_reminders(topic, self.clock())
            self.stats.topics_received += 1
            return qid

    def pending_count(self) -> int:
        """Topics queued and not yet consolidated."""
        with self.lock:
            return self.store.pending_count()

    def process_next(self) -> bool:
        """Consolidate the oldest queued Topic, then run due merges and profile updates; False when idle."""
        with self.lock:
            items = self.store.pending(1)
            if not items:
                done = False
            else:
                qid, payload = items[0]
                try:
                    topic = TopicData.from_json(payload)
                except (TypeError, ValueError) as e:
                    log.error('dropping malformed queued topic %d: %s', qid, e)
                    with self.store.transaction():
                        self.store.delete_pending(qid)
                    return True
                with self.timer.stage('consolidate'):
                    self._consolidate(qid, topic)
                done = True
        self.run_merges()
        self.run_profile_updates()
        return done

    def process_all(self) -> int:
        """Consolidate every queued Topic; return how many."""
        n = 0
        while self.process_next():
            n += 1
        return n

    def _entry_text(self, e: SemanticEntry | EpisodicEntry) -> str:
        return e.content if isinstance(e, SemanticEntry) else e.script()

    def _consolidate(self, qid: int, t: TopicData) -> None:
        facts = [f.strip() for f in t.semantic if f.strip()]
        pinned = [f.strip() for f in t.remembered if f.strip()]
        epi = EpisodicEntry(start=t.start, end=t.end, visual=t.visual, audio=t.audio, response=t.response,
                            raw_refs=list(t.raw_refs), source_segment=t.segment_id, face_ids=list(t.face_ids))
        with self.timer.stage('embed'):
            vecs = self.embedder.embed(facts + pinned + [epi.script()])
        fact_vecs, pin_vecs, epi_vec = vecs[:len(facts)], vecs[len(facts):-1], vecs[-1]
        new_vectors: dict[int, list[tuple[int, np.ndarray]]] = {KIND_SEMANTIC: [], KIND_EPISODIC: []}
        with self.store.transaction():
            accepted: list[tuple[int, np.ndarray]] = []
            for text, v in zip(facts, fact_vecs):
                target = self._similar_fact(text, v, accepted)
                faces = [f for f in t.face_ids if f in text] or list(t.face_ids)
                if target:
                    self.store.extend_semantic(target, t.start, t.end, faces)
                    self.stats.facts_extended += 1
                    continue
                eid = self.store.add_semantic(SemanticEntry(text, t.start, t.end, False, t.segment_id, faces), v)
                accepted.append((eid, v))
                new_vectors[KIND_SEMANTIC].append((eid, v))
                self.stats.facts_appended += 1
            for text, v in zip(pinned, pin_vecs):  # "Remember that ...": pinned, never filtered
                faces = [f for f in t.face_ids if f in text] or list(t.face_ids)
                eid = self.store.add_semantic(SemanticEntry(text, t.start, t.end, True, t.segment_id, faces), v)
                new_vectors[KIND_SEMANTIC].append((eid, v))
            eid = self.store.add_episodic(epi, epi_vec)
            new_vectors[KIND_EPISODIC].append((eid, epi_vec))
            leaf = SgNode(id=0, level=0, start=t.start, end=t.end, first_segment=t.segment_id,
                          last_segment=t.segment_id, text=epi.script(), face_ids=sorted(set(t.face_ids)))
            leaf.id = self.store.add_sg_node(0, t.start, t.end, t.segment_id, t.segment_id, leaf.text,
                                             face_ids=leaf.face_ids, episodic_id=eid, producer=t.producer)
            for face in dict.fromkeys(t.face_ids):
                if not prof.valid_face_id(face):
                    continue
                self.store.upsert_profile(face)
                self.store.db.execute('UPDATE profiles SET segments_since_update=segments_since_update+1, '
                                      'last_seen=max(last_seen, ?), first_seen=CASE WHEN first_seen=0 THEN ? '
                                      'ELSE first_seen END WHERE face_id=?', (t.end, t.start, face))
            self._learn_name(t)
            self.store.delete_pending(qid)
            self.store.bump('sg.version')
        self.tree.add_leaf(leaf)
        for kind, items in new_vectors.items():
            if items:
                self.indexes[kind].add(np.array([i for i, _ in items]), np.vstack([v for _, v in items]))
        self.stats.topics_consolidated += 1
        self._changed_vectors(sum(len(v) for v in new_vectors.values()))
        self._state_changed()

    def _similar_fact(self, text: str, v: np.ndarray, accepted: list[tuple[int, np.ndarray]]) -> int:
        """Id of a stored fact this one repeats (normalized exact match or similarity >= threshold), else 0."""
        same = self.store.find_semantic_by_norm(normalize(text))
        if same is not None:
            return same.id
        best, best_id = -1.0, 0
        if self.indexes[KIND_SEMANTIC].ntotal:
            scores, ids = self.indexes[KIND_SEMANTIC].search(v[None], 1)
            if ids[0, 0] >= 0:
                best, best_id = float(scores[0, 0]), int(ids[0, 0])
        for eid, w in accepted:
            s = float(np.dot(v, w))
            if s > best:
                best, best_id = s, eid
        if best < self.cfg.similarity_threshold:
            return 0
        # a close fact with a word the stored one lacks ("the meeting is on Friday" after "... on Thursday") is news,
        # not a repeat: extending the stored fact would keep the superseded value and drop the new one
        old = self.store.get_entries(KIND_SEMANTIC, [best_id]).get(best_id)
        return 0 if old is not None and _fact_words(text) - _fact_words(old.content) else best_id

    def _add_reminders(self, t: TopicData, now: float) -> None:
        intents = list(t.reminders)
        if not intents and t.audio:
            found = parse_time_intent(t.audio, t.end, self.tz)
            if found:
                intents = [ReminderIntent(found.text, found.due)]
        for r in intents:
            due, text = float(r.due), r.text
            if due <= 0:
                found = parse_time_intent(text, t.end, self.tz)
                if not found:
                    log.warning('segment %d: reminder %r has no due time and none could be parsed', t.segment_id,
                                text)
                    continue
                due, text = found.due, found.text
            face = r.face_id or (t.face_ids[0] if len(t.face_ids) == 1 else '')
            self.add_reminder(text, due, face, t.segment_id, now)

    def add_reminder(self, text: str, due: float, face_id: str = '', source_segment: int = 0,
                     now: float | None = None) -> int:
        """Store a reminder unless the same one is already stored; return its id.

        The reflex node sends a reminder when it answers the request and the sleep-time Topic carries it again:
        one due within ``REMINDER_SAME_S`` of a stored one with the same text or from the same segment is that one.
        """
        text = (text or '').strip()
        if not text or due <= 0:
            raise RequestError('a reminder needs a text and a due time')
        key = ' '.join(text.lower().split())
        with self.lock:
            for r in self.store.reminders(due_before=due + REMINDER_SAME_S):
                same = ' '.join(r.text.lower().split()) == key or \
                    bool(source_segment and r.source_segment == source_segment)
                if abs(r.due - due) <= REMINDER_SAME_S and same:
                    return r.id
            return self.store.add_reminder(ReminderRow(due=due, text=text, face_id=face_id,
                                                       created=self.clock() if now is None else now,
                                                       source_segment=source_segment))

    # -- S_g merges and profile updates ------------------------------------------------------------------------------
    def run_merges(self) -> int:
        """Merge every level holding more than k nodes (oldest k each time); return the number of merges."""
        n = 0
        while True:
            with self.lock:
                plan = self.tree.next_merge()
                if plan is None:
                    return n
                texts = [c.text for c in plan.children]
            with self.timer.stage('summarize'):
                summary = self._summarize_merge(texts)
            with self.lock:
                if not self.tree.is_current(plan) or [c.text for c in plan.children] != texts:
                    continue  # memory changed (e.g. a forget redacted a child) while the summary was written
                probe = self.tree.merged(plan, 0, summary.text, summary.producer)
                with self.store.transaction():
                    pid = self.store.add_sg_node(probe.level, probe.start, probe.end, probe.first_segment,
                                                 probe.last_segment, probe.text, probe.children, probe.face_ids,
                                                 producer=summary.producer)
                    self.store.retire_sg_nodes(probe.children, pid)
                    self.store.bump('sg.version')
                probe.id = pid
                self.tree.apply(plan, probe)
                self.stats.merges += 1
                n += 1
            self._state_changed()

    def _summarize_merge(self, texts: list[str]):  # noqa: ANN202 - Summary
        try:
            s = self.summarizer.merge(texts, self.mcfg.node_max_tokens)
            if s.text.strip():
                self.stats.last_producer['merge'] = s.producer
                return s
        except Exception as e:  # noqa: BLE001 - a failing model must not stop memory from growing
            log.warning('summarizer failed on a merge (%s); using the extractive summarizer', e)
        self.stats.extractive_fallbacks += 1
        s = ExtractiveSummarizer().merge(texts, self.mcfg.node_max_tokens)
        self.stats.last_producer['merge'] = s.producer
        return s

    def _learn_name(self, t: TopicData) -> None:
        """Name a person at once when they introduce themself alone in view ("Hi robot, I'm Ana").

        Waiting for the k-segment profile update would leave "who is who" questions without names for minutes.
        With several faces in view only a fact naming the speaker counts ("<face_2> said: I'm Ana", or the memory
        adapter's "<face_2> is called Ana."). A name already known is kept.
        """
        faces = [f for f in dict.fromkeys(t.face_ids) if prof.valid_face_id(f)]
        said = [(faces[0], t.audio)] if len(faces) == 1 else []
        # with several faces, the facts say who spoke when perception singled the speaker out ("<face_2> said: ...")
        said += [(m.group(1), m.group(2)) for m in map(_SAID.match, t.semantic) if m and m.group(1) in faces]
        named = [(face, prof.introduced_name(text)) for face, text in said]
        # the memory adapter resolves who was introduced (also someone introduced by another person)
        named += [(m.group(1), m.group(2)) for m in map(_CALLED.match, t.semantic) if m and m.group(1) in faces]
        for face, name in named:
            p = prof.get(self.store, face) if name else None
            if p is not None and not p.name:
                p.name = name
                p.attributes.setdefault('updated_by', 'introduction')
                prof.save(self.store, p)
                self.stats.names_learned += 1

    def run_profile_updates(self) -> int:
        """Update the profile of every face seen in k segments since its last update (paper A.1)."""
        n = 0
        while True:
            with self.lock:
                row = self.store.db.execute('SELECT face_id FROM profiles WHERE segments_since_update >= ? '
                                            'ORDER BY face_id LIMIT 1', (self.mcfg.k,)).fetchone()
                if row is None:
                    return n
                face = row[0]
                p = prof.get(self.store, face)
                texts = [e.script() for e in self.store.recent_episodic_with_face(face, self.mcfg.k)]
            try:
                upd = self.summarizer.profile(face, texts, p, self.mcfg.node_max_tokens)
            except Exception as e:  # noqa: BLE001
                log.warning('summarizer failed on a profile update of %s (%s); using the extractive one', face, e)
                self.stats.extractive_fallbacks += 1
                upd = ExtractiveSummarizer().profile(face, texts, p, self.mcfg.node_max_tokens)
            with self.lock:
                cur = prof.get(self.store, face)
                if cur is None:
                    continue  # forgotten meanwhile
                cur.name = upd.name or cur.name
                cur.attributes.update({k: v for k, v in upd.attributes.items() if v})
                if upd.summary:
                    cur.attributes['persona'] = upd.summary
                cur.attributes['updated_by'] = upd.producer
                cur.segments_since_update = max(0, cur.segments_since_update - self.mcfg.k)
                prof.save(self.store, cur)
                self.stats.profile_updates += 1
                self.stats.last_producer['profile'] = upd.producer
                n += 1

    def _state_changed(self) -> None:
        if self.on_state_change is not None:
            try:
                self.on_state_change()
            except Exception as e:  # noqa: BLE001 - a publisher error must not undo a commit
                log.warning('state-change callback failed: %s', e)

    # -- services ----------------------------------------------------------------------------------------------------
    def remember(self, content: str, face_ids: Sequence[str] = (), start: float = 0.0, end: float = 0.0) -> int:
        """Store a pinned fact ("Remember that ..."); return its id."""
        content = (content or '').strip()
        if not content:
            raise RequestError('content is empty')
        bad = [f for f in face_ids if not prof.valid_face_id(f)]
        if bad:
            raise RequestError(f'face ids must look like <face_N>: {bad}')
        now = self.clock()
        start = start or now
        end = end or start
        if end < start:
            raise RequestError('end is before start')
        v = self.embedder.embed([content])[0]
        with self.lock:
            eid = self.store.add_semantic(SemanticEntry(content, start, end, True, 0, list(face_ids)), v)
            self.indexes[KIND_SEMANTIC].add(np.array([eid]), v[None])
            self._changed_vectors(1)
        return eid

    def query(self, vector: Sequence[float] | None = None, text: str = '', k_semantic: int = 0,
              k_episodic: int = 0, face_ids: Sequence[str] = ()) -> QueryResult:
        """Top semantic/episodic entries for a fused query vector (or the embedded text) plus profiles of faces."""
        t0 = time.perf_counter()
        ks = k_semantic or self.cfg.k_semantic
        ke = k_episodic or self.cfg.k_episodic
        if ks > 1000 or ke > 1000:
            raise RequestError('k_semantic/k_episodic must be at most 1000')
        if vector is not None and len(vector):
            q = np.asarray(vector, np.float32)
            if q.ndim != 1 or len(q) != self.embedder.dim:
                raise RequestError(f'query_vector has {len(q)} values; the text-embedding dimension is '
                                   f'{self.embedder.dim}')
            if not np.all(np.isfinite(q)) or not np.any(q):
                raise RequestError('query_vector must be finite and non-zero')
        elif text.strip():
            with self.timer.stage('embed'):
                q = self.embedder.embed([text], query=True)[0]
        elif not face_ids:
            raise RequestError('give a query_vector, a query_text or face_ids')
        else:
            q = None
        with self.lock:
            out = QueryResult([], [], [])
            if q is not None:
                for kind, k, dest in ((KIND_SEMANTIC, ks, out.semantic), (KIND_EPISODIC, ke, out.episodic)):
                    scores, ids = self.indexes[kind].search(q[None], k)
                    found = self.store.get_entries(kind, [int(i) for i in ids[0] if i >= 0])
                    dest.extend((found[int(i)], float(s)) for s, i in zip(scores[0], ids[0]) if int(i) in found)
            # the people in view, and those the returned entries mention (so answers can name them)
            mentioned = [f for e, _ in out.semantic + out.episodic for f in e.face_ids]
            faces = list(dict.fromkeys(list(face_ids) + mentioned))
            if faces:
                out.profiles = prof.list_all(self.store, faces)
        out.latency_ms = (time.perf_counter() - t0) * 1000.0
        self.timer.add('query', out.latency_ms)
        return out

    def global_state(self, max_tokens: int = 0) -> GlobalStateView:
        """S_g with its script under ``max_tokens`` (0 = configured budget)."""
        with self.lock:
            script, tokens, over = self.tree.render(max_tokens or self.mcfg.state_max_tokens, self.tz)
            return GlobalStateView(version=int(self.store.get_meta('sg.version', '0') or 0), k=self.tree.k,
                                   nodes=list(self.tree.nodes()), script=script, script_tokens=tokens,
                                   over_budget=over)

    def profiles(self, face_ids: Sequence[str] = ()) -> list[prof.Profile]:
        """Stored profiles (all when empty)."""
        with self.lock:
            return prof.list_all(self.store, list(face_ids))

    def apply_identity(self, face_id: str, embedding: Sequence[float] | None, backend: str, observations: int,
                       avatar: bytes = b'', avatar_format: str = '') -> prof.Profile:
        """New identity / embedding update reported by perception."""
        if not prof.valid_face_id(face_id):
            raise RequestError(f'face id must look like <face_N>: {face_id!r}')
        emb = np.asarray(embedding, np.float32) if embedding is not None and len(embedding) else None
        if emb is not None and not np.all(np.isfinite(emb)):
            raise RequestError('face embedding is not finite')
        with self.lock, self.store.transaction():
            self.store.bump('gallery.version')
            return prof.apply_identity(self.store, face_id, emb, backend, observations, avatar, avatar_format,
                                       self.clock())

    def gallery_version(self) -> int:
        """Incremented on every change of the stored face identities."""
        with self.lock:
            return int(self.store.get_meta('gallery.version', '0') or 0)

    # -- reminders -------------------------------------------------------------------------------------------------
    def fire_due(self, now: float | None = None) -> list[ReminderRow]:
        """Pending reminders due by ``now``, marked fired (each fires once) with their delay."""
        now = self.clock() if now is None else now
        fired = []
        with self.lock, self.store.transaction():
            for r in self.store.reminders(REMINDER_PENDING, due_before=now):
                r.delay = max(0.0, now - r.due)
                if self.store.mark_reminder_fired(r.id, now, r.delay):
                    r.status, r.fired_at = 1, now
                    fired.append(r)
        return fired

    def reminders(self, status: int | None = None) -> list[ReminderRow]:
        """Stored reminders."""
        with self.lock:
            return self.store.reminders(status)

    # -- forget ------------------------------------------------------------------------------------------------------
    def forget_face(self, face_id: str) -> ForgetResult:
        """Forget a person: profile, avatar, face embedding, entries and S_g text mentioning them, their reminders."""
        if not prof.valid_face_id(face_id):
            raise RequestError(f'face id must look like <face_N>: {face_id!r}')
        res = ForgetResult()
        with self.lock:
            p = prof.get(self.store, face_id)
            words = [face_id] + ([p.name] if p and p.name else [])
            pat = re.compile('|'.join(re.escape(w) if w.startswith('<') else rf'\b{re.escape(w)}\b' for w in words),
                             re.I)
            redacted_new: dict[int, list[tuple[Any, np.ndarray | None]]] = {KIND_SEMANTIC: [], KIND_EPISODIC: []}
            removed: dict[int, list[int]] = {KIND_SEMANTIC: [], KIND_EPISODIC: []}
            with self.store.transaction():
                for kind in (KIND_SEMANTIC, KIND_EPISODIC):
                    ids = self.store.entry_ids_mentioning(kind, face_id, words[1:])
                    for e in self.store.get_entries(kind, ids).values():
                        text = e.content if isinstance(e, SemanticEntry) else ' '.join((e.visual, e.audio, e.response))
                        if face_id not in e.face_ids and not pat.search(text):
                            continue  # a substring hit only (e.g. "Ann" in "announce")
                        others = [f for f in e.face_ids if f != face_id]
                        red = self._redact_entry(e, pat) if others else None
                        removed[kind].append(e.id)
                        if red is None:
                            res.removed_entries += 1
                        else:
                            red.face_ids = others
                            redacted_new[kind].append((red, None))
                            res.redacted_entries += 1
                    self._delete_entries(kind, removed[kind])
                res.changed_state_nodes += self._redact_nodes(
                    lambda r: face_id in json.loads(r['face_ids']) or bool(pat.search(r['text'])),
                    lambda text: _redact_text(text, pat), drop_face=face_id)
                res.removed_reminders = self.store.db.execute('DELETE FROM reminders WHERE face_id=? OR '
                                                              'instr(lower(text), ?) > 0',
                                                              (face_id, face_id.lower())).rowcount
                res.removed_pending = self._scrub_pending(face_id, pat)
                res.removed_profiles = self.store.delete_profile(face_id)
                res.redacted_profiles = self._scrub_profiles(pat)
                self.store.bump('gallery.version')
            res.removed_vectors = self._remove_vectors(removed)
            self._reinsert(redacted_new)
            self._after_forget()
        return res

    def _scrub_profiles(self, pat: re.Pattern) -> int:
        """Remove a forgotten person from other people's profiles (a relationship, a name mis-attributed)."""
        n = 0
        for p in prof.list_all(self.store):
            attrs = {k: _redact_text(v, pat) for k, v in p.attributes.items()}
            name = '' if pat.search(p.name or '') else p.name
            if attrs != p.attributes or name != p.name:
                p.attributes, p.name = {k: v for k, v in attrs.items() if v}, name
                prof.save(self.store, p)
                n += 1
        return n

    def _redact_entry(self, e: SemanticEntry | EpisodicEntry, pat: re.Pattern) -> Any:
        if isinstance(e, SemanticEntry):
            text = _redact_text(e.content, pat, keep_empty=True)
            if not text:
                return None
            return SemanticEntry(text, e.start, e.end, e.pinned, e.source_segment, [], e.mentions)
        fields = {f: _redact_text(getattr(e, f), pat, keep_empty=True) for f in ('visual', 'audio', 'response')}
        if not any(fields.values()):
            return None
        return EpisodicEntry(e.start, e.end, raw_refs=list(e.raw_refs), source_segment=e.source_segment, **fields)

    def _reinsert(self, items: dict[int, list[tuple[Any, np.ndarray | None]]]) -> None:
        """Store redacted entries under new ids with fresh vectors (the old rows and vectors are gone)."""
        for kind, rows in items.items():
            if not rows:
                continue
            entries = [e for e, _ in rows]
            vecs = self.embedder.embed([self._entry_text(e) for e in entries])
            with self.store.transaction():
                ids = [self.store.add_semantic(e, v) if kind == KIND_SEMANTIC else self.store.add_episodic(e, v)
                       for e, v in zip(entries, vecs)]
            self.indexes[kind].add(np.array(ids), vecs)

    def _delete_entries(self, kind: int, ids: Sequence[int]) -> int:
        if not ids:
            return 0
        n = self.store.delete_entries(kind, ids)
        self.store.bump(f'{KIND_NAMES[kind]}.deletions')
        return n

    def _remove_vectors(self, removed: dict[int, list[int]]) -> int:
        return sum(self.indexes[kind].remove(ids) for kind, ids in removed.items() if ids)

    def _redact_nodes(self, match: Callable[[Any], bool], rewrite: Callable[[str], str],
                      drop_face: str = '') -> int:
        """Rewrite the text of every S_g node (live or merged away) that ``match`` selects."""
        changed = 0
        for r in self.store.sg_rows(live_only=False):
            if not match(r):
                continue
            text = rewrite(r['text']) or FORGOTTEN
            faces = [f for f in json.loads(r['face_ids']) if f != drop_face]
            self.store.set_sg_text(r['id'], text, faces)
            node = self.tree.find(r['id'])
            if node is not None:
                node.text, node.face_ids = text, faces
            changed += 1
        if changed:
            self.store.bump('sg.version')
            self.tree.version += 1
        return changed

    def _scrub_pending(self, face_id: str, pat: re.Pattern) -> int:
        """Remove a forgotten person from Topics still queued (they are consolidated later)."""
        n = 0
        for qid, payload in self.store.pending():
            text = json.dumps(payload)
            if face_id not in text and not pat.search(text):
                continue
            t = TopicData.from_json(payload)
            t.face_ids = [f for f in t.face_ids if f != face_id]
            t.semantic = [s for s in t.semantic if not pat.search(s)]
            t.remembered = [s for s in t.remembered if not pat.search(s)]
            t.visual, t.audio, t.response = (_redact_text(x, pat, keep_empty=True)
                                             for x in (t.visual, t.audio, t.response))
            t.reminders = [r for r in t.reminders if r.face_id != face_id and not pat.search(r.text)]
            t.raw_refs = [] if face_id in payload.get('face_ids', []) else t.raw_refs
            self.store.db.execute('UPDATE pending SET payload=? WHERE id=?', (json.dumps(t.to_json()), qid))
            n += 1
        return n

    def _after_forget(self) -> None:
        # forgotten rows must not linger in the WAL or in saved index files
        self.store.checkpoint()
        self.flush()
        self._state_changed()

    def forget_entries(self, entry_ids: Sequence[str]) -> ForgetResult:
        """Forget entries named ``semantic:<id>`` / ``episodic:<id>`` (and the level-0 S_g text of an event)."""
        parsed: dict[int, list[int]] = {KIND_SEMANTIC: [], KIND_EPISODIC: []}
        for s in entry_ids:
            m = _ENTRY_ID.match(s.strip())
            if not m:
                raise RequestError(f'entry id {s!r} is not "semantic:<id>" or "episodic:<id>"')
            parsed[KIND_SEMANTIC if m.group(1) == 'semantic' else KIND_EPISODIC].append(int(m.group(2)))
        if not any(parsed.values()):
            raise RequestError('entry_ids is empty')
        res = ForgetResult()
        with self.lock:
            with self.store.transaction():
                epi = set(parsed[KIND_EPISODIC])
                res.changed_state_nodes = self._redact_nodes(lambda r: r['episodic_id'] in epi, lambda _t: '')
                for kind, ids in parsed.items():
                    res.removed_entries += self._delete_entries(kind, ids)
            res.removed_vectors = self._remove_vectors(parsed)
            self._after_forget()
        return res

    def forget_range(self, start: float, end: float) -> ForgetResult:
        """Forget every entry, S_g node and queued Topic whose span overlaps [start, end]."""
        if end < start:
            raise RequestError('end is before start')
        res = ForgetResult()
        with self.lock:
            removed = {kind: self.store.entry_ids_in_range(kind, start, end) for kind in (KIND_SEMANTIC, KIND_EPISODIC)}
            with self.store.transaction():
                for kind, ids in removed.items():
                    res.removed_entries += self._delete_entries(kind, ids)
                res.changed_state_nodes = self._redact_nodes(lambda r: r['start'] <= end and r['end'] >= start,
                                                             lambda _t: '')
                for qid, payload in self.store.pending():
                    if payload['start'] <= end and payload['end'] >= start:
                        self.store.delete_pending(qid)
                        res.removed_pending += 1
            res.removed_vectors = self._remove_vectors(removed)
            self._after_forget()
        return res

    # -- export / import ---------------------------------------------------------------------------------------------
    def export_jsonl(self, path: str) -> int:
        """Write all memory as JSON lines (vectors are not exported: import re-embeds); return the record count."""
        path_ = pathlib.Path(path).expanduser()
        if not path or path_.is_dir():
            raise RequestError(f'export path {path!r} is not a file path')
        n = 0
        tmp = path_.with_name(path_.name + '.tmp')
        try:
            path_.parent.mkdir(parents=True, exist_ok=True)
            with self.lock, open(tmp, 'w') as f:
                def put(rec: dict) -> None:
                    nonlocal n
                    f.write(json.dumps(rec, ensure_ascii=False) + '\n')
                    n += 1
                put({'type': 'meta', 'format': 'lightomni-memory', 'schema': self.store.version,
                     'embedder': self.embedder.name, 'exported': self.clock()})
                for p in prof.list_all(self.store):
                    put({'type': 'profile', **p.to_json()})
                for e in self.store.all_entries(KIND_SEMANTIC):
                    put({'type': 'semantic', **vars(e)})
                for e in self.store.all_entries(KIND_EPISODIC):
                    put({'type': 'episodic', **vars(e)})
                for r in self.store.sg_rows(live_only=False):
                    put({'type': 'sg_node', **{k: r[k] for k in r.keys()}})
                for r in self.store.reminders():
                    put({'type': 'reminder', **vars(r)})
                for qid, payload in self.store.pending():
                    put({'type': 'pending', 'id': qid, 'payload': payload})
            tmp.replace(path_)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise RequestError(f'cannot write {path}: {e}') from e
        return n

    def import_jsonl(self, path: str, replace: bool = False) -> int:
        """Read a backup; ``replace`` swaps the whole memory (ids kept), otherwise entries/profiles are merged in."""
        path_ = pathlib.Path(path).expanduser()
        try:
            lines = path_.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise RequestError(f'cannot read {path}: {e}') from e
        records = []
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict) or 'type' not in rec:
                    raise ValueError('not an object with a "type"')
            except ValueError as e:
                raise RequestError(f'{path}:{i}: {e}') from e
            records.append(rec)
        if not records or records[0].get('format') != 'lightomni-memory':
            raise RequestError(f'{path}: not a lightomni memory export (first line must be its meta record)')
        try:
            return self._import(records, replace)
        except (KeyError, TypeError, ValueError) as e:
            raise RequestError(f'{path}: malformed record ({e}); nothing was imported') from e

    def _import(self, records: list[dict], replace: bool) -> int:
        sem = [r for r in records if r['type'] == 'semantic']
        epi = [r for r in records if r['type'] == 'episodic']
        sem_e = [SemanticEntry(**{k: v for k, v in r.items() if k != 'type'}) for r in sem]
        epi_e = [EpisodicEntry(**{k: v for k, v in r.items() if k != 'type'}) for r in epi]
        sem_v = self.embedder.embed([e.content for e in sem_e]) if sem_e else np.zeros((0, self.embedder.dim))
        epi_v = self.embedder.embed([e.script() for e in epi_e]) if epi_e else np.zeros((0, self.embedder.dim))
        n = 1
        with self.lock:
            with self.store.transaction():
                if replace:
                    self.store.wipe()
                for r in records:
                    if r['type'] == 'profile':
                        p = prof.Profile.from_json({k: v for k, v in r.items() if k != 'type'})
                        if replace or prof.get(self.store, p.face_id) is None:
                            prof.save(self.store, p)
                            n += 1
                for e, v in zip(sem_e, sem_v):
                    if not replace:
                        same = self.store.find_semantic_by_norm(normalize(e.content))
                        if same and (not e.pinned or (same.start, same.end) == (e.start, e.end)):
                            continue  # already known (a pinned fact only when it is the same record)
                        e.id = 0
                    self._insert_entry(KIND_SEMANTIC, e, v)
                    n += 1
                for e, v in zip(epi_e, epi_v):
                    if not replace:
                        if self.store.db.execute('SELECT 1 FROM episodic WHERE start=? AND end=? AND source_segment=? '
                                                 'AND audio=?', (e.start, e.end, e.source_segment, e.audio)).fetchone():
                            continue  # the same event
                        e.id = 0
                    self._insert_entry(KIND_EPISODIC, e, v)
                    n += 1
                parents = []
                for r in records:
                    if r['type'] == 'sg_node' and replace:
                        # parents are newer rows than their children: link them once every node is in
                        self.store.insert_row('sg_nodes', {k: r[k] for k in (
                            'id', 'level', 'start', 'end', 'first_segment', 'last_segment', 'text', 'children',
                            'face_ids', 'producer', 'live', 'episodic_id')})
                        parents.append((r['parent'], r['id']))
                        n += 1
                    elif r['type'] == 'reminder' and (replace or r['status'] == REMINDER_PENDING):
                        row = ReminderRow(**{k: v for k, v in r.items() if k != 'type'})
                        vals = {k: getattr(row, k) for k in ('due', 'text', 'face_id', 'status', 'created', 'fired_at',
                                                             'delay', 'source_segment')}
                        if replace:
                            vals['id'] = row.id
                        self.store.insert_row('reminders', vals)
                        n += 1
                    elif r['type'] == 'pending':
                        TopicData.from_json(r['payload'])
                        self.store.insert_row('pending', {'segment_id': r['payload']['segment_id'],
                                                          'payload': json.dumps(r['payload']),
                                                          'received': self.clock()})
                        n += 1
                self.store.db.executemany('UPDATE sg_nodes SET parent=? WHERE id=?', parents)
                self.store.bump('gallery.version')
                self.store.bump('sg.version')
                for kind in (KIND_SEMANTIC, KIND_EPISODIC):
                    self.store.bump(f'{KIND_NAMES[kind]}.deletions')  # forces index files to be rewritten
            for kind in (KIND_SEMANTIC, KIND_EPISODIC):
                self.indexes[kind] = self._rebuild_index(kind)
            if replace:
                self.tree = MergeTree(self.mcfg.k, self._load_nodes())
        self._state_changed()
        return n

    def _insert_entry(self, kind: int, e: Any, v: np.ndarray) -> None:
        table = KIND_NAMES[kind]
        if e.id:
            vals = {'id': e.id, 'start': e.start, 'end': e.end, 'source_segment': e.source_segment,
                    'vector': v.astype('<f4').tobytes()}
            if kind == KIND_SEMANTIC:
                vals.update(content=e.content, norm=normalize(e.content), pinned=int(e.pinned), mentions=e.mentions)
            else:
                vals.update(visual=e.visual, audio=e.audio, response=e.response, raw_refs=json.dumps(e.raw_refs))
            self.store.insert_row(table, vals)
            self.store.db.executemany(f'INSERT OR IGNORE INTO {table}_faces(entry_id, face_id) VALUES(?, ?)',
                                      [(e.id, f) for f in e.face_ids])
        elif kind == KIND_SEMANTIC:
            self.store.add_semantic(e, v)
        else:
            self.store.add_episodic(e, v)

    # -- inspection ------------------------------------------------------------------------------------------------
    def disk_bytes(self) -> int:
        """Bytes on disk: SQLite file + WAL + index files."""
        total = self.store.disk_bytes()
        for p in self.dir.glob('*.faiss*'):
            total += p.stat().st_size
        return total


def _redact_text(text: str, pat: re.Pattern, keep_empty: bool = False) -> str:
    """Drop every sentence/clause that matches ``pat``; '' when nothing is left."""
    if not text or not pat.search(text):
        return text
    kept = [s for s in sentences([text]) if not pat.search(s)]
    out = ' '.join(kept).strip()
    return out if (out or keep_empty) else ''


def entry_ref(kind: int, entry_id: int) -> str:
    """``semantic:<id>`` / ``episodic:<id>``."""
    return f'{KIND_NAMES[kind]}:{entry_id}'


def iter_refs(result: QueryResult) -> Iterable[str]:
    """Memory ids of a query result as the Action message lists them."""
    yield from (entry_ref(KIND_SEMANTIC, e.id) for e, _ in result.semantic)
    yield from (entry_ref(KIND_EPISODIC, e.id) for e, _ in result.episodic)
    yield from (f'profile:{p.face_id}' for p in result.profiles)


__all__ = ['Consolidator', 'QueryResult', 'ForgetResult', 'GlobalStateView', 'RequestError', 'entry_ref',
           'iter_refs', 'FORGOTTEN']
