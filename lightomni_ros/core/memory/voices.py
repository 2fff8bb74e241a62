# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Voice identities in M_p: ``<voice_N>`` with its speaker embedding, the face it belongs to, the name it gave.

Perception tells voices apart and reports them (new, embedding update, a face seen talking); the consolidation node
stores them here, names them from introductions, resolves them in what memory returns (a voice with a face speaks as
that face, a named voice by its name) and forgets them with their person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .profiles import unit
from .store import Store, blob_to_vec, vec_to_blob

VOICE_ID = re.compile(r'^<voice_\d+>$')


@dataclass
class VoiceRecord:
    """One stored voice."""

    voice_id: str
    face_id: str = ''
    name: str = ''
    embedding: np.ndarray | None = None
    embedding_backend: str = ''
    observations: float = 0.0
    first_heard: float = 0.0
    last_heard: float = 0.0


def valid_voice_id(voice_id: str) -> bool:
    """Whether ``voice_id`` has the ``<voice_N>`` form."""
    return bool(VOICE_ID.match(voice_id or ''))


def _record(r) -> VoiceRecord:
    return VoiceRecord(voice_id=r['voice_id'], face_id=r['face_id'], name=r['name'],
                       embedding=blob_to_vec(r['embedding']), embedding_backend=r['embedding_backend'],
                       observations=float(r['observations']), first_heard=r['first_heard'], last_heard=r['last_heard'])


def get(store: Store, voice_id: str) -> VoiceRecord | None:
    """One voice, or None."""
    row = store.db.execute('SELECT * FROM voices WHERE voice_id=?', (voice_id,)).fetchone()
    return _record(row) if row else None


def list_all(store: Store, face_id: str | None = None) -> list[VoiceRecord]:
    """Stored voices (those of ``face_id`` when given), by id."""
    if face_id is None:
        rows = store.db.execute('SELECT * FROM voices ORDER BY voice_id').fetchall()
    else:
        rows = store.db.execute('SELECT * FROM voices WHERE face_id=? ORDER BY voice_id', (face_id,)).fetchall()
    return [_record(r) for r in rows]


def save(store: Store, v: VoiceRecord) -> None:
    """Create or overwrite a voice."""
    store.db.execute(
        'INSERT INTO voices(voice_id, face_id, name, embedding, embedding_backend, observations, first_heard, '
        'last_heard) VALUES(?,?,?,?,?,?,?,?) ON CONFLICT(voice_id) DO UPDATE SET face_id=excluded.face_id, '
        'name=excluded.name, embedding=excluded.embedding, embedding_backend=excluded.embedding_backend, '
        'observations=excluded.observations, first_heard=excluded.first_heard, last_heard=excluded.last_heard',
        (v.voice_id, v.face_id, v.name, vec_to_blob(v.embedding), v.embedding_backend, float(v.observations),
         v.first_heard, v.last_heard))


def delete(store: Store, voice_ids: list[str]) -> int:
    """Remove voices; return how many existed."""
    return sum(store.db.execute('DELETE FROM voices WHERE voice_id=?', (v,)).rowcount for v in voice_ids)


def apply_event(store: Store, op: str, voice_id: str, embedding: np.ndarray | None, backend: str,
                observations: float, face_id: str, now: float) -> VoiceRecord:
    """Record a new voice, an embedding update or a face link from perception; return the stored voice."""
    v = get(store, voice_id) or VoiceRecord(voice_id=voice_id, first_heard=now)
    if embedding is not None and len(embedding):
        v.embedding, v.embedding_backend = unit(embedding), backend
    v.observations = max(v.observations, float(observations))
    if face_id and (op == 'link' or not v.face_id):
        v.face_id = face_id
    v.first_heard = v.first_heard or now
    v.last_heard = max(v.last_heard, now)
    save(store, v)
    return v


def speakers(store: Store) -> dict[str, str]:
    """What each known voice stands for in text: its face when linked, else its name; unknown voices are left out."""
    return {v.voice_id: v.face_id or v.name for v in list_all(store) if v.face_id or v.name}


__all__ = ['VoiceRecord', 'valid_voice_id', 'get', 'list_all', 'save', 'delete', 'apply_event', 'speakers']
