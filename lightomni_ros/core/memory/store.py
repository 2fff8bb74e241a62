# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The SQLite store of long-term memory: profiles, semantic and episodic entries, S_g nodes, reminders, pending queue.

One file (``memory.db``) in WAL mode with foreign keys on, ``synchronous=FULL`` (a committed transaction survives a
power cut, not only a crash) and ``secure_delete`` (forgotten rows are overwritten on disk, not left in free pages).
The schema version is SQLite's ``user_version``; :data:`MIGRATIONS` upgrades an older file in place and a newer one
is refused. Entry vectors are stored beside their rows (float32 BLOBs), so the FAISS indexes can always be rebuilt
from SQLite alone. Nothing here is pickled: JSON text for lists and maps, raw bytes for images and vectors.

The store is not thread-safe by itself; its owner (the consolidator) serialises access.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import pathlib
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

log = logging.getLogger('lightomni.memory')

KIND_SEMANTIC, KIND_EPISODIC = 0, 1
KINDS = {'semantic': KIND_SEMANTIC, 'episodic': KIND_EPISODIC}
KIND_NAMES = {v: k for k, v in KINDS.items()}

REMINDER_PENDING, REMINDER_FIRED, REMINDER_CANCELLED = 0, 1, 2

_V1 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE profiles(
    face_id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', attributes TEXT NOT NULL DEFAULT '{}',
    avatar BLOB, avatar_format TEXT NOT NULL DEFAULT '', embedding BLOB, embedding_backend TEXT NOT NULL DEFAULT '',
    observations INTEGER NOT NULL DEFAULT 0, first_seen REAL NOT NULL DEFAULT 0, last_seen REAL NOT NULL DEFAULT 0,
    segments_since_update INTEGER NOT NULL DEFAULT 0);
CREATE TABLE semantic(
    id INTEGER PRIMARY KEY AUTOINCREMENT, start REAL NOT NULL, end REAL NOT NULL, content TEXT NOT NULL,
    norm TEXT NOT NULL, pinned INTEGER NOT NULL DEFAULT 0, source_segment INTEGER NOT NULL DEFAULT 0, vector BLOB);
CREATE INDEX semantic_norm ON semantic(norm);
CREATE INDEX semantic_span ON semantic(start, end);
CREATE TABLE semantic_faces(
    entry_id INTEGER NOT NULL REFERENCES semantic(id) ON DELETE CASCADE, face_id TEXT NOT NULL,
    PRIMARY KEY(entry_id, face_id)) WITHOUT ROWID;
CREATE INDEX semantic_faces_face ON semantic_faces(face_id);
CREATE TABLE episodic(
    id INTEGER PRIMARY KEY AUTOINCREMENT, start REAL NOT NULL, end REAL NOT NULL, visual TEXT NOT NULL DEFAULT '',
    audio TEXT NOT NULL DEFAULT '', response TEXT NOT NULL DEFAULT '', raw_refs TEXT NOT NULL DEFAULT '[]',
    source_segment INTEGER NOT NULL DEFAULT 0, vector BLOB);
CREATE INDEX episodic_span ON episodic(start, end);
CREATE TABLE episodic_faces(
    entry_id INTEGER NOT NULL REFERENCES episodic(id) ON DELETE CASCADE, face_id TEXT NOT NULL,
    PRIMARY KEY(entry_id, face_id)) WITHOUT ROWID;
CREATE INDEX episodic_faces_face ON episodic_faces(face_id);
CREATE TABLE sg_nodes(
    id INTEGER PRIMARY KEY AUTOINCREMENT, level INTEGER NOT NULL, start REAL NOT NULL, end REAL NOT NULL,
    first_segment INTEGER NOT NULL, last_segment INTEGER NOT NULL, text TEXT NOT NULL,
    children TEXT NOT NULL DEFAULT '[]', face_ids TEXT NOT NULL DEFAULT '[]', producer TEXT NOT NULL DEFAULT '',
    live INTEGER NOT NULL DEFAULT 1,
    parent INTEGER REFERENCES sg_nodes(id) ON DELETE SET NULL,
    episodic_id INTEGER REFERENCES episodic(id) ON DELETE SET NULL);
