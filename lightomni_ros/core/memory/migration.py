# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Move a robot's memory between the embedded store and a fleet's Milvus, resumable and verified.

``to_milvus``: a memory folder's profiles, semantic and episodic entries (with their vectors, not re-embedded) and
S_g nodes go to the fleet's collections under the robot's id. Rows another robot wrote (robot_id set to another id)
are not sent again: they came from the fleet. ``to_local``: the fleet's profiles and semantic memory and the robot's
own episodic entries and S_g become a new memory folder (its FAISS indexes are built when it is first opened).
Reminders and the pending queue stay where they are (a reminder belongs to the robot that took it).

Both copy in primary-key order in batches and record the last key copied after each batch (in a JSON file beside
the source, or in the destination store's meta in the same transaction as the rows), so an interrupted run resumes
where it stopped; writes are idempotent upserts keyed by public ids. Verification compares, per table, the row
count and a SHA-256 over the sorted digests of every row's content (ids left out: a fleet row copied into a local
store gets a new local id).
"""

from __future__ import annotations

import hashlib
import json
import logging
import pathlib
import sqlite3
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import numpy as np

from .config import MemoryConfig
from .entries import ROW_MASK, SLOT_SHIFT
from .milvus_store import (PROFILE_FIELDS, ROW_FIELDS, SG_FIELDS, MilvusStore, entry_from_row, entry_row,
                           profile_from_row, profile_row, robot_slot, sg_row)
from .profiles import from_row as profile_from_sqlite, save as save_profile
from .store import KIND_EPISODIC, KIND_NAMES, KIND_SEMANTIC, EpisodicEntry, SemanticEntry, Store

log = logging.getLogger('lightomni.memory')
TABLES = ('profiles', 'semantic', 'episodic', 'sg_nodes')
BATCH = 500


@dataclass
class TableCheck:
    """One table verified: counts and checksums on both sides."""

    table: str
    source_rows: int
    target_rows: int
    source_sha256: str
    target_sha256: str

    @property
    def ok(self) -> bool:
        """Whether both sides hold the same rows."""
        return self.source_rows == self.target_rows and self.source_sha256 == self.target_sha256


@dataclass
class MigrationReport:
    """What a migration copied and how it verified."""

    copied: dict[str, int] = field(default_factory=dict)
    checks: list[TableCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every table verified."""
        return bool(self.checks) and all(c.ok for c in self.checks)


def canonical(row: dict[str, Any], drop: Iterable[str] = ('id', 'updated', 'pad')) -> str:
    """SHA-256 of a row's content (floats as float32 bytes for vectors, keys sorted, ids left out)."""
    clean = {}
    for k, v in row.items():
        if k in drop:
            continue
        if k == 'vector':
            v = np.asarray(v, np.float32).tobytes().hex()
        elif k == 'face_ids' and isinstance(v, list):
            v = sorted(v)
        clean[k] = v
    return hashlib.sha256(json.dumps(clean, sort_keys=True, default=str).encode()).hexdigest()


def digest(rows: Iterable[dict[str, Any]]) -> tuple[int, str]:
    """(count, SHA-256 over the sorted row digests) of a table."""
    each = sorted(canonical(r) for r in rows)
    return len(each), hashlib.sha256(''.join(each).encode()).hexdigest()


def _bar(total: int, desc: str) -> Any:
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit='row', file=sys.stderr, leave=True)


