# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The perception node's top-level config and its audio path (chunks -> 16 kHz timeline -> VAD -> speech spans)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Union

import numpy as np

from ..config import param
from .audio import TARGET_RATE, AudioBuffer, AudioConfig, AudioStream
from .vad import SpeechSpan, StreamingVad


@dataclass
class PerceptionConfig:
    """The perception node (top level)."""

    state_file: str = param('', 'JSON file keeping the next segment id and face index across restarts; empty uses '
                                '<cache_dir>/perception_state.json.')
    frame_queue: int = param(2, 'Sampled camera frames waiting for the frame worker; more are dropped (counted).',
                             min=1)
    audio_queue_s: float = param(120.0, 'Seconds of audio chunks that may wait for the audio worker (audio is never '
                                        'dropped below this).', min=5.0)
    publish_detections: bool = param(True, 'Publish every keyframe\'s faces on faces/detections (debug).')
    gallery_timeout_s: float = param(2.0, 'How long on_configure waits for the list_profiles service.', min=0.0)
    diagnostics_period_s: float = param(1.0, 'Period of /diagnostics.', min=0.1)
    warn_hold_s: float = param(10.0, 'Seconds a bad-input WARN stays on /diagnostics after the last occurrence.',
                               min=0.0)
    segment_resend_s: float = param(5.0, 'A published Segment the reflex node has not acknowledged on segments/ack '
                                         'within this time is published again (while a reflex node is up; it answers '
                                         'each segment once).', min=0.1)
    segment_outbox: int = param(256, 'Unacknowledged Segments kept for re-sending; beyond it the oldest is given up '
                                     '(diagnostics WARN).', min=1)


@dataclass(kw_only=True)
class SpeechStarted:
    """The VAD heard speech begin at sensor time ``t``."""

    t: float


@dataclass(kw_only=True)
class SpeechEnded:
    """A speech span ended: its sensor times, its 16 kHz audio and why it ended (see :class:`SpeechSpan`)."""

    start: float
    end: float
    audio: np.ndarray = field(repr=False)
    reason: str = 'silence'


@dataclass(kw_only=True)
class SpeechPaused:
    """Speech paused long enough that it may have ended: the span that then ends (as :class:`SpeechEnded`'s).

    Its speech can be heard ahead (ASR, voices) while the VAD waits out the rest of the silence that ends it.
    """

    start: float
    end: float
    audio: np.ndarray = field(repr=False)


@dataclass(kw_only=True)
class SpeechDiscarded:
    """The speech that started was too short to keep (noise)."""


SpeechEvent = Union[SpeechStarted, SpeechEnded, SpeechDiscarded]


#: a change-of-speaker test: (audio before a pause, audio after it) -> whether the voice changed
ChangeTest = Callable[[np.ndarray, np.ndarray], bool]


@dataclass(kw_only=True)
class TurnSplit:
    """When a long span is cut at a change of speaker: a pause, ``min_split_s`` into the span, ``probe_s`` each side."""

    changed: ChangeTest
    probe_s: float = 1.6
    min_split_s: float = 4.0


class AudioPath:
    """Stamped chunks in, :data:`SpeechEvent` records out (cut at pauses where the speaker changes, if asked)."""

    def __init__(self, audio_cfg: AudioConfig, vad: StreamingVad, split: TurnSplit | None = None) -> None:
        self.stream = AudioStream(audio_cfg)
        self.buffer = AudioBuffer(audio_cfg.buffer_s)
        self.vad = vad
        self.split = split
        self._checked: set[int] = set()        # pauses of the open span already tested
        self._paused: tuple[int, int] | None = None     # the span last reported by :meth:`paused`

    def push(self, stamp: float, data: bytes, sample_format: str, channels: int, sample_rate: int,
             coding_format: str = 'wave') -> list[SpeechEvent]:
        """Process one chunk (raises AudioFormatError for bad input, nothing consumed)."""
        samples = self.stream.push(stamp, data, sample_format, channels, sample_rate, coding_format)
        return self._feed(samples)

    def _feed(self, samples: np.ndarray) -> list[SpeechEvent]:
        self.buffer.append(samples)
        raw = self.vad.feed(samples)
        if any(kind != 'start' for kind, _ in raw):
            self._checked = set()           # a new span: its pauses are new
        if self.split is not None and self.vad.in_speech:
            raw += self._turn_cut()
        return [self._event(kind, val) for kind, val in raw]

    def _turn_cut(self) -> list[tuple[str, object]]:
        """Cut the open span at the first untested pause where the voice before and after differ."""
        sp, vad = self.split, self.vad
        probe = int(sp.probe_s * TARGET_RATE)
        for a, b in vad.pauses():
            mid = (a + b) // 2
            if mid in self._checked or vad.pos - b < probe:
                continue
            self._checked.add(mid)
            if mid - vad.span_begin < sp.min_split_s * TARGET_RATE:
                continue
            if sp.changed(self.buffer.slice(max(vad.span_begin, a - probe), a), self.buffer.slice(b, b + probe)):
                self._checked = {m for m in self._checked if m > mid}
                return vad.split(mid, 'turn')
        return []

    def paused(self, silence_ms: float, max_s: float) -> SpeechPaused | None:
        """The open span, once per pause, when ``silence_ms`` of silence may be its end (spans up to ``max_s``)."""
        span = self.vad.pending_span(silence_ms)
        if span is None or (span.start, span.end) == self._paused or span.end - span.start > max_s * TARGET_RATE:
            return None
        self._paused = (span.start, span.end)
        return SpeechPaused(start=self.stream.time_of(span.start), end=self.stream.time_of(span.end),
                            audio=self.buffer.slice(span.start, span.end))

    def _event(self, kind: str, val: object) -> SpeechEvent:
        if kind == 'start':
            return SpeechStarted(t=self.stream.time_of(int(val)))
        if kind == 'end':
            span: SpeechSpan = val
            return SpeechEnded(start=self.stream.time_of(span.start), end=self.stream.time_of(span.end),
                               audio=self.buffer.slice(span.start, span.end), reason=span.reason)
        return SpeechDiscarded()

    def segment_audio(self, start: float, end: float) -> np.ndarray:
        """The audio of [start, end] (sensor times) still in the buffer."""
        return self.buffer.slice(self.stream.index_of(start), self.stream.index_of(end))

    def flush(self) -> list[SpeechEvent]:
        """End of input: close open speech."""
        return [self._event(k, v) for k, v in self.vad.flush()]

    @property
    def seconds(self) -> float:
        """Audio seconds processed."""
        return self.stream.n / TARGET_RATE
