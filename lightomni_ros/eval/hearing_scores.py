# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Scores of what perception heard: words in a time window, content-word recall, collapsed segments, voice purity.

Pure functions over the core's records (:class:`~lightomni_ros.core.segment.SegmentData`) in sensor time, so the
hearing benchmark and the tests score the same way.
"""

from __future__ import annotations

import collections
from typing import Iterable, Sequence

from ..core.segment import SegmentData
from .perception_media import normalize

#: function words left out of content-word recall (what a question about the conversation would not hinge on)
STOP = frozenset('''a an the and or but if so as of to in on at by for with from into onto about over than then
is are was were be been being am do does did have has had i you he she it we they me him her us them my your his its
our their this that these those there here what who whom when where why how not no yes yeah okay ok oh uh um hmm
mm right well just very too also all any some can could would should will shall may might must'''.split())


def words_between(segs: Iterable[SegmentData], t0: float, t1: float) -> list[tuple[float, str]]:
    """(time, word) of every transcribed word whose middle lies in [t0, t1), in time order."""
    out = []
    for s in segs:
        for w in s.words:
            mid = s.start + (w.start + w.end) / 2
            if t0 <= mid < t1:
                out.append((mid, w.word))
    return sorted(out)


def text_between(segs: Iterable[SegmentData], t0: float, t1: float) -> str:
    """The transcript of [t0, t1) put together from the segments' words."""
    return ''.join(w for _, w in words_between(segs, t0, t1)).strip()


def content(text: str) -> collections.Counter[str]:
    """Content words of a text (normalised, no function words, 3 letters or more), with their counts."""
    return collections.Counter(w for w in normalize(text) if w not in STOP and len(w) >= 3)


def kept(stream: str, offline: str, known: str | None = None) -> tuple[int, int]:
    """(content words of ``offline`` that ``stream`` also holds, content words of ``offline``), counts included.

    ``known``: the words actually said, when known; then only the words of ``offline`` that were said count. The
    offline decode mishears too, and its misheard words are a draw of its temperature fallback, not words streaming
    lost.
    """
    a, b = content(stream), content(offline)
    if known is not None:
        b &= content(known)
    return sum((a & b).values()), sum(b.values())


def collapsed(segs: Iterable[SegmentData], offline_words: Sequence[tuple[float, str]], min_speech_s: float = 10.0,
              ratio: float = 0.5) -> tuple[int, int]:
    """Count (collapsed segments, segments checked).

    A segment with ``min_speech_s`` of speech collapsed when it holds fewer than ``ratio`` of the offline words of
    its span. ``offline_words`` are (time, word) of the whole-file decode in the same sensor time.
    """
    bad = checked = 0
    for s in segs:
        if s.speech_duration < min_speech_s:
            continue
        checked += 1
        ref = sum(1 for t, _ in offline_words if s.speech_start <= t < s.speech_end)
        bad += len(s.words) < ratio * ref
    return bad, checked


def frame_pairs(truth: Sequence[tuple[str, float, float]], turns: Sequence[tuple[str, float, float]], t0: float,
                t1: float, skip: frozenset[str] = frozenset(), step: float = 0.02) -> collections.Counter:
    """Counts of (true speaker, voice) over frames of [t0, t1) where exactly one known speaker talks.

    ``truth`` and ``turns`` are (label, start, end) in the same time; a frame no turn covers gets voice ''.
    """
    pairs: collections.Counter = collections.Counter()
    t = t0
    while t < t1:
        ref = {lab for lab, a, b in truth if a <= t < b}
        if len(ref) == 1 and not ref & skip:
            hyp = next((lab for lab, a, b in turns if a <= t < b), '')
            pairs[(ref.pop(), hyp)] += 1
        t += step
    return pairs


def purity_coverage(pairs: collections.Counter) -> tuple[float, float]:
    """Cluster purity and coverage over frames.

    Purity: each voice's share of its main speaker; coverage: each speaker's share of its main voice. An uncovered
    frame counts as its own voice ''.
    """
    total = sum(pairs.values())
    if not total:
        return 0.0, 0.0
    by_hyp: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    by_ref: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for (r, h), n in pairs.items():
        by_hyp[h][r] += n
        by_ref[r][h] += n
    purity = sum(max(c.values()) for c in by_hyp.values()) / total
    coverage = sum(max(c.values()) for c in by_ref.values()) / total
    return purity, coverage


def dominant_voice(pairs: collections.Counter, speaker: str) -> str:
    """The voice most of ``speaker``'s frames carry ('' when none)."""
    c = collections.Counter({h: n for (r, h), n in pairs.items() if r == speaker and h})
    return c.most_common(1)[0][0] if c else ''


__all__ = ['words_between', 'text_between', 'content', 'kept', 'collapsed', 'frame_pairs', 'purity_coverage',
           'dominant_voice', 'STOP']
