# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Hearing one speech span: its transcript (ASR) and its speaker turns (voices), written into the segment.

Turns come from :class:`~lightomni_ros.core.perception.voices.TurnTracker`; each word goes to the turn holding its
middle. A turn's face is the one face seen while it spoke (a sighting since the turn began, as the reflex side's
``speaking_face`` rule), else the face its voice is linked to (heard with nobody in view, or several); such a
sighting also counts towards linking the voice to that face. Counters of what was dropped come back for diagnostics.
"""

from __future__ import annotations

import collections
import time
from typing import Sequence

import numpy as np

from ..segment import FaceSeen, SegmentData, SpeakerTurn
from .asr import Transcriber, Word, words_text
from .voices import Turn, TurnTracker, VoiceEvent

#: a face last seen this long before a turn began still counts as in view (keyframes come about 1 s apart)
SIGHTING_SLACK_S = 0.5


def face_in_view(faces: Sequence[FaceSeen], since: float) -> str:
    """The one identified face seen since ``since`` (sensor time), else ''."""
    seen = {f.face_id for f in faces if f.face_id and f.stamp >= since - SIGHTING_SLACK_S}
    return seen.pop() if len(seen) == 1 else ''


class Hearing:
    """ASR and speaker turns of speech spans, with one transcriber and (optionally) one turn tracker."""

    def __init__(self, asr: Transcriber, tracker: TurnTracker | None = None) -> None:
        self.asr = asr
        self.tracker = tracker

    def hear(self, seg: SegmentData, audio: np.ndarray,
             once: bool = False) -> tuple[collections.Counter[str], list[VoiceEvent]]:
        """Fill in ``seg``'s transcript, words and turns from its speech span ``audio`` (``once``: one decode)."""
        counts: collections.Counter[str] = collections.Counter()
        tr = self.asr.transcribe(audio, seg.speech_start, seg.speech_end, once=once)
        counts.update(tr.counts)
        counts['asr_audio_s_total'] += tr.duration
        offset = seg.speech_start - seg.start
        seg.set_transcript(tr.text, tr.words, tr.language, offset)
        events: list[VoiceEvent] = []
        if self.tracker is not None and tr.duration > 0:
            t0 = time.perf_counter()
            turns, events = self.tracker.turns(audio)
            counts['voice_ms_total'] += (time.perf_counter() - t0) * 1000.0
            seg.turns = self._turns(seg, turns, tr.words, offset, events)
            counts['voice_turns'] += len(seg.turns)
            counts['voice_turns_unknown'] += sum(1 for t in seg.turns if not t.voice_id)
        return counts, events

    def ahead(self, audio: np.ndarray, start: float) -> dict[str, float]:
        """Hear a span that may be about to end (its ASR and voice windows): :meth:`hear` of it reuses them."""
        t0 = time.perf_counter()
        counts = self.asr.decode_ahead(audio, start)
        if not counts:      # too short to transcribe
            return counts
        if self.tracker is not None:
            self.tracker.prepare(audio)
        return counts | {'asr_ahead_ms_total': (time.perf_counter() - t0) * 1000.0}

    def _turns(self, seg: SegmentData, turns: list[Turn], words: list[Word], offset: float,
               events: list[VoiceEvent]) -> list[SpeakerTurn]:
        out = []
        reg = self.tracker.registry
        for k, t in enumerate(turns):
            last = k == len(turns) - 1
            mids = [((w.start + w.end) / 2, w) for w in words]
            mine = [w for m, w in mids if t.start <= m < t.end or (last and m >= t.end) or (k == 0 and m < t.start)]
            face = face_in_view(seg.faces, seg.start + offset + t.start) if t.voice_id else ''
            if face:
                ev = reg.seen_with(t.voice_id, face)
                if ev is not None:
                    events.append(ev)
            voice = reg.get(t.voice_id) if t.voice_id else None
            # the face seen while the turn was spoken before the face the voice was linked to: voices that sound
            # alike share an id, and the link then names whoever spoke first
            out.append(SpeakerTurn(start=offset + t.start, end=offset + t.end, voice_id=t.voice_id,
                                   face_id=face or (voice.face_id if voice is not None else ''),
                                   text=words_text(mine)))
        return out


__all__ = ['Hearing', 'face_in_view']
