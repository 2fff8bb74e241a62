# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Identity registry: stable ``<face_N>`` ids, matched against the stored gallery, kept in step with it.

The consolidation node owns identities (profiles); this registry is perception's in-memory copy. Stored identities
arrive as a gallery (latched topic or ListProfiles on configure) and replace the copy; identities created here since the
last gallery are kept until the gallery acknowledges them. An identity missing from a newer gallery, or announced as
forgotten, is dropped. New ids continue after the highest N ever seen (gallery or local counter), so an id is never
reused for a different person, also across restarts.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

FACE_ID = re.compile(r'^<face_(\d+)>$')


def face_index(face_id: str) -> int | None:
    """N of ``<face_N>`` (None for another form)."""
    m = FACE_ID.match(face_id)
    return int(m.group(1)) if m else None


def nearest(embedding: np.ndarray, gallery: Iterable[tuple[str, np.ndarray]],
            distance: Callable[[np.ndarray, np.ndarray], float], threshold: float) -> tuple[str, float] | None:
    """The gallery entry closest to ``embedding`` under ``threshold``: (id, distance); other shapes are skipped."""
    best = None
    for key, emb in gallery:
        if emb.shape != embedding.shape:
            continue
        d = distance(embedding, emb)
        if d < threshold and (best is None or d < best[1]):
            best = (key, d)
    return best


@dataclass
class Identity:
    """One known person: mean embedding over ``observations`` detections."""

    face_id: str
    embedding: np.ndarray
    observations: int = 1
    backend: str = ''
    stored: bool = False        # present in the last gallery from the consolidation node
    _since_update: int = 0


@dataclass
class IdentityEvent:
    """Something perception reports to the consolidation node: op 'new' or 'update'."""

    op: str
    face_id: str
    embedding: np.ndarray
    observations: int
    backend: str
    avatar: np.ndarray | None = field(default=None, repr=False)


class IdentityRegistry:
    """Thread-safe identity gallery with nearest-neighbour matching."""

    def __init__(self, backend_name: str, distance: Callable[[np.ndarray, np.ndarray], float],
                 threshold: float, update_every: int = 10, next_index: int = 0) -> None:
        self.backend_name = backend_name
        self.distance = distance
        self.threshold = threshold
        self.update_every = update_every
        self.next_index = next_index
        self.identities: dict[str, Identity] = {}
        self.gallery_version = -1
        self.skipped_foreign = 0     # gallery entries from another backend (not comparable)
        self._lock = threading.RLock()

    def match(self, embedding: np.ndarray) -> tuple[str, float] | None:
        """Nearest identity under the threshold: (face_id, distance)."""
        with self._lock:
            return nearest(embedding, ((f, i.embedding) for f, i in self.identities.items()), self.distance,
                           self.threshold)

    def create(self, embedding: np.ndarray, observations: int, avatar: np.ndarray | None = None) -> IdentityEvent:
        """A new identity ``<face_N>`` for a confirmed track."""
        with self._lock:
            face_id = f'<face_{self.next_index}>'
            self.next_index += 1
            ident = Identity(face_id, np.asarray(embedding, np.float32).copy(), max(1, observations), self.backend_name)
            self.identities[face_id] = ident
            return IdentityEvent('new', face_id, ident.embedding.copy(), ident.observations, self.backend_name, avatar)

    def observe(self, face_id: str, embedding: np.ndarray) -> IdentityEvent | None:
        """Fold one observation into the identity's mean; every ``update_every`` observations report an update."""
        with self._lock:
            ident = self.identities.get(face_id)
            if ident is None or ident.embedding.shape != embedding.shape:
                return None
            ident.observations += 1
            # A running mean that keeps adapting slowly (appearance changes over months).
            w = 1.0 / min(ident.observations, 100)
            ident.embedding = ((1 - w) * ident.embedding + w * embedding).astype(np.float32)
            ident._since_update += 1
            if ident._since_update >= self.update_every:
                ident._since_update = 0
                return IdentityEvent('update', face_id, ident.embedding.copy(), ident.observations, self.backend_name)
            return None

    def forget(self, face_id: str) -> bool:
        """Drop an identity (the consolidation node forgot the person); True when it was known."""
        with self._lock:
            return self.identities.pop(face_id, None) is not None

    def sync(self, entries: list[tuple[str, np.ndarray, int, str]], version: int | None = None) -> list[str]:
        """Replace stored identities by a gallery [(face_id, embedding, observations, backend)]; return dropped ids.

        Entries of another backend are skipped (their embeddings are not comparable); an older version is ignored.
        """
        with self._lock:
            if version is not None:
                if version < self.gallery_version:
                    return []
                self.gallery_version = version
            incoming = {}
            for face_id, emb, obs, backend in entries:
                n = face_index(face_id)
                if n is not None:
                    self.next_index = max(self.next_index, n + 1)
                if backend and backend != self.backend_name:
                    self.skipped_foreign += 1
                    continue
                emb = np.asarray(emb, np.float32)
                if emb.size == 0:
                    continue
                incoming[face_id] = Identity(face_id, emb.copy(), max(1, int(obs)), backend or self.backend_name,
                                             stored=True)
            dropped = [fid for fid, ident in self.identities.items() if ident.stored and fid not in incoming]
            for fid in dropped:
                del self.identities[fid]
            for fid, ident in incoming.items():
                cur = self.identities.get(fid)
                if cur is not None and cur.observations > ident.observations:
                    # Our copy has folded in more observations than the store has seen yet: keep it.
                    cur.stored = True
                    continue
                self.identities[fid] = ident
            return dropped

    def ids(self) -> list[str]:
        """Known face ids."""
        with self._lock:
            return sorted(self.identities, key=lambda f: (face_index(f) or 0, f))
