# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The durable sleep queue: interactions waiting for the memory pass, then their Topics waiting for consolidation.

One SQLite file in the reflex node's own state folder (never the consolidation node's memory.db, which only that node
writes). Each answered segment is one row, keyed by (segment id, start), that moves through three states:

    ANSWERED  the segment and the reply are stored; the memory pass has not run yet
    WRITTEN   the memory pass wrote its Topic (stored with the row); it is sent to consolidation until acknowledged
    DONE      consolidation acknowledged it (stored, already had it, or refused it): only the key is kept

so a crash or restart of either node at any moment loses nothing, and a segment delivered twice (a re-sent Segment,
a Topic whose acknowledgement was lost) is recognised by its key. Memory passes and sends follow the queue's order; a
Topic is sent only when every older one is acknowledged (stop-and-wait), so consolidation stores them in order.
Nothing is ever dropped for lack of room: past its bound the queue reports back-pressure (the owner then lets memory
passes run before answers) and the backlog. With ``path`` empty the file is in memory (not durable).
"""

from __future__ import annotations

import json
import pathlib
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, fields

import numpy as np

from ..segment import SpeakerTurn
from ..topic import TopicData, segment_key
from .types import SegmentInput

ANSWERED, WRITTEN, DONE = 0, 1, 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items(
    id INTEGER PRIMARY KEY AUTOINCREMENT, segment_id INTEGER NOT NULL, start REAL NOT NULL,
    state INTEGER NOT NULL DEFAULT 0, segment TEXT, response TEXT NOT NULL DEFAULT '', topic TEXT,
    preemptions INTEGER NOT NULL DEFAULT 0, sends INTEGER NOT NULL DEFAULT 0, sent REAL NOT NULL DEFAULT 0,
    received REAL NOT NULL, UNIQUE(segment_id, start));
CREATE INDEX IF NOT EXISTS items_state ON items(state, id);
CREATE TABLE IF NOT EXISTS spoken(reminder_id INTEGER PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS frames(
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE, idx INTEGER NOT NULL, jpeg BLOB NOT NULL,
    PRIMARY KEY(item_id, idx)) WITHOUT ROWID;
"""
_SEGMENT_FIELDS = [f.name for f in fields(SegmentInput) if f.name != 'frames']


@dataclass
class QueuedInteraction:
    """An interaction waiting for its memory pass."""

    item_id: int
    segment: SegmentInput
    response: str
    preemptions: int


@dataclass
class OutgoingTopic:
    """A Topic waiting for consolidation's acknowledgement."""

    item_id: int
    topic: TopicData
    sends: int