# -- reading the local store as fleet rows ---------------------------------------------------------------------------
class LocalRows:
    """A memory folder's rows in the fleet's row format (public ids in the robot's slot)."""

    def __init__(self, store: Store, robot_id: str, normalize: bool = True) -> None:
        self.store = store
        self.db = store.db
        self.robot_id = robot_id
        self.slot = robot_slot(robot_id)
        self.normalize = normalize   # as sent to Milvus; False: the stored bits (a folder made from Milvus)

    def public(self, row_id: int) -> int:
        """Public id of a local row."""
        return (self.slot << SLOT_SHIFT) | int(row_id)

    def _own(self) -> str:
        return "(robot_id = '' OR robot_id = ?)"

    def count(self, table: str) -> int:
        """Rows of ``table`` this robot sends."""
        if table == 'profiles':
            return int(self.db.execute('SELECT count(*) FROM profiles').fetchone()[0])
        if table == 'sg_nodes':
            return int(self.db.execute('SELECT count(*) FROM sg_nodes').fetchone()[0])
        return int(self.db.execute(f'SELECT count(*) FROM {table} WHERE {self._own()}', (self.robot_id,)).fetchone()[0])

    def rows(self, table: str, after: Any = None) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
        """(last key, rows) batches in key order after ``after``."""
        if table == 'profiles':
            last = after or ''
            while rows := self.db.execute('SELECT * FROM profiles WHERE face_id > ? ORDER BY face_id LIMIT ?',
                                          (last, BATCH)).fetchall():
                last = rows[-1]['face_id']
                yield last, [profile_row(p, p.robot_id or self.robot_id, 0.0)
                             for p in map(profile_from_sqlite, rows)]
            return
        last = int(after or 0)
        if table == 'sg_nodes':
            while rows := self.db.execute('SELECT * FROM sg_nodes WHERE id > ? ORDER BY id LIMIT ?',
                                          (last, BATCH)).fetchall():
                last = rows[-1]['id']
                yield last, [sg_row(r, self.public(r['id']), self.robot_id) for r in rows]
            return
        kind = KIND_SEMANTIC if table == 'semantic' else KIND_EPISODIC
        while rows := self.db.execute(f'SELECT * FROM {table} WHERE id > ? AND {self._own()} ORDER BY id LIMIT ?',
                                      (last, self.robot_id, BATCH)).fetchall():
            last = rows[-1]['id']
            faces: dict[int, list[str]] = {}
            ids = [r['id'] for r in rows]
            for eid, f in self.db.execute(f'SELECT entry_id, face_id FROM {table}_faces WHERE entry_id IN '
                                          f'({",".join("?" * len(ids))})', ids):
                faces.setdefault(eid, []).append(f)
            yield last, [entry_row(kind, self.entry(kind, r, faces.get(r['id'], [])),
                                   np.frombuffer(r['vector'], '<f4'), self.robot_id, self.normalize) for r in rows]

    def entry(self, kind: int, r: sqlite3.Row, faces: list[str]) -> SemanticEntry | EpisodicEntry:
        """A row as a memory record with its public id."""
        if kind == KIND_SEMANTIC:
            return SemanticEntry(content=r['content'], start=r['start'], end=r['end'], pinned=bool(r['pinned']),
                                 source_segment=r['source_segment'], face_ids=sorted(faces), mentions=r['mentions'],
                                 id=self.public(r['id']))
        return EpisodicEntry(start=r['start'], end=r['end'], visual=r['visual'], audio=r['audio'],
                             response=r['response'], raw_refs=json.loads(r['raw_refs']),
                             source_segment=r['source_segment'], face_ids=sorted(faces), id=self.public(r['id']))


def _remote_expr(table: str, robot_id: str) -> str:
    return '' if table in ('profiles', 'semantic') else f'robot == {json.dumps(robot_id)}'


def _remote_fields(table: str) -> list[str]:
    return {'profiles': PROFILE_FIELDS, 'sg_nodes': SG_FIELDS, 'semantic': ROW_FIELDS[KIND_SEMANTIC] + ['vector'],
            'episodic': ROW_FIELDS[KIND_EPISODIC] + ['vector']}[table]


def _remote_rows(remote: MilvusStore, table: str, expr: str) -> Iterator[dict[str, Any]]:
    for batch in remote.iterate(table, expr, _remote_fields(table)):
        yield from batch


