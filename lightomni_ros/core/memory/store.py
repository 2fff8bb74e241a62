# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The SQLite store of long-term memory: profiles, semantic and episodic entries, S_g nodes, reminders, pending queue.

One file (``memory.db``) in WAL mode with foreign keys on, ``synchronous=FULL`` (a committed transaction survives a
power cut, not only a crash) and ``secure_delete`` (forgotten rows are overwritten on disk, not left in free pages).
The schema version is SQLite's ``user_version``; :data:`MIGRATIONS` upgrades an older file in place and a newer one
is refused. Entry vectors are stored beside their rows (float32 BLOBs), so the FAISS indexes can always be rebuilt
from SQLite alone. Nothing here is pickled: JSON text for lists and maps, raw bytes for images and vectors.

The semantic and episodic tables are read and written by :class:`~lightomni_ros.core.memory.entries.EntryIndex`,
which keeps their vector indexes in step; this module holds the file, its schema, S_g nodes, profiles, reminders and
the pending queue. Not thread-safe by itself: the consolidation runtime serialises access.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import logging
import os
import pathlib
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from ..text import fmt_time
from ..topic import segment_key
from . import crypto

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

# Version 3: voice identities (perception's <voice_N>), the face each belongs to and the name it gave.
_V3 = """
CREATE TABLE voices(
    voice_id TEXT PRIMARY KEY, face_id TEXT NOT NULL DEFAULT '', name TEXT NOT NULL DEFAULT '', embedding BLOB,
    embedding_backend TEXT NOT NULL DEFAULT '', observations REAL NOT NULL DEFAULT 0,
    first_heard REAL NOT NULL DEFAULT 0, last_heard REAL NOT NULL DEFAULT 0);
CREATE INDEX voices_face ON voices(face_id);
"""

# Version 4: the keys of every Topic ever queued (a Topic re-sent after a lost acknowledgement is stored once), and
# tombstones of forgets (a Topic recorded before a forget and arriving after it is scrubbed or dropped on arrival);
# a tombstone holds salted hashes of the forgotten face id and name, never the words themselves. A fired reminder
# is delivered again until the reflex node says it was spoken (``spoken``).
_V4 = """
CREATE TABLE received(segment_id INTEGER NOT NULL, start REAL NOT NULL, at REAL NOT NULL,
    PRIMARY KEY(segment_id, start)) WITHOUT ROWID;
INSERT OR IGNORE INTO received(segment_id, start, at) SELECT source_segment, round(start, 3), 0 FROM episodic
    WHERE source_segment > 0;
INSERT OR IGNORE INTO received(segment_id, start, at) SELECT segment_id, round(json_extract(payload, '$.start'), 3),
    received FROM pending;
CREATE TABLE tombstones(
    id INTEGER PRIMARY KEY AUTOINCREMENT, hashes TEXT NOT NULL DEFAULT '[]',
    start REAL NOT NULL DEFAULT 0, end REAL NOT NULL DEFAULT 0, at REAL NOT NULL);
ALTER TABLE reminders ADD COLUMN spoken REAL;
"""

# Version 5: every entry and profile carries the id of the robot that wrote it ('' = this store's own robot), so a
# fleet's shared memory (Milvus backend) and a migration keep who learned what.
_V5 = """
ALTER TABLE semantic ADD COLUMN robot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE episodic ADD COLUMN robot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE profiles ADD COLUMN robot_id TEXT NOT NULL DEFAULT '';
"""

#: MIGRATIONS[i] upgrades a file of schema version i to version i + 1.
MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5)
SCHEMA_VERSION = len(MIGRATIONS)


_TABLES = ('profiles', 'semantic', 'semantic_faces', 'episodic', 'episodic_faces', 'sg_nodes', 'reminders', 'pending',
           'meta', 'voices', 'received', 'tombstones')


class StoreError(RuntimeError):
    """The memory file cannot be opened (newer schema, not a database, ...)."""


_WS = re.compile(r'\s+')
_PUNCT = re.compile(r'[^\w<>\s]')


