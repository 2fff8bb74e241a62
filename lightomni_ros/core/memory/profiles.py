# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Profiles M_p keyed by ``<face_N>``: name, free attributes, avatar, and the face embedding perception matches."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .store import Store, blob_to_vec, vec_to_blob

FACE_ID = re.compile(r'^<face_\d+>$')
#: a face id inside text
FACE_MENTION = re.compile(r'<face_\d+>')
#: attribute keys the paper names (A.1); others are allowed
STANDARD_ATTRIBUTES = ('persona', 'demographics', 'occupation', 'preferences', 'relationships')


@dataclass
class Profile:
    """A person in M_p."""

    face_id: str
    name: str = ''
    attributes: dict[str, str] = field(default_factory=dict)
    avatar: bytes = b''
    avatar_format: str = ''
    embedding: np.ndarray | None = None
    embedding_backend: str = ''
    observations: int = 0
    first_seen: float = 0.0
    last_seen: float = 0.0
    segments_since_update: int = 0
    #: the robot that first stored this person ('' = this store's own robot)
    robot_id: str = ''

    def text(self) -> str:
        """Profile as one line of text (for prompts and summaries)."""
        parts = [self.face_id + (f' ({self.name})' if self.name else '')]
        parts += [f'{k}: {v}' for k, v in sorted(self.attributes.items()) if v]
        return '; '.join(parts)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (avatar and embedding as hex / list)."""
        return {'face_id': self.face_id, 'name': self.name, 'attributes': self.attributes,
                'avatar': self.avatar.hex(), 'avatar_format': self.avatar_format,
                'embedding': None if self.embedding is None else [float(x) for x in self.embedding],
                'embedding_backend': self.embedding_backend, 'observations': self.observations,
                'first_seen': self.first_seen, 'last_seen': self.last_seen,
                'segments_since_update': self.segments_since_update, 'robot_id': self.robot_id}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> 'Profile':
        """Inverse of :meth:`to_json`."""
        emb = d.get('embedding')
        return cls(face_id=str(d['face_id']), name=str(d.get('name', '')),
                   attributes={str(k): str(v) for k, v in dict(d.get('attributes') or {}).items()},
                   avatar=bytes.fromhex(d.get('avatar') or ''), avatar_format=str(d.get('avatar_format', '')),
                   embedding=None if emb is None else np.asarray(emb, np.float32),
                   embedding_backend=str(d.get('embedding_backend', '')),
                   observations=int(d.get('observations', 0)), first_seen=float(d.get('first_seen', 0.0)),
                   last_seen=float(d.get('last_seen', 0.0)),
                   segments_since_update=int(d.get('segments_since_update', 0)),
                   robot_id=str(d.get('robot_id', '')))


def valid_face_id(face_id: str) -> bool:
    """Whether ``face_id`` has the ``<face_N>`` form."""
    return bool(FACE_ID.match(face_id or ''))


def from_row(row: sqlite3.Row) -> Profile:
    """Profile from a store row."""
    return Profile(face_id=row['face_id'], name=row['name'], attributes=json.loads(row['attributes']),
                   avatar=bytes(row['avatar'] or b''), avatar_format=row['avatar_format'],
                   embedding=blob_to_vec(row['embedding']), embedding_backend=row['embedding_backend'],
                   observations=row['observations'], first_seen=row['first_seen'], last_seen=row['last_seen'],
                   segments_since_update=row['segments_since_update'], robot_id=row['robot_id'])


def get(store: Store, face_id: str) -> Profile | None:
    """One profile, or None."""
    row = store.get_profile_row(face_id)
    return from_row(row) if row else None


def list_all(store: Store, face_ids: list[str] | None = None) -> list[Profile]:
    """Profiles (all when ``face_ids`` is empty)."""
    return [from_row(r) for r in store.profile_rows(face_ids or [])]


def save(store: Store, p: Profile) -> None:
    """Create or overwrite a profile."""
    store.upsert_profile(p.face_id, name=p.name, attributes=json.dumps(p.attributes, sort_keys=True),
                         avatar=p.avatar or None, avatar_format=p.avatar_format,
                         embedding=vec_to_blob(p.embedding), embedding_backend=p.embedding_backend,
                         observations=p.observations, first_seen=p.first_seen, last_seen=p.last_seen,
                         segments_since_update=p.segments_since_update, robot_id=p.robot_id)


def unit(v: np.ndarray) -> np.ndarray:
    """An embedding as a float32 unit vector (what the galleries compare)."""
    e = np.asarray(v, np.float32)
    return e / max(float(np.linalg.norm(e)), 1e-12)


def apply_identity(store: Store, face_id: str, embedding: np.ndarray | None, backend: str, observations: int,
                   avatar: bytes, avatar_format: str, now: float, robot_id: str = '') -> Profile:
    """Record a new identity or an embedding update from perception; return the stored profile."""
    p = get(store, face_id) or Profile(face_id=face_id, first_seen=now, robot_id=robot_id)
    if embedding is not None and len(embedding):
        p.embedding, p.embedding_backend = unit(embedding), backend
    p.observations = max(p.observations, int(observations))
    if avatar:
        p.avatar, p.avatar_format = avatar, avatar_format or 'jpeg'
    p.first_seen = p.first_seen or now
    p.last_seen = max(p.last_seen, now)
    save(store, p)
    return p


__all__ = ['Profile', 'STANDARD_ATTRIBUTES', 'valid_face_id', 'unit', 'FACE_MENTION',
           'from_row', 'get', 'list_all', 'save',
           'apply_identity']