# -- to Milvus -------------------------------------------------------------------------------------------------------
def to_milvus(memory_dir: str | pathlib.Path, cfg: MemoryConfig, progress: bool = True) -> MigrationReport:
    """Copy a memory folder into the fleet's Milvus under ``cfg.robot_id``; resumable; verified."""
    folder = pathlib.Path(memory_dir).expanduser()
    if not (folder / 'memory.db').exists():
        raise FileNotFoundError(f'{folder}: no memory.db to migrate')
    store = Store(folder / 'memory.db')
    try:
        embedder = store.get_meta('embedder')
        if not embedder:
            raise ValueError(f'{folder}: the store does not say which text embedder its vectors come from')
        dim = int(embedder.rsplit('/', 1)[1])
        remote = MilvusStore(cfg, dim)
        local = LocalRows(store, cfg.robot_id)
        remote.register(cfg.robot_id, local.slot, embedder, 0.0)
        state_path = folder / f'migrate-{cfg.fleet_id}-{cfg.robot_id}.json'
        state = json.loads(state_path.read_text()) if state_path.exists() else {}
        report = MigrationReport()
        for table in TABLES:
            bar = _bar(local.count(table), f'{table} -> milvus') if progress else None
            done = 0
            for last, rows in local.rows(table, state.get(table)):
                if table in ('semantic', 'episodic'):
                    remote.upsert_entries(KIND_SEMANTIC if table == 'semantic' else KIND_EPISODIC, rows)
                else:
                    remote.upsert_rows(table, rows)
                state[table] = last
                state_path.write_text(json.dumps(state))
                done += len(rows)
                if bar is not None:
                    bar.update(len(rows))
            if bar is not None:
                bar.close()
            report.copied[table] = done
        for table in TABLES:
            src = [r for _, rows in local.rows(table) for r in rows]
            expr = f'robot == {json.dumps(cfg.robot_id)}' if table != 'profiles' else \
                f'face_id in {json.dumps([r["face_id"] for r in src])}'
            dst = list(_remote_rows(remote, table, expr))
            report.checks.append(_check(table, src, dst))
        remote.close()
        return report
    finally:
        store.close()


# -- to a local folder -----------------------------------------------------------------------------------------------
def to_local(target_dir: str | pathlib.Path, cfg: MemoryConfig, progress: bool = True) -> MigrationReport:
    """Make a memory folder from the fleet: its profiles and semantic memory, this robot's episodic memory and S_g."""
    folder = pathlib.Path(target_dir).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    store = Store(folder / 'memory.db')
    try:
        embedder = _fleet_embedder(cfg)   # the fleet's embedder decides the vector dimension
        remote = MilvusStore(cfg, int(embedder.rsplit('/', 1)[1]))
        slot = robot_slot(cfg.robot_id)
        with store.transaction():
            if store.get_meta('embedder') not in ('', embedder):
                raise ValueError(f'{folder}: holds memory of another embedder ({store.get_meta("embedder")})')
            store.set_meta('embedder', embedder)
        report = MigrationReport()
        for table in TABLES:
            report.copied[table] = _copy_down(store, remote, table, cfg.robot_id, slot, progress)
        links = [(int(r['parent']) & ROW_MASK, int(r['id']) & ROW_MASK)
                 for r in _remote_rows(remote, 'sg_nodes', _remote_expr('sg_nodes', cfg.robot_id)) if r['parent']]
        with store.transaction():
            store.db.executemany('UPDATE sg_nodes SET parent=? WHERE id=?', links)
        local = LocalRows(store, cfg.robot_id, normalize=False)
        for table in TABLES:
            src = list(_remote_rows(remote, table, _remote_expr(table, cfg.robot_id)))
            dst = [r for _, rows in _local_as_fleet(local, table) for r in rows]
            report.checks.append(_check(table, src, dst))
        remote.close()
        return report
    finally:
        store.close()


def _fleet_embedder(cfg: MemoryConfig) -> str:
    """The text embedder the fleet indexes with (read from its registry)."""
    try:
        from pymilvus import MilvusClient
    except ImportError as e:
        raise RuntimeError('migration to or from Milvus needs pymilvus (pip install -r requirements/fleet.txt)') from e
    from .milvus_store import client_options
    client = MilvusClient(**client_options(cfg))
    try:
        rows = client.get(f'lightomni_{cfg.fleet_id}_fleet', ids=['embedder'], output_fields=['value'])
    finally:
        client.close()
    if not rows:
        raise ValueError(f'fleet {cfg.fleet_id!r} has no memory at {cfg.milvus_uri}')
    return rows[0]['value']


