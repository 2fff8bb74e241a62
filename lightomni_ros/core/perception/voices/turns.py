# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Speaker turns of a speech span: who spoke when, as voice ids of the registry (online, one span at a time).

Windows of 1.6 s every ``hop_s`` are embedded; a window joins the span's most similar voice cluster when it is at
least ``window_threshold`` similar to its mean, else starts one; labels are smoothed (a run shorter than
``min_turn_s`` joins the neighbour it is closer to). Each turn's mean embedding is then matched to the registry
(``threshold``) or becomes a new voice when it lasts ``min_new_s``; shorter unknown turns keep an empty voice id.
:meth:`TurnTracker.changed` is the streaming test for a change of speaker at a pause (audio before vs after).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...config import ConfigError, param
from ..audio import audio_digest
from .encoder import RATE, VoiceEncoder, similarity
from .registry import VoiceEvent, VoiceRegistry


@dataclass
class VoicesConfig:
    """Voice identity: speaker embeddings, turns, the voice registry."""

    enabled: bool = param(True, 'Tell voices apart (speaker turns with <voice_N> ids in each Segment).')
    device: str = param('cpu', 'Torch device of the voice encoder.', choices=['cpu', 'cuda'])
    threshold: float = param(0.75, 'Cosine similarity of a turn to a known voice at which it is that voice.',
                             min=0.0, max=1.0)
    window_threshold: float = param(0.7, 'Similarity of a 1.6 s window to a voice cluster of the span at which it '
                                         'joins it.', min=0.0, max=1.0)
    hop_s: float = param(0.8, 'Seconds between the 1.6 s windows embedded in a span.', min=0.1, max=1.6)
    min_turn_s: float = param(1.5, 'Shorter runs of one voice join the neighbouring turn they are closer to.',
                              min=0.0)
    min_new_s: float = param(2.0, 'Seconds of an unknown voice in one turn before it becomes a new identity.',
                             min=0.5)
    split_on_change: bool = param(True, 'Cut a long speech span at a pause where the voice changes.')
    change_threshold: float = param(0.5, 'Similarity of the voice before and after a pause under which the speaker '
                                         'changed.', min=0.0, max=1.0)
    probe_s: float = param(2.0, 'Seconds of audio on each side of a pause compared for a change of speaker.',
                           min=0.5)
    min_split_s: float = param(4.0, 'A span is cut at a change of speaker only once it holds this many seconds.',
                               min=1.0)
    link_hits: int = param(2, 'Turns heard with only one face in view (and no other face) that link a voice to '
                              'that face.', min=1)
    update_every_s: float = param(30.0, 'Seconds of speech between embedding updates sent for a voice.', min=1.0)

    def check(self) -> None:
        """Cross-field rules."""
        if self.change_threshold > self.threshold:
            raise ConfigError('change_threshold must not exceed threshold')


@dataclass(kw_only=True)
class Turn:
    """One speaker turn in a span; times in seconds from the span's first sample."""

    start: float
    end: float
    voice_id: str = ''
    similarity: float = 0.0
    embedding: np.ndarray | None = field(default=None, repr=False)
    windows: np.ndarray | None = field(default=None, repr=False)      # the turn's window embeddings


def _smooth(labels: list[int], centres: np.ndarray, emb: np.ndarray, min_turn_s: float, hop: float) -> list[int]:
    """Absorb runs shorter than ``min_turn_s`` into the neighbouring run whose mean is closer."""
    labels = list(labels)
    while True:
        runs = []
        for i, lab in enumerate(labels):
            if runs and runs[-1][2] == lab:
                runs[-1][1] = i + 1
            else:
                runs.append([i, i + 1, lab])
        short = [r for r in runs if (r[1] - r[0]) * hop < min_turn_s and len(runs) > 1]
        if not short:
            return labels
        a, b, _ = min(short, key=lambda r: r[1] - r[0])
        k = runs.index([a, b, labels[a]])
        mean = emb[a:b].mean(axis=0)
        cands = [runs[j] for j in (k - 1, k + 1) if 0 <= j < len(runs)]
        best = max(cands, key=lambda r: similarity(mean, emb[r[0]:r[1]].mean(axis=0)))
        for i in range(a, b):
            labels[i] = best[2]


