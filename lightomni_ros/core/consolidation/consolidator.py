# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The consolidator: queued Topics become long-term memory (Algorithm 1 "sleep time", paper 3.1, 3.2, A.1-A.3, C.2).

Topics are queued durably first (:meth:`Consolidator.enqueue` returns once the row is committed: that is the
acknowledgement), exactly once per segment (a Topic re-sent because its acknowledgement was lost is recognised by
its segment id and start and not queued again; forgets made after it was recorded are applied on arrival), then
consolidated one by one: the semantic content filter, pinned "Remember that ..." facts, the
episodic append, the level-0 S_g node, reminder rows and the per-face segment counters are written in one transaction
that also removes the queue row, so a crash at any moment either keeps the queued Topic or its complete result.
Merges of S_g and profile updates follow outside that transaction (they wait for a Summarizer); the tree's state on
disk always says which are still due, so they resume after a restart.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field

import numpy as np

from ..memory import profiles as prof
from ..memory import voices as vox
from ..memory.global_state import SgNode
from ..memory.longterm import LongTermMemory
from ..memory.store import KIND_EPISODIC, KIND_SEMANTIC, EpisodicEntry, SemanticEntry, normalize
from ..text import introduced_name, introduced_other
from ..timing import StageTimer
from ..topic import TopicData
from .forgetting import apply_tombstones
from .rawfiles import RawFiles
from .reminders import ReminderBook
from .summarizer import EXTRACTIVE, ExtractiveSummarizer, ProfileUpdate, Summarizer, Summary

log = logging.getLogger('lightomni.consolidation')

#: a fact that says who spoke (the fallback parser writes them so): "<face_2> said: Hello, my name is Joe.",
#: "<voice_1>, an unseen speaker (radio, TV, phone or out of sight) said: I'm Ana."
_SAID = re.compile(r'^(<face_\d+>|<voice_\d+>)(?:, [^:]*?)? said: (.*)$', re.S)
#: a fact the memory adapter writes when someone is introduced: "<face_2> is called Ana."
#: who perception saw talking, as the visual summary says it ("<face_2> talking, <face_1>; kitchen")
_TALKING = re.compile(r'(<face_\d+>) (?:talking|typing)\b')
_CALLED = re.compile(r"^(<face_\d+>|<voice_\d+>) is called ([A-Z][\w'-]*)\.?$")
_FACT_WORD = re.compile(r'[a-z0-9]+')
_FACT_STOP = frozenset('the and for are was were has had have with that this from not but now also'.split())


def _fact_words(text: str) -> set[str]:
    """Words of a fact that carry content (for telling a repeated fact from a corrected one)."""
    return {w for w in _FACT_WORD.findall(text.lower()) if (len(w) >= 3 or w.isdigit()) and w not in _FACT_STOP}


@dataclass
class ConsolidationStats:
    """Counters for diagnostics."""

    topics_received: int = 0
    topics_duplicate: int = 0
    topics_consolidated: int = 0
    facts_appended: int = 0
    facts_extended: int = 0
    merges: int = 0
    profile_updates: int = 0
    names_learned: int = 0
    extractive_fallbacks: int = 0
    last_producer: dict[str, str] = field(default_factory=dict)


#: Receipt.status values (msg/TopicAck.msg)
STORED, DUPLICATE, FORGOTTEN = 'stored', 'duplicate', 'forgotten'


@dataclass(frozen=True)
class Receipt:
    """What :meth:`Consolidator.enqueue` did with a Topic (the acknowledgement the sender gets)."""

    status: str                 # STORED, DUPLICATE (queued before) or FORGOTTEN (a forget made later covers it)
    queue_id: int = 0           # the pending row (STORED only)
    files_deleted: int = 0      # raw files dropped on arrival (forgotten person, store_raw_audio off)


