# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Export and import of the whole memory as JSON lines (ExportMemory / ImportMemory).

Vectors are not exported: an import re-embeds with the running embedder. An import is one transaction: a malformed
record leaves the store as it was. ``replace`` swaps the whole memory (ids kept); otherwise entries and profiles are
merged in (a fact or event already stored is skipped).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np

from ..memory import profiles as prof
from ..memory.longterm import LongTermMemory
from ..memory.store import (KIND_EPISODIC, KIND_NAMES, KIND_SEMANTIC, REMINDER_PENDING, EpisodicEntry, ReminderRow,
                            SemanticEntry, normalize)
from ..topic import TopicData
from .errors import RequestError

FORMAT = 'lightomni-memory'


class Archive:
    """JSON-lines backups of one :class:`LongTermMemory`."""

    def __init__(self, memory: LongTermMemory) -> None:
        self.memory = memory

    def export_jsonl(self, path: str) -> int:
        """Write all memory as JSON lines; return the record count."""
        m = self.memory
        path_ = pathlib.Path(path).expanduser()
        if not path or path_.is_dir():
            raise RequestError(f'export path {path!r} is not a file path')
        n = 0
        tmp = path_.with_name(path_.name + '.tmp')
        try:
            path_.parent.mkdir(parents=True, exist_ok=True)
            with m.lock, open(tmp, 'w') as f:
                def put(rec: dict) -> None:
                    nonlocal n
                    f.write(json.dumps(rec, ensure_ascii=False) + '\n')
                    n += 1
                put({'type': 'meta', 'format': FORMAT, 'schema': m.store.version, 'embedder': m.embedder.name,
                     'exported': m.clock()})
                for p in prof.list_all(m.store):
                    put({'type': 'profile', **p.to_json()})
                for e in m.entries.all_entries(KIND_SEMANTIC):
                    put({'type': 'semantic', **vars(e)})
                for e in m.entries.all_entries(KIND_EPISODIC):
                    put({'type': 'episodic', **vars(e)})
                for r in m.store.sg_rows(live_only=False):
                    put({'type': 'sg_node', **{k: r[k] for k in r.keys()}})
                for r in m.store.reminders():
                    put({'type': 'reminder', **vars(r)})
                for qid, payload in m.store.pending():
                    put({'type': 'pending', 'id': qid, 'payload': payload})
            tmp.replace(path_)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise RequestError(f'cannot write {path}: {e}') from e
        return n

    def import_jsonl(self, path: str, replace: bool = False) -> int:
        """Read a backup; return the number of records imported."""
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
        if not records or records[0].get('format') != FORMAT:
            raise RequestError(f'{path}: not a lightomni memory export (first line must be its meta record)')
        try:
            return self._import(records, replace)
        except (KeyError, TypeError, ValueError) as e:
            raise RequestError(f'{path}: malformed record ({e}); nothing was imported') from e

    def _import(self, records: list[dict], replace: bool) -> int:
        m = self.memory
        sem_e = [SemanticEntry(**_fields(r)) for r in records if r['type'] == 'semantic']
        epi_e = [EpisodicEntry(**_fields(r)) for r in records if r['type'] == 'episodic']
        sem_v = m.embedder.embed([e.content for e in sem_e]) if sem_e else np.zeros((0, m.embedder.dim))
        epi_v = m.embedder.embed([e.script() for e in epi_e]) if epi_e else np.zeros((0, m.embedder.dim))
        n = 1
        with m.lock:
            with m.store.transaction():
                if replace:
                    m.store.wipe()
                n += self._profiles(records, replace)
                n += self._entries(sem_e, sem_v, epi_e, epi_v, replace)
                n += self._state_rows(records, replace)
                m.store.bump('gallery.version')
                m.store.bump('sg.version')
                for kind in (KIND_SEMANTIC, KIND_EPISODIC):
                    m.store.bump(f'{KIND_NAMES[kind]}.deletions')  # forces index files to be rewritten
            m.entries.rebuild_all()
            if replace:
                m.tree = m.load_tree()
        m.state_changed()
        return n

    def _profiles(self, records: list[dict], replace: bool) -> int:
        n = 0
        for r in records:
            if r['type'] == 'profile':
                p = prof.Profile.from_json(_fields(r))
                if replace or prof.get(self.memory.store, p.face_id) is None:
                    prof.save(self.memory.store, p)
                    n += 1
        return n

    def _entries(self, sem_e: list[SemanticEntry], sem_v: np.ndarray, epi_e: list[EpisodicEntry],
                 epi_v: np.ndarray, replace: bool) -> int:
        entries = self.memory.entries
        n = 0
        for e, v in zip(sem_e, sem_v):
            if not replace:
                same = entries.find_semantic_by_norm(normalize(e.content))
                if same and (not e.pinned or (same.start, same.end) == (e.start, e.end)):
                    continue  # already known (a pinned fact only when it is the same record)
                e.id = 0
            entries.add_rows(KIND_SEMANTIC, [e], [v])
            n += 1
        for e, v in zip(epi_e, epi_v):
            if not replace:
                if entries.same_event(e):
                    continue
                e.id = 0
            entries.add_rows(KIND_EPISODIC, [e], [v])
            n += 1
        return n

    def _state_rows(self, records: list[dict], replace: bool) -> int:
        """S_g nodes (replace only), reminders and queued Topics."""
        store = self.memory.store
        n = 0
        parents = []
        for r in records:
            if r['type'] == 'sg_node' and replace:
                # parents are newer rows than their children: link them once every node is in
                store.insert_row('sg_nodes', {k: r[k] for k in (
                    'id', 'level', 'start', 'end', 'first_segment', 'last_segment', 'text', 'children',
                    'face_ids', 'producer', 'live', 'episodic_id')})
                parents.append((r['parent'], r['id']))
                n += 1
            elif r['type'] == 'reminder' and (replace or r['status'] == REMINDER_PENDING):
                row = ReminderRow(**_fields(r))
                vals = {k: getattr(row, k) for k in ('due', 'text', 'face_id', 'status', 'created', 'fired_at',
                                                     'delay', 'source_segment')}
                if replace:
                    vals['id'] = row.id
                store.insert_row('reminders', vals)
                n += 1
            elif r['type'] == 'pending':
                TopicData.from_json(r['payload'])
                store.insert_row('pending', {'segment_id': r['payload']['segment_id'],
                                             'payload': json.dumps(r['payload']), 'received': self.memory.clock()})
                n += 1
        store.db.executemany('UPDATE sg_nodes SET parent=? WHERE id=?', parents)
        return n


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != 'type'}


__all__ = ['Archive', 'FORMAT']
