# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The consolidation subsystem as one runtime object: what the consolidation node and the offline facade both drive.

It opens long-term memory from one :class:`ConsolidationConfigs` bundle (the consolidation node's parameters) with the
process's text embedder, and offers one method per topic and service the node serves: Topics and reminders in,
QueryMemory, Remember, Forget, Export/Import, the global state, profiles and face identities. The pieces behind it
each own one concern: :class:`Consolidator` (queue -> consolidate -> merges -> profiles), :class:`ReminderBook`,
:class:`Forgetting`, :class:`Archive`, all on one :class:`LongTermMemory`. Thread-safe.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import pathlib
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..config import check_bundle, section
from ..embedding import EmbeddingConfig, TextEmbedder, embedder_id, text_embedder
from ..memory import profiles as prof
from ..memory import voices as vox
from ..memory.backend import ALL_ROBOTS, EntryFilter, SyncReport
from ..memory.config import MemoryConfig
from ..memory.entries import EntryIndex
from ..memory.global_state import MergeTree
from ..memory.crypto import MemoryKeyError, read_key
from ..memory.longterm import GlobalStateView, LongTermMemory
from ..memory.privacy import PrivacyConfig, RetentionConfig
from ..memory.store import KIND_EPISODIC, KIND_SEMANTIC, EpisodicEntry, ReminderRow, SemanticEntry, Store
from ..models import ModelsConfig, cache_dir
from ..text import resolve_voices
from ..timing import StageTimer
from ..topic import TopicData
from .archive import Archive
from .config import ConsolidationConfig
from .consolidator import ConsolidationStats, Consolidator, Receipt
from .errors import RequestError
from .forgetting import ForgetResult, Forgetting
from .rawfiles import RawFiles
from .reminders import ReminderBook
from .retention import Retention, RetentionResult
from .summarizer import Summarizer

#: a retrieved entry of either kind
Entry = SemanticEntry | EpisodicEntry


@dataclass
class ConsolidationConfigs:
    """Every section the consolidation node reads (its ROS parameters, by prefix)."""

    memory: MemoryConfig = section(MemoryConfig, 'memory.')
    consolidation: ConsolidationConfig = section(ConsolidationConfig, 'consolidation.')
    models: ModelsConfig = section(ModelsConfig, 'models.')
    embedding: EmbeddingConfig = section(EmbeddingConfig, 'embedding.')
    privacy: PrivacyConfig = section(PrivacyConfig, 'privacy.')
    retention: RetentionConfig = section(RetentionConfig, 'memory.retention_days.')


def memory_key(cfg: PrivacyConfig) -> str | None:
    """The SQLCipher passphrase the privacy settings call for (None: a plain file); ValueError when it is missing."""
    if cfg.encryption == 'off':
        return None
    try:
        key = read_key(cfg.key_env, cfg.key_file)
    except MemoryKeyError as e:
        raise ValueError(str(e)) from e
    if key is None and cfg.encryption == 'on':
        raise ValueError(f'privacy.encryption is "on" but no key: set {cfg.key_env} or privacy.key_file')
    return key


@dataclass(kw_only=True)
class QueryResult:
    """What QueryMemory returns: entries with their scores, and profiles."""

    semantic: list[tuple[SemanticEntry, float]] = field(default_factory=list)
    episodic: list[tuple[EpisodicEntry, float]] = field(default_factory=list)
    profiles: list[prof.Profile] = field(default_factory=list)
    latency_ms: float = 0.0


def entry_filters(own_robot: str, robot_ids: Sequence[str] = (), window_start: float = 0.0,
                  window_end: float = 0.0) -> tuple[EntryFilter, EntryFilter]:
    """(semantic, episodic) filters of a QueryMemory request.

    No robot ids: semantic memory of every robot (the fleet shares it) and this robot's own episodic memory;
    ``*`` among them: every robot for both; otherwise exactly those robots for both. A window bound of 0 is open.
    """
    if not (math.isfinite(window_start) and math.isfinite(window_end)):
        raise RequestError(f'window [{window_start}, {window_end}] is not a time span')
    start = window_start if window_start > 0 else None
    end = window_end if window_end > 0 else None
    if start is not None and end is not None and end < start:
        raise RequestError('window_end is before window_start')
    robots = [r for r in robot_ids if r]
    if not robots:
        return EntryFilter(None, start, end), EntryFilter((own_robot,), start, end)
    if ALL_ROBOTS in robots:
        return EntryFilter(None, start, end), EntryFilter(None, start, end)
    return EntryFilter(tuple(robots), start, end), EntryFilter(tuple(robots), start, end)


class ConsolidationRuntime:
    """Long-term memory with the consolidation node's settings: the single writer of M_p, M_s, M_e, S_g, reminders."""

    def __init__(self, cfg: ConsolidationConfigs | None = None, *, embedder: TextEmbedder | None = None,
                 summarizer: Summarizer | None = None, clock: Callable[[], float] = time.time) -> None:
        self.cfg = cfg or ConsolidationConfigs()
        check_bundle(self.cfg)
        key = memory_key(self.cfg.privacy)
        embedder = embedder or text_embedder(self.cfg.embedding, self.cfg.models.models_dir)
        self.memory = LongTermMemory(self.cfg.memory, embedder, timezone=self.cfg.consolidation.timezone, clock=clock,
                                     key=key)
        pv = self.cfg.privacy
        self.files = RawFiles([pv.audio_dir or cache_dir() / 'segments', self.memory.dir / 'audio'])
        self.reminder_book = ReminderBook(self.memory)
        self.consolidator = Consolidator(self.memory, self.reminder_book, self.cfg.consolidation.similarity_threshold,
                                         summarizer, files=self.files, store_raw_audio=pv.store_raw_audio)
        self.forgetting = Forgetting(self.memory, self.files)
        self.retention = Retention(self.memory, self.forgetting, self.files, self.cfg.retention)
        self.archive = Archive(self.memory, self.files)
        self.timer: StageTimer = self.consolidator.timer

    # -- what the owner wires ------------------------------------------------------------------------------------
    @property
    def summarizer(self) -> Summarizer:
        """Who writes S_g merges and profile updates."""
        return self.consolidator.summarizer

    @summarizer.setter
    def summarizer(self, s: Summarizer) -> None:
        self.consolidator.summarizer = s

    @property
    def on_state_change(self) -> Callable[[], None] | None:
        """Called after S_g or the gallery changed."""
        return self.memory.on_state_change

    @on_state_change.setter
    def on_state_change(self, fn: Callable[[], None] | None) -> None:
        self.memory.on_state_change = fn

    @property
    def stats(self) -> ConsolidationStats:
        """Consolidation counters."""
        return self.consolidator.stats

    @property
    def dir(self) -> pathlib.Path:
        """The memory folder."""
        return self.memory.dir

    @property
    def store(self) -> Store:
        """The SQLite store (inspection, benchmarks)."""
        return self.memory.store

    @property
    def entries(self) -> EntryIndex:
        """Semantic and episodic entries with their vectors (inspection, benchmarks)."""
        return self.memory.entries

    @property
    def tree(self) -> MergeTree:
        """S_g's merge tree (inspection, benchmarks)."""
        return self.memory.tree

    @property
    def tz(self) -> _dt.tzinfo | None:
        """The time zone times are rendered and parsed in."""
        return self.memory.tz

    @property
    def encrypted(self) -> bool:
        """Whether memory.db is SQLCipher-encrypted."""
        return self.memory.store.encrypted

    @property
    def embedder_id(self) -> str:
        """``name/dim`` of the embedder the stored vectors come from."""
        return embedder_id(self.memory.embedder)

    # -- Topics --------------------------------------------------------------------------------------------------
    def enqueue(self, topic: TopicData) -> Receipt:
        """Queue a Topic durably, once per segment (the acknowledgement); ValueError when it is malformed."""
        return self.consolidator.enqueue(topic)

    def pending_count(self) -> int:
        """Topics queued and not yet consolidated."""
        return self.consolidator.pending_count()

    def process_next(self) -> bool:
        """Consolidate the oldest queued Topic (then due merges and profile updates); False when idle."""
        return self.consolidator.process_next()

    def process_all(self) -> int:
        """Consolidate every queued Topic; return how many."""
        return self.consolidator.process_all()

    def interrupt(self) -> None:
        """Start no further merge or profile update (the owner is stopping); they stay due for the next start."""
        self.consolidator.stopping.set()

    def resume(self) -> None:
        """Undo :meth:`interrupt` (the node was activated again)."""
        self.consolidator.stopping.clear()

    # -- QueryMemory and Remember ----------------------------------------------------------------------------------
    def query(self, vector: Sequence[float] | None = None, text: str = '', k_semantic: int = 0, k_episodic: int = 0,
              face_ids: Sequence[str] = (), embedder: str = '', robot_ids: Sequence[str] = (),
              window_start: float = 0.0, window_end: float = 0.0, chronological: bool = False) -> QueryResult:
        """Top semantic/episodic entries for a fused query vector (or the embedded text) plus profiles of faces.

        ``embedder`` names the embedder that made ``vector``; a vector from another embedder is refused (its
        dimension may even match while its space does not). ``robot_ids`` and the window filter what is searched
        (:func:`entry_filters`); with a window, ``chronological`` lists the window's episodic entries in time order.
        """
        t0 = time.perf_counter()
        m = self.memory
        ks = k_semantic or self.cfg.consolidation.k_semantic
        ke = k_episodic or self.cfg.consolidation.k_episodic
        if ks > 1000 or ke > 1000:
            raise RequestError('k_semantic/k_episodic must be at most 1000')
        mine = embedder_id(m.embedder)
        if vector is not None and len(vector):
            if embedder and embedder != mine:
                raise RequestError(f'query_vector comes from the text embedder {embedder} but memory is indexed with '
                                   f'{mine}: set the same embedding.backend on both nodes')
            q = np.asarray(vector, np.float32)
            if q.ndim != 1 or len(q) != m.embedder.dim:
                raise RequestError(f'query_vector has {len(q)} values; the text-embedding dimension is '
                                   f'{m.embedder.dim}')
            if not np.all(np.isfinite(q)) or not np.any(q):
                raise RequestError('query_vector must be finite and non-zero')
        elif text.strip():
            q = self._embed_query(text)
        elif not face_ids:
            raise RequestError('give a query_vector, a query_text or face_ids')
        else:
            q = None
        # the words' own embedding beside a fused vector (``text_search``), embedded before memory is locked
        qs = [q] + ([self._embed_query(text)] if q is not None and vector is not None and len(vector)
                    and text.strip() and self.cfg.consolidation.text_search else [])
        sem_filter, epi_filter = entry_filters(m.robot_id, robot_ids, window_start, window_end)
        out = QueryResult()
        with m.lock:
            if q is not None:
                who = vox.speakers(m.store)
                sem = rank_merged([m.entries.search(KIND_SEMANTIC, v, ks, sem_filter) for v in qs], ks)
                if chronological and (epi_filter.start is not None or epi_filter.end is not None):
                    epi = m.entries.in_order(KIND_EPISODIC, ke, epi_filter)
                else:
                    epi = rank_merged([m.entries.search(KIND_EPISODIC, v, ke, epi_filter) for v in qs], ke)
                out.semantic = [(_resolved(e, who), s) for e, s in sem]
                out.episodic = [(_resolved(e, who), s) for e, s in epi]
            # the people in view, and those the returned entries mention (so answers can name them)
            mentioned = [f for e, _ in out.semantic + out.episodic
                         for f in e.face_ids + prof.FACE_MENTION.findall(getattr(e, 'content', ''))]
            faces = list(dict.fromkeys(list(face_ids) + mentioned))
            if faces:
                out.profiles = prof.list_all(m.store, faces)
        out.latency_ms = (time.perf_counter() - t0) * 1000.0
        self.timer.add('query', out.latency_ms)
        return out

    def _embed_query(self, text: str) -> np.ndarray:
        with self.timer.stage('embed'):
            return self.memory.embedder.embed([text], query=True)[0]

    def remember(self, content: str, face_ids: Sequence[str] = (), start: float = 0.0, end: float = 0.0) -> int:
        """Store a pinned fact ("Remember that ..."); return its id."""
        content = (content or '').strip()
        if not content:
            raise RequestError('content is empty')
        bad = [f for f in face_ids if not prof.valid_face_id(f)]
        if bad:
            raise RequestError(f'face ids must look like <face_N>: {bad}')
        m = self.memory
        start = start or m.clock()
        end = end or start
        if end < start:
            raise RequestError('end is before start')
        with m.lock:
            (eid,) = m.entries.add(KIND_SEMANTIC, [SemanticEntry(content, start, end, True, 0, list(face_ids),
                                                                 robot_id=m.robot_id)])
        return eid

    # -- Forget, Export, Import ------------------------------------------------------------------------------------
    def forget_face(self, face_id: str) -> ForgetResult:
        """Forget a person everywhere (in a fleet: on every robot)."""
        return self.forgetting.face(face_id)

    def forget_voice(self, voice_id: str) -> ForgetResult:
        """Forget one voice: its identity and what memory says it said."""
        return self.forgetting.voice(voice_id)

    def forget_entries(self, entry_ids: Sequence[str]) -> ForgetResult:
        """Forget entries by id."""
        return self.forgetting.entries(entry_ids)

    def forget_range(self, start: float, end: float) -> ForgetResult:
        """Forget a time range."""
        return self.forgetting.time_range(start, end)

    def export_jsonl(self, path: str) -> int:
        """Write a backup (a ``.tar`` with the audio clips, else JSON lines); return the record count."""
        return self.archive.export(path)

    def import_jsonl(self, path: str, replace: bool = False) -> int:
        """Read a backup (``.tar`` or JSON lines); return the record count; RequestError (store untouched) if bad."""
        return self.archive.import_(path, replace)

    def expire(self, now: float | None = None) -> RetentionResult:
        """One retention pass (``memory.retention_days.*``)."""
        return self.retention.expire(now)

    # -- reminders -----------------------------------------------------------------------------------------------
    def add_reminder(self, text: str, due: float, face_id: str = '', source_segment: int = 0) -> int:
        """Store a reminder (once); return its id."""
        return self.reminder_book.add(text, due, face_id, source_segment)

    def fire_due(self, now: float | None = None) -> list[ReminderRow]:
        """Reminders due by ``now``, each fired once."""
        return self.reminder_book.fire_due(now)

    def reminder_spoken(self, reminder_id: int) -> bool:
        """The reflex node confirmed speaking this fired reminder."""
        return self.reminder_book.spoken(reminder_id)

    def unspoken_reminders(self, older_than_s: float, now: float | None = None) -> list[ReminderRow]:
        """Fired reminders nobody confirmed speaking within ``older_than_s`` (to deliver again)."""
        return self.reminder_book.unspoken(older_than_s, now)

    def reminders(self, status: int | None = None) -> list[ReminderRow]:
        """Stored reminders."""
        return self.reminder_book.stored(status)

    # -- state and identities ------------------------------------------------------------------------------------
    def global_state(self, max_tokens: int = 0) -> GlobalStateView:
        """S_g with its script under ``max_tokens`` (0 = configured budget)."""
        return self.memory.global_state(max_tokens)

    def profiles(self, face_ids: Sequence[str] = ()) -> list[prof.Profile]:
        """Stored profiles (all when empty)."""
        return self.memory.profiles(face_ids)

    def gallery_version(self) -> int:
        """Incremented on every change of the stored face identities."""
        return self.memory.gallery_version()

    def apply_identity(self, face_id: str, embedding: Sequence[float] | None, backend: str, observations: int,
                       avatar: bytes = b'', avatar_format: str = '', new: bool = False) -> prof.Profile:
        """New identity (``new``) / embedding update reported by perception.

        A new identity whose id another robot of the fleet already gave someone is refused (two robots named two
        people at once before either saw the other's gallery): the stored person keeps the id.
        """
        if not prof.valid_face_id(face_id):
            raise RequestError(f'face id must look like <face_N>: {face_id!r}')
        emb = _embedding(embedding, 'face')
        m = self.memory
        with m.lock, m.store.transaction():
            held = prof.get(m.store, face_id) if new else None
            if held is not None and held.robot_id and held.robot_id != m.robot_id:
                raise RequestError(f'{face_id} is already robot {held.robot_id}\'s identity for another person '
                                   '(ids were taken at once); the gallery republished gives perception the next id')
            m.store.bump('gallery.version')
            return prof.apply_identity(m.store, face_id, emb, backend, observations, avatar, avatar_format,
                                       m.clock(), m.robot_id)

    # -- the fleet -------------------------------------------------------------------------------------------------
    def sync(self) -> SyncReport:
        """Exchange with the shared store (backend "milvus"; nothing to do when embedded).

        Pushes the outbox in order, adopts profiles other robots changed and applies their forgets here (without
        announcing them again). The caller publishes the gallery again when ``profiles_changed`` or ``forgotten``.
        """
        report = self.memory.entries.sync()
        for face_id, names in report.forgotten:
            if prof.valid_face_id(face_id):
                self.forgetting.face(face_id, names, broadcast=False)
        if report.profiles_changed:
            with self.memory.lock, self.memory.store.transaction():
                self.memory.store.bump('gallery.version')
            self.memory.state_changed()
        return report

    def backend_name(self) -> str:
        """``embedded`` or ``milvus``."""
        return self.memory.entries.backend_name()

    def voices(self) -> list[vox.VoiceRecord]:
        """Stored voice identities."""
        with self.memory.lock:
            return vox.list_all(self.memory.store)

    def voice_gallery_version(self) -> int:
        """Incremented on every change of the stored voices."""
        with self.memory.lock:
            return int(self.memory.store.get_meta('voices.version', '0') or 0)

    def apply_voice(self, op: str, voice_id: str, embedding: Sequence[float] | None, backend: str,
                    observations: float, face_id: str = '') -> vox.VoiceRecord:
        """New voice / embedding update / face link reported by perception."""
        if not vox.valid_voice_id(voice_id):
            raise RequestError(f'voice id must look like <voice_N>: {voice_id!r}')
        if op not in ('new', 'update', 'link'):
            raise RequestError(f'unknown voice op {op!r}')
        if face_id and not prof.valid_face_id(face_id):
            raise RequestError(f'face id must look like <face_N>: {face_id!r}')
        emb = _embedding(embedding, 'voice')
        m = self.memory
        with m.lock, m.store.transaction():
            m.store.bump('voices.version')
            v = vox.apply_event(m.store, op, voice_id, emb, backend, observations, face_id, m.clock())
            p = prof.get(m.store, v.face_id) if v.face_id and v.name else None
            if p is not None and not p.name:      # a voice named before it was seen talking names its face
                p.name = v.name
                p.attributes.setdefault('updated_by', 'introduction')
                prof.save(m.store, p)
            return v

    # -- upkeep --------------------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the index files."""
        self.memory.flush()

    def close(self) -> None:
        """Flush and close the store."""
        self.memory.close()

    def disk_bytes(self) -> int:
        """Bytes on disk."""
        return self.memory.disk_bytes()


def _embedding(values: Sequence[float] | None, what: str) -> np.ndarray | None:
    """An identity's embedding as float32 (None when empty); RequestError when it is not finite."""
    emb = np.asarray(values, np.float32) if values is not None and len(values) else None
    if emb is not None and not np.all(np.isfinite(emb)):
        raise RequestError(f'{what} embedding is not finite')
    return emb


def rank_merged(rankings: Sequence[Sequence[tuple[Entry, float]]], k: int,
                rrf_k: float = 60.0) -> list[tuple[Entry, float]]:
    """The ``k`` best of several rankings of the same entries, merged by reciprocal rank.

    Each entry scores the sum of 1 / (``rrf_k`` + rank) over the rankings that hold it (Cormack et al. 2009), so
    cosines of different query vectors, which live on different scales, are never compared. An entry keeps the
    cosine of the first ranking that holds it; one ranking comes back as it is.
    """
    if len(rankings) == 1:
        return list(rankings[0])[:k]
    fused: dict[tuple[type, str, int], float] = {}
    first: dict[tuple[type, str, int], tuple[Entry, float]] = {}
    for ranking in rankings:
        for rank, (e, score) in enumerate(ranking):
            key = (type(e), e.robot_id, e.id)     # a fleet's robots number their entries each
            fused[key] = fused.get(key, 0.0) + 1.0 / (rrf_k + rank + 1)
            first.setdefault(key, (e, score))
    order = sorted(fused, key=lambda key: -fused[key])
    return [first[key] for key in order[:k]]


def _resolved(e: SemanticEntry | EpisodicEntry, who: dict[str, str]) -> SemanticEntry | EpisodicEntry:
    """The entry as answers read it: each known voice by its face or name (the stored text keeps the voice id)."""
    if isinstance(e, SemanticEntry):
        return dataclasses.replace(e, content=resolve_voices(e.content, who))
    return dataclasses.replace(e, audio=resolve_voices(e.audio, who))


__all__ = ['ConsolidationRuntime', 'ConsolidationConfigs', 'QueryResult', 'RequestError', 'Receipt', 'memory_key',
           'entry_filters']
