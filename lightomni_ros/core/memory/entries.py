# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Semantic and episodic entries with their vectors: SQLite rows and FAISS indexes managed as one.

Every entry row keeps its vector (float32 BLOB), so an index can always be rebuilt from SQLite alone. At opening each
index file is loaded when it matches the store (embedder, deletion counter; rows added after its last save are
caught up) and rebuilt otherwise; when the text embedder changed since the vectors were written, every entry is
re-embedded. Deleting entries removes their rows and vectors and bumps the kind's deletion counter, so a saved index
that still holds them is never trusted again. Not thread-safe by itself: the consolidation runtime serialises access.

This is the embedded :class:`~lightomni_ros.core.memory.backend.MemoryBackend`; the Milvus backend extends it (the
robot's own rows stay here first). Ids given and returned are public ids: the row id, with the robot's fleet slot in
the high bits when :attr:`EntryIndex.slot` is set (0 in a single-robot store, where both are the same).
"""

from __future__ import annotations

import json
import logging
import pathlib
import sqlite3
import time
from typing import Any, Iterator, Sequence

import numpy as np

from ..embedding import TextEmbedder
from ..text import names_person
from .backend import Entry, EntryFilter, MemoryBackend
from .config import MemoryConfig
from .store import (KIND_EPISODIC, KIND_NAMES, KIND_SEMANTIC, EpisodicEntry, SemanticEntry, Store, chunks,
                    normalize, vec_to_blob)
from .vectors import VectorIndex, load as load_index

log = logging.getLogger('lightomni.memory')

KINDS_BOTH = (KIND_SEMANTIC, KIND_EPISODIC)
#: a public id holds the robot's fleet slot above these bits and the row id below
SLOT_SHIFT = 40
ROW_MASK = (1 << SLOT_SHIFT) - 1


def entry_text(e: Entry) -> str:
    """The text an entry is embedded by: a fact's content, an event's script."""
    return e.content if isinstance(e, SemanticEntry) else e.script()


class EntryIndex(MemoryBackend):
    """M_s and M_e: entry rows in the store and one vector index per kind."""

    def __init__(self, store: Store, folder: pathlib.Path, cfg: MemoryConfig, embedder: TextEmbedder, *,
                 persist: bool = True) -> None:
        self.store = store
        self.persist = persist          # False: index files are never written (and stale ones are removed)
        self.db = store.db
        self.dir = folder
        self.cfg = cfg
        self.embedder = embedder
        self.robot_id = cfg.robot_id
        self.slot = 0
        # whether a kind holds rows of other robots (a store migrated from a fleet): when not, a filter on this
        # robot alone lets everything through and the search stays a plain index search
        self._foreign = {kind: self.db.execute(f"SELECT 1 FROM {KIND_NAMES[kind]} WHERE robot_id != '' LIMIT 1")
                         .fetchone() is not None for kind in KINDS_BOTH}
        self._changes = 0
        self.indexes: dict[int, VectorIndex] = {}
        self.check_embedder()
        for kind in KINDS_BOTH:
            self.indexes[kind] = self._open_index(kind)

    # -- index files ---------------------------------------------------------------------------------------------
    def _index_path(self, kind: int) -> pathlib.Path:
        return self.dir / f'{KIND_NAMES[kind]}.faiss'

    def _new_index(self) -> VectorIndex:
        m = self.cfg
        return VectorIndex(self.embedder.dim, hnsw_threshold=m.hnsw_threshold, hnsw_m=m.hnsw_m,
                           ef_construction=m.hnsw_ef_construction, ef_search=m.hnsw_ef_search, use_gpu=m.use_gpu)

    def check_embedder(self) -> None:
        """Re-embed every stored entry when the embedder changed since the vectors were written."""
        stored = self.store.get_meta('embedder')
        current = f'{self.embedder.name}/{self.embedder.dim}'
        if stored == current:
            return
        if stored and (self.local_count(KIND_SEMANTIC) or self.local_count(KIND_EPISODIC)):
            log.warning('text embedder changed (%s -> %s): re-embedding all entries', stored, current)
            for kind in KINDS_BOTH:
                entries = list(self.all_entries(kind))
                for i in range(0, len(entries), 256):
                    batch = entries[i:i + 256]
                    vecs = self.embedder.embed([entry_text(e) for e in batch])
                    with self.store.transaction():
                        self.db.executemany(f'UPDATE {KIND_NAMES[kind]} SET vector=? WHERE id=?',
                                            [(v.astype('<f4').tobytes(), self.row_id(e.id))
                                             for e, v in zip(batch, vecs)])
                self._index_path(kind).unlink(missing_ok=True)
        with self.store.transaction():
            self.store.set_meta('embedder', current)

    def _open_index(self, kind: int) -> VectorIndex:
        """Load the saved index when it matches the store (catching up on newer rows); otherwise rebuild it."""
        loaded = load_index(self._index_path(kind), self._new_index()) if self.persist else None
        deletions = self.store.get_meta(f'{KIND_NAMES[kind]}.deletions', '0')
        if loaded is not None:
            index, side = loaded
            if side.get('embedder') == self.embedder.name and str(side.get('deletions')) == deletions:
                for ids, vecs in self.vectors(kind, after_id=int(side.get('max_id', 0))):
                    index.add(ids, vecs)
                if index.ntotal == self.local_count(kind):
                    return index
            log.warning('%s index does not match the store; rebuilding it from SQLite', KIND_NAMES[kind])
        return self.rebuild(kind)

    def rebuild(self, kind: int) -> VectorIndex:
        """Rebuild one kind's index from the vectors in SQLite (and save it)."""
        t0 = time.perf_counter()
        index = self._new_index()
        for ids, vecs in self.vectors(kind):
            index.add(ids, vecs)
        if index.ntotal:
            log.info('%s index rebuilt from SQLite: %d vectors in %.1f s', KIND_NAMES[kind], index.ntotal,
                     time.perf_counter() - t0)
        self._save_index(kind, index)
        self.indexes[kind] = index
        return index

    def _save_index(self, kind: int, index: VectorIndex) -> None:
        if not self.persist:
            for p in self.dir.glob(f'{KIND_NAMES[kind]}.faiss*'):
                p.unlink(missing_ok=True)
            return
        index.save(self._index_path(kind), {
            'embedder': self.embedder.name, 'max_id': self.max_id(kind),
            'deletions': self.store.get_meta(f'{KIND_NAMES[kind]}.deletions', '0')})

    def flush(self) -> None:
        """Write the index files (compacting an index whose deletions left holes)."""
        for kind, index in list(self.indexes.items()):
            if index.needs_compaction:
                self.rebuild(kind)
            else:
                self._save_index(kind, index)
        self._changes = 0

    def rebuild_all(self) -> None:
        """Rebuild both indexes (after an import rewrote the rows)."""
        for kind in KINDS_BOTH:
            self.rebuild(kind)

    def _changed(self, n: int) -> None:
        self._changes += n
        if self._changes >= self.cfg.flush_every:
            self.flush()

    def disk_bytes(self) -> int:
        """Bytes of the index files."""
        return sum(p.stat().st_size for p in self.dir.glob('*.faiss*'))

    # -- public ids ----------------------------------------------------------------------------------------------
    def public_id(self, row_id: int) -> int:
        """The id a row is known by outside (the fleet slot in the high bits)."""
        return (self.slot << SLOT_SHIFT) | int(row_id) if self.slot else int(row_id)

    def row_id(self, public_id: int) -> int | None:
        """The local row id of a public id; None for another robot's entry."""
        public_id = int(public_id)
        if not self.slot:
            return public_id
        return public_id & ROW_MASK if public_id >> SLOT_SHIFT == self.slot else None

    def _rows(self, ids: Sequence[int]) -> list[int]:
        return [r for r in (self.row_id(i) for i in ids) if r is not None]

    def _robot_column(self, robot_id: str) -> str:
        """'' for this robot's own rows (what single-robot stores always held)."""
        return '' if not robot_id or robot_id == self.robot_id else robot_id

    def _where(self, filt: EntryFilter | None, kind: int | None = None) -> tuple[str, list[Any]]:
        """SQL condition and arguments of a filter ('' when it lets everything through)."""
        if filt is None or filt.is_open:
            return '', []
        cond, args = [], []
        only_own = kind is not None and not self._foreign[kind]
        if filt.robots is not None and not (only_own and (self.robot_id in filt.robots or '' in filt.robots)):
            robots = sorted({self._robot_column(r) for r in filt.robots})
            cond.append(f'robot_id IN ({",".join("?" * len(robots))})' if robots else '0')
            args += robots
        if filt.end is not None:
            cond.append('start <= ?')
            args.append(filt.end)
        if filt.start is not None:
            cond.append('end >= ?')
            args.append(filt.start)
        return ' AND '.join(cond), args

    # -- writing -------------------------------------------------------------------------------------------------
    def add(self, kind: int, entries: Sequence[Entry], vectors: np.ndarray | None = None) -> list[int]:
        """Store entries with their vectors (embedded here when not given); return their public ids."""
        if not entries:
            return []
        if vectors is None:
            vectors = self.embedder.embed([entry_text(e) for e in entries])
        with self.store.transaction():
            ids = self.add_rows(kind, entries, vectors)
        self.index_rows(kind, ids, list(vectors))
        return ids

    def add_rows(self, kind: int, entries: Sequence[Entry], vectors: np.ndarray) -> list[int]:
        """Store entries inside the caller's transaction; their vectors join the index with :meth:`index_rows`."""
        return [self._insert(kind, e, v) for e, v in zip(entries, vectors)]

    def index_rows(self, kind: int, ids: Sequence[int], vectors: Sequence[np.ndarray]) -> None:
        """Add the vectors of rows committed by :meth:`add_rows`."""
        if ids:
            self.indexes[kind].add(np.array([self.row_id(i) for i in ids]), np.vstack(list(vectors)))
            self._changed(len(ids))

    def _insert(self, kind: int, e: Entry, v: np.ndarray) -> int:
        """One row (keeping ``e.id`` when set: a backup restored with its ids); return its public id."""
        table = KIND_NAMES[kind]
        vals: dict[str, Any] = {'start': e.start, 'end': e.end, 'source_segment': e.source_segment,
                                'vector': vec_to_blob(v), 'robot_id': self._robot_column(e.robot_id)}
        self._foreign[kind] = self._foreign[kind] or bool(vals['robot_id'])
        if e.id and self.row_id(e.id):
            vals['id'] = self.row_id(e.id)
        if kind == KIND_SEMANTIC:
            vals.update(content=e.content, norm=normalize(e.content), pinned=int(e.pinned), mentions=e.mentions)
        else:
            vals.update(visual=e.visual, audio=e.audio, response=e.response, raw_refs=json.dumps(list(e.raw_refs)))
        row = self.store.insert_row(table, vals)
        self.db.executemany(f'INSERT OR IGNORE INTO {table}_faces(entry_id, face_id) VALUES(?, ?)',
                            [(row, f) for f in dict.fromkeys(e.face_ids) if f])
        e.id = self.public_id(row)
        return e.id

    def extend_semantic(self, entry_id: int, start: float, end: float, face_ids: Sequence[str] = ()) -> None:
        """A fact met again: widen its span to include [start, end], count the mention, add faces."""
        entry_id = self.row_id(entry_id)
        with self.store.transaction():
            self.db.execute('UPDATE semantic SET start=min(start, ?), end=max(end, ?), mentions=mentions+1 '
                            'WHERE id=?', (start, end, entry_id))
            self.db.executemany('INSERT OR IGNORE INTO semantic_faces(entry_id, face_id) VALUES(?, ?)',
                                [(entry_id, f) for f in dict.fromkeys(face_ids) if f])

    def delete_rows(self, kind: int, ids: Sequence[int]) -> int:
        """Delete rows inside the caller's transaction (face links cascade); their vectors go with :meth:`unindex`."""
        ids = self._rows(ids)
        if not ids:
            return 0
        n = 0
        for chunk in chunks(ids, 500):
            n += self.db.execute(f'DELETE FROM {KIND_NAMES[kind]} WHERE id IN ({",".join("?" * len(chunk))})',
                                 chunk).rowcount
        self.store.bump(f'{KIND_NAMES[kind]}.deletions')
        return n

    def unindex(self, removed: dict[int, list[int]]) -> int:
        """Remove the vectors of deleted rows; return how many were in the indexes."""
        return sum(self.indexes[kind].remove(self._rows(ids)) for kind, ids in removed.items() if ids)

    def delete(self, kind: int, ids: Sequence[int]) -> int:
        """Delete entries and their vectors; return how many rows existed."""
        with self.store.transaction():
            n = self.delete_rows(kind, ids)
        self.unindex({kind: list(ids)})
        return n

    # -- reading -------------------------------------------------------------------------------------------------
    def search(self, kind: int, query: np.ndarray, k: int,
               filt: EntryFilter | None = None) -> list[tuple[Entry, float]]:
        """The ``k`` entries of ``kind`` that pass ``filt`` closest to ``query`` (cosine), best first."""
        if k <= 0 or not self.indexes[kind].ntotal:
            return []
        allowed = None
        where, args = self._where(filt, kind)
        if where:  # resolved in SQLite, then searched exactly among those ids
            allowed = np.fromiter((r[0] for r in self.db.execute(f'SELECT id FROM {KIND_NAMES[kind]} WHERE {where}',
                                                                 args)), np.int64)
        scores, ids = self.indexes[kind].search(np.asarray(query, np.float32)[None], k, allowed)
        rows = [int(i) for i in ids[0] if i >= 0]
        found = self.get(kind, [self.public_id(i) for i in rows])
        return [(found[self.public_id(i)], float(s)) for s, i in zip(scores[0], ids[0])
                if i >= 0 and self.public_id(i) in found]

    def in_order(self, kind: int, k: int, filt: EntryFilter | None = None) -> list[tuple[Entry, float]]:
        """The entries of ``kind`` that pass ``filt`` in time order, at most ``k`` spread evenly over them (score 0).

        Read from the local store: a fleet's episodic memory is each robot's own, so a robot's window is there.
        """
        where, args = self._where(filt, kind)
        ids = [r[0] for r in self.db.execute(f'SELECT id FROM {KIND_NAMES[kind]} {"WHERE " + where if where else ""} '
                                             'ORDER BY start, id', args)]
        if k <= 0 or not ids:
            return []
        if len(ids) > k:
            ids = [ids[round(i * (len(ids) - 1) / max(1, k - 1))] for i in range(k)] if k > 1 else [ids[0]]
        found = self.get(kind, [self.public_id(i) for i in ids])
        return [(found[self.public_id(i)], 0.0) for i in ids if self.public_id(i) in found]

    def similar_fact(self, v: np.ndarray) -> tuple[int, float]:
        """(id, cosine) of the stored fact closest to ``v``; (0, -1) when there is none (no row is read)."""
        index = self.indexes[KIND_SEMANTIC]
        if not index.ntotal:
            return 0, -1.0
        scores, ids = index.search(np.asarray(v, np.float32)[None], 1)
        return (self.public_id(ids[0, 0]), float(scores[0, 0])) if ids[0, 0] >= 0 else (0, -1.0)

    def ntotal(self, kind: int) -> int:
        """Vectors in one kind's index."""
        return self.indexes[kind].ntotal

    def index_kind(self) -> str:
        """``flat`` or ``hnsw`` (of the semantic index, the larger one)."""
        return self.indexes[KIND_SEMANTIC].kind

    def _faces_of(self, table: str, ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for chunk in chunks(ids, 500):
            q = f'SELECT entry_id, face_id FROM {table} WHERE entry_id IN ({",".join("?" * len(chunk))})'
            for eid, face in self.db.execute(q, chunk):
                out.setdefault(eid, []).append(face)
        return out

    def _semantic(self, row: sqlite3.Row, faces: list[str] | None = None) -> SemanticEntry:
        if faces is None:
            faces = self._faces_of('semantic_faces', [row['id']]).get(row['id'], [])
        return SemanticEntry(content=row['content'], start=row['start'], end=row['end'], pinned=bool(row['pinned']),
                             source_segment=row['source_segment'], face_ids=sorted(faces), mentions=row['mentions'],
                             id=self.public_id(row['id']), robot_id=row['robot_id'] or self.robot_id)

    def _episodic(self, row: sqlite3.Row, faces: list[str] | None = None) -> EpisodicEntry:
        if faces is None:
            faces = self._faces_of('episodic_faces', [row['id']]).get(row['id'], [])
        return EpisodicEntry(start=row['start'], end=row['end'], visual=row['visual'], audio=row['audio'],
                             response=row['response'], raw_refs=json.loads(row['raw_refs']),
                             source_segment=row['source_segment'], face_ids=sorted(faces), id=self.public_id(row['id']),
                             robot_id=row['robot_id'] or self.robot_id)

    def get(self, kind: int, ids: Sequence[int]) -> dict[int, Entry]:
        """Entries of ``kind`` by public id (missing ids are absent from the result)."""
        table = KIND_NAMES[kind]
        ids = self._rows(ids)
        faces = self._faces_of(f'{table}_faces', ids)
        conv = self._semantic if kind == KIND_SEMANTIC else self._episodic
        out: dict[int, Entry] = {}
        cols = '*' if kind == KIND_EPISODIC else 'id, start, end, content, pinned, source_segment, mentions, robot_id'
        for chunk in chunks(ids, 500):
            q = f'SELECT {cols} FROM {table} WHERE id IN ({",".join("?" * len(chunk))})'
            for row in self.db.execute(q, chunk):
                e = conv(row, faces.get(row['id'], []))
                out[e.id] = e
        return out

    def all_entries(self, kind: int) -> Iterator[Entry]:
        """Every entry of ``kind`` in id order."""
        conv = self._semantic if kind == KIND_SEMANTIC else self._episodic
        for row in self.db.execute(f'SELECT * FROM {KIND_NAMES[kind]} ORDER BY id').fetchall():
            yield conv(row)

    def find_semantic_by_norm(self, norm: str) -> SemanticEntry | None:
        """The oldest fact whose normalized content equals ``norm``."""
        row = self.db.execute('SELECT * FROM semantic WHERE norm=? ORDER BY id LIMIT 1', (norm,)).fetchone()
        return self._semantic(row) if row else None

    def same_event(self, e: EpisodicEntry) -> bool:
        """Whether an event with the same span, segment and audio is stored (an import met it before)."""
        return self.db.execute('SELECT 1 FROM episodic WHERE start=? AND end=? AND source_segment=? AND audio=?',
                               (e.start, e.end, e.source_segment, e.audio)).fetchone() is not None

    def recent_episodic_with_face(self, face_id: str, limit: int) -> list[EpisodicEntry]:
        """The newest ``limit`` events involving ``face_id``, oldest first."""
        rows = self.db.execute('SELECT e.* FROM episodic e JOIN episodic_faces f ON f.entry_id=e.id '
                               'WHERE f.face_id=? ORDER BY e.id DESC LIMIT ?', (face_id, limit)).fetchall()
        return [self._episodic(r) for r in reversed(rows)]

    def semantic_about(self, face_id: str, name: str, limit: int) -> list[SemanticEntry]:
        """The newest ``limit`` facts that name the person (their face id, or their name as a word), oldest first.

        Unlike the faces an entry lists (everyone in view when it was said), a fact's words say whom it is about.
        """
        needles = [n for n in (face_id, name) if n]
        if not needles or limit <= 0:
            return []
        cond = ' OR '.join('instr(lower(content), ?) > 0' for _ in needles)
        out = []
        for row in self.db.execute(f'SELECT * FROM semantic WHERE {cond} ORDER BY id DESC',
                                   [n.lower() for n in needles]):
            if names_person(row['content'], face_id, name):
                out.append(self._semantic(row))
                if len(out) == limit:
                    break
        return out[::-1]

    def ids_mentioning(self, kind: int, face_id: str, words: Sequence[str] = ()) -> list[int]:
        """Ids of entries that list ``face_id`` or whose text contains it or any of ``words`` (e.g. the name)."""
        table = KIND_NAMES[kind]
        ids = {r[0] for r in self.db.execute(f'SELECT entry_id FROM {table}_faces WHERE face_id=?', (face_id,))}
        cols = ['content'] if kind == KIND_SEMANTIC else ['visual', 'audio', 'response', 'raw_refs']
        for needle in [face_id, *[w for w in words if w]]:
            cond = ' OR '.join(f'instr(lower({c}), ?) > 0' for c in cols)
            ids |= {r[0] for r in self.db.execute(f'SELECT id FROM {table} WHERE {cond}', [needle.lower()] * len(cols))}
        return sorted(self.public_id(i) for i in ids)

    def ids_in_range(self, kind: int, start: float, end: float) -> list[int]:
        """Ids of entries whose span overlaps [start, end]."""
        return [self.public_id(r[0]) for r in self.db.execute(f'SELECT id FROM {KIND_NAMES[kind]} WHERE start <= ? '
                                                              'AND end >= ? ORDER BY id', (end, start))]

    def count(self, kind: int, filt: EntryFilter | None = None) -> int:
        """Number of entries of ``kind`` that pass ``filt``."""
        return self.local_count(kind, filt)

    def local_count(self, kind: int, filt: EntryFilter | None = None) -> int:
        """Number of entries of ``kind`` (that pass ``filt``) in this robot's store."""
        where, args = self._where(filt, kind)
        return int(self.db.execute(f'SELECT count(*) FROM {KIND_NAMES[kind]}' + (f' WHERE {where}' if where else ''),
                                   args).fetchone()[0])

    def vectors(self, kind: int, after_id: int = 0, batch: int = 20000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, vectors) of stored entries with id > ``after_id``, in batches (for index rebuilds)."""
        table = KIND_NAMES[kind]
        last = after_id
        while True:
            rows = self.db.execute(f'SELECT id, vector FROM {table} WHERE id > ? AND vector IS NOT NULL '
                                   f'ORDER BY id LIMIT ?', (last, batch)).fetchall()
            if not rows:
                return
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vecs = np.frombuffer(b''.join(r[1] for r in rows), dtype='<f4').reshape(len(rows), -1)
            last = int(ids[-1])
            yield ids, vecs

    def max_id(self, kind: int) -> int:
        """Largest entry id of ``kind`` ever used (AUTOINCREMENT never reuses one)."""
        row = self.db.execute('SELECT seq FROM sqlite_sequence WHERE name=?', (KIND_NAMES[kind],)).fetchone()
        return int(row[0]) if row else 0


__all__ = ['EntryIndex', 'Entry', 'entry_text', 'KINDS_BOTH', 'SLOT_SHIFT', 'ROW_MASK']
