# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Plain data types of the reflex subsystem (no ROS): the segment I^t as the model reads it, memories, decisions."""

from __future__ import annotations

from dataclasses import dataclass, field
import numpy as np

from ..topic import ReminderIntent

#: Who spoke when speech was heard and nobody was in view: most often a device or someone out of the camera's sight,
#: which is also how people ask about it ("what did the man on the radio say?").
UNSEEN_SPEAKER = 'an unseen speaker (radio, TV, phone or out of sight)'


@dataclass(kw_only=True)
class SegmentInput:
    """The input segment I^t as the reflex core sees it (the ROS Segment without transport details)."""

    segment_id: int
    start: float = 0.0
    end: float = 0.0
    transcript: str = ''
    typed_text: str = ''
    face_ids: list[str] = field(default_factory=list)
    visual_tags: list[str] = field(default_factory=list)
    #: keyframes as HxWx3 uint8 RGB arrays (omni backbone); may be empty
    frames: list[np.ndarray] = field(default_factory=list)
    #: capture times of the frames (seconds), same length as ``frames`` when given
    frame_times: list[float] = field(default_factory=list)
    audio_uri: str = ''
    speech_end: float = 0.0
    proactive: bool = False
    #: the face in view while the speech was heard, when perception's sightings single one out (see
    #: :func:`~lightomni_ros.core.reflex.people.speaking_face`); '' otherwise
    speaker_face: str = ''

    @property
    def utterance(self) -> str:
        """What the user said or typed (typed text wins when both exist)."""
        return (self.typed_text or self.transcript).strip()

    @property
    def speaker(self) -> str:
        """Who said or typed the utterance.

        The face perception saw while the words were spoken, else the only visible face, :data:`UNSEEN_SPEAKER` for
        speech heard with nobody in view, else "someone" (several faces and no sighting singles one out).
        """
        if self.speaker_face and self.transcript.strip() and not self.typed_text.strip():
            return self.speaker_face
        if len(self.face_ids) == 1:
            return self.face_ids[0]
        if not self.face_ids and self.transcript.strip() and not self.typed_text.strip():
            return UNSEEN_SPEAKER
        return 'someone'


@dataclass(kw_only=True)
class StateNode:
    """One node of the global state S_g as the reflex core reads it (for questions about a span of time)."""

    level: int
    start: float
    end: float
    text: str


@dataclass
class MemoryItem:
    """One retrieved memory entry or profile, already rendered as text."""

    ref: str        # "semantic:<id>", "episodic:<id>" or "profile:<face_id>"
    text: str
    score: float = 0.0


@dataclass
class Retrieved:
    """What a QueryMemory call returned."""

    semantic: list[MemoryItem] = field(default_factory=list)
    episodic: list[MemoryItem] = field(default_factory=list)
    profiles: list[MemoryItem] = field(default_factory=list)
    latency_ms: float = 0.0
    error: str = ''

    @property
    def items(self) -> list[MemoryItem]:
        """Profiles first, then semantic, then episodic."""
        return self.profiles + self.semantic + self.episodic


@dataclass
class ReflexOutput:
    """Result of the reflex pass (paper Eq. 3)."""

    p_speech: float
    p_search: float
    z_ret: np.ndarray
    query: np.ndarray           # normalize(z_ret + e(transcript)); empty when no embedder
    backend: str
    prompt_tokens: int
    text_embedding: np.ndarray | None = None   # e(transcript), reused by retrieval of recent interactions


@dataclass(kw_only=True)
class Decision:
    """Everything the node publishes as an Action for one segment."""

    segment_id: int
    p_speech: float
    p_search: float
    speak: bool
    search: bool
    response: str
    memory_ids: list[str]
    latency_ms: dict[str, float]
    backend: str
    query: np.ndarray
    notes: list[str] = field(default_factory=list)
    response_source: str = ''      # "generated", "extractive" or "template" (msg/Action.msg)
    #: time intents of the utterance, stored when answered, not after the memory pass
    reminders: list[ReminderIntent] = field(default_factory=list)
    #: version of the global state S_g the reflex pass read (which memory the decision saw)
    sg_version: int = 0