def _local_as_fleet(local: LocalRows, table: str) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    """A migrated folder's rows in the fleet's format, every robot's (the verification reads all of them)."""
    if table != 'semantic':
        yield from local.rows(table)
        return
    db = local.db
    rows = db.execute('SELECT * FROM semantic ORDER BY id').fetchall()
    faces: dict[int, list[str]] = {}
    for eid, f in db.execute('SELECT entry_id, face_id FROM semantic_faces'):
        faces.setdefault(eid, []).append(f)
    yield 0, [entry_row(KIND_SEMANTIC, local.entry(KIND_SEMANTIC, r, faces.get(r['id'], [])),
                        np.frombuffer(r['vector'], '<f4'), r['robot_id'] or local.robot_id, local.normalize)
              for r in rows]


def _copy_down(store: Store, remote: MilvusStore, table: str, robot_id: str, slot: int, progress: bool) -> int:
    """Copy one table from Milvus into the local store, recording progress in its meta in the same transaction."""
    key = f'migrate.{table}'
    done_key = store.get_meta(key)
    expr = _remote_expr(table, robot_id)
    total = remote.count(table, expr)
    bar = _bar(total, f'milvus -> {table}') if progress else None
    copied = 0
    pk = 'face_id' if table == 'profiles' else 'id'
    rows_all = sorted(_remote_rows(remote, table, expr), key=lambda r: r[pk])
    start = 0
    if done_key:
        last = done_key if table == 'profiles' else int(done_key)
        start = next((i for i, r in enumerate(rows_all) if r[pk] > last), len(rows_all))
    if bar is not None:
        bar.update(start)
    for lo in range(start, len(rows_all), BATCH):
        batch = rows_all[lo:lo + BATCH]
        with store.transaction():
            for r in batch:
                _insert_local(store, table, r, robot_id, slot)
            store.set_meta(key, batch[-1][pk])
        copied += len(batch)
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    return copied


def _insert_local(store: Store, table: str, r: dict[str, Any], robot_id: str, slot: int) -> None:
    own = table != 'profiles' and int(r['id']) >> SLOT_SHIFT == slot
    if table == 'profiles':
        p = profile_from_row(r)
        p.robot_id = '' if p.robot_id == robot_id else p.robot_id
        save_profile(store, p)
        return
    if table == 'sg_nodes':
        vals = {k: r[k] for k in ('level', 'start', 'end', 'first_segment', 'last_segment', 'text', 'children',
                                  'face_ids', 'producer')}
        vals.update(id=int(r['id']) & ROW_MASK, live=int(bool(r['live'])),
                    episodic_id=(int(r['episodic_id']) or None))
        store.insert_row('sg_nodes', vals)   # parents are linked once every node is in (they are newer rows)
        return
    kind = KIND_SEMANTIC if table == 'semantic' else KIND_EPISODIC
    e = entry_from_row(kind, r)
    vals: dict[str, Any] = {'start': e.start, 'end': e.end, 'source_segment': e.source_segment,
                            'vector': np.asarray(r['vector'], '<f4').tobytes(),
                            'robot_id': '' if e.robot_id == robot_id else e.robot_id}
    if own:
        vals['id'] = int(r['id']) & ROW_MASK
    if kind == KIND_SEMANTIC:
        from .store import normalize
        vals.update(content=e.content, norm=normalize(e.content), pinned=int(e.pinned), mentions=e.mentions)
    else:
        vals.update(visual=e.visual, audio=e.audio, response=e.response, raw_refs=json.dumps(list(e.raw_refs)))
    row = store.insert_row(table, vals)
    store.db.executemany(f'INSERT OR IGNORE INTO {KIND_NAMES[kind]}_faces(entry_id, face_id) VALUES(?, ?)',
                         [(row, f) for f in e.face_ids])


def _check(table: str, src: list[dict[str, Any]], dst: list[dict[str, Any]]) -> TableCheck:
    (n_src, h_src), (n_dst, h_dst) = digest(src), digest(dst)
    return TableCheck(table, n_src, n_dst, h_src, h_dst)


__all__ = ['to_milvus', 'to_local', 'MigrationReport', 'TableCheck', 'canonical', 'digest', 'TABLES']
