# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Fleet memory on Milvus, local first: the robot's own store is written first, an outbox carries it to the fleet.

What the fleet shares and what each robot keeps (docs/FLEET.md):

- shared: profiles M_p (with face embeddings: a face id means the same person on every robot), semantic M_s
  (pinned items included): searches cover every robot's facts;
- each robot's own: episodic M_e, S_g, reminders (a reminder is delivered by the robot that took it) and the queue.
  Episodic entries and S_g nodes are in Milvus too, with their robot id, so other robots can search them with a
  robot filter and a replaced robot can be restored (``lightomni memory migrate --to local``).

Writes go to the local SQLite store (as with the embedded backend, in the same transaction as the acknowledgement),
and SQLite triggers of this connection add one outbox row per changed row in that transaction, so nothing
acknowledged can miss the outbox. :meth:`MilvusBackend.sync` pushes the outbox in order (upserts keyed by public ids
and deletes: replaying after a crash writes nothing twice), then pulls what other robots changed: profiles (into
the local copy that perception's gallery comes from) and forget announcements (applied here by the caller).
Searches merge this robot's exact local results with Milvus results for the other robots' rows; while Milvus is
unreachable they are local only and the outbox grows (the node reports its size).
"""

from __future__ import annotations

import json
import logging
import pathlib
import threading
import time
from typing import Any, Sequence

import numpy as np

from ..embedding import TextEmbedder
from . import profiles as prof
from .backend import Entry, EntryFilter, SyncReport
from .config import MemoryConfig
from .entries import EntryIndex
from .milvus_store import (MilvusStore, MilvusUnavailable, entry_row, filter_expr, merge_profiles,
                           profile_from_row, profile_row, redact, robot_slot, safe_uri, sg_row)
from .store import KIND_EPISODIC, KIND_NAMES, KIND_SEMANTIC, SemanticEntry, Store, chunks

log = logging.getLogger('lightomni.memory')
# pymilvus logs every failed call at ERROR; the node reports the backend's state once per period instead
logging.getLogger('pymilvus').setLevel(logging.CRITICAL)

_OUTBOX = """
CREATE TABLE IF NOT EXISTS fleet_outbox(
    seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, key TEXT NOT NULL, op TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS fleet_seen(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS fleet_mute(x INTEGER);
"""
# (table, key expression, also on delete) -> an outbox row per change, in the writer's transaction
_WATCHED = (('semantic', 'id'), ('episodic', 'id'), ('sg_nodes', 'id'), ('profiles', 'face_id'))
_LINKS = (('semantic_faces', 'semantic'), ('episodic_faces', 'episodic'))
BATCH = 256


def _triggers() -> list[str]:
    out = []
    mute = 'WHEN NOT EXISTS (SELECT 1 FROM fleet_mute)'
    for table, key in _WATCHED:
        for event, row in (('INSERT', 'NEW'), ('UPDATE', 'NEW'), ('DELETE', 'OLD')):
            out.append(f"CREATE TEMP TRIGGER IF NOT EXISTS fleet_{table}_{event.lower()} AFTER {event} ON main.{table} "
                       f"{mute} BEGIN INSERT INTO fleet_outbox(tbl, key, op) VALUES('{table}', {row}.{key}, 'put'); "
                       "END")
    for link, table in _LINKS:   # a face link added to an entry changes the entry
        out.append(f"CREATE TEMP TRIGGER IF NOT EXISTS fleet_{link}_insert AFTER INSERT ON main.{link} {mute} "
                   f"BEGIN INSERT INTO fleet_outbox(tbl, key, op) VALUES('{table}', NEW.entry_id, 'put'); END")
    return out


class MilvusBackend(EntryIndex):
    """The robot's own store (an :class:`EntryIndex`) plus the fleet's Milvus, kept in step through an outbox."""

    def __init__(self, store: Store, folder: pathlib.Path, cfg: MemoryConfig, embedder: TextEmbedder, *,
                 persist: bool = True) -> None:
        super().__init__(store, folder, cfg, embedder, persist=persist)
        self.slot = robot_slot(cfg.robot_id)
        self.lock = threading.RLock()   # replaced by the owner's memory lock (LongTermMemory.lock)
        self.remote: MilvusStore | None = None
        self._down_until = 0.0
        self._failures = 0
        self.last_error = ''
        for stmt in _OUTBOX.split(';'):
            if stmt.strip():
                self.db.execute(stmt)
        for stmt in _triggers():
            self.db.execute(stmt)
        try:
            import pymilvus  # noqa: F401 - a missing client is a configuration error, not an outage
        except ImportError as e:
            raise MilvusUnavailable('memory.backend "milvus" needs pymilvus (pip install -r requirements/fleet.txt)'
                                    f': {e}') from e
        self._connect()
        if self.remote is None:
            log.warning('Milvus at %s unreachable (%s): working from the local store; %d outbox operations wait',
                        safe_uri(cfg.milvus_uri), self.last_error, self.backlog())

    def backend_name(self) -> str:
        """``milvus``."""
        return 'milvus'

    # -- the connection ----------------------------------------------------------------------------------------------
    def _connect(self) -> MilvusStore | None:
        """The Milvus store, (re)connected when due; None while it is unreachable."""
        if self.remote is not None:
            return self.remote
        if time.monotonic() < self._down_until:
            return None
        try:
            remote = MilvusStore(self.cfg, self.embedder.dim)
            remote.register(self.cfg.robot_id, self.slot, f'{self.embedder.name}/{self.embedder.dim}', time.time())
        except MilvusUnavailable as e:
            if 'pymilvus' in str(e) or 'slot' in str(e) or 'embedder' in str(e):
                raise              # a configuration error: retrying cannot fix it
            self._failed(e)
            return None
        except Exception as e:  # noqa: BLE001 - any client error means "not reachable now"
            self._failed(e)
            return None
        self.remote = remote
        self._failures = 0
        self.last_error = ''
        return remote

    def _failed(self, e: BaseException) -> None:
        """Work locally for a while (backing off to 30 s) and forget the client: a restarted server needs a new one."""
        self._failures += 1
        self._down_until = time.monotonic() + min(30.0, self.cfg.sync_period_s * 2 ** min(self._failures, 5))
        self.last_error = redact(_describe(e), self.cfg)
        if self.remote is not None:
            self.remote.close()
            self.remote = None

    def _remote_call(self, fn: Any, default: Any) -> Any:
        """Run ``fn(remote)``; on failure mark Milvus down and return ``default``."""
        remote = self._connect()
        if remote is None:
            return default
        try:
            return fn(remote)
        except Exception as e:  # noqa: BLE001
            self._failed(e)
            return default

    @property
    def connected(self) -> bool:
        """Whether the last Milvus call succeeded."""
        return self.remote is not None

    def backlog(self) -> int:
        """Outbox operations not yet in Milvus."""
        return int(self.db.execute('SELECT count(*) FROM fleet_outbox').fetchone()[0])

    def close(self) -> None:
        """Close the Milvus connection (the outbox stays for the next start)."""
        if self.remote is not None:
            self.remote.close()
            self.remote = None

    # -- reads: own rows exactly from the local store, the fleet's from Milvus ---------------------------------------
    def _scope(self, filt: EntryFilter | None) -> tuple[bool, bool]:
        """(whether this robot's rows can pass ``filt``, whether other robots' rows can)."""
        mine = filt is None or filt.robots is None or self.robot_id in filt.robots
        others = filt is None or filt.robots is None or any(r != self.robot_id for r in filt.robots)
        return mine, others

    def search(self, kind: int, query: np.ndarray, k: int,
               filt: EntryFilter | None = None) -> list[tuple[Entry, float]]:
        """This robot's best entries (local, exact) merged with the best of the other robots (Milvus)."""
        mine, others = self._scope(filt)
        found = super().search(kind, query, k, filt) if mine else []
        if others and k > 0:
            expr = filter_expr(filt, exclude_robot=self.robot_id)
            found += self._remote_call(lambda r: r.search(kind, query, k, expr), [])
        found.sort(key=lambda es: -es[1])
        return found[:k]

    def similar_fact(self, v: np.ndarray) -> tuple[int, float]:
        """The closest fact of the whole fleet (the content filter keeps M_s free of repeats across robots)."""
        best = super().similar_fact(v)
        hits = self._remote_call(lambda r: r.search(KIND_SEMANTIC, v, 1, filter_expr(None, self.robot_id)), [])
        if hits and hits[0][1] > best[1]:
            return hits[0][0].id, hits[0][1]
        return best

    def find_semantic_by_norm(self, norm: str) -> SemanticEntry | None:
        """The same fact, stored here or by another robot."""
        return super().find_semantic_by_norm(norm) or self._remote_call(
            lambda r: r.find_norm(norm, filter_expr(None, self.robot_id)), None)

    def get(self, kind: int, ids: Sequence[int]) -> dict[int, Entry]:
        """Entries by public id: this robot's from the local store, others' from Milvus."""
        out = super().get(kind, ids)
        foreign = [int(i) for i in ids if self.row_id(i) is None]
        if foreign:
            out.update({e.id: e for e in self._remote_call(lambda r: r.get_entries(kind, foreign), [])})
        return out

    def count(self, kind: int, filt: EntryFilter | None = None) -> int:
        """Entries in this robot's view: its own (local) and the other robots' (Milvus, when reachable)."""
        mine, others = self._scope(filt)
        n = self.local_count(kind, filt) if mine else 0
        if others:
            n += self._remote_call(lambda r: r.count(KIND_NAMES[kind], filter_expr(filt, self.robot_id)), 0)
        return n

    # -- writes to other robots' rows go through the outbox ----------------------------------------------------------
    def extend_semantic(self, entry_id: int, start: float, end: float, face_ids: Sequence[str] = ()) -> None:
        """A fact met again; another robot's fact is extended in Milvus (in outbox order)."""
        if self.row_id(entry_id) is not None:
            super().extend_semantic(entry_id, start, end, face_ids)
            return
        self._enqueue('semantic', str(int(entry_id)), 'extend', {'start': start, 'end': end, 'faces': list(face_ids)})

    def delete_rows(self, kind: int, ids: Sequence[int]) -> int:
        """Delete rows here; another robot's entries are deleted in Milvus (a fleet-wide forget of entries)."""
        n = super().delete_rows(kind, ids)
        for i in ids:
            if self.row_id(i) is None:
                self._enqueue(KIND_NAMES[kind], str(int(i)), 'del_public')
                n += 1
        return n

    def record_forget(self, face_id: str, words: Sequence[str]) -> None:
        """Announce the forget to the fleet (in the caller's transaction, so it cannot be lost)."""
        self._enqueue('fleet', face_id, 'forget', {'names': list(words)})

    def _enqueue(self, table: str, key: str, op: str, payload: dict | None = None) -> None:
        with self.store.transaction():
            self.db.execute('INSERT INTO fleet_outbox(tbl, key, op, payload) VALUES(?,?,?,?)',
                            (table, key, op, json.dumps(payload or {})))

    # -- sync ------------------------------------------------------------------------------------------------------
    def sync(self, max_ops: int = 4096) -> SyncReport:
        """Push the outbox in order, then pull fleet profiles and forget announcements."""
        report = SyncReport(shared=True)
        remote = self._connect()
        if remote is not None:
            try:
                while report.pushed < max_ops:
                    with self.lock:
                        ops = self.db.execute('SELECT seq, tbl, key, op, payload FROM fleet_outbox ORDER BY seq '
                                              'LIMIT ?', (BATCH,)).fetchall()
                        work = self._materialize(ops)
                    if not ops:
                        break
                    self._push(remote, work, report)
                    with self.lock, self.store.transaction():
                        self.db.execute('DELETE FROM fleet_outbox WHERE seq <= ?', (ops[-1]['seq'],))
                    report.pushed += len(ops)
                self._pull(remote, report)
            except Exception as e:  # noqa: BLE001 - unreachable or failing: retried later, nothing is lost
                self._failed(e)
        with self.lock:
            report.backlog = self.backlog()
        report.connected = self.remote is not None
        report.error = '' if report.connected else self.last_error
        return report

    def _materialize(self, ops: list[Any]) -> list[tuple[str, str, Any]]:
        """Each outbox operation with what it writes, read now from the local store (the latest state wins)."""
        work: list[tuple[str, str, Any]] = []
        rows: dict[str, dict[int, dict[str, Any]]] = {}
        for tbl, k in (('semantic', KIND_SEMANTIC), ('episodic', KIND_EPISODIC)):   # one read per table
            keys = sorted({int(op['key']) for op in ops if op['tbl'] == tbl and op['op'] == 'put'})
            entries = super().get(k, [self.public_id(i) for i in keys])
            vecs = {r[0]: r[1] for chunk in chunks(keys, 500) for r in self.db.execute(
                f'SELECT id, vector FROM {tbl} WHERE id IN ({",".join("?" * len(chunk))})', chunk)}
            rows[tbl] = {self.row_id(e.id): entry_row(k, e, np.frombuffer(vecs[self.row_id(e.id)], '<f4'),
                                                      e.robot_id or self.robot_id)
                         for e in entries.values() if vecs.get(self.row_id(e.id)) is not None}
        for op in ops:
            tbl, key, kind = op['tbl'], op['key'], op['op']
            if kind in ('extend', 'forget', 'del_public'):
                work.append((kind, tbl, (key, json.loads(op['payload'] or '{}'))))
            elif tbl in ('semantic', 'episodic'):
                row = rows[tbl].get(int(key))
                work.append(('put', tbl, row) if row is not None else ('del', tbl, self.public_id(int(key))))
            elif tbl == 'sg_nodes':
                r = self.db.execute('SELECT * FROM sg_nodes WHERE id=?', (int(key),)).fetchone()
                work.append(('put', tbl, sg_row(r, self.public_id(r['id']), self.robot_id)) if r is not None
                            else ('del', tbl, self.public_id(int(key))))
            elif tbl == 'profiles':
                p = prof.get(self.store, key)
                work.append(('profile', tbl, (key, p)))
        return work

    def _push(self, remote: MilvusStore, work: list[tuple[str, str, Any]], report: SyncReport) -> None:
        """Apply materialized operations in order; runs of plain upserts/deletes of one collection go as one call."""
        run: list[tuple[str, str, Any]] = []

        def flush_run() -> None:
            if not run:
                return
            op, tbl = run[0][0], run[0][1]
            if op == 'put':
                rows = list({(r['id']): r for _, _, r in run}.values())
                if tbl == 'sg_nodes':
                    remote.upsert_rows(tbl, rows)
                else:
                    remote.upsert_entries(KIND_SEMANTIC if tbl == 'semantic' else KIND_EPISODIC, rows)
            else:
                remote.delete(tbl, sorted({x for _, _, x in run}))
            run.clear()

        for item in work:
            op, tbl, data = item
            if op in ('put', 'del'):
                if run and (run[0][0], run[0][1]) != (op, tbl):
                    flush_run()
                run.append(item)
                continue
            flush_run()
            if op == 'profile':
                self._push_profile(remote, data[0], data[1], report)
            elif op == 'extend':
                self._push_extend(remote, int(data[0]), data[1])
            elif op == 'del_public':
                remote.delete(tbl, [int(data[0])])
            elif op == 'forget':
                self._push_forget(remote, data[0], data[1].get('names', []))
        flush_run()

    def _push_profile(self, remote: MilvusStore, face_id: str, local: prof.Profile | None,
                      report: SyncReport) -> None:
        now = time.time()
        if local is None:
            remote.delete('profiles', [face_id])
            return
        held = remote.get_profiles([face_id]).get(face_id)
        if held is None:
            remote.upsert_rows('profiles', [profile_row(local, local.robot_id or self.robot_id, now)])
        else:
            current = profile_from_row(held)
            owner = local.robot_id or self.robot_id
            if current.robot_id and owner != current.robot_id and local.observations and \
                    not self._seen(f'profile/{face_id}'):
                # two robots gave one id to two people: the first keeps it; this copy is replaced by the fleet's
                report.conflicts.append(face_id)
                self._adopt_profile(current, float(held['updated']))
                return
            merged = merge_profiles(current, local)
            remote.upsert_rows('profiles', [profile_row(merged, current.robot_id or owner, now)])
            if merged.name != local.name or merged.embedding is not local.embedding:
                self._adopt_profile(merged, now)
        self._mark_seen(f'profile/{face_id}', now)

    def _push_extend(self, remote: MilvusStore, public_id: int, patch: dict[str, Any]) -> None:
        rows = remote.get_entry_rows(KIND_SEMANTIC, [public_id])
        if not rows:
            return  # forgotten meanwhile
        r = rows[0]
        r.update(start=min(r['start'], patch['start']), end=max(r['end'], patch['end']),
                 mentions=int(r['mentions']) + 1, face_ids=sorted(set(r['face_ids'] or []) | set(patch['faces'])))
        remote.upsert_entries(KIND_SEMANTIC, [r])

    def _push_forget(self, remote: MilvusStore, face_id: str, names: list[str]) -> None:
        """Announce the forget, drop the profile and every robot's entries that list the face."""
        key = f'forget/{self.robot_id}/{face_id}/{int(time.time() * 1000)}'
        remote.set_meta({key: json.dumps({'face_id': face_id, 'names': names, 'robot': self.robot_id,
                                          'time': time.time()})}, time.time())
        self._mark_seen(key, 1.0)
        remote.delete('profiles', [face_id])
        for what in ('semantic', 'episodic'):
            remote.delete_where(what, f'array_contains(face_ids, {json.dumps(face_id)})')

    # -- pulls -------------------------------------------------------------------------------------------------------
    def _pull(self, remote: MilvusStore, report: SyncReport) -> None:
        for f in remote.forgets():
            if f.get('robot') != self.robot_id and not self._seen(f['key']):
                report.forgotten.append((str(f.get('face_id', '')), [str(n) for n in f.get('names', [])]))
                self._mark_seen(f['key'], 1.0)
        stamps = remote.profile_stamps()
        changed = [fid for fid, (updated, _) in stamps.items()
                   if self._seen(f'profile/{fid}') != repr(updated)]
        rows = remote.get_profiles(changed)
        with self.lock:
            pending = {r[0] for r in self.db.execute("SELECT key FROM fleet_outbox WHERE tbl='profiles'")}
            for fid in changed:
                if fid in pending or fid not in rows:
                    continue   # our own change goes out first; the merge reconciles it
                self._adopt_profile(profile_from_row(rows[fid]), float(rows[fid]['updated']))
                report.profiles_changed += 1
            gone = [r[0] for r in self.db.execute("SELECT key FROM fleet_seen WHERE key LIKE 'profile/%'")
                    if r[0][len('profile/'):] not in stamps]
            for key in gone:   # removed by another robot without an announcement (e.g. a migration)
                fid = key[len('profile/'):]
                if fid in pending:
                    continue
                with self.store.transaction():
                    report.profiles_changed += self._muted(lambda: self.store.delete_profile(fid))
                    self.db.execute('DELETE FROM fleet_seen WHERE key=?', (key,))

    def _adopt_profile(self, p: prof.Profile, updated: float) -> None:
        """Make the local copy of a fleet profile (without echoing it back); keep this robot's counters."""
        with self.lock, self.store.transaction():
            cur = prof.get(self.store, p.face_id)
            if cur is not None:
                p.segments_since_update = cur.segments_since_update
            self._muted(lambda: prof.save(self.store, p))
            self._mark_seen(f'profile/{p.face_id}', updated)

    def _muted(self, fn: Any) -> Any:
        self.db.execute('INSERT INTO fleet_mute(x) VALUES(1)')
        try:
            return fn()
        finally:
            self.db.execute('DELETE FROM fleet_mute')

    def _seen(self, key: str) -> str | None:
        row = self.db.execute('SELECT value FROM fleet_seen WHERE key=?', (key,)).fetchone()
        return row[0] if row else None

    def _mark_seen(self, key: str, value: float) -> None:
        with self.lock, self.store.transaction():
            self.db.execute('INSERT INTO fleet_seen(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET '
                            'value=excluded.value', (key, repr(float(value))))


def _describe(e: BaseException) -> str:
    """A short reason for diagnostics (pymilvus messages carry no credentials)."""
    text = ' '.join(str(e).split())
    return f'{type(e).__name__}: {text[:200]}'


__all__ = ['MilvusBackend']