def normalize(text: str) -> str:
    """Normalized form used by the content filter's exact match: lower case, no punctuation, single spaces."""
    return _WS.sub(' ', _PUNCT.sub(' ', text.lower())).strip()


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
    robot_id: str = ''   # the robot that learned it ('' = this store's own robot)

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
    robot_id: str = ''   # the robot that lived it ('' = this store's own robot)

    def script(self, answered: bool = True) -> str:
        """One-line script of the event (also the level-0 text of S_g and the text that is embedded).

        ``answered``: with the robot's reply (not for what a person is like: "Tariq works as a photographer."
        answered to Ana's question is nothing about Ana).
        """
        parts = []
        if self.visual:
            parts.append(f'saw {self.visual.strip()}')
        if self.audio:
            parts.append(f'heard "{self.audio.strip()}"')
        if self.response and answered:
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
    """The SQLite memory file (SQLCipher-encrypted when a ``key`` is given)."""

    def __init__(self, path: str | os.PathLike, key: str | None = None) -> None:
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.encrypted = key is not None
        try:
            self.db = crypto.connect(self.path, key, isolation_level=None, check_same_thread=False, timeout=30.0)
            self.db.row_factory = _row_factory(key is not None)
            mode = self.db.execute('PRAGMA journal_mode=WAL').fetchone()[0]
        except Exception as e:  # noqa: BLE001 - sqlite3 and sqlcipher3 raise their own DatabaseError classes
            if key is None and self.path.exists() and not crypto.is_plain_sqlite(self.path):
                raise StoreError(f'{self.path}: not a plain SQLite file: encrypted memory needs its key '
                                 f'(privacy.key_env / privacy.key_file) ({e})') from e
            raise StoreError(f'{self.path}: not a usable SQLite file{" with this key" if key else ""} ({e})') from e
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
        except Exception:  # noqa: BLE001 - best effort (sqlite3 or sqlcipher3 error)
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
                          'reminders', 'pending', 'voices'):
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

    def mark_reminder_spoken(self, reminder_id: int, at: float) -> bool:
        """The reflex node spoke a fired reminder; False when it was not waiting for that."""
        return self.db.execute('UPDATE reminders SET spoken=? WHERE id=? AND status=? AND spoken IS NULL',
                               (at, reminder_id, REMINDER_FIRED)).rowcount == 1

    def unspoken_reminders(self, fired_before: float) -> list[ReminderRow]:
        """Reminders fired before ``fired_before`` that nobody confirmed speaking (to deliver again)."""
        return [r for r in self.reminders(REMINDER_FIRED) if r.fired_at is not None and r.fired_at < fired_before
                and self.db.execute('SELECT spoken IS NULL FROM reminders WHERE id=?', (r.id,)).fetchone()[0]]

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

    def already_received(self, segment_id: int, start: float) -> bool:
        """Whether a Topic of this segment was queued before (consolidated since, or still queued)."""
        return self.db.execute('SELECT 1 FROM received WHERE segment_id=? AND start=?',
                               segment_key(segment_id, start)).fetchone() is not None

    def mark_received(self, segment_id: int, start: float, at: float) -> None:
        """Remember a Topic's key (inside the transaction that queues it)."""
        self.db.execute('INSERT OR IGNORE INTO received(segment_id, start, at) VALUES(?,?,?)',
                        (*segment_key(segment_id, start), at))

    # -- tombstones --------------------------------------------------------------------------------------------------
    def word_hash(self, word: str) -> str:
        """Salted hash of a word (a face id, a name) as tombstones keep it."""
        salt = self.get_meta('tombstone.salt')
        if not salt:
            salt = os.urandom(16).hex()
            with self.transaction():
                self.set_meta('tombstone.salt', salt)
        return hashlib.sha256((salt + word.strip().lower()).encode()).hexdigest()[:32]

    def add_tombstone(self, at: float, words: Sequence[str] = (), start: float = 0.0, end: float = 0.0,
                      keep_s: float = 30 * 86400.0) -> None:
        """Record a forget (a person's face id and name, or a time range) for Topics recorded before it arriving later.

        Tombstones older than ``keep_s`` are removed: a Topic waits in the reflex node's queue for hours, not months.
        """
        self.db.execute('INSERT INTO tombstones(hashes, start, end, at) VALUES(?,?,?,?)',
                        (json.dumps([self.word_hash(w) for w in words if w.strip()]), start, end, at))
        self.db.execute('DELETE FROM tombstones WHERE at < ?', (at - keep_s,))

    def tombstones(self, after: float) -> list[sqlite3.Row]:
        """Forgets made after sensor time ``after`` (those that concern a Topic recorded then)."""
        return self.db.execute('SELECT * FROM tombstones WHERE at > ? ORDER BY id', (after,)).fetchall()

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


def _row_factory(encrypted: bool) -> Any:
    if not encrypted:
        return sqlite3.Row
    from sqlcipher3 import dbapi2 as sqlcipher
    return sqlcipher.Row


def chunks(seq: Sequence[Any], n: int) -> Iterator[list[Any]]:
    """Successive lists of at most ``n`` items (SQLite bounds the parameters of one statement)."""
    for i in range(0, len(seq), n):
        yield list(seq[i:i + n])


__all__ = ['Store', 'StoreError', 'SemanticEntry', 'EpisodicEntry', 'ReminderRow', 'MIGRATIONS', 'SCHEMA_VERSION',
           'KIND_SEMANTIC', 'KIND_EPISODIC', 'KINDS', 'KIND_NAMES', 'REMINDER_PENDING', 'REMINDER_FIRED',
           'REMINDER_CANCELLED', 'normalize', 'fmt_span', 'fmt_time', 'vec_to_blob', 'blob_to_vec', 'chunks']
