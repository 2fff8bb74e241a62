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
    min_speech_ms: int = param(250, 'Shorter speech spans are discarded as noise (counted).', min=0)
    max_speech_s: float = param(30.0, 'Last resort: speech going on this long is cut (the paper closes a segment '
                                      'after 30 s), at the longest pause of the last cut_search_s seconds, and the '
                                      'next span starts exactly there (no audio is lost on either side).', min=1.0)
    cut_search_s: float = param(8.0, 'How far back from max_speech_s a cut looks for a pause.', min=0.5)
    pause_ms: int = param(200, 'A pause this long inside speech is a place to cut at (a long span, a change of '
                               'speaker).', min=32)
    threads: int = param(1, 'onnxruntime intra-op threads for the VAD.', min=1)

    def check(self) -> None:
        """Cross-field rules."""
        if self.min_speech_ms > self.max_speech_s * 1000:
            raise ConfigError('min_speech_ms exceeds max_speech_s')
        if self.cut_search_s >= self.max_speech_s:
            raise ConfigError('cut_search_s must be shorter than max_speech_s')


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
    """One speech span in absolute 16 kHz sample indices (padding included) and why it ended.

    ``reason``: 'silence' (end of speech), 'max' (cut at ``max_speech_s``), 'turn' (cut at a change of speaker),
    'flush' (end of input). ``forced`` is True for 'max' and 'flush'.
    """

    start: int
    end: int
    forced: bool = False
    reason: str = 'silence'