class TurnTracker:
    """Turns of spans and changes of speaker, with one encoder and one registry."""

    def __init__(self, encoder: VoiceEncoder, registry: VoiceRegistry, cfg: VoicesConfig) -> None:
        self.encoder = encoder
        self.registry = registry
        self.cfg = cfg
        self._ahead: tuple[bytes, tuple[np.ndarray, np.ndarray]] | None = None     # windows of a span heard ahead

    def prepare(self, audio: np.ndarray) -> None:
        """Embed the windows of a span that may be about to end (:meth:`turns` of the same audio reuses them)."""
        self._ahead = (audio_digest(audio), self.encoder.windows(audio, self.cfg.hop_s))

    def _windows(self, audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == audio_digest(audio):
            return ahead[1]
        return self.encoder.windows(audio, self.cfg.hop_s)

    def changed(self, before: np.ndarray, after: np.ndarray) -> bool:
        """Whether the voice of ``after`` differs from that of ``before`` (about ``probe_s`` each)."""
        a = self.encoder.embed(before)
        b = self.encoder.embed(after)
        return similarity(a, b) < self.cfg.change_threshold

    def turns(self, audio: np.ndarray) -> tuple[list[Turn], list[VoiceEvent]]:
        """Speaker turns of one span (voice ids from the registry, new voices created) and the registry's events."""
        cfg = self.cfg
        dur = len(audio) / RATE
        centres, emb = self._windows(audio)
        labels, means = [], []
        for e in emb:
            sims = [similarity(e, m) for m in means]
            k = int(np.argmax(sims)) if sims else -1
            if k >= 0 and sims[k] >= cfg.window_threshold:
                labels.append(k)
            else:
                labels.append(len(means))
                means.append(e)
                continue
            members = emb[[i for i, lab in enumerate(labels) if lab == k]]
            means[k] = members.mean(axis=0)
        labels = _smooth(labels, centres, emb, cfg.min_turn_s, cfg.hop_s)
        turns: list[Turn] = []
        i = 0
        while i < len(labels):
            j = i
            while j + 1 < len(labels) and labels[j + 1] == labels[i]:
                j += 1
            start = 0.0 if i == 0 else float(centres[i - 1] + centres[i]) / 2
            end = dur if j == len(labels) - 1 else float(centres[j] + centres[j + 1]) / 2
            m = emb[i:j + 1].mean(axis=0)
            turns.append(Turn(start=start, end=max(start, min(end, dur)), embedding=m / max(np.linalg.norm(m), 1e-9),
                              windows=emb[i:j + 1]))
            i = j + 1
        events = [ev for t in turns for ev in self._identify(t)]
        return _merge(turns), events

    def _identify(self, t: Turn) -> list[VoiceEvent]:
        seconds = t.end - t.start
        hit = self.registry.match(t.embedding)
        if hit is not None:
            t.voice_id, t.similarity = hit
            ev = self.registry.observe(t.voice_id, t.embedding, seconds)
            return [ev] if ev is not None else []
        # a turn that mixes a known voice with another (speech over speech) may match nothing as a whole: it is the
        # known voice when most of its windows are, and no new voice is made of the mixture
        votes = [self.registry.match(w) for w in (t.windows if t.windows is not None else [])]
        ids = [v[0] for v in votes if v is not None]
        top = max(set(ids), key=ids.count) if ids else ''
        if top and ids.count(top) * 2 >= len(votes):
            t.voice_id = top
            t.similarity = max(v[1] for v in votes if v is not None and v[0] == top)
            ev = self.registry.observe(top, t.embedding, seconds)
            return [ev] if ev is not None else []
        if ids:
            return []       # partly a known voice: too mixed to be a new one
        if seconds >= self.cfg.min_new_s:
            ev = self.registry.create(t.embedding, seconds)
            t.voice_id, t.similarity = ev.voice_id, 1.0
            return [ev]
        return []


def _merge(turns: list[Turn]) -> list[Turn]:
    """Adjacent turns of the same voice become one."""
    out: list[Turn] = []
    for t in turns:
        if out and t.voice_id and out[-1].voice_id == t.voice_id:
            out[-1].end = t.end
        else:
            out.append(t)
    return out
