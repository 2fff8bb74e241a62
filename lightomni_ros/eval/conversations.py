# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Conversations with known words and speakers, mixed from the single-speaker media, and the real meeting clip.

Two kinds are made: *overlaps* (two utterances of different speakers, the second starting so that a given ratio of
the shorter one is spoken over, or after a short gap at ratio 0) and *long* conversations (minutes of turns of the
LJ Speech, JFK and GRID voices with random gaps and some overlap). Each utterance is brought to a loudness drawn
around -24 dBFS. Two splits use different draws: ``dev`` (what the segmentation and voice settings were chosen on)
and ``heldout`` (never used to choose anything). The AMI meeting clip (../shared/media/conversations) comes with its
manual speaker turns and no transcript. GRID talkers are not told apart by the media's ground truth, so their
speech counts for words but not for voice identity.
"""

from __future__ import annotations

import pathlib
import random
from dataclasses import dataclass, field

import numpy as np

from .perception_media import SPEECH, load_audio

RATE = 16000
RATIOS = (0.0, 0.1, 0.25, 0.5)
MEETING = 'conversations/ami_EN2002a_0-30s/EN2002a_0-30s.wav'
MEETING_TURNS = 'conversations/ami_EN2002a_0-30s/EN2002a_0-30s.only_words.rttm'


@dataclass
class Placed:
    """One utterance inside a conversation: who, what, when (seconds from the conversation's start)."""

    speaker: str
    text: str
    start: float
    end: float


@dataclass
class Conversation:
    """A mixed recording with its ground truth."""

    name: str
    kind: str                       # 'overlap', 'long' or 'meeting'
    audio: np.ndarray = field(repr=False)
    placed: list[Placed] = field(default_factory=list)
    ratio: float | None = None      # overlap ratio ('overlap' kind)
    path: str = ''

    @property
    def seconds(self) -> float:
        """Duration."""
        return len(self.audio) / RATE

    @property
    def reference(self) -> str:
        """The known words in order of their start ('' for the meeting: it has no transcript)."""
        return ' '.join(p.text for p in sorted(self.placed, key=lambda p: p.start) if p.text)


def speaker_of(rel: str) -> str:
    """The voice of a media clip: 'lj' (LJ Speech), 'jfk', or 'grid' (GRID talkers, not told apart)."""
    return 'lj' if 'ljspeech' in rel else 'jfk' if 'jfk' in rel else 'grid'


def utterances(media: pathlib.Path) -> list[tuple[str, str, np.ndarray]]:
    """(speaker, text, 16 kHz mono audio) of every single-speaker clip."""
    from ..core.perception.audio import Resampler

    out = []
    for rel, text in SPEECH.items():
        x, sr = load_audio(media / rel)
        out.append((speaker_of(rel), text, Resampler(sr).process(x.mean(axis=1), flush=True)))
    return out


def _level(x: np.ndarray, rng: random.Random) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x)))) or 1e-9
    return x * (10 ** ((-24 + rng.uniform(-3, 3)) / 20) / rms)


def mix(name: str, kind: str, parts: list[tuple[str, str, np.ndarray, float]], rng: random.Random,
        ratio: float | None = None) -> Conversation:
    """Sum (speaker, text, audio, start) parts into one recording (peak-limited) with 0.3 s of silence around."""
    pad = 0.3
    end = max(s + len(a) / RATE for _, _, a, s in parts) + 2 * pad
    out = np.zeros(int(end * RATE) + 1, np.float32)
    placed = []
    for spk, text, a, s in parts:
        i = int((s + pad) * RATE)
        out[i:i + len(a)] += _level(a, rng).astype(np.float32)
        placed.append(Placed(spk, text, s + pad, s + pad + len(a) / RATE))
    peak = float(np.abs(out).max())
    return Conversation(name, kind, out / max(1.0, peak / 0.95), placed, ratio)


def overlap_set(utts: list, rng: random.Random, pairs: int) -> list[Conversation]:
    """``pairs`` pairs of different speakers, each at every ratio of :data:`RATIOS` (a 0.2-1 s gap at 0)."""
    out = []
    for k in range(pairs):
        a = rng.choice([u for u in utts if u[0] != 'grid' or k % 3 == 2])
        b = rng.choice([u for u in utts if u[0] != a[0]])
        la, lb = len(a[2]) / RATE, len(b[2]) / RATE
        for r in RATIOS:
            start = la + rng.uniform(0.2, 1.0) if r == 0 else la - r * min(la, lb)
            out.append(mix(f'overlap{k}_r{r:g}', 'overlap', [(*a, 0.0), (*b, max(0.0, start))], rng, r))
    return out


def long_conversation(name: str, utts: list, rng: random.Random, seconds: float,
                      overlap_p: float = 0.25) -> Conversation:
    """Turns of changing speakers for about ``seconds``: gaps of 0.15-1.2 s, some turns started over the last one."""
    parts, t, last = [], 0.0, ''
    while t < seconds:
        u = rng.choice([u for u in utts if u[0] != last])
        dur = len(u[2]) / RATE
        start = t - rng.uniform(0.3, 1.2) if parts and rng.random() < overlap_p else t + rng.uniform(0.15, 1.2)
        parts.append((*u, max(0.0, start)))
        t, last = max(t, start + dur), u[0]
    return mix(name, 'long', parts, rng)


def build(media: pathlib.Path, split: str, quick: bool = False) -> list[Conversation]:
    """The mixed set of one split (``dev`` or ``heldout``): overlaps at every ratio and long conversations."""
    rng = random.Random({'dev': 18, 'heldout': 1018}[split])
    utts = utterances(media)
    convs = overlap_set(utts, rng, 1 if quick else 3)
    convs.append(long_conversation(f'long_{split}', utts, rng, 20.0 if quick else 150.0))
    for c in convs:
        c.name = f'{split}/{c.name}'
    return convs


def meeting(media: pathlib.Path) -> Conversation | None:
    """The AMI meeting clip with its manual speaker turns (no words), or None when absent."""
    path = media / MEETING
    if not path.exists():
        return None
    x, sr = load_audio(path)
    from ..core.perception.audio import Resampler

    audio = Resampler(sr).process(x.mean(axis=1), flush=True) if sr != RATE else x.mean(axis=1)
    placed = []
    for line in (media / MEETING_TURNS).read_text().splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == 'SPEAKER':
            placed.append(Placed(f[7], '', float(f[3]), float(f[3]) + float(f[4])))
    return Conversation('meeting/ami_EN2002a_0-30s', 'meeting', audio.astype(np.float32), placed, path=str(path))


def write(convs: list[Conversation], folder: pathlib.Path) -> None:
    """Write each mixed conversation as a 16 kHz WAV (its ``path``)."""
    import soundfile as sf

    folder.mkdir(parents=True, exist_ok=True)
    for c in convs:
        if not c.path:
            c.path = str(folder / (c.name.replace('/', '_') + '.wav'))
            sf.write(c.path, c.audio, RATE, subtype='PCM_16')


__all__ = ['Conversation', 'Placed', 'build', 'meeting', 'write', 'utterances', 'mix', 'RATIOS', 'speaker_of']
