# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Plain data types of the reflex subsystem (no ROS): the segment I^t as the model reads it, memories, decisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..segment import SpeakerTurn
from ..text import UNSEEN_SPEAKER, unseen_voice
from ..topic import ReminderIntent

#: the speaker of a segment nobody in particular can be named for (several faces, no sighting singles one out)
SOMEONE = 'someone'


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
    #: who spoke when (perception's voices and the faces they belong to); empty when perception gave none
    turns: list[SpeakerTurn] = field(default_factory=list)

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
        heard = self.transcript.strip() and not self.typed_text.strip()
        voices = {self.turn_speaker(t) for t in self.turns if t.text.strip()} if heard else set()
        if len(voices) == 1 and SOMEONE not in voices:
            return voices.pop()
        if self.speaker_face and heard:
            return self.speaker_face
        if len(self.face_ids) == 1:
            return self.face_ids[0]
        if not self.face_ids and heard:
            return UNSEEN_SPEAKER
        return SOMEONE

    def turn_speaker(self, turn: SpeakerTurn) -> str:
        """Who spoke in one turn.

        Its face (linked to the voice, or seen talking), else its voice ("<voice_2>, an unseen speaker ..." with
        nobody in view), else the segment's own rule.
        """
        if turn.face_id:
            return turn.face_id
        if turn.voice_id:
            return unseen_voice(turn.voice_id) if not self.face_ids else turn.voice_id
        if len(self.face_ids) == 1:
            return self.face_ids[0]
        return UNSEEN_SPEAKER if not self.face_ids else SOMEONE

    def said(self) -> list[tuple[str, str]]:
        """(who, words) in order: one pair per run of one speaker's turns, or the whole utterance with its speaker."""
        if self.typed_text.strip() or not any(t.text.strip() for t in self.turns):
            return [(self.speaker, self.utterance)] if self.utterance else []
        out: list[tuple[str, str]] = []
        for t in self.turns:
            if not t.text.strip():
                continue
            who = self.turn_speaker(t)
            if out and out[-1][0] == who:
                out[-1] = (who, f'{out[-1][1]} {t.text.strip()}')
            else:
                out.append((who, t.text.strip()))
        return out


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

    ref: str        # "semantic:<id>", "episodic:<id>", "profile:<face_id>" or "recent:<segment>"
    text: str
    score: float = 0.0
    # when it was said, written as memory writes times, for an item whose text has none (a recent interaction):
    # it outlives its consolidation, so a fact stored since may be newer than it
    said: str = ''


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


@dataclass
class PrefixWarmup:
    """What one sleep-time prefix warm-up did."""

    built: int = 0                # prefixes completed
    prefilled_tokens: int = 0     # tokens prefilled (the rest came from a cached prefix)
    preempted: bool = False       # a user pass stopped it between chunks (its progress is kept)


@dataclass(kw_only=True)
class ResponsePrompt:
    """A prefilled response prompt that several decodes read (the greedy reply, then a retry's beams)."""

    seg: SegmentInput
    memories: list[MemoryItem]
    context: str                  # the S_g view the prompt read ('' for the newest part of S_g)
    hidden_last: Any              # torch [1, H]: the prompt's last hidden state
    cache: Any                    # the KV cache holding the prompt (cut back to ``length`` after each decode)
    length: int
    end: int                      # position of the first generated token
    tokens: int                   # prompt tokens in all (prefix included)

    def reads(self, seg: SegmentInput, memories: list[MemoryItem], context: str) -> bool:
        """Whether this is the prompt of ``seg``, ``memories`` and ``context`` (same objects), still in its cache."""
        return self.seg is seg and self.memories is memories and self.context == context \
            and int(self.cache.get_seq_length()) == self.length


@dataclass(kw_only=True)
class SpeechChunk:
    """One piece of a spoken reply, ready before the whole reply (msg/SpeechChunk.msg)."""

    segment_id: int     # the segment answered (0: a reminder)
    index: int          # 0, 1, ... within the reply
    text: str           # the words to say ('' only on a final piece that adds nothing)
    final: bool         # the last piece of this reply
    ms: float = 0.0     # when it was ready, from the start of the decision


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
    #: the spoken response in the pieces it was published in (the first sentence as soon as it was ready)
    chunks: list[SpeechChunk] = field(default_factory=list)
    #: the memories the response prompt showed (refs; a subset of ``memory_ids``), for diagnosing a reply
    shown_ids: list[str] = field(default_factory=list)
