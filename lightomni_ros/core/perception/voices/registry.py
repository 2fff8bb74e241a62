# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Voice registry: stable ``<voice_N>`` ids for the voices perception hears, like the face registry for faces.

The consolidation node stores voice identities (``voices`` table of the memory store, with the face a voice was seen
talking with and the name it gave); this is perception's in-memory copy, replaced by each gallery it publishes.
A voice is matched by the cosine similarity of its speaker embedding to each identity's mean; a new identity needs
``min_new_s`` seconds of one voice in a turn. A voice heard while exactly one face is in view counts towards a link
to that face; ``link_hits`` such turns (and none with another face) link them, after which the voice speaks as that
face. Ids are never reused (the counter continues after the highest N seen, across restarts).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

import numpy as np

from ..faces.registry import nearest
from .encoder import similarity

VOICE_ID = re.compile(r'^<voice_(\d+)>$')


def voice_index(voice_id: str) -> int | None:
    """N of ``<voice_N>`` (None for another form)."""
    m = VOICE_ID.match(voice_id or '')
    return int(m.group(1)) if m else None


@dataclass
class Voice:
    """One known voice: mean embedding over ``observations`` seconds of speech."""

    voice_id: str
    embedding: np.ndarray = field(repr=False)
    observations: float = 0.0
    backend: str = ''
    face_id: str = ''
    name: str = ''
    stored: bool = False
    face_votes: dict[str, int] = field(default_factory=dict)
    _since_update: float = 0.0


@dataclass(kw_only=True)
class VoiceEvent:
    """What perception reports to the consolidation node: op 'new', 'update' or 'link' (a face seen talking)."""

    op: str
    voice_id: str
    embedding: np.ndarray = field(repr=False)
    observations: float
    backend: str
    face_id: str = ''


@dataclass(kw_only=True)
class VoiceGalleryEntry:
    """A stored voice as the consolidation node publishes it."""

    voice_id: str
    embedding: np.ndarray = field(repr=False)
    observations: float = 0.0
    backend: str = ''
    face_id: str = ''
    name: str = ''


class VoiceRegistry:
    """Thread-safe voice gallery with nearest-neighbour matching."""

    def __init__(self, backend: str, threshold: float, update_every_s: float = 30.0, link_hits: int = 2,
                 next_index: int = 0) -> None:
        self.backend = backend
        self.threshold = threshold
        self.update_every_s = update_every_s
        self.link_hits = link_hits
        self.next_index = next_index
        self.voices: dict[str, Voice] = {}
        self.gallery_version = -1
        self._lock = threading.RLock()

    def match(self, embedding: np.ndarray) -> tuple[str, float] | None:
        """Most similar voice at or above the threshold: (voice_id, similarity)."""
        with self._lock:
            hit = nearest(embedding, ((k, v.embedding) for k, v in self.voices.items()),
                          lambda a, b: 1.0 - similarity(a, b), 1.0 - self.threshold + 1e-9)
            return None if hit is None else (hit[0], 1.0 - hit[1])

    def create(self, embedding: np.ndarray, seconds: float) -> VoiceEvent:
        """A new identity for a voice heard for ``seconds``."""
        with self._lock:
            vid = f'<voice_{self.next_index}>'
            self.next_index += 1
            e = _unit(embedding)
            self.voices[vid] = Voice(vid, e, float(seconds), self.backend)
            return VoiceEvent(op='new', voice_id=vid, embedding=e.copy(), observations=float(seconds),
                              backend=self.backend)

    def observe(self, voice_id: str, embedding: np.ndarray, seconds: float) -> VoiceEvent | None:
        """Fold ``seconds`` of speech into the voice's mean; report an update every ``update_every_s`` seconds."""
        with self._lock:
            v = self.voices.get(voice_id)
            if v is None or v.embedding.shape != embedding.shape:
                return None
            # weight by speech time, capped: the mean keeps adapting slowly (voices change with health and mood)
            w = seconds / max(min(v.observations + seconds, 600.0), 1e-9)
            v.embedding = _unit((1 - w) * v.embedding + w * _unit(embedding))
            v.observations += seconds
            v._since_update += seconds
            if v._since_update >= self.update_every_s:
                v._since_update = 0.0
                return VoiceEvent(op='update', voice_id=voice_id, embedding=v.embedding.copy(),
                                  observations=v.observations, backend=self.backend, face_id=v.face_id)
            return None

    def seen_with(self, voice_id: str, face_id: str) -> VoiceEvent | None:
        """The voice spoke while ``face_id`` alone was in view: link them after ``link_hits`` such turns."""
        with self._lock:
            v = self.voices.get(voice_id)
            if v is None or not face_id or v.face_id:
                return None
            v.face_votes[face_id] = v.face_votes.get(face_id, 0) + 1
            best = max(v.face_votes, key=v.face_votes.get)
            others = sum(n for f, n in v.face_votes.items() if f != best)
            if v.face_votes[best] - others < self.link_hits:
                return None
            v.face_id = best
            return VoiceEvent(op='link', voice_id=voice_id, embedding=v.embedding.copy(),
                              observations=v.observations, backend=self.backend, face_id=best)

    def get(self, voice_id: str) -> Voice | None:
        """A known voice."""
        with self._lock:
            return self.voices.get(voice_id)

    def forget(self, voice_id: str) -> bool:
        """Drop a voice; True when it was known."""
        with self._lock:
            return self.voices.pop(voice_id, None) is not None

    def forget_face(self, face_id: str) -> list[str]:
        """Drop every voice linked to a forgotten face (and that face's votes); return the voice ids dropped."""
        with self._lock:
            gone = [vid for vid, v in self.voices.items() if v.face_id == face_id]
            for vid in gone:
                del self.voices[vid]
            for v in self.voices.values():
                v.face_votes.pop(face_id, None)
            return gone

    def sync(self, entries: list[VoiceGalleryEntry], version: int | None = None) -> list[str]:
        """Adopt the stored gallery; stored voices it no longer holds are dropped (returned)."""
        with self._lock:
            if version is not None:
                if version < self.gallery_version:
                    return []
                self.gallery_version = version
            incoming = {}
            for e in entries:
                n = voice_index(e.voice_id)
                if n is not None:
                    self.next_index = max(self.next_index, n + 1)
                emb = np.asarray(e.embedding, np.float32)
                if (e.backend and e.backend != self.backend) or emb.size == 0:
                    continue
                incoming[e.voice_id] = e
            dropped = [vid for vid, v in self.voices.items() if v.stored and vid not in incoming]
            for vid in dropped:
                del self.voices[vid]
            for vid, e in incoming.items():
                cur = self.voices.get(vid)
                if cur is not None and cur.observations > e.observations:
                    cur.stored, cur.name = True, e.name
                    cur.face_id = e.face_id or cur.face_id
                    continue
                votes = cur.face_votes if cur is not None else {}
                self.voices[vid] = Voice(vid, _unit(e.embedding), float(e.observations), e.backend or self.backend,
                                         e.face_id, e.name, stored=True, face_votes=votes)
            return dropped

    def ids(self) -> list[str]:
        """Known voice ids."""
        with self._lock:
            return sorted(self.voices, key=lambda v: (voice_index(v) or 0, v))


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, np.float32)
    return (v / max(float(np.linalg.norm(v)), 1e-9)).astype(np.float32)