class SleepQueue:
    """Durable, ordered, idempotent queue of (segment, response) -> Topic -> acknowledged."""

    def __init__(self, path: str | pathlib.Path = '', high_water: int = 256, keep_done: int = 20000) -> None:
        self.path = pathlib.Path(path).expanduser() if path else None
        self.high_water = high_water
        self.keep_done = keep_done
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path) if self.path else ':memory:', isolation_level=None,
                                  check_same_thread=False, timeout=30.0)
        if self.path is not None:
            self.db.execute('PRAGMA journal_mode=WAL')
        for pragma in ('synchronous=FULL', 'foreign_keys=ON', 'secure_delete=ON'):
            self.db.execute(f'PRAGMA {pragma}')
        self.db.executescript(_SCHEMA)
        self._lock = threading.RLock()

    # -- arrivals ------------------------------------------------------------------------------------------------
    def seen(self, segment_id: int, start: float) -> bool:
        """Whether this segment was queued before (in any state)."""
        with self._lock:
            return self.db.execute('SELECT 1 FROM items WHERE segment_id=? AND start=?',
                                   segment_key(segment_id, start)).fetchone() is not None

    def put(self, seg: SegmentInput, response: str) -> bool:
        """Store an answered interaction durably; False when its segment was queued before (nothing changes)."""
        doc = {k: v for k, v in asdict(seg).items() if k in _SEGMENT_FIELDS}
        with self._lock, self.db:
            cur = self.db.execute('INSERT OR IGNORE INTO items(segment_id, start, segment, response, received) '
                                  'VALUES(?,?,?,?,?)', (*segment_key(seg.segment_id, seg.start), json.dumps(doc),
                                                        response, time.time()))
            if not cur.rowcount:
                return False
            item = int(cur.lastrowid)
            self.db.executemany('INSERT INTO frames(item_id, idx, jpeg) VALUES(?,?,?)',
                                [(item, i, _jpeg(f)) for i, f in enumerate(seg.frames)])
        return True

    # -- memory passes -------------------------------------------------------------------------------------------
    def next_interaction(self) -> QueuedInteraction | None:
        """The oldest interaction waiting for its memory pass."""
        first = self.next_interactions(1)
        return first[0] if first else None

    def next_interactions(self, limit: int) -> list[QueuedInteraction]:
        """The oldest ``limit`` interactions waiting for their memory pass, oldest first."""
        with self._lock:
            rows = self.db.execute('SELECT id, segment, response, preemptions FROM items WHERE state=? ORDER BY id '
                                   'LIMIT ?', (ANSWERED, max(1, int(limit)))).fetchall()
            frames = {r[0]: [_unjpeg(f[0]) for f in self.db.execute(
                'SELECT jpeg FROM frames WHERE item_id=? ORDER BY idx', (r[0],))] for r in rows}
        out = []
        for item_id, segment, response, preemptions in rows:
            doc = json.loads(segment)
            doc['turns'] = [SpeakerTurn(**t) for t in doc.get('turns', [])]
            seg = SegmentInput(**doc, frames=[f for f in frames[item_id] if f is not None])
            out.append(QueuedInteraction(item_id=item_id, segment=seg, response=response, preemptions=preemptions))
        return out

    def preempted(self, item_id: int) -> None:
        """A user pass interrupted this item's memory pass (it stays first in line)."""
        with self._lock, self.db:
            self.db.execute('UPDATE items SET preemptions=preemptions+1 WHERE id=?', (item_id,))

    def written(self, item_id: int, topic: TopicData) -> None:
        """The memory pass wrote the Topic: keep it for sending; the segment (and its frames) is no longer needed."""
        with self._lock, self.db:
            self.db.execute('UPDATE items SET state=?, topic=?, segment=NULL WHERE id=?',
                            (WRITTEN, json.dumps(topic.to_json()), item_id))
            self.db.execute('DELETE FROM frames WHERE item_id=?', (item_id,))

    def discard_answered(self) -> int:
        """Mark every interaction still waiting for its pass done without one (a driver that keeps no memory)."""
        with self._lock, self.db:
            ids = [r[0] for r in self.db.execute('SELECT id FROM items WHERE state=?', (ANSWERED,))]
            self.db.executemany('DELETE FROM frames WHERE item_id=?', [(i,) for i in ids])
            self.db.execute('UPDATE items SET state=?, segment=NULL WHERE state=?', (DONE, ANSWERED))
        return len(ids)

    # -- sending -------------------------------------------------------------------------------------------------
    def next_topic(self, now: float, resend_s: float) -> OutgoingTopic | None:
        """The oldest unacknowledged Topic when it is due to be sent (never sent, or sent ``resend_s`` ago)."""
        with self._lock:
            row = self.db.execute('SELECT id, topic, sends, sent FROM items WHERE state=? ORDER BY id LIMIT 1',
                                  (WRITTEN,)).fetchone()
        if row is None or (row[2] and now - row[3] < resend_s):
            return None
        return OutgoingTopic(item_id=row[0], topic=TopicData.from_json(json.loads(row[1])), sends=row[2])

    def sent(self, item_id: int, now: float) -> None:
        """Note a send (the re-send clock starts)."""
        with self._lock, self.db:
            self.db.execute('UPDATE items SET sends=sends+1, sent=? WHERE id=?', (now, item_id))

    def acknowledged(self, segment_id: int, start: float) -> bool:
        """Consolidation answered for this segment's Topic: done. False when no Topic of it was waiting."""
        try:
            segment_key(segment_id, start)
        except ValueError:
            return False        # no Topic of ours has such a key
        with self._lock, self.db:
            n = self.db.execute('UPDATE items SET state=?, topic=NULL WHERE segment_id=? AND start=? AND state=?',
                                (DONE, *segment_key(segment_id, start), WRITTEN)).rowcount
            if n:
                self._prune()
        return bool(n)

    def _prune(self) -> None:
        done = self.db.execute('SELECT count(*) FROM items WHERE state=?', (DONE,)).fetchone()[0]
        if done > self.keep_done * 1.1:      # keys of old segments are only kept to recognise re-deliveries
            self.db.execute('DELETE FROM items WHERE id IN (SELECT id FROM items WHERE state=? ORDER BY id LIMIT ?)',
                            (DONE, done - self.keep_done))

    # -- reminders -----------------------------------------------------------------------------------------------
    def reminder_spoken_before(self, reminder_id: int) -> bool:
        """Whether this reminder was spoken already (a re-delivered copy is confirmed, not said again)."""
        with self._lock:
            return self.db.execute('SELECT 1 FROM spoken WHERE reminder_id=?', (int(reminder_id),)).fetchone() \
                is not None

    def reminder_spoken(self, reminder_id: int) -> None:
        """Record that a reminder was spoken (after it was: a crash in between says it twice rather than never)."""
        with self._lock, self.db:
            self.db.execute('INSERT OR IGNORE INTO spoken(reminder_id, at) VALUES(?,?)',
                            (int(reminder_id), time.time()))

    # -- state ---------------------------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Rows per state: ``answered`` (waiting for the pass), ``written`` (waiting for the ack), ``done``."""
        with self._lock:
            rows = dict(self.db.execute('SELECT state, count(*) FROM items GROUP BY state').fetchall())
        return {'answered': rows.get(ANSWERED, 0), 'written': rows.get(WRITTEN, 0), 'done': rows.get(DONE, 0)}

    def backlog(self) -> int:
        """Interactions not yet acknowledged by consolidation."""
        c = self.counts()
        return c['answered'] + c['written']

    def over_high_water(self) -> bool:
        """Whether the backlog reached the bound (back-pressure: memory passes stop yielding to answers)."""
        return self.backlog() >= self.high_water

    def __len__(self) -> int:
        return self.backlog()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self.db.close()


def _jpeg(rgb: np.ndarray) -> bytes:
    import cv2

    ok, buf = cv2.imencode('.jpg', np.ascontiguousarray(rgb[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, 90])
    if not ok:
        raise ValueError('a keyframe could not be encoded for the sleep queue')
    return buf.tobytes()


def _unjpeg(data: bytes) -> np.ndarray | None:
    import cv2

    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    return None if img is None else img[:, :, ::-1]


__all__ = ['SleepQueue', 'QueuedInteraction', 'OutgoingTopic', 'ANSWERED', 'WRITTEN', 'DONE']
