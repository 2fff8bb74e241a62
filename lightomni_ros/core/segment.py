# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The input segment I^t = {frames, audio, text} as perception closes it (paper Algorithm 1).

The typed record every subsystem exchanges; the Segment message carries the same fields between the nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Segment.trigger values (msg/Segment.msg): end of speech, typed text, time-out
END_OF_SPEECH, TYPED_TEXT, TIMEOUT = 0, 1, 2
#: Segment.trigger of a segment the robot speaks on unprompted (a reminder is due)
PROACTIVE = 3


@dataclass
class KeyframeData:
    """A kept keyframe: JPEG, feature, sharpness, hints."""

    stamp: float
    jpeg: bytes = field(repr=False)
    feature: np.ndarray = field(repr=False)
    sharpness: float
    hints: list[str] = field(default_factory=list)
    width: int = 0
    height: int = 0


@dataclass
class FaceSeen:
    """A face seen in a keyframe."""

    face_id: str
    track_id: int
    box: tuple[float, float, float, float]
    score: float
    match_distance: float
    stamp: float


@dataclass
class WordData:
    """A word with times in seconds since the segment start."""

    word: str
    start: float
    end: float
    probability: float


@dataclass(kw_only=True)
class SpeakerTurn:
    """Who spoke when inside a segment: times in seconds since the segment start.

    ``voice_id`` is perception's voice identity (``<voice_N>``, '' when too short to tell); ``face_id`` the face that
    voice belongs to (linked) or the one face seen while it spoke; ``text`` the transcript's words inside the turn.
    """

    start: float
    end: float
    voice_id: str = ''
    face_id: str = ''
    text: str = ''


@dataclass
class SegmentData:
    """One closed segment."""

    segment_id: int
    start: float
    end: float
    trigger: int
    speech_start: float = 0.0
    speech_end: float = 0.0
    transcript: str = ''
    words: list[WordData] = field(default_factory=list)
    language: str = ''
    typed_text: str = ''
    keyframes: list[KeyframeData] = field(default_factory=list)
    faces: list[FaceSeen] = field(default_factory=list)
    visual_tags: list[str] = field(default_factory=list)
    audio_uri: str = ''
    speech_duration: float = 0.0
    turns: list[SpeakerTurn] = field(default_factory=list)

    def set_transcript(self, text: str, words: list, language: str, offset: float) -> None:
        """Fill in the ASR result of the span; ``offset`` = span start - segment start (seconds)."""
        self.transcript = text
        self.language = language
        self.words = [WordData(w.word, offset + w.start, offset + w.end, w.probability) for w in words]


__all__ = ['KeyframeData', 'FaceSeen', 'WordData', 'SpeakerTurn', 'SegmentData', 'END_OF_SPEECH', 'TYPED_TEXT',
           'TIMEOUT', 'PROACTIVE']
