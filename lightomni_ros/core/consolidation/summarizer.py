# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The Summarizer protocol (S_g merges and profile updates) and the deterministic extractive fallback.

In the running system the reflex node's memory adapter writes summaries (``Summarize`` service); when no model is
reachable, :class:`ExtractiveSummarizer` keeps memory growing with sentences picked from the inputs. Its output is
labelled ``producer='extractive'`` wherever it is stored or published, so nobody mistakes it for a model summary.
"""

from __future__ import annotations

import collections
import logging
import re
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence, runtime_checkable

from ..memory.global_state import approx_tokens
from ..memory.profiles import Profile
from ..text import named_in, names_person
from ..memory.store import normalize
from ..summary import MERGE, PROFILE, SummaryRequest, SummaryResult

EXTRACTIVE = 'extractive'
log = logging.getLogger('lightomni.consolidation')


@dataclass
class Summary:
    """A merge text and who wrote it."""

    text: str
    producer: str


@dataclass
class ProfileUpdate:
    """A profile update: persona paragraph, attributes, name (empty when unknown) and who wrote it."""

    summary: str
    attributes: dict[str, str] = field(default_factory=dict)
    name: str = ''
    producer: str = EXTRACTIVE


@runtime_checkable
class Summarizer(Protocol):
    """Writes S_g merge texts and profile updates."""

    def merge(self, texts: Sequence[str], max_tokens: int) -> Summary:
        """Merge k node texts (oldest first) into one."""

    def profile(self, face_id: str, texts: Sequence[str], profile: Profile, max_tokens: int) -> ProfileUpdate:
        """Update ``profile`` from recent episodic scripts mentioning ``face_id``."""


_SPLIT = re.compile(r'(?<=[.!?;])\s+|\n+')
_WORD = re.compile(r"[\w<>']+")
_STOP = frozenset("""a an the and or but if of to in on at for with by from as is are was were be been being it its this
that these those i you he she we they me him her us them my your his our their saw heard answered said says
do does did not no yes so than then there here what which who whom how when where why can could will would should
just very about into over under up down out again also only own same too s t""".split())

#: how an event's script opens (``EpisodicEntry.script``): texts that tell what happened, not facts
_EVENT = re.compile(r'^(?:saw|heard|answered) |^\(nothing notable\)')
_LIKE = re.compile(r"\bi (?:really )?(?:like|love|enjoy|prefer)\s+([^.;!?\"]+)", re.I)
_JOB = re.compile(r"\bi (?:work as (?:an? )?|am working as (?:an? )?|am an? |'m an? )([a-z][a-z ]{2,40}?)"
                  r"(?:[.;,!?\"]|$| at | in )", re.I)


def sentences(texts: Sequence[str]) -> list[str]:
    """Sentences (or script clauses) of the texts, in order, stripped and deduplicated."""
    seen, out = set(), []
    for t in texts:
        for s in _SPLIT.split(t):
            s = s.strip(' ;')
            key = normalize(s)
            if s and key and key not in seen:
                seen.add(key)
                out.append(s)
    return out


def extract(texts: Sequence[str], max_tokens: int) -> str:
    """Pick the most central sentences (word-frequency score) within ``max_tokens``, kept in their original order."""
    sents = sentences(texts)
    if not sents:
        return ''
    words = [[w for w in _WORD.findall(s.lower()) if w not in _STOP] for s in sents]
    # document frequency over every clause of every text (repeats included): what recurs is what matters
    freq = collections.Counter(w for t in texts for c in _SPLIT.split(t)
                               for w in set(_WORD.findall(c.lower())) if w not in _STOP)
    scores = [(sum(freq[w] for w in ws) / (1 + len(ws)) ** 0.5, -i) for i, ws in enumerate(words)]
    chosen, used = [], 0
    for score, neg_i in sorted(scores, reverse=True):
        cost = approx_tokens(sents[-neg_i]) + 1
        if used + cost > max_tokens:
            continue
        chosen.append(-neg_i)
        used += cost
    if not chosen:  # one sentence longer than the budget: cut it
        return sents[0][:max(4, max_tokens * 4 - 1)].rstrip() + '…'
    return ' '.join(_terminate(sents[i]) for i in sorted(chosen))


def _terminate(s: str) -> str:
    return s if s[-1] in '.!?…' else s + '.'


class ExtractiveSummarizer:
    """Deterministic, model-free summaries (labelled ``extractive``)."""

    producer = EXTRACTIVE

    def merge(self, texts: Sequence[str], max_tokens: int) -> Summary:
        """Most central sentences of the k texts within the budget."""
        return Summary(extract(texts, max_tokens) or '(no content)', EXTRACTIVE)

    def profile(self, face_id: str, texts: Sequence[str], profile: Profile, max_tokens: int) -> ProfileUpdate:
        """Name, preferences, occupation by pattern; a persona from the facts (else sentences) naming the person.

        No persona ('') when nothing but events names them: the profile keeps the one it has.
        """
        joined = ' '.join(texts)
        attrs = dict(profile.attributes)
        name = profile.name or named_in(face_id, texts)
        likes = [x.strip() for x in _LIKE.findall(joined)]
        if likes:
            old = [p.strip() for p in attrs.get('preferences', '').split(';') if p.strip()]
            attrs['preferences'] = '; '.join(dict.fromkeys(old + likes))
        job = _JOB.search(joined)
        if job:
            attrs['occupation'] = job.group(1).strip()
        # the facts that name the person say who they are; the events' "saw <face_1>, <face_3>" only who was there
        # what was seen ("saw <face_1> talking") tells nothing of who they are: with no fact about them, the persona
        # waits (a persona of event clauses read back as what the person is like)
        facts = [t for t in texts if not _EVENT.match(t) and names_person(t, face_id, name)]
        about = [s for s in sentences(texts) if not _EVENT.match(s) and names_person(s, face_id, name)]
        persona = extract(facts or about, max_tokens)
        if persona:
            attrs['persona'] = persona
        return ProfileUpdate(summary=persona, attributes=attrs, name=name, producer=EXTRACTIVE)


#: profile attributes that tell how the profile was kept, not who the person is
_BOOKKEEPING = frozenset({'updated_by'})


def profile_request(face_id: str, texts: Sequence[str], profile: Profile, max_tokens: int) -> SummaryRequest:
    """The request for a profile update: recent scripts and what is known (attributes, then the name).

    Which producer wrote the profile last is bookkeeping, not something known about the person: shown to the
    model, it came back as the persona ("Giulia is called Giulia., updated_by: memory-adapter, name: Giulia.").
    """
    known = dict(sorted((k, v) for k, v in profile.attributes.items() if k not in _BOOKKEEPING))
    if profile.name:
        known.setdefault('name', profile.name)
    return SummaryRequest(mode=PROFILE, texts=list(texts), face_id=face_id, known=known, max_tokens=max_tokens)


class RequestSummarizer:
    """Summaries from the memory adapter through one call, ``send(request) -> result``; extractive ones otherwise.

    The node sends requests over the Summarize service, the offline facade to the reflex runtime directly: both
    build the same requests and read the same results here. ``send`` returning None (unreachable, timed out) or
    raising, or an empty summary, falls back to :class:`ExtractiveSummarizer` and reports why to ``on_fallback``.
    """

    def __init__(self, send: Callable[[SummaryRequest], SummaryResult | None],
                 on_fallback: Callable[[str], None] | None = None) -> None:
        self.send = send
        self.on_fallback = on_fallback or (lambda why: log.info('summarize: %s; extractive fallback', why))
        self.fallback = ExtractiveSummarizer()

    def _ask(self, req: SummaryRequest) -> SummaryResult | None:
        try:
            res = self.send(req)
        except Exception as e:  # noqa: BLE001 - any failure of the model owner falls back
            self.on_fallback(f'summarize failed: {type(e).__name__}: {e}')
            return None
        if res is not None and not res.summary.strip():
            self.on_fallback(f'summarize failed: {res.problem or "empty summary"}')
            return None
        return res

    def merge(self, texts: Sequence[str], max_tokens: int) -> Summary:
        """S_g merge by the model, else extractive."""
        res = self._ask(SummaryRequest(mode=MERGE, texts=list(texts), max_tokens=max_tokens))
        if res is None:
            return self.fallback.merge(texts, max_tokens)
        return Summary(res.summary.strip(), res.producer or 'memory-adapter')

    def profile(self, face_id: str, texts: Sequence[str], profile: Profile, max_tokens: int) -> ProfileUpdate:
        """Profile update by the model, else extractive."""
        res = self._ask(profile_request(face_id, texts, profile, max_tokens))
        if res is None:
            return self.fallback.profile(face_id, texts, profile, max_tokens)
        return ProfileUpdate(summary=res.summary.strip(), attributes=dict(res.attributes), name=res.name.strip(),
                             producer=res.producer or 'memory-adapter')


__all__ = ['Summarizer', 'Summary', 'ProfileUpdate', 'ExtractiveSummarizer', 'EXTRACTIVE', 'extract', 'sentences',
           'RequestSummarizer', 'profile_request']
