# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Input segments I^t = {frames, audio, text} (paper Algorithm 1, C.2).

A segment closes at the end of speech, at once on typed text, or ``timeout_s`` after it opened when no speech is
going on. All times are sensor stamps in seconds. At end of speech the segment is cut at the end of the speech span
and handed back without transcript; the caller transcribes the span and fills it in (keyframes that arrive meanwhile
belong to the next segment). Segment ids continue across restarts through :class:`PerceptionState`.
"""

from __future__ import annotations

import json
import os
import pathlib
import threading
from dataclasses import dataclass

import numpy as np

from ..config import param
from ..segment import END_OF_SPEECH, TIMEOUT, TYPED_TEXT, FaceSeen, KeyframeData, SegmentData


@dataclass
class SegmenterConfig:
    """Segment boundaries and what a segment keeps."""

    timeout_s: float = param(30.0, 'A segment with no speech going on closes this long after it opened (paper C.2).',
                             min=1.0)
    audio_store: str = param('speech', 'Audio written as a 16 kHz WAV per segment (Segment.audio_uri): none, the '
                                       'speech span, or the whole segment.', choices=['none', 'speech', 'segment'])
    audio_dir: str = param('', 'Folder for segment WAVs; empty uses <cache_dir>/segments.')
    max_faces: int = param(20, 'Most identities listed per segment (most recently seen first).', min=1)
    max_hints: int = param(5, 'Most visual hints per segment (most frequent first).', min=0)
    publish_empty: bool = param(False, 'Publish a time-out segment in which nothing was seen or heard (no keyframe '
                                       'kept, no face, no speech): each costs a reflex pass and a memory pass that '
                                       'store nothing (a camera on a still scene keeps no keyframes). False skips it '
                                       '(counted as segments_empty_skipped); its span joins the next segment.')


def thin(items: list, n: int) -> list:
    """At most ``n`` items, evenly spread, first and last kept."""
    if len(items) <= n:
        return list(items)
    if n == 1:
        return [items[-1]]
    idx = np.linspace(0, len(items) - 1, n).round().astype(int)
    return [items[i] for i in idx]


class Segmenter:
    """Collects keyframes, faces, speech and typed text; closes segments by the three rules (thread-safe)."""

    def __init__(self, cfg: SegmenterConfig | None = None, next_id: int = 1, max_keyframes: int = 30) -> None:
        self.cfg = cfg or SegmenterConfig()
        self.next_id = next_id
        self.max_keyframes = max_keyframes
        self._lock = threading.RLock()
        self.start: float | None = None
        self.speech_active = False
        self._keyframes: list[KeyframeData] = []
        self._faces: dict[int, list[FaceSeen]] = {}     # track id -> recent observations, oldest first
        self._hints: dict[str, int] = {}
        self.empty_skipped = 0

    def _open(self, t: float) -> None:
        if self.start is None:
            self.start = t

    def add_keyframe(self, kf: KeyframeData) -> None:
        """A kept keyframe."""
        with self._lock:
            self._open(kf.stamp)
            self._keyframes.append(kf)
            if len(self._keyframes) > 4 * self.max_keyframes:
                self._keyframes = thin(self._keyframes, 2 * self.max_keyframes)
            for h in kf.hints:
                self._hints[h] = self._hints.get(h, 0) + 1

    def add_faces(self, faces: list[FaceSeen]) -> None:
        """Faces of one keyframe; the latest observation per track is kept."""
        with self._lock:
            for f in faces:
                self._open(f.stamp)
                # A few recent observations per track: the segment may close at a time before the latest one.
                self._faces[f.track_id] = (self._faces.get(f.track_id, []) + [f])[-8:]

    def forget_face(self, face_id: str) -> None:
        """Remove a forgotten identity from the open segment."""
        with self._lock:
            self._faces = {k: [f for f in obs if f.face_id != face_id] for k, obs in self._faces.items()}

    def speech_started(self, t: float) -> None:
        """VAD found the start of speech at ``t``."""
        with self._lock:
            self._open(t)
            self.speech_active = True

    def speech_discarded(self) -> None:
        """The speech that started was too short (noise)."""
        with self._lock:
            self.speech_active = False

    def speech_ended(self, span_start: float, span_end: float) -> SegmentData:
        """End of speech: close the segment at ``span_end`` (transcript filled in by the caller)."""
        with self._lock:
            self._open(span_start)
            seg = self._close(span_end, END_OF_SPEECH)
            seg.speech_start, seg.speech_end = span_start, span_end
            seg.speech_duration = max(0.0, span_end - span_start)
            self.speech_active = False
            return seg

    def typed(self, t: float, text: str) -> SegmentData:
        """Typed instruction: close the segment now with it."""
        with self._lock:
            self._open(t)
            seg = self._close(t, TYPED_TEXT)
            seg.typed_text = text
            return seg

    def tick(self, now: float) -> SegmentData | None:
        """Close on time-out when due."""
        with self._lock:
            if self.start is None or now < self.start - self.cfg.timeout_s:
                # Sensor time jumped back (a bag restarted, or the first sensor stamp followed a wall-clock fallback):
                # the open segment restarts now instead of waiting for a time that will not come.
                self.start = now
                return None
            if self.speech_active or now - self.start < self.cfg.timeout_s:
                return None
            end = self.start + self.cfg.timeout_s if now - self.start < 2 * self.cfg.timeout_s else now
            if not self.cfg.publish_empty and self._empty_until(end):
                self.empty_skipped += 1
                self.start = end
                return None
            return self._close(end, TIMEOUT)

    def _empty_until(self, end: float) -> bool:
        """Whether nothing was seen up to ``end`` (no keyframe, no face; time-outs never hold speech)."""
        return not any(k.stamp <= end for k in self._keyframes) and \
            not any(f.stamp <= end for obs in self._faces.values() for f in obs)

    def _close(self, end: float, trigger: int) -> SegmentData:
        start = self.start if self.start is not None else end
        start = min(start, end)
        before = [k for k in self._keyframes if k.stamp <= end]
        after = [k for k in self._keyframes if k.stamp > end]
        faces, ids = [], set()
        # Latest first; one entry per identity; unconfirmed tracks (empty face_id) listed too.
        latest = [[f for f in obs if f.stamp <= end][-1:] for obs in self._faces.values()]
        for f in sorted((obs[0] for obs in latest if obs), key=lambda f: -f.stamp):
            if f.face_id and f.face_id in ids:
                continue
            ids.add(f.face_id)
            faces.append(f)
        faces = faces[:self.cfg.max_faces]
        hints = sorted(self._hints.items(), key=lambda kv: (-kv[1], kv[0]))[:self.cfg.max_hints]
        seg = SegmentData(self.next_id, start, end, trigger, keyframes=thin(before, self.max_keyframes), faces=faces,
                          visual_tags=[h for h, _ in hints])
        self.next_id += 1
        self.start = end
        self._keyframes = after
        self._faces = {k: [f for f in obs if f.stamp > end] for k, obs in self._faces.items()}
        self._faces = {k: obs for k, obs in self._faces.items() if obs}
        self._hints = {}
        for k in after:
            for h in k.hints:
                self._hints[h] = self._hints.get(h, 0) + 1
        return seg


class PerceptionState:
    """Counters that survive restarts (next segment id, face and voice index), in a JSON file written atomically."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = pathlib.Path(path)
        self.next_segment_id = 1
        self.next_face_index = 0
        self.next_voice_index = 0
        try:
            data = json.loads(self.path.read_text())
            self.next_segment_id = max(1, int(data.get('next_segment_id', 1)))
            self.next_face_index = max(0, int(data.get('next_face_index', 0)))
            self.next_voice_index = max(0, int(data.get('next_voice_index', 0)))
        except (OSError, ValueError, TypeError):
            pass

    def save(self, next_segment_id: int, next_face_index: int, next_voice_index: int | None = None) -> None:
        """Persist the counters."""
        self.next_segment_id, self.next_face_index = next_segment_id, next_face_index
        if next_voice_index is not None:
            self.next_voice_index = next_voice_index
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f'.tmp{os.getpid()}')
        tmp.write_text(json.dumps({'next_segment_id': next_segment_id, 'next_face_index': next_face_index,
                                   'next_voice_index': self.next_voice_index}))
        os.replace(tmp, self.path)


def write_wav(path: str | os.PathLike, audio: np.ndarray, rate: int = 16000) -> str:
    """Write 16-bit mono WAV; return its file URI."""
    import soundfile as sf

    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.clip(audio, -1, 1), rate, subtype='PCM_16')
    return path.resolve().as_uri()
