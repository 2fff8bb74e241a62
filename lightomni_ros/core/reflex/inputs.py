# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""A closed segment (perception's record) -> the reflex core's input I^t: one conversion for the node and the facade."""

from __future__ import annotations

import numpy as np

from ..segment import PROACTIVE, SegmentData
from .people import speaking_face
from .types import SegmentInput


def speech_start(seg: SegmentData) -> float:
    """When the segment's speech began (sensor time): its first word, else the VAD span start (0 without speech)."""
    if seg.words:
        return seg.start + seg.words[0].start
    return seg.speech_start


def segment_input(seg: SegmentData, decode_frames: bool) -> SegmentInput:
    """The reflex core's view of ``seg`` (keyframes decoded only for a backbone that sees them)."""
    frames, times = [], []
    if decode_frames:
        import cv2

        for kf in seg.keyframes:
            img = cv2.imdecode(np.frombuffer(kf.jpeg, np.uint8), cv2.IMREAD_COLOR)
            if img is not None:
                frames.append(img[:, :, ::-1])
                times.append(kf.stamp)
    faces = list(dict.fromkeys(f.face_id for f in seg.faces if f.face_id))
    speaker = speaking_face([(f.face_id, f.stamp) for f in seg.faces], speech_start(seg)) if seg.transcript else ''
    return SegmentInput(segment_id=int(seg.segment_id), start=seg.start, end=seg.end, transcript=seg.transcript,
                        typed_text=seg.typed_text, face_ids=faces, visual_tags=list(seg.visual_tags), frames=frames,
                        frame_times=times, audio_uri=seg.audio_uri, speech_end=seg.speech_end,
                        proactive=seg.trigger == PROACTIVE, speaker_face=speaker, turns=list(seg.turns))


__all__ = ['segment_input', 'speech_start']