class StreamingVad:
    """Feed 16 kHz samples of any length; get ``('start', index)``, ``('end', SpeechSpan)`` and ``('discard', span)``.

    While speech goes on, the probabilities of its windows are kept, so a long span can be cut afterwards at a pause
    (:meth:`pauses`, :meth:`split`): the span ends at the cut and the next one starts at the same sample, so nothing
    between them is lost. A span that starts at a cut is never discarded as too short (it continues speech).
    """

    def __init__(self, model: SileroVad, cfg: VadConfig | None = None) -> None:
        self.model = model
        self.cfg = cfg or VadConfig()
        self._pending = np.zeros(0, np.float32)
        self.pos = 0                          # absolute index of the next window's first sample
        self.in_speech = False
        self._speech_start = 0                # raw (unpadded) start of the current speech, window aligned
        self._span_begin = 0                  # where the current span's audio begins (padding included)
        self._continued = False               # the current span starts at a cut of the previous one
        self._probs: list[float] = []         # probabilities of the windows since _speech_start
        self._silence_start: int | None = None
        self._last_end = 0                    # end of the previous span (padding never overlaps it)
        self.windows = 0
        self.counts = {'discarded_spans': 0, 'discarded_ms': 0.0, 'cuts_max': 0, 'cuts_turn': 0}

    def reset(self) -> None:
        """Forget everything (the next sample is index 0 again)."""
        self.model.reset()
        self.__init__(self.model, self.cfg)

    def _ms(self, ms: float) -> int:
        return int(ms * RATE / 1000)

    @property
    def span_begin(self) -> int:
        """Where the open span's audio begins (meaningful while :attr:`in_speech`)."""
        return self._span_begin

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
            if self.in_speech:
                self._probs.append(p)
            if p >= cfg.threshold:
                self._silence_start = None
                if not self.in_speech:
                    self.in_speech = True
                    self._speech_start = start
                    self._probs = [p]
                    self._continued = False
                    self._span_begin = max(self._last_end, start - self._ms(cfg.speech_pad_ms))
                    events.append(('start', self._span_begin))
            elif self.in_speech and p < cfg.threshold - 0.15:
                if self._silence_start is None:
                    self._silence_start = start
                if self.pos - self._silence_start >= self._ms(cfg.min_silence_ms):
                    events += self._close(self._silence_start, 'silence')
            if self.in_speech and self.pos - self._speech_start >= cfg.max_speech_s * RATE:
                events += self.split(self._best_cut(), 'max')
        self._pending = buf[nwin * WINDOW:]
        return events

    def pending_span(self, silence_ms: float) -> SpeechSpan | None:
        """The span that ends if the silence going on (at least ``silence_ms`` of it) lasts ``min_silence_ms``.

        It is the span :meth:`feed` would then close, sample for sample (its end padding is heard already); None
        while speech goes on, or when that span would be discarded as too short.
        """
        cfg = self.cfg
        if not self.in_speech or self._silence_start is None:
            return None
        end = self._silence_start + self._ms(cfg.speech_pad_ms)
        if self.pos - self._silence_start < self._ms(silence_ms) or self.pos < end:
            return None
        if self._silence_start - self._speech_start < self._ms(cfg.min_speech_ms) and not self._continued:
            return None
        return SpeechSpan(self._span_begin, end)

    def _low(self) -> np.ndarray:
        return np.asarray(self._probs, np.float32) < self.cfg.threshold - 0.15

    def pauses(self, min_ms: float | None = None) -> list[tuple[int, int]]:
        """Pauses inside the open span as (first, end) sample indices, at least ``min_ms`` (``pause_ms``) long."""
        if not self.in_speech:
            return []
        low = self._low()
        need = max(1, self._ms(self.cfg.pause_ms if min_ms is None else min_ms) // WINDOW)
        out, run = [], None
        for k, is_low in enumerate(np.append(low, False)):
            if is_low and run is None:
                run = k
            elif not is_low and run is not None:
                if k - run >= need and run > 0 and k < len(low):
                    out.append((self._speech_start + run * WINDOW, self._speech_start + k * WINDOW))
                run = None
        return out

    def _best_cut(self) -> int:
        """The middle of the longest pause in the last ``cut_search_s`` (else the least likely window)."""
        lo = self.pos - int(min(self.cfg.cut_search_s, self.cfg.max_speech_s / 2) * RATE)
        pauses = [(b - a, (a + b) // 2) for a, b in self.pauses(min_ms=WINDOW * 1000 / RATE) if a >= lo]
        if pauses:
            return max(pauses)[1] // WINDOW * WINDOW
        k0 = max(1, (lo - self._speech_start) // WINDOW)
        tail = np.asarray(self._probs[k0:])
        k = k0 + len(tail) - 1 - int(np.argmin(tail[::-1]))        # the latest of the least likely windows
        return self._speech_start + k * WINDOW

    def split(self, at: int, reason: str) -> list[tuple[str, object]]:
        """Cut the open span at sample ``at``: it ends there and the next span starts there (nothing dropped)."""
        if not self.in_speech or not self._speech_start < at < self.pos:
            return []
        at = self._speech_start + (at - self._speech_start) // WINDOW * WINDOW
        self.counts['cuts_max' if reason == 'max' else 'cuts_turn'] += 1
        span = SpeechSpan(self._span_begin, at, forced=reason == 'max', reason=reason)
        self._probs = self._probs[(at - self._speech_start) // WINDOW:]
        self._last_end = self._speech_start = self._span_begin = at
        self._continued = True
        if self._silence_start is not None and self._silence_start < at:
            self._silence_start = at
        return [('end', span), ('start', at)]

    def _close(self, raw_end: int, reason: str) -> list[tuple[str, object]]:
        self.in_speech = False
        self._silence_start = None
        self._probs = []
        cfg = self.cfg
        start = self._span_begin
        end = raw_end if reason == 'flush' else min(self.pos, raw_end + self._ms(cfg.speech_pad_ms))
        if raw_end - self._speech_start < self._ms(cfg.min_speech_ms) and not self._continued:
            self.counts['discarded_spans'] += 1
            self.counts['discarded_ms'] += (raw_end - self._speech_start) * 1000 / RATE
            return [('discard', SpeechSpan(start, end, reason=reason))]
        self._last_end = end
        return [('end', SpeechSpan(start, end, forced=reason == 'flush', reason=reason))]

    def flush(self) -> list[tuple[str, object]]:
        """End of stream: close an open speech span."""
        if self.in_speech:
            return self._close(self.pos, 'flush')
        return []
