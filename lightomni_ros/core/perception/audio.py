# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Microphone audio in any common PCM format -> validated float32 mono at 16 kHz, on a gap-tolerant timeline.

Chunks arrive as AudioStamped (int16/int32/float32, interleaved, any channel count and rate). :func:`decode_chunk`
validates and down-mixes one chunk, :class:`Resampler` converts a stream to 16 kHz with a windowed-sinc filter that
keeps its state across chunks, and :class:`AudioStream` places the samples on one timeline: gaps in the stamps are
filled with silence (so VAD sees the pause), duplicated chunks are skipped, and stamps that jump backwards are tolerated
(arrival order wins). :class:`AudioBuffer` keeps the recent 16 kHz samples for ASR and segment audio.
"""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass

import numpy as np

from ..config import ConfigError, param

log = logging.getLogger('lightomni.perception')

TARGET_RATE = 16000
#: sample_format -> (numpy dtype, scale to [-1, 1])
FORMATS = {
    'S16LE': (np.dtype('<i2'), 1.0 / 32768.0),
    'S32LE': (np.dtype('<i4'), 1.0 / 2147483648.0),
    'F32LE': (np.dtype('<f4'), 1.0),
}
#: coding formats that mean raw interleaved PCM
RAW_CODINGS = ('wave', 'pcm', 'raw', '')


def audio_digest(audio: np.ndarray) -> bytes:
    """A short digest of float32 samples: the same audio heard twice (once ahead of its end) is known as such."""
    return hashlib.blake2b(np.ascontiguousarray(audio, np.float32).tobytes(), digest_size=16).digest()


class AudioFormatError(ValueError):
    """A chunk cannot be used: the message names the problem (reported as a diagnostics WARN)."""

    def __init__(self, key: str, text: str) -> None:
        super().__init__(text)
        self.key = key


@dataclass
class AudioConfig:
    """Audio input: accepted formats and how the timeline tolerates gaps and duplicates."""

    min_sample_rate: int = param(8000, 'Lowest accepted input sample rate in Hz (lower is rejected as absurd).',
                                 min=1000)
    max_sample_rate: int = param(192000, 'Highest accepted input sample rate in Hz (higher is rejected as absurd).',
                                 min=16000)
    max_channels: int = param(16, 'Most interleaved channels accepted (down-mixed to mono by averaging).', min=1)
    max_chunk_s: float = param(10.0, 'Longest accepted chunk in seconds (longer is rejected).', min=0.01)
    gap_tolerance_s: float = param(0.05, 'Stamp jitter tolerated before a gap is filled with silence.', min=0.0)
    max_gap_fill_s: float = param(2.0, 'Longest gap filled with silence; beyond it the timeline re-bases on the stamp '
                                       '(the VAD still sees this much silence).', min=0.0)
    buffer_s: float = param(90.0, 'Seconds of 16 kHz audio kept for ASR and segment audio.', min=35.0)

    def check(self) -> None:
        """Cross-field rules."""
        if self.min_sample_rate > self.max_sample_rate:
            raise ConfigError('min_sample_rate is above max_sample_rate')


def decode_chunk(data: bytes | bytearray | memoryview, sample_format: str, channels: int, sample_rate: int,
                 coding_format: str = 'wave', cfg: AudioConfig | None = None) -> np.ndarray:
    """Validate one interleaved PCM chunk and return it as float32 mono at its own rate.

    Raises :class:`AudioFormatError` naming the problem: unsupported coding or sample format, absurd sample rate or
    channel count, empty or truncated data, NaN/Inf samples.
    """
    cfg = cfg or AudioConfig()
    coding = (coding_format or '').lower()
    if coding not in RAW_CODINGS:
        raise AudioFormatError('audio_coding', f'coding_format {coding_format!r} is not raw PCM ("wave")')
    fmt = (sample_format or '').upper()
    if fmt not in FORMATS:
        raise AudioFormatError('audio_format', f'sample_format {sample_format!r} not supported (use {sorted(FORMATS)})')
    if not cfg.min_sample_rate <= sample_rate <= cfg.max_sample_rate:
        raise AudioFormatError('audio_rate', f'absurd sample_rate {sample_rate} Hz '
                                             f'(accepted {cfg.min_sample_rate}-{cfg.max_sample_rate})')
    if not 1 <= channels <= cfg.max_channels:
        raise AudioFormatError('audio_channels', f'channels={channels} (accepted 1-{cfg.max_channels})')
    dtype, scale = FORMATS[fmt]
    nbytes = len(data)
    if nbytes == 0:
        raise AudioFormatError('audio_empty', 'empty audio chunk')
    frame = dtype.itemsize * channels
    if nbytes % frame:
        raise AudioFormatError('audio_truncated', f'{nbytes} bytes is not a whole number of {channels}-channel '
                                                  f'{fmt} frames ({frame} bytes each): truncated chunk')
    n = nbytes // frame
    if n > cfg.max_chunk_s * sample_rate:
        raise AudioFormatError('audio_chunk_size', f'chunk of {n / sample_rate:.1f} s exceeds {cfg.max_chunk_s} s')
    x = np.frombuffer(bytes(data) if isinstance(data, memoryview) else data, dtype=dtype)
    x = x.reshape(n, channels).astype(np.float32)
    if fmt == 'F32LE':
        if not np.isfinite(x).all():
            raise AudioFormatError('audio_nan', 'chunk holds NaN or Inf samples')
        if np.abs(x).max() > 64.0:
            raise AudioFormatError('audio_range', 'float samples far outside [-1, 1]: wrong sample_format?')
    else:
        x *= scale
    mono = x.mean(axis=1) if channels > 1 else x[:, 0]
    return np.clip(mono, -1.0, 1.0).astype(np.float32, copy=False)


class Resampler:
    """Streaming band-limited resampler (windowed sinc) from any rate to ``out_rate``; state carries across chunks."""

    def __init__(self, in_rate: int, out_rate: int = TARGET_RATE, zeros: int = 8) -> None:
        self.in_rate = int(in_rate)
        self.out_rate = int(out_rate)
        self.passthrough = self.in_rate == self.out_rate
        # Cut-off a little under the lower Nyquist, so downsampling does not alias speech into the band.
        self.cutoff = min(1.0, self.out_rate / self.in_rate) * 0.92
        self.half = zeros / self.cutoff            # kernel half width, input samples
        self._buf = np.zeros(0, np.float32)
        self._buf_start = 0                        # absolute input index of _buf[0]
        self._n_in = 0                             # input samples received
        self._n_out = 0                            # output samples produced
        self._primed = False
        self.width = int(np.ceil(2 * self.half)) + 1
        # Polyphase table: with in/out = M/L in lowest terms, an output's kernel depends only on n*M mod L.
        g = math.gcd(self.in_rate, self.out_rate)
        self._L, self._M = self.out_rate // g, self.in_rate // g
        self._table = None
        if not self.passthrough and self._L <= 4096:
            f = np.arange(self._L, dtype=np.float64) / self._L
            off = np.floor(f - self.half).astype(np.int64) + 1
            self._table = (off, self._kernel(f[:, None] - off[:, None] - np.arange(self.width)[None, :]))

    def _kernel(self, t: np.ndarray) -> np.ndarray:
        w = np.where(np.abs(t) < self.half, 0.5 + 0.5 * np.cos(np.pi * t / self.half), 0.0)
        return (self.cutoff * np.sinc(self.cutoff * t) * w).astype(np.float32)

    def _pos(self, n: np.ndarray | int) -> np.ndarray:
        return np.asarray(n, np.float64) * (self.in_rate / self.out_rate)

    def process(self, x: np.ndarray, flush: bool = False) -> np.ndarray:
        """Feed input samples; return every output sample whose kernel window is complete."""
        if self.passthrough:
            return np.asarray(x, np.float32)
        if not self._primed:
            # Leading zeros stand for the (silent) past so the first output needs no look-back.
            pad = int(np.ceil(self.half)) + 1
            self._buf = np.zeros(pad, np.float32)
            self._buf_start = -pad
            self._primed = True
        self._buf = np.concatenate([self._buf, np.asarray(x, np.float32)])
        self._n_in += len(x)
        last = self._n_in - 1 + (self.half if flush else 0)
        n_max = int(np.floor((last - self.half) * self.out_rate / self.in_rate))
        if n_max < self._n_out:
            return np.zeros(0, np.float32)
        n = np.arange(self._n_out, n_max + 1, dtype=np.int64)
        if self._table is not None:
            off, table = self._table
            phase = (n * self._M) % self._L
            k0 = (n * self._M) // self._L + off[phase]
            h = table[phase]
            idx = k0[:, None] + np.arange(self.width)[None, :]
        else:
            p = self._pos(n)
            k0 = np.floor(p - self.half).astype(np.int64) + 1
            idx = k0[:, None] + np.arange(self.width)[None, :]
            h = self._kernel(p[:, None] - idx)
        rel = idx - self._buf_start
        valid = (rel >= 0) & (rel < len(self._buf))
        vals = np.where(valid, self._buf[np.clip(rel, 0, len(self._buf) - 1)], 0.0)
        y = (vals * h).sum(axis=1).astype(np.float32)
        self._n_out = n_max + 1
        keep_from = int(np.floor(self._pos(self._n_out) - self.half)) - 1
        drop = keep_from - self._buf_start
        if drop > 0:
            self._buf = self._buf[drop:]
            self._buf_start += drop
        return y


class AudioBuffer:
    """The most recent 16 kHz samples, addressed by absolute sample index since the stream started."""

    def __init__(self, max_s: float, rate: int = TARGET_RATE) -> None:
        self.rate = rate
        self.max = int(max_s * rate)
        self._data = np.zeros(0, np.float32)
        self.start = 0          # absolute index of _data[0]

    @property
    def end(self) -> int:
        """Absolute index one past the last sample."""
        return self.start + len(self._data)

    def append(self, x: np.ndarray) -> None:
        """Append samples, forgetting the oldest beyond the capacity."""
        self._data = np.concatenate([self._data, x])
        over = len(self._data) - self.max
        if over > 0:
            self._data = self._data[over:]
            self.start += over

    def slice(self, a: int, b: int) -> np.ndarray:
        """Samples in [a, b) that are still held (clipped to what the buffer holds)."""
        a = max(a, self.start)
        b = min(b, self.end)
        if b <= a:
            return np.zeros(0, np.float32)
        return self._data[a - self.start:b - self.start].copy()


class AudioStream:
    """Turns stamped chunks into one continuous 16 kHz timeline (absolute sample index <-> stamp in seconds)."""

    def __init__(self, cfg: AudioConfig | None = None) -> None:
        self.cfg = cfg or AudioConfig()
        self._resampler: Resampler | None = None
        self._fmt: tuple | None = None
        self.n = 0                    # 16 kHz samples emitted (including silence fills)
        self._base_t: float | None = None
        self._base_n = 0
        self._expected_in_t: float | None = None   # stamp expected for the next input chunk
        self.first_stamp: float | None = None      # stamp of the first chunk accepted
        self._recent: list[tuple[float, int]] = []  # (stamp, bytes) of recent chunks, for duplicate detection
        self.counters = {'chunks': 0, 'duplicates': 0, 'gaps_filled': 0, 'rebases': 0, 'backward_stamps': 0,
                         'format_changes': 0}

    def time_of(self, index: int) -> float:
        """Stamp (seconds) of absolute 16 kHz sample ``index``."""
        base = self._base_t if self._base_t is not None else 0.0
        return base + (index - self._base_n) / TARGET_RATE

    def index_of(self, t: float) -> int:
        """Absolute 16 kHz sample index at stamp ``t`` (may be outside what was received)."""
        base = self._base_t if self._base_t is not None else 0.0
        return self._base_n + int(round((t - base) * TARGET_RATE))

    def push(self, stamp: float, data: bytes, sample_format: str, channels: int, sample_rate: int,
             coding_format: str = 'wave') -> np.ndarray:
        """Decode one chunk and return the 16 kHz samples it adds (silence fill first); raises AudioFormatError."""
        mono = decode_chunk(data, sample_format, channels, sample_rate, coding_format, self.cfg)
        key = (round(stamp, 6), len(data))
        if key in self._recent:
            self.counters['duplicates'] += 1
            return np.zeros(0, np.float32)
        self._recent = (self._recent + [key])[-16:]
        self.counters['chunks'] += 1
        fmt = (sample_rate,)
        if self._fmt != fmt:
            if self._fmt is not None:
                self.counters['format_changes'] += 1
            self._fmt = fmt
            self._resampler = Resampler(sample_rate)
        out = []
        dur = len(mono) / sample_rate
        if self._base_t is None:
            self._base_t, self._base_n = stamp, self.n
            self.first_stamp = stamp
        elif self._expected_in_t is not None:
            gap = stamp - self._expected_in_t
            if gap > self.cfg.gap_tolerance_s:
                fill = min(gap, self.cfg.max_gap_fill_s)
                nfill = int(round(fill * TARGET_RATE))
                out.append(np.zeros(nfill, np.float32))
                self.counters['gaps_filled'] += 1
                if gap > self.cfg.max_gap_fill_s:
                    self.counters['rebases'] += 1
            elif gap < -max(self.cfg.gap_tolerance_s, dur):
                # Stamp jumped backwards (clock reset or reordering): keep arrival order, continue the timeline.
                self.counters['backward_stamps'] += 1
        self._expected_in_t = stamp + dur
        y = self._resampler.process(mono)
        out.append(y)
        samples = np.concatenate(out) if len(out) > 1 else out[0]
        self.n += len(samples)
        # Re-base so that the end of this chunk maps to its stamp: keeps long runs aligned with the sensor clock
        # (resampler latency is a fraction of a millisecond).
        if abs(self.time_of(self.n) - (stamp + dur)) > 0.5:
            self._base_t, self._base_n = stamp + dur, self.n
        return samples