CREATE INDEX sg_live ON sg_nodes(live, level, id);
CREATE TABLE reminders(
    id INTEGER PRIMARY KEY AUTOINCREMENT, due REAL NOT NULL, text TEXT NOT NULL, face_id TEXT NOT NULL DEFAULT '',
    status INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL, fired_at REAL, delay REAL NOT NULL DEFAULT 0,
    source_segment INTEGER NOT NULL DEFAULT 0);
CREATE INDEX reminders_due ON reminders(status, due);
CREATE TABLE pending(
    id INTEGER PRIMARY KEY AUTOINCREMENT, segment_id INTEGER NOT NULL, payload TEXT NOT NULL, received REAL NOT NULL);
"""

# Version 2: a semantic fact met again is extended rather than appended; count how often it was met.
_V2 = "ALTER TABLE semantic ADD COLUMN mentions INTEGER NOT NULL DEFAULT 1;"

#: MIGRATIONS[i] upgrades a file of schema version i to version i + 1.
MIGRATIONS: tuple[str, ...] = (_V1, _V2)
SCHEMA_VERSION = len(MIGRATIONS)


_TABLES = ('profiles', 'semantic', 'semantic_faces', 'episodic', 'episodic_faces', 'sg_nodes', 'reminders', 'pending',
           'meta')


class StoreError(RuntimeError):
    """The memory file cannot be opened (newer schema, not a database, ...)."""


_WS = re.compile(r'\s+')
_PUNCT = re.compile(r'[^\w<>\s]')


def normalize(text: str) -> str:
    """Normalized form used by the content filter's exact match: lower case, no punctuation, single spaces."""
    return _WS.sub(' ', _PUNCT.sub(' ', text.lower())).strip()


def fmt_time(t: float, tz: _dt.tzinfo | None = None) -> str:
    """Render an epoch time as ``YYYY-MM-DD HH:MM:SS`` in ``tz`` (local time when None)."""
    return _dt.datetime.fromtimestamp(t, tz).strftime('%Y-%m-%d %H:%M:%S')


def fmt_span(start: float, end: float, tz: _dt.tzinfo | None = None) -> str:
    """Render ``[start]--[end]`` as the paper writes semantic facts."""
    return f'[{fmt_time(start, tz)}]--[{fmt_time(end, tz)}]'


@dataclass
class SemanticEntry:
    """One fact of M_s."""

    content: str
    start: float
    end: float
    pinned: bool = False
    source_segment: int = 0
    face_ids: list[str] = field(default_factory=list)
    mentions: int = 1
    id: int = 0

    def render(self, tz: _dt.tzinfo | None = None) -> str:
        """``"[start]--[end]: content"``."""
        return f'{fmt_span(self.start, self.end, tz)}: {self.content}'


@dataclass
class EpisodicEntry:
    """One event of M_e: what was seen, heard and answered, with pointers to the raw inputs."""

    start: float
    end: float
    visual: str = ''
    audio: str = ''
    response: str = ''
    raw_refs: list[str] = field(default_factory=list)
    source_segment: int = 0
    face_ids: list[str] = field(default_factory=list)
    id: int = 0

    def script(self) -> str:
        """One-line script of the event (also the level-0 text of S_g and the text that is embedded)."""
        parts = []
        if self.visual:
            parts.append(f'saw {self.visual.strip()}')
        if self.audio:
            parts.append(f'heard "{self.audio.strip()}"')
        if self.response:
            parts.append(f'answered "{self.response.strip()}"')
        return '; '.join(parts) or '(nothing notable)'

    def render(self, tz: _dt.tzinfo | None = None) -> str:
        """``"[start]--[end]: script"``."""
        return f'{fmt_span(self.start, self.end, tz)}: {self.script()}'


@dataclass
class ReminderRow:
    """A stored reminder."""

    due: float
    text: str
    face_id: str = ''
    status: int = REMINDER_PENDING
    created: float = 0.0
    fired_at: float | None = None
    delay: float = 0.0
    source_segment: int = 0
    id: int = 0


def vec_to_blob(v: np.ndarray | None) -> bytes | None:
    """float32 bytes of a vector (None stays None)."""
    return None if v is None else np.asarray(v, dtype='<f4').tobytes()


def blob_to_vec(b: bytes | None) -> np.ndarray | None:
    """Inverse of :func:`vec_to_blob`."""
    return None if b is None else np.frombuffer(b, dtype='<f4').copy()


