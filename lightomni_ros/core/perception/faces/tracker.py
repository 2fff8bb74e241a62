# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Face tracks across keyframes (box overlap + embedding), with an EMA of each track's embedding (paper A.1).

:class:`FacePipeline` runs one keyframe: backend detection, track association, confirmation after
``confirm_hits`` consistent detections, identity matching/creation in the registry, and the events to report.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

import numpy as np

from .backend import FaceBackend, FaceDetection, FacesConfig
from .registry import IdentityEvent, IdentityRegistry


def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes."""
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


@dataclass
class Track:
    """One tracked face."""

    track_id: int
    box: tuple[float, float, float, float]
    embedding: np.ndarray
    score: float
    hits: int = 1
    age: int = 0                    # keyframes since the last detection
    face_id: str = ''
    match_distance: float = -1.0
    crop: np.ndarray | None = field(default=None, repr=False)


class Tracker:
    """Greedy association of detections to tracks; embeddings smoothed by an EMA."""

    def __init__(self, cfg: FacesConfig, backend: FaceBackend, threshold: float) -> None:
        self.cfg = cfg
        self.backend = backend
        self.threshold = threshold
        self.tracks: list[Track] = []
        self._ids = itertools.count(1)

    def update(self, dets: list[FaceDetection]) -> list[Track]:
        """Associate this keyframe's detections; return the tracks seen in it (in detection order)."""
        pairs = []
        for di, det in enumerate(dets):
            for ti, tr in enumerate(self.tracks):
                d = self.backend.distance(det.embedding, tr.embedding)
                ov = iou(det.box, tr.box)
                # Same appearance, or same place with a looser appearance check (pose/light change between frames).
                if d < self.threshold or (ov >= self.cfg.track_iou and d < 1.5 * self.threshold):
                    pairs.append((d, di, ti))
        pairs.sort()
        used_d, used_t = set(), set()
        seen: dict[int, Track] = {}
        a = self.cfg.ema_alpha
        for d, di, ti in pairs:
            if di in used_d or ti in used_t:
                continue
            used_d.add(di)
            used_t.add(ti)
            tr, det = self.tracks[ti], dets[di]
            tr.embedding = ((1 - a) * tr.embedding + a * det.embedding).astype(np.float32)
            tr.box, tr.score, tr.age = det.box, det.score, 0
            if d < self.threshold:
                tr.hits += 1       # only appearance-consistent detections count towards confirmation
            if det.crop is not None and det.score >= tr.score * 0.9:
                tr.crop = det.crop
            seen[di] = tr
        for tr in self.tracks:
            if tr not in seen.values():
                tr.age += 1
        self.tracks = [t for t in self.tracks if t.age <= self.cfg.track_max_age]
        for di, det in enumerate(dets):
            if di not in seen:
                tr = Track(next(self._ids), det.box, np.asarray(det.embedding, np.float32).copy(), det.score,
                           crop=det.crop)
                self.tracks.append(tr)
                seen[di] = tr
        return [seen[i] for i in range(len(dets))]

    def drop_identity(self, face_id: str) -> int:
        """End every live track of a forgotten identity; return how many."""
        before = len(self.tracks)
        self.tracks = [t for t in self.tracks if t.face_id != face_id]
        return before - len(self.tracks)


class FacePipeline:
    """Detection -> tracking -> identities for one keyframe at a time."""

    def __init__(self, backend: FaceBackend, cfg: FacesConfig, next_index: int = 0) -> None:
        self.backend = backend
        self.cfg = cfg
        self.threshold = cfg.match_threshold or backend.default_threshold
        self.tracker = Tracker(cfg, backend, self.threshold)
        self.registry = IdentityRegistry(backend.name, backend.distance, self.threshold, cfg.update_every,
                                         next_index)
        self._lock = threading.Lock()      # forget() comes from another thread than process()

    def process(self, rgb: np.ndarray) -> tuple[list[Track], list[IdentityEvent]]:
        """Run one keyframe; return the visible tracks and identity events (new / update)."""
        dets = self.backend.detect(rgb)
        with self._lock:
            return self._assign(self.tracker.update(dets))

    def _assign(self, tracks: list[Track]) -> tuple[list[Track], list[IdentityEvent]]:
        events: list[IdentityEvent] = []
        for tr in tracks:
            if tr.face_id and tr.face_id not in self.registry.identities:
                tr.face_id = ''           # forgotten meanwhile
            if not tr.face_id:
                m = self.registry.match(tr.embedding)
                if m is not None:
                    tr.face_id, tr.match_distance = m
                elif tr.hits >= self.cfg.confirm_hits:
                    ev = self.registry.create(tr.embedding, tr.hits, tr.crop)
                    tr.face_id, tr.match_distance = ev.face_id, 0.0
                    events.append(ev)
                    continue
            if tr.face_id:
                ident = self.registry.identities.get(tr.face_id)
                if ident is not None:
                    tr.match_distance = self.backend.distance(tr.embedding, ident.embedding)
                ev = self.registry.observe(tr.face_id, tr.embedding)
                if ev is not None:
                    events.append(ev)
        return tracks, events

    def forget(self, face_id: str) -> bool:
        """Drop an identity and its live tracks."""
        with self._lock:
            known = self.registry.forget(face_id)
            self.tracker.drop_identity(face_id)
            return known
