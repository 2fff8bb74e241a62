# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The perception node's top-level config and its audio path (chunks -> 16 kHz timeline -> VAD -> speech spans)."""

from __future__ import annotations

from dataclasses import dataclass

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


class AudioPath:
    """Stamped chunks in, speech events out: ``('start', t)``, ``('end', t0, t1, audio)``, ``('discard', None)``."""

    def __init__(self, audio_cfg: AudioConfig, vad: StreamingVad) -> None:
        self.stream = AudioStream(audio_cfg)
        self.buffer = AudioBuffer(audio_cfg.buffer_s)
        self.vad = vad

    def push(self, stamp: float, data: bytes, sample_format: str, channels: int, sample_rate: int,
             coding_format: str = 'wave') -> list[tuple]:
        """Process one chunk (raises AudioFormatError for bad input, nothing consumed)."""
        samples = self.stream.push(stamp, data, sample_format, channels, sample_rate, coding_format)
        return self._feed(samples)

    def _feed(self, samples: np.ndarray) -> list[tuple]:
        self.buffer.append(samples)
        out = []
        for kind, val in self.vad.feed(samples):
            out.append(self._event(kind, val))
        return out

    def _event(self, kind: str, val: object) -> tuple:
        if kind == 'start':
            return ('start', self.stream.time_of(int(val)))
        if kind == 'end':
            span: SpeechSpan = val
            audio = self.buffer.slice(span.start, span.end)
            return ('end', self.stream.time_of(span.start), self.stream.time_of(span.end), audio)
        return ('discard', None)

    def flush(self) -> list[tuple]:
        """End of input: close open speech."""
        return [self._event(k, v) for k, v in self.vad.flush()]

    @property
    def seconds(self) -> float:
        """Audio seconds processed."""
        return self.stream.n / TARGET_RATE