class Consolidator:
    """Queue -> consolidate -> S_g merges -> profile updates, on one :class:`LongTermMemory`."""

    def __init__(self, memory: LongTermMemory, reminders: ReminderBook, similarity_threshold: float,
                 summarizer: Summarizer | None = None, *, files: RawFiles | None = None,
                 store_raw_audio: bool = True) -> None:
        self.memory = memory
        self.reminders = reminders
        self.similarity_threshold = similarity_threshold
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self.files = files or RawFiles([])
        self.store_raw_audio = store_raw_audio
        self.timer = StageTimer()
        self.stats = ConsolidationStats()
        # set when the owner stops: no new merge or profile update starts (the tree and the counters keep them due,
        # so the next start runs them); the Topic being stored is finished first
        self.stopping = threading.Event()

    # -- the queue -----------------------------------------------------------------------------------------------
    def enqueue(self, topic: TopicData) -> Receipt:
        """Queue a Topic and its reminders durably, once per segment (the acknowledgement); say what was done.

        ValueError for a malformed Topic (refused: re-sending it cannot help).
        """
        topic.check()
        m = self.memory
        drop: list[str] = []
        with m.lock:
            with m.store.transaction():
                if topic.segment_id and m.store.already_received(topic.segment_id, topic.start):
                    self.stats.topics_duplicate += 1
                    return Receipt(DUPLICATE)
                keep, drop = apply_tombstones(m.store, topic)
                if not self.store_raw_audio:
                    drop, topic.raw_refs = drop + topic.raw_refs, []
                if topic.segment_id:
                    m.store.mark_received(topic.segment_id, topic.start, m.clock())
                if keep:
                    qid = m.store.enqueue(topic.segment_id, topic.to_json(), m.clock())
                    # reminders are stored with the acknowledgement: a backlog of consolidation must not delay them
                    self.reminders.add_from_topic(topic, m.clock())
                    self.stats.topics_received += 1
            deleted = self.files.delete(drop)
        return Receipt(STORED, qid, deleted) if keep else Receipt(FORGOTTEN, 0, deleted)

    def pending_count(self) -> int:
        """Topics queued and not yet consolidated."""
        with self.memory.lock:
            return self.memory.store.pending_count()

    def process_next(self) -> bool:
        """Consolidate the oldest queued Topic, then run due merges and profile updates; False when idle."""
        m = self.memory
        with m.lock:
            items = m.store.pending(1)
            if not items:
                done = False
            else:
                qid, payload = items[0]
                try:
                    topic = TopicData.from_json(payload)
                except (TypeError, ValueError) as e:
                    log.error('dropping malformed queued topic %d: %s', qid, e)
                    with m.store.transaction():
                        m.store.delete_pending(qid)
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

    # -- one Topic -----------------------------------------------------------------------------------------------
    def _consolidate(self, qid: int, t: TopicData) -> None:
        m = self.memory
        facts = [f.strip() for f in t.semantic if f.strip()]
        pinned = [f.strip() for f in t.remembered if f.strip()]
        epi = EpisodicEntry(start=t.start, end=t.end, visual=t.visual, audio=t.audio, response=t.response,
                            raw_refs=list(t.raw_refs), source_segment=t.segment_id, face_ids=list(t.face_ids))
        with self.timer.stage('embed'):
            vecs = m.embedder.embed(facts + pinned + [epi.script()])
        fact_vecs, pin_vecs, epi_vec = vecs[:len(facts)], vecs[len(facts):-1], vecs[-1]
        new_sem: list[tuple[int, np.ndarray]] = []
        with m.store.transaction():
            for text, v in zip(facts, fact_vecs):
                target = self._similar_fact(text, v, new_sem)
                faces = [f for f in t.face_ids if f in text] or list(t.face_ids)
                if target:
                    m.entries.extend_semantic(target, t.start, t.end, faces)
                    self.stats.facts_extended += 1
                    continue
                (eid,) = m.entries.add_rows(KIND_SEMANTIC, [SemanticEntry(text, t.start, t.end, False, t.segment_id,
                                                                          faces)], [v])
                new_sem.append((eid, v))
                self.stats.facts_appended += 1
            for text, v in zip(pinned, pin_vecs):  # "Remember that ...": pinned, never filtered
                faces = [f for f in t.face_ids if f in text] or list(t.face_ids)
                (eid,) = m.entries.add_rows(KIND_SEMANTIC, [SemanticEntry(text, t.start, t.end, True, t.segment_id,
                                                                          faces)], [v])
                new_sem.append((eid, v))
            (epi_id,) = m.entries.add_rows(KIND_EPISODIC, [epi], [epi_vec])
            leaf = SgNode(id=0, level=0, start=t.start, end=t.end, first_segment=t.segment_id,
                          last_segment=t.segment_id, text=epi.script(), face_ids=sorted(set(t.face_ids)))
            leaf.id = m.store.add_sg_node(0, t.start, t.end, t.segment_id, t.segment_id, leaf.text,
                                          face_ids=leaf.face_ids, episodic_id=m.entries.row_id(epi_id),
                                          producer=t.producer)
            for face in dict.fromkeys(t.face_ids):
                if not prof.valid_face_id(face):
                    continue
                m.store.upsert_profile(face)
                m.store.db.execute('UPDATE profiles SET segments_since_update=segments_since_update+1, '
                                   'last_seen=max(last_seen, ?), first_seen=CASE WHEN first_seen=0 THEN ? '
                                   'ELSE first_seen END WHERE face_id=?', (t.end, t.start, face))
            self._learn_name(t)
            m.store.delete_pending(qid)
            m.store.bump('sg.version')
        m.tree.add_leaf(leaf)
        m.entries.index_rows(KIND_SEMANTIC, [i for i, _ in new_sem], [v for _, v in new_sem])
        m.entries.index_rows(KIND_EPISODIC, [epi_id], [epi_vec])
        self.stats.topics_consolidated += 1
        m.state_changed()

    def _similar_fact(self, text: str, v: np.ndarray, accepted: list[tuple[int, np.ndarray]]) -> int:
        """Id of a stored fact this one repeats (normalized exact match or similarity >= threshold), else 0."""
        entries = self.memory.entries
        same = entries.find_semantic_by_norm(normalize(text))
        if same is not None:
            return same.id
        best_id, best = entries.similar_fact(v)
        for eid, w in accepted:       # facts of this Topic, committed with it, not yet in the index
            s = float(np.dot(v, w))
            if s > best:
                best, best_id = s, eid
        if best < self.similarity_threshold:
            return 0
        # a close fact that swaps a word of the stored one ("the meeting is on Friday" after "... on Thursday") is a
        # correction, not a repeat: extending the stored fact would keep the superseded value and drop the new one.
        # A word only added ("really likes green tea") changes nothing
        old = entries.get(KIND_SEMANTIC, [best_id]).get(best_id)
        if old is not None:
            mine, theirs = _fact_words(text), _fact_words(old.content)
            if mine - theirs and theirs - mine:
                return 0
        return best_id

    def _learn_name(self, t: TopicData) -> None:
        """Name a person or a voice at once when they introduce themself ("Hi robot, I'm Ana").

        A face counts when it is alone in view, a voice when the fact that says who spoke names it ("<voice_1>, an
        unseen speaker ... said: I'm Ana", or the memory adapter's "<face_2> is called Ana.", which also names
        someone introduced by another person; or the one other face in view when the speaker introduces someone,
        "this is my cousin Mateo"). Waiting for the k-segment profile update would leave "who is who"
        questions without names for minutes. With several faces in view only a fact naming the speaker counts. A name
        already known is kept.
        """
        store = self.memory.store
        faces = [f for f in dict.fromkeys(t.face_ids) if prof.valid_face_id(f)]
        facts = [(m.group(1), m.group(2)) for m in map(_SAID.match, t.semantic) if m]
        said = [(faces[0], t.audio)] if len(faces) == 1 and not facts else []
        # with several faces, the facts say who spoke when perception singled the speaker out ("<face_2> said: ...")
        said += [(who, text) for who, text in facts if who in faces or vox.valid_voice_id(who)]
        named = [(who, introduced_name(text)) for who, text in said]
        named += [(m.group(1), m.group(2)) for m in map(_CALLED.match, t.semantic)
                  if m and (m.group(1) in faces or vox.valid_voice_id(m.group(1)))]
        # someone introduced by the speaker ("Robot, this is my cousin Mateo"): with the speaker known and one other
        # face in view, that face is the one introduced
        speaker = next((who for who, _ in said if who in faces), '') or next(
            (f for f in _TALKING.findall(t.visual) if f in faces), '')
        others = [f for f in faces if f != speaker]
        if speaker and len(others) == 1:
            named.append((others[0], introduced_other(t.audio)))
        for who, name in named:
            if not name:
                continue
            if vox.valid_voice_id(who):
                v = vox.get(store, who) or vox.VoiceRecord(voice_id=who, first_heard=t.start, last_heard=t.end)
                if v.name:
                    continue
                v.name = name
                vox.save(store, v)
                store.bump('voices.version')
                self.stats.names_learned += 1
                if not v.face_id:
                    continue
                who = v.face_id     # the voice belongs to a face: name its profile too
            p = prof.get(store, who)
            if p is not None and not p.name:
                p.name = name
                p.attributes.setdefault('updated_by', 'introduction')
                prof.save(store, p)
                self.stats.names_learned += 1

    # -- S_g merges and profile updates --------------------------------------------------------------------------
    def run_merges(self) -> int:
        """Merge every level holding more than k nodes (oldest k each time); return the number of merges."""
        m = self.memory
        n = 0
        while not self.stopping.is_set():
            with m.lock:
                plan = m.tree.next_merge()
                if plan is None:
                    return n
                texts = [c.text for c in plan.children]
            with self.timer.stage('summarize'):
                summary = self._summarize_merge(texts)
            if self._abandon(summary.producer):
                return n
            with m.lock:
                if not m.tree.is_current(plan) or [c.text for c in plan.children] != texts:
                    continue  # memory changed (e.g. a forget redacted a child) while the summary was written
                probe = m.tree.merged(plan, 0, summary.text, summary.producer)
                with m.store.transaction():
                    pid = m.store.add_sg_node(probe.level, probe.start, probe.end, probe.first_segment,
                                              probe.last_segment, probe.text, probe.children, probe.face_ids,
                                              producer=summary.producer)
                    m.store.retire_sg_nodes(probe.children, pid)
                    m.store.bump('sg.version')
                probe.id = pid
                m.tree.apply(plan, probe)
                self.stats.merges += 1
                n += 1
            m.state_changed()
        return n

    def _abandon(self, producer: str) -> bool:
        """A stop cut the model's summary short: keep the work due for the next start, not a fallback forever."""
        return self.stopping.is_set() and producer == EXTRACTIVE

    def _summarize_merge(self, texts: list[str]) -> Summary:
        node_max = self.memory.cfg.node_max_tokens
        try:
            s = self.summarizer.merge(texts, node_max)
            if s.text.strip():
                self.stats.last_producer['merge'] = s.producer
                return s
        except Exception as e:  # noqa: BLE001 - a failing model must not stop memory from growing
            log.warning('summarizer failed on a merge (%s); using the extractive summarizer', e)
        self.stats.extractive_fallbacks += 1
        s = ExtractiveSummarizer().merge(texts, node_max)
        self.stats.last_producer['merge'] = s.producer
        return s

    def run_profile_updates(self) -> int:
        """Update the profile of every face seen in k segments since its last update (paper A.1)."""
        m = self.memory
        k, node_max = m.cfg.k, m.cfg.node_max_tokens
        n = 0
        while not self.stopping.is_set():
            with m.lock:
                row = m.store.db.execute('SELECT face_id FROM profiles WHERE segments_since_update >= ? '
                                         'ORDER BY face_id LIMIT 1', (k,)).fetchone()
                if row is None:
                    return n
                face = row[0]
                p = prof.get(m.store, face)
                # what memory holds about the person comes first: facts name them ("Freya works as a plumber."),
                # while an event lists everyone in view; the events add what was seen and said
                texts = [e.content for e in m.entries.semantic_about(face, p.name if p else '', 2 * k)]
                texts += [e.script(answered=False) for e in m.entries.recent_episodic_with_face(face, k)]
            upd = self._summarize_profile(face, texts, p, node_max)
            if self._abandon(upd.producer):
                return n
            with m.lock:
                cur = prof.get(m.store, face)
                if cur is None:
                    continue  # forgotten meanwhile
                # a summary never renames: a name comes from an introduction or a naming fact of this face
                cur.name = cur.name or upd.name
                cur.attributes.update({key: v for key, v in upd.attributes.items() if v})
                if upd.summary:
                    cur.attributes['persona'] = upd.summary
                cur.attributes['updated_by'] = upd.producer
                cur.segments_since_update = max(0, cur.segments_since_update - k)
                prof.save(m.store, cur)
                self.stats.profile_updates += 1
                self.stats.last_producer['profile'] = upd.producer
                n += 1
        return n

    def _summarize_profile(self, face: str, texts: list[str], p: prof.Profile, node_max: int) -> ProfileUpdate:
        try:
            return self.summarizer.profile(face, texts, p, node_max)
        except Exception as e:  # noqa: BLE001
            log.warning('summarizer failed on a profile update of %s (%s); using the extractive one', face, e)
            self.stats.extractive_fallbacks += 1
            return ExtractiveSummarizer().profile(face, texts, p, node_max)


__all__ = ['Consolidator', 'ConsolidationStats', 'Receipt', 'STORED', 'DUPLICATE', 'FORGOTTEN']
