# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Export and import of the whole memory (ExportMemory / ImportMemory): JSON lines, or a tar with the audio clips.

A path ending in ``.tar`` (or ``.tar.gz``) holds ``memory.jsonl`` and ``audio/<clip>`` for every audio clip the
entries point to inside the raw folders (their references read ``archive:audio/<clip>`` in the tar); any other path
is the JSON lines alone. Vectors are not exported: an import re-embeds with the running embedder.

An archive is hostile until proven otherwise. It is read without extracting anything: a member that is not a regular
file (symlink, hard link, device), a name that is absolute, climbs with ``..`` or is not one of the two expected
forms, an oversized member or archive, a duplicate member, a meta record of another format, schema version,
embedder or dimension, an unknown record type, a field of the wrong type, a duplicate id, or a raw reference outside
the archive and the raw folders is refused with the reason, before anything is written. The import itself is one
transaction (and clips are written only once everything validated), so after a refusal the store is as it was.
``replace`` swaps the whole memory (ids kept); otherwise entries and profiles are merged in (a fact or event already
stored is skipped).
"""

from __future__ import annotations

import io
import json
import math
import os
import pathlib
import re
import stat
import tarfile
import time
from typing import Any

import numpy as np

from ..memory import profiles as prof
from ..memory.longterm import LongTermMemory
from ..memory.store import (KIND_EPISODIC, KIND_NAMES, KIND_SEMANTIC, REMINDER_PENDING, SCHEMA_VERSION, EpisodicEntry,
                            ReminderRow, SemanticEntry, normalize)
from ..topic import TopicData
from .errors import RequestError
from .rawfiles import RawFiles, is_audio, ref_path

FORMAT = 'lightomni-memory'
JSONL_MEMBER = 'memory.jsonl'
AUDIO_PREFIX = 'archive:audio/'
_AUDIO_MEMBER = re.compile(r'^audio/([A-Za-z0-9][A-Za-z0-9_.-]{0,127})$')
MAX_ARCHIVE_BYTES = 4 << 30
MAX_JSONL_BYTES = 1 << 30
MAX_CLIP_BYTES = 64 << 20
MAX_MEMBERS = 200_000
MAX_TEXT = 1 << 16           # characters of one text field
MAX_AVATAR_HEX = 4 << 20

_NUM = (int, float)
#: record type -> {field: accepted types}; fields not listed are refused, listed ones may be absent
_FIELDS: dict[str, dict[str, tuple]] = {
    'profile': {'face_id': (str,), 'name': (str,), 'attributes': (dict,), 'avatar': (str,),
                'avatar_format': (str,), 'embedding': (list, type(None)), 'embedding_backend': (str,),
                'observations': (int,), 'first_seen': _NUM, 'last_seen': _NUM, 'segments_since_update': (int,),
                'robot_id': (str,)},
    'semantic': {'content': (str,), 'start': _NUM, 'end': _NUM, 'pinned': (bool,), 'source_segment': (int,),
                 'face_ids': (list,), 'mentions': (int,), 'id': (int,), 'robot_id': (str,)},
    'episodic': {'start': _NUM, 'end': _NUM, 'visual': (str,), 'audio': (str,), 'response': (str,),
                 'raw_refs': (list,), 'source_segment': (int,), 'face_ids': (list,), 'id': (int,),
                 'robot_id': (str,)},
    'sg_node': {'id': (int,), 'level': (int,), 'start': _NUM, 'end': _NUM, 'first_segment': (int,),
                'last_segment': (int,), 'text': (str,), 'children': (str,), 'face_ids': (str,), 'producer': (str,),
                'live': (int,), 'parent': (int, type(None)), 'episodic_id': (int, type(None))},
    'reminder': {'due': _NUM, 'text': (str,), 'face_id': (str,), 'status': (int,), 'created': _NUM,
                 'fired_at': _NUM + (type(None),), 'delay': _NUM, 'source_segment': (int,), 'id': (int,)},
    'pending': {'id': (int,), 'payload': (dict,)},
}
_REQUIRED = {'profile': ('face_id',), 'semantic': ('content', 'start', 'end'), 'episodic': ('start', 'end'),
             'sg_node': ('id', 'level', 'start', 'end', 'first_segment', 'last_segment', 'text'),
             'reminder': ('due', 'text'), 'pending': ('payload',)}


class Archive:
    """Backups of one :class:`LongTermMemory`."""

    def __init__(self, memory: LongTermMemory, files: RawFiles | None = None) -> None:
        self.memory = memory
        self.files = files or RawFiles([memory.dir / 'audio'])

    # -- export --------------------------------------------------------------------------------------------------
    def export(self, path: str) -> int:
        """Write all memory (a tar with clips when ``path`` ends in .tar/.tar.gz); return the record count."""
        path_ = pathlib.Path(path).expanduser()
        if not path or path_.is_dir() or path_.is_symlink() or (path_.exists() and not path_.is_file()):
            raise RequestError(f'export path {path!r} is not a regular file path (symlinks and devices are refused)')
        as_tar = path_.name.endswith(('.tar', '.tar.gz'))
        tmp = path_.with_name(path_.name + '.tmp')
        clips: dict[str, pathlib.Path] = {}
        try:
            path_.parent.mkdir(parents=True, exist_ok=True)
            with self.memory.lock:
                lines = self._records(self.files if as_tar else None, clips)
            if not as_tar:
                tmp.write_text(''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in lines))
            else:
                with tarfile.open(tmp, 'w:gz' if path_.name.endswith('.gz') else 'w') as tf:
                    _add(tf, JSONL_MEMBER, ''.join(json.dumps(r, ensure_ascii=False) + '\n'
                                                   for r in lines).encode())
                    for name, src in clips.items():
                        _add(tf, f'audio/{name}', src.read_bytes())
            tmp.replace(path_)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise RequestError(f'cannot write {path}: {e}') from e
        return len(lines)

    def export_jsonl(self, path: str) -> int:
        """Write all memory as JSON lines; return the record count."""
        return self.export(path)

    def _records(self, files: RawFiles | None, clips: dict[str, pathlib.Path]) -> list[dict]:
        m = self.memory
        out: list[dict] = [{'type': 'meta', 'format': FORMAT, 'schema': m.store.version, 'embedder': m.embedder.name,
                            'dim': m.embedder.dim, 'exported': m.clock()}]
        out += [{'type': 'profile', **p.to_json()} for p in prof.list_all(m.store)]
        out += [{'type': 'semantic', **vars(e)} for e in m.entries.all_entries(KIND_SEMANTIC)]
        for e in m.entries.all_entries(KIND_EPISODIC):
            rec = {'type': 'episodic', **vars(e)}
            if files is not None:       # a tar carries the clips; references point into it
                refs = []
                for r in e.raw_refs:
                    src = files.inside(r)
                    if src is not None and src.is_file() and not src.is_symlink():
                        clips.setdefault(src.name, src)
                        refs.append(AUDIO_PREFIX + src.name)
                rec['raw_refs'] = refs
            out.append(rec)
        out += [{'type': 'sg_node', **{k: r[k] for k in r.keys()}} for r in m.store.sg_rows(live_only=False)]
        out += [{'type': 'reminder', **vars(r)} for r in m.store.reminders()]
        out += [{'type': 'pending', 'id': qid, 'payload': payload} for qid, payload in m.store.pending()]
        return out

    # -- import --------------------------------------------------------------------------------------------------
    def import_(self, path: str, replace: bool = False) -> int:
        """Read a backup (tar or JSON lines); return the number of records imported. RequestError when refused."""
        path_ = pathlib.Path(path).expanduser()
        try:
            st = path_.lstat()
        except OSError as e:
            raise RequestError(f'cannot read {path}: {e.strerror}') from e
        if stat.S_ISLNK(st.st_mode):
            raise RequestError(f'{path} is a symlink: refused (give the file itself)')
        if not stat.S_ISREG(st.st_mode):
            raise RequestError(f'{path} is not a regular file')
        if st.st_size > MAX_ARCHIVE_BYTES:
            raise RequestError(f'{path} is {st.st_size} bytes, over the limit of {MAX_ARCHIVE_BYTES}')
        clips: dict[str, bytes] = {}
        if tarfile.is_tarfile(path_):
            text = self._read_tar(path_, clips)
        else:
            if st.st_size > MAX_JSONL_BYTES:
                raise RequestError(f'{path}: {st.st_size} bytes of JSON lines, over the limit of {MAX_JSONL_BYTES}')
            try:
                text = path_.read_bytes().decode('utf-8')
            except (OSError, UnicodeDecodeError) as e:
                raise RequestError(f'cannot read {path}: {e}') from e
        records = self._parse(path, text)
        try:
            self._validate(records, clips, replace)
        except (KeyError, TypeError, ValueError) as e:
            raise RequestError(f'{path}: {e}; nothing was imported') from e
        written = self._write_clips(records, clips)
        try:
            return self._import(records, replace)
        except BaseException as e:
            for p in written:
                p.unlink(missing_ok=True)
            if isinstance(e, (KeyError, TypeError, ValueError)):
                raise RequestError(f'{path}: malformed record ({e}); nothing was imported') from e
            raise

    def import_jsonl(self, path: str, replace: bool = False) -> int:
        """Read a backup; return the number of records imported."""
        return self.import_(path, replace)

    def _read_tar(self, path: pathlib.Path, clips: dict[str, bytes]) -> str:
        """memory.jsonl of a tar, and its clips; every member checked before it is read."""
        text = None
        total = members = 0
        try:
            with tarfile.open(path, 'r:*') as tf:
                while (m := tf.next()) is not None:
                    members += 1
                    if members > MAX_MEMBERS:
                        raise RequestError(f'{path}: more than {MAX_MEMBERS} members')
                    name = m.name
                    if name.startswith('/') or re.match(r'^[A-Za-z]:', name):
                        raise RequestError(f'{path}: member {name!r} has an absolute path')
                    if '..' in pathlib.PurePosixPath(name).parts or '\\' in name:
                        raise RequestError(f'{path}: member {name!r} climbs out of the archive')
                    if m.isdir() and name.rstrip('/') == 'audio':
                        continue
                    if m.issym() or m.islnk():
                        raise RequestError(f'{path}: member {name!r} is a link (to {m.linkname!r})')
                    if not m.isfile():
                        raise RequestError(f'{path}: member {name!r} is not a regular file')
                    clip = _AUDIO_MEMBER.match(name)
                    if name != JSONL_MEMBER and not (clip and is_audio(name)):
                        raise RequestError(f'{path}: unexpected member {name!r} (memory.jsonl and audio/<clip> only)')
                    limit = MAX_JSONL_BYTES if name == JSONL_MEMBER else MAX_CLIP_BYTES
                    if m.size > limit:
                        raise RequestError(f'{path}: member {name!r} is {m.size} bytes, over the limit of {limit}')
                    total += m.size
                    if total > MAX_ARCHIVE_BYTES:
                        raise RequestError(f'{path}: members unpack to more than {MAX_ARCHIVE_BYTES} bytes')
                    f = tf.extractfile(m)
                    data = f.read(limit + 1) if f is not None else b''
                    if len(data) > limit:
                        raise RequestError(f'{path}: member {name!r} is larger than it says')
                    if name == JSONL_MEMBER:
                        if text is not None:
                            raise RequestError(f'{path}: two {JSONL_MEMBER} members')
                        text = data.decode('utf-8')
                    else:
                        if clip.group(1) in clips:
                            raise RequestError(f'{path}: two members named {name!r}')
                        clips[clip.group(1)] = data
        except (tarfile.TarError, EOFError, OSError, UnicodeDecodeError) as e:
            raise RequestError(f'{path}: not a readable tar archive ({type(e).__name__}: {e})') from e
        if text is None:
            raise RequestError(f'{path}: the archive has no {JSONL_MEMBER}')
        return text

    @staticmethod
    def _parse(path: str, text: str) -> list[dict]:
        records = []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line, parse_constant=_no_constant)
                if not isinstance(rec, dict) or not isinstance(rec.get('type'), str):
                    raise ValueError('not an object with a "type"')
            except (ValueError, RecursionError) as e:
                raise RequestError(f'{path}:{i}: {e}') from e
            records.append(rec)
        if not records or records[0].get('type') != 'meta' or records[0].get('format') != FORMAT:
            raise RequestError(f'{path}: not a lightomni memory export (first line must be its meta record)')
        return records

    def _validate(self, records: list[dict], clips: dict[str, bytes], replace: bool) -> None:
        """Raise ValueError naming the first thing this memory cannot take."""
        m = self.memory
        meta = records[0]
        schema = meta.get('schema')
        if not isinstance(schema, int) or isinstance(schema, bool) or not 1 <= schema <= SCHEMA_VERSION:
            raise ValueError(f'schema version {schema!r} is not one this software reads (1..{SCHEMA_VERSION})')
        if meta.get('embedder') != m.embedder.name:
            raise ValueError(f'exported with the text embedder {meta.get("embedder")!r}; this memory uses '
                             f'{m.embedder.name!r}')
        if 'dim' in meta and meta['dim'] != m.embedder.dim:
            raise ValueError(f'embedding dimension {meta["dim"]!r} differs from this memory\'s {m.embedder.dim}')
        seen: dict[str, set] = {}
        for i, r in enumerate(records[1:], 2):
            kind = r['type']
            if kind == 'meta':
                raise ValueError(f'record {i}: a second meta record')
            spec = _FIELDS.get(kind)
            if spec is None:
                raise ValueError(f'record {i}: unknown record type {kind!r}')
            for key, value in r.items():
                if key == 'type':
                    continue
                if key not in spec:
                    raise ValueError(f'record {i} ({kind}): unknown field {key!r}')
                _check_value(f'record {i} ({kind}).{key}', value, spec[key])
            missing = [k for k in _REQUIRED[kind] if k not in r]
            if missing:
                raise ValueError(f'record {i} ({kind}): missing {missing}')
            key = r.get('face_id') if kind == 'profile' else r.get('id')
            if key is not None:
                if key in seen.setdefault(kind, set()):
                    raise ValueError(f'record {i}: duplicate {kind} id {key!r}')
                seen[kind].add(key)
            self._check_record(i, kind, r, clips)

    def _check_record(self, i: int, kind: str, r: dict, clips: dict[str, bytes]) -> None:
        where = f'record {i} ({kind})'
        if 'start' in r and 'end' in r and r['end'] < r['start']:
            raise ValueError(f'{where}: end is before start')
        for f in r.get('face_ids', []) if kind in ('semantic', 'episodic') else []:
            if not isinstance(f, str) or not prof.valid_face_id(f):
                raise ValueError(f'{where}: face id {f!r} is not <face_N>')
        if kind == 'profile':
            if not prof.valid_face_id(r['face_id']):
                raise ValueError(f'{where}: face id {r["face_id"]!r} is not <face_N>')
            if len(r.get('avatar', '')) > MAX_AVATAR_HEX:
                raise ValueError(f'{where}: avatar over {MAX_AVATAR_HEX // 2} bytes')
            emb = r.get('embedding')
            if emb is not None and (len(emb) > 4096 or not all(isinstance(x, _NUM) and math.isfinite(x)
                                                               for x in emb)):
                raise ValueError(f'{where}: face embedding is not a finite vector')
            prof.Profile.from_json(r)
        if kind == 'episodic':
            for ref in r.get('raw_refs', []):
                if not isinstance(ref, str):
                    raise ValueError(f'{where}: raw reference {ref!r} is not a string')
                if ref.startswith(AUDIO_PREFIX):
                    if ref[len(AUDIO_PREFIX):] not in clips:
                        raise ValueError(f'{where}: {ref!r} is not in the archive')
                elif ref_path(ref) is None or self.files.inside(ref) is None:
                    raise ValueError(f'{where}: raw reference {ref[:120]!r} is outside the raw folders')
        if kind == 'pending':
            TopicData.from_json(r['payload'])
        if kind == 'sg_node':
            for key in ('children', 'face_ids'):
                if not isinstance(json.loads(r.get(key, '[]')), list):
                    raise ValueError(f'{where}: {key} is not a JSON list')

    def _write_clips(self, records: list[dict], clips: dict[str, bytes]) -> list[pathlib.Path]:
        """Write the archive's clips into <memory_dir>/audio (new names on collision); rewrite the references."""
        if not clips:
            return []
        folder = self.memory.dir / 'audio'
        folder.mkdir(parents=True, exist_ok=True)
        names: dict[str, pathlib.Path] = {}
        stamp = time.strftime('%Y%m%d%H%M%S')
        for name, data in clips.items():
            target = folder / name
            if target.exists() or target.is_symlink():
                target = folder / f'imported_{stamp}_{name}'
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0), 0o600)
            with os.fdopen(fd, 'wb') as f:
                f.write(data)
            names[name] = target
        for r in records:
            if r['type'] == 'episodic':
                r['raw_refs'] = [names[x[len(AUDIO_PREFIX):]].as_uri() if x.startswith(AUDIO_PREFIX) else x
                                 for x in r.get('raw_refs', [])]
        return list(names.values())

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
                store.insert_row('sg_nodes', {k: r.get(k, d) for k, d in (
                    ('id', 0), ('level', 0), ('start', 0.0), ('end', 0.0), ('first_segment', 0),
                    ('last_segment', 0), ('text', ''), ('children', '[]'), ('face_ids', '[]'), ('producer', ''),
                    ('live', 1), ('episodic_id', None))})
                parents.append((r.get('parent'), r['id']))
                n += 1
            elif r['type'] == 'reminder' and (replace or r.get('status', REMINDER_PENDING) == REMINDER_PENDING):
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


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o600
    tf.addfile(info, io.BytesIO(data))


def _no_constant(name: str) -> Any:
    raise ValueError(f'{name} is not a number a memory record may hold')


def _check_value(where: str, value: Any, types: tuple) -> None:
    if isinstance(value, bool) and bool not in types:
        raise ValueError(f'{where}: {value!r} has the wrong type')
    if not isinstance(value, types):
        raise ValueError(f'{where}: {type(value).__name__} where {"/".join(t.__name__ for t in types)} is expected')
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f'{where}: not a finite number')
    if isinstance(value, str) and len(value) > MAX_TEXT and not where.endswith('.avatar'):
        raise ValueError(f'{where}: text over {MAX_TEXT} characters')
    if isinstance(value, list) and len(value) > 10000:
        raise ValueError(f'{where}: list over 10000 items')


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != 'type'}


__all__ = ['Archive', 'FORMAT', 'JSONL_MEMBER', 'AUDIO_PREFIX']
