# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Streaming voice activity detection with Silero VAD (ONNX, run by onnxruntime).

:class:`SileroVad` scores 32 ms windows (512 samples at 16 kHz, with the model's 64-sample context and recurrent state);
:class:`StreamingVad` turns the probabilities into speech spans with hysteresis (``threshold`` to start,
``threshold - 0.15`` to stay), a minimum silence that ends speech, padding, a minimum speech length, and a maximum
span length (the paper's 30 s segment limit).
"""

from __future__ import annotations

import logging
import pathlib
from dataclasses import dataclass

import numpy as np

from ..config import ConfigError, param

log = logging.getLogger('lightomni.perception')

WINDOW = 512
CONTEXT = 64
RATE = 16000


@dataclass
class VadConfig:
    """Voice activity detection (Silero VAD, streaming)."""

    threshold: float = param(0.5, 'Speech probability that starts speech (it continues while above threshold-0.15).',
                             min=0.05, max=0.95)
    min_silence_ms: int = param(600, 'Silence that ends a speech span (end of speech closes the segment).', min=32)
    speech_pad_ms: int = param(200, 'Audio kept before the start and after the end of each speech span.', min=0)
    min_speech_ms: int = param(250, 'Shorter speech spans are discarded as noise.', min=0)
    max_speech_s: float = param(30.0, 'A longer speech span is cut here (the paper closes a segment after 30 s).',
                                min=1.0)
    threads: int = param(1, 'onnxruntime intra-op threads for the VAD.', min=1)

    def check(self) -> None:
        """Cross-field rules."""
        if self.min_speech_ms > self.max_speech_s * 1000:
            raise ConfigError('min_speech_ms exceeds max_speech_s')


class SileroVad:
    """The Silero VAD ONNX model with its streaming state."""

    def __init__(self, path: str | pathlib.Path, threads: int = 1) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), sess_options=opts, providers=['CPUExecutionProvider'])
        self._sr = np.array(RATE, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        """Forget the recurrent state and context."""
        self._state = np.zeros((2, 1, 128), np.float32)
        self._context = np.zeros((1, CONTEXT), np.float32)

    def __call__(self, window: np.ndarray) -> float:
        """Speech probability of one 512-sample window."""
        x = np.concatenate([self._context, window.reshape(1, WINDOW).astype(np.float32)], axis=1)
        out, self._state = self.session.run(None, {'input': x, 'state': self._state, 'sr': self._sr})
        self._context = x[:, -CONTEXT:]
        return float(out[0, 0])


@dataclass
class SpeechSpan:
    """One detected speech span in absolute 16 kHz sample indices (padding included); ``forced`` if cut at max."""

    start: int
    end: int
    forced: bool = False


class StreamingVad:
    """Feed 16 kHz samples of any length; get ``('start', index)`` and ``('end', SpeechSpan)`` events."""

    def __init__(self, model: SileroVad, cfg: VadConfig | None = None) -> None:
        self.model = model
        self.cfg = cfg or VadConfig()
        self._pending = np.zeros(0, np.float32)
        self.pos = 0                          # absolute index of the next window's first sample
        self.in_speech = False
        self._speech_start = 0                # raw (unpadded) start of the current speech
        self._silence_start: int | None = None
        self._last_end = 0                    # end of the previous span (padding never overlaps it)
        self.windows = 0

    def reset(self) -> None:
        """Forget everything (the next sample is index 0 again)."""
        self.model.reset()
        self.__init__(self.model, self.cfg)

    def _ms(self, ms: float) -> int:
        return int(ms * RATE / 1000)

    def feed(self, samples: np.ndarray) -> list[tuple[str, object]]:
        """Process samples; return events in order."""
        events: list[tuple[str, object]] = []
        buf = np.concatenate([self._pending, samples]) if len(self._pending) else np.asarray(samples, np.float32)
        nwin = len(buf) // WINDOW
        cfg = self.cfg
        for i in range(nwin):
            p = self.model(buf[i * WINDOW:(i + 1) * WINDOW])
            self.windows += 1
            start = self.pos
            self.pos += WINDOW
            if p >= cfg.threshold:
                self._silence_start = None
                if not self.in_speech:
                    self.in_speech = True
                    self._speech_start = start
                    events.append(('start', max(self._last_end, start - self._ms(cfg.speech_pad_ms))))
            elif self.in_speech and p < cfg.threshold - 0.15:
                if self._silence_start is None:
                    self._silence_start = start
                if self.pos - self._silence_start >= self._ms(cfg.min_silence_ms):
                    events += self._close(self._silence_start, forced=False)
            if self.in_speech and self.pos - self._speech_start >= cfg.max_speech_s * RATE:
                events += self._close(self.pos, forced=True)
        self._pending = buf[nwin * WINDOW:]
        return events

    def _close(self, raw_end: int, forced: bool) -> list[tuple[str, object]]:
        self.in_speech = False
        self._silence_start = None
        cfg = self.cfg
        start = max(self._last_end, self._speech_start - self._ms(cfg.speech_pad_ms))
        end = raw_end if forced else min(self.pos, raw_end + self._ms(cfg.speech_pad_ms))
        if raw_end - self._speech_start < self._ms(cfg.min_speech_ms):
            return [('discard', SpeechSpan(start, end, forced))]
        self._last_end = end
        return [('end', SpeechSpan(start, end, forced))]

    def flush(self) -> list[tuple[str, object]]:
        """End of stream: close an open speech span."""
        if self.in_speech:
            return self._close(self.pos, forced=True)
        return []