class Store:
    """The SQLite memory file."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=30.0)
            self.db.row_factory = sqlite3.Row
            mode = self.db.execute('PRAGMA journal_mode=WAL').fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError(f'{self.path}: not a usable SQLite file ({e})') from e
        if mode.lower() != 'wal':
            raise StoreError(f'{self.path}: WAL journal mode unavailable (got {mode})')
        for pragma in ('foreign_keys=ON', 'synchronous=FULL', 'secure_delete=ON'):
            self.db.execute(f'PRAGMA {pragma}')
        self._depth = 0
        self.migrate()

    # -- schema -------------------------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Schema version of the open file."""
        return int(self.db.execute('PRAGMA user_version').fetchone()[0])

    def migrate(self, target: int = SCHEMA_VERSION) -> None:
        """Apply the migrations from the file's version up to ``target`` (each in one transaction)."""
        current = self.version
        if current > SCHEMA_VERSION:
            raise StoreError(f'{self.path}: schema version {current} is newer than this software ({SCHEMA_VERSION})')
        for v in range(current, target):
            with self.transaction():
                for stmt in MIGRATIONS[v].split(';'):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute(f'PRAGMA user_version={v + 1}')
            log.info('memory store %s migrated to schema version %d', self.path, v + 1)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rollback on error); nested uses join the outer transaction."""
        if self._depth:
            self._depth += 1
            try:
                yield self.db
            finally:
                self._depth -= 1
            return
        self.db.execute('BEGIN IMMEDIATE')
        self._depth = 1
        try:
            yield self.db
        except BaseException:
            self.db.execute('ROLLBACK')
            raise
        else:
            self.db.execute('COMMIT')
        finally:
            self._depth = 0

    def close(self) -> None:
        """Checkpoint the WAL into the main file and close."""
        try:
            self.db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
        except sqlite3.Error:
            pass
        self.db.close()

    def checkpoint(self) -> None:
        """Move the WAL into the main file and truncate it (after a forget, so old pages leave the WAL too)."""
        self.db.execute('PRAGMA wal_checkpoint(TRUNCATE)')

    def insert_row(self, table: str, values: dict[str, Any]) -> int:
        """Insert one row with the given columns (import of a backup, keeping its ids); return the row id."""
        if table not in _TABLES:
            raise ValueError(f'unknown table {table!r}')
        cols = ', '.join(values)
        cur = self.db.execute(f'INSERT INTO {table}({cols}) VALUES({",".join("?" * len(values))})',
                              list(values.values()))
        return int(cur.lastrowid)

    def wipe(self) -> None:
        """Delete every row of every table (import with replace); ids restart."""
        with self.transaction():
            for table in ('semantic_faces', 'episodic_faces', 'sg_nodes', 'semantic', 'episodic', 'profiles',
                          'reminders', 'pending'):
                self.db.execute(f'DELETE FROM {table}')
            self.db.execute("DELETE FROM sqlite_sequence")

    # -- meta -----------------------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str = '') -> str:
        """Read a meta value."""
        row = self.db.execute('SELECT value FROM meta WHERE key=?', (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: Any) -> None:
        """Write a meta value."""
        self.db.execute('INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value',
                        (key, str(value)))

    def bump(self, key: str) -> int:
        """Increment an integer meta counter and return its new value."""
        value = int(self.get_meta(key, '0') or 0) + 1
        self.set_meta(key, value)
        return value

    # -- entries ---------------------------------------------------------------------------------------------------
    def add_semantic(self, e: SemanticEntry, vector: np.ndarray | None) -> int:
        """Insert a fact (with its vector); return its id."""
        with self.transaction():
            cur = self.db.execute(
                'INSERT INTO semantic(start, end, content, norm, pinned, source_segment, mentions, vector) '
                'VALUES(?,?,?,?,?,?,?,?)',
                (e.start, e.end, e.content, normalize(e.content), int(e.pinned), e.source_segment, e.mentions,
                 vec_to_blob(vector)))
            e.id = int(cur.lastrowid)
            self._set_faces('semantic_faces', e.id, e.face_ids)
        return e.id

    def add_episodic(self, e: EpisodicEntry, vector: np.ndarray | None) -> int:
        """Insert an event (with its vector); return its id."""
        with self.transaction():
            cur = self.db.execute(
                'INSERT INTO episodic(start, end, visual, audio, response, raw_refs, source_segment, vector) '
                'VALUES(?,?,?,?,?,?,?,?)',
                (e.start, e.end, e.visual, e.audio, e.response, json.dumps(list(e.raw_refs)), e.source_segment,
                 vec_to_blob(vector)))
            e.id = int(cur.lastrowid)
            self._set_faces('episodic_faces', e.id, e.face_ids)
        return e.id

    def _set_faces(self, table: str, entry_id: int, face_ids: Iterable[str]) -> None:
        self.db.executemany(f'INSERT OR IGNORE INTO {table}(entry_id, face_id) VALUES(?, ?)',
                            [(entry_id, f) for f in dict.fromkeys(face_ids) if f])

    def find_semantic_by_norm(self, norm: str) -> SemanticEntry | None:
        """The oldest fact whose normalized content equals ``norm``."""
        row = self.db.execute('SELECT * FROM semantic WHERE norm=? ORDER BY id LIMIT 1', (norm,)).fetchone()
        return self._semantic(row) if row else None

    def extend_semantic(self, entry_id: int, start: float, end: float, face_ids: Sequence[str] = ()) -> None:
        """Widen a fact's span to include [start, end], count the mention, add faces."""
        with self.transaction():
            self.db.execute('UPDATE semantic SET start=min(start, ?), end=max(end, ?), mentions=mentions+1 '
                            'WHERE id=?', (start, end, entry_id))
            self._set_faces('semantic_faces', entry_id, face_ids)

    def _faces_of(self, table: str, ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for chunk in _chunks(ids, 500):
            q = f'SELECT entry_id, face_id FROM {table} WHERE entry_id IN ({",".join("?" * len(chunk))})'
            for eid, face in self.db.execute(q, chunk):
                out.setdefault(eid, []).append(face)
        return out

    def _semantic(self, row: sqlite3.Row, faces: list[str] | None = None) -> SemanticEntry:
        if faces is None:
            faces = self._faces_of('semantic_faces', [row['id']]).get(row['id'], [])
        return SemanticEntry(content=row['content'], start=row['start'], end=row['end'], pinned=bool(row['pinned']),
                             source_segment=row['source_segment'], face_ids=sorted(faces), mentions=row['mentions'],
                             id=row['id'])

    def _episodic(self, row: sqlite3.Row, faces: list[str] | None = None) -> EpisodicEntry:
        if faces is None:
            faces = self._faces_of('episodic_faces', [row['id']]).get(row['id'], [])
        return EpisodicEntry(start=row['start'], end=row['end'], visual=row['visual'], audio=row['audio'],
                             response=row['response'], raw_refs=json.loads(row['raw_refs']),
                             source_segment=row['source_segment'], face_ids=sorted(faces), id=row['id'])

    def get_entries(self, kind: int, ids: Sequence[int]) -> dict[int, SemanticEntry | EpisodicEntry]:
        """Entries of ``kind`` by id (missing ids are absent from the result)."""
        table = KIND_NAMES[kind]
        ids = [int(i) for i in ids]
        faces = self._faces_of(f'{table}_faces', ids)
        conv = self._semantic if kind == KIND_SEMANTIC else self._episodic
        out: dict[int, Any] = {}
        cols = '*' if kind == KIND_EPISODIC else 'id, start, end, content, pinned, source_segment, mentions'
        for chunk in _chunks(ids, 500):
            q = f'SELECT {cols} FROM {table} WHERE id IN ({",".join("?" * len(chunk))})'
            for row in self.db.execute(q, chunk):
                out[row['id']] = conv(row, faces.get(row['id'], []))
        return out

    def all_entries(self, kind: int) -> Iterator[SemanticEntry | EpisodicEntry]:
        """Every entry of ``kind`` in id order."""
        table = KIND_NAMES[kind]
        conv = self._semantic if kind == KIND_SEMANTIC else self._episodic
        for row in self.db.execute(f'SELECT * FROM {table} ORDER BY id').fetchall():
            yield conv(row)

    def recent_episodic_with_face(self, face_id: str, limit: int) -> list[EpisodicEntry]:
        """The newest ``limit`` events involving ``face_id``, oldest first."""
        rows = self.db.execute('SELECT e.* FROM episodic e JOIN episodic_faces f ON f.entry_id=e.id '
                               'WHERE f.face_id=? ORDER BY e.id DESC LIMIT ?', (face_id, limit)).fetchall()
        return [self._episodic(r) for r in reversed(rows)]

    def entry_ids_mentioning(self, kind: int, face_id: str, words: Sequence[str] = ()) -> list[int]:
        """Ids of entries that list ``face_id`` or whose text contains it or any of ``words`` (e.g. the name)."""
        table = KIND_NAMES[kind]
        ids = {r[0] for r in self.db.execute(f'SELECT entry_id FROM {table}_faces WHERE face_id=?', (face_id,))}
        cols = ['content'] if kind == KIND_SEMANTIC else ['visual', 'audio', 'response', 'raw_refs']
        for needle in [face_id, *[w for w in words if w]]:
            cond = ' OR '.join(f'instr(lower({c}), ?) > 0' for c in cols)
            ids |= {r[0] for r in self.db.execute(f'SELECT id FROM {table} WHERE {cond}', [needle.lower()] * len(cols))}
        return sorted(ids)

    def entry_ids_in_range(self, kind: int, start: float, end: float) -> list[int]:
        """Ids of entries whose span overlaps [start, end]."""
        table = KIND_NAMES[kind]
        return [r[0] for r in self.db.execute(f'SELECT id FROM {table} WHERE start <= ? AND end >= ? ORDER BY id',
                                              (end, start))]

    def delete_entries(self, kind: int, ids: Sequence[int]) -> int:
        """Delete entries (their face links cascade); return how many existed."""
        table = KIND_NAMES[kind]
        n = 0
        with self.transaction():
            for chunk in _chunks([int(i) for i in ids], 500):
                n += self.db.execute(f'DELETE FROM {table} WHERE id IN ({",".join("?" * len(chunk))})',
                                     chunk).rowcount
        return n

    def count(self, kind: int) -> int:
        """Number of entries of ``kind``."""
        return int(self.db.execute(f'SELECT count(*) FROM {KIND_NAMES[kind]}').fetchone()[0])

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

    # -- S_g ---------------------------------------------------------------------------------------------------------
    def add_sg_node(self, level: int, start: float, end: float, first_segment: int, last_segment: int, text: str,
                    children: Sequence[int] = (), face_ids: Sequence[str] = (), episodic_id: int | None = None,
                    producer: str = '') -> int:
        """Insert a live S_g node; return its id."""
        with self.transaction():
            cur = self.db.execute(
                'INSERT INTO sg_nodes(level, start, end, first_segment, last_segment, text, children, face_ids, '
                'episodic_id, producer) VALUES(?,?,?,?,?,?,?,?,?,?)',
                (level, start, end, first_segment, last_segment, text, json.dumps(list(children)),
                 json.dumps(sorted(set(face_ids))), episodic_id, producer))
            return int(cur.lastrowid)

    def sg_rows(self, live_only: bool = True) -> list[sqlite3.Row]:
        """S_g nodes (live ones by default) ordered by level, then id."""
        where = 'WHERE live=1' if live_only else ''
        return self.db.execute(f'SELECT * FROM sg_nodes {where} ORDER BY level, id').fetchall()

    def retire_sg_nodes(self, ids: Sequence[int], parent: int) -> None:
        """Mark merged nodes as no longer live (kept for provenance: the parent lists them as children)."""
        self.db.executemany('UPDATE sg_nodes SET live=0, parent=? WHERE id=?', [(parent, i) for i in ids])

    def set_sg_text(self, node_id: int, text: str, face_ids: Sequence[str] | None = None) -> None:
        """Rewrite a node's text (redaction)."""
        if face_ids is None:
            self.db.execute('UPDATE sg_nodes SET text=? WHERE id=?', (text, node_id))
        else:
            self.db.execute('UPDATE sg_nodes SET text=?, face_ids=? WHERE id=?',
                            (text, json.dumps(sorted(face_ids)), node_id))

    # -- profiles ----------------------------------------------------------------------------------------------------
    def get_profile_row(self, face_id: str) -> sqlite3.Row | None:
        """One profile row."""
        return self.db.execute('SELECT * FROM profiles WHERE face_id=?', (face_id,)).fetchone()

    def profile_rows(self, face_ids: Sequence[str] = ()) -> list[sqlite3.Row]:
        """Profile rows (all when ``face_ids`` is empty), ordered by face id."""
        if not face_ids:
            return self.db.execute('SELECT * FROM profiles ORDER BY face_id').fetchall()
        q = f'SELECT * FROM profiles WHERE face_id IN ({",".join("?" * len(face_ids))}) ORDER BY face_id'
        return self.db.execute(q, list(face_ids)).fetchall()

    def upsert_profile(self, face_id: str, **values: Any) -> None:
        """Create the profile when absent, then set the given columns."""
        with self.transaction():
            self.db.execute('INSERT OR IGNORE INTO profiles(face_id) VALUES(?)', (face_id,))
            if values:
                cols = ', '.join(f'{k}=?' for k in values)
                self.db.execute(f'UPDATE profiles SET {cols} WHERE face_id=?', (*values.values(), face_id))

    def delete_profile(self, face_id: str) -> int:
        """Remove a profile (avatar and face embedding with it); return 1 when it existed."""
        return self.db.execute('DELETE FROM profiles WHERE face_id=?', (face_id,)).rowcount

    # -- reminders ---------------------------------------------------------------------------------------------------
    def add_reminder(self, r: ReminderRow) -> int:
        """Insert a reminder; return its id."""
        cur = self.db.execute('INSERT INTO reminders(due, text, face_id, status, created, source_segment) '
                              'VALUES(?,?,?,?,?,?)', (r.due, r.text, r.face_id, r.status, r.created, r.source_segment))
        r.id = int(cur.lastrowid)
        return r.id

    def reminders(self, status: int | None = None, due_before: float | None = None) -> list[ReminderRow]:
        """Reminders filtered by status and due time, ordered by due time."""
        q, args = 'SELECT * FROM reminders WHERE 1=1', []
        if status is not None:
            q += ' AND status=?'
            args.append(status)
        if due_before is not None:
            q += ' AND due<=?'
            args.append(due_before)
        rows = self.db.execute(q + ' ORDER BY due, id', args).fetchall()
        return [ReminderRow(due=r['due'], text=r['text'], face_id=r['face_id'], status=r['status'],
                            created=r['created'], fired_at=r['fired_at'], delay=r['delay'],
                            source_segment=r['source_segment'], id=r['id']) for r in rows]

    def mark_reminder_fired(self, reminder_id: int, fired_at: float, delay: float) -> bool:
        """Mark a pending reminder fired; False when it was not pending (it fires once)."""
        return self.db.execute('UPDATE reminders SET status=?, fired_at=?, delay=? WHERE id=? AND status=?',
                               (REMINDER_FIRED, fired_at, delay, reminder_id, REMINDER_PENDING)).rowcount == 1

    # -- the pending queue -------------------------------------------------------------------------------------------
    def enqueue(self, segment_id: int, payload: dict, received: float) -> int:
        """Durably queue an interaction (JSON) for consolidation; return the queue id."""
        with self.transaction():
            cur = self.db.execute('INSERT INTO pending(segment_id, payload, received) VALUES(?,?,?)',
                                  (segment_id, json.dumps(payload), received))
            return int(cur.lastrowid)

    def pending(self, limit: int = -1) -> list[tuple[int, dict]]:
        """Queued interactions, oldest first."""
        rows = self.db.execute('SELECT id, payload FROM pending ORDER BY id LIMIT ?', (limit,)).fetchall()
        return [(r[0], json.loads(r[1])) for r in rows]

    def pending_count(self) -> int:
        """Length of the queue."""
        return int(self.db.execute('SELECT count(*) FROM pending').fetchone()[0])

    def delete_pending(self, pending_id: int) -> None:
        """Remove a consolidated interaction from the queue."""
        self.db.execute('DELETE FROM pending WHERE id=?', (pending_id,))

    def disk_bytes(self) -> int:
        """Bytes of the database file and its WAL."""
        total = 0
        for suffix in ('', '-wal', '-shm'):
            p = pathlib.Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total


def _chunks(seq: Sequence[Any], n: int) -> Iterator[list[Any]]:
    for i in range(0, len(seq), n):
        yield list(seq[i:i + n])


__all__ = ['Store', 'StoreError', 'SemanticEntry', 'EpisodicEntry', 'ReminderRow', 'MIGRATIONS', 'SCHEMA_VERSION',
           'KIND_SEMANTIC', 'KIND_EPISODIC', 'KINDS', 'KIND_NAMES', 'REMINDER_PENDING', 'REMINDER_FIRED',
           'REMINDER_CANCELLED', 'normalize', 'fmt_span', 'fmt_time', 'vec_to_blob', 'blob_to_vec']
