# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""One simulated stream: people come and go, talk to each other and to the robot, a radio or TV talks over them.

Each segment is recorded once, with everything the three adapters and the heads are trained and scored on:

- the inputs the node would get (faces in view, the face perception singles out as the speaker, transcript or typed
  text, frame labels, times) and the names memory knows at that moment;
- the reaction labels (``speech``: the robot should answer; ``search``: memory must be searched), where the speech
  came from (``source``: the robot was addressed, people talked among themselves, a device, nobody) and the gold
  memory entry a retrieval should find;
- the gold Topic (memory JSON) and the facts it holds with their subject and keywords (memory-pass scores);
- for what the robot answers: the reply, its keywords, the superseded values it must not give and whether the
  memories can answer at all (unanswerable questions get a refusal).

Then the stream "consolidates" the segment the way the memory node would with a perfect memory pass: the facts and
remembered items become semantic entries, the segment an episodic entry and a level-0 S_g line, rendered with the
store's own functions, so the generation adapter reads memories that look like the store's. Questions come from
:mod:`.questions`.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
import random
from typing import Any

from ..core.memory.global_state import SgNode, render_node
from ..core.memory.store import EpisodicEntry, fmt_span
from ..core.reflex.types import UNSEEN_SPEAKER, SegmentInput
from . import phrasing, restate
from .pairs import context
from .templates import TEMPLATES
from .world import ATTR_FACT, ATTR_VALUES, DAYS, DELAYS, TIMES, VOCAB, be, capital

UTC = _dt.timezone.utc
#: the key of :attr:`Stream.heard` for a radio or TV
DEVICE = 'device'
#: streams start on this day (UTC), one day apart
BASE_TIME = _dt.datetime(2026, 3, 2, 8, 0, tzinfo=UTC).timestamp()


@dataclasses.dataclass
class Person:
    """One person of a stream."""

    face: str
    name: str
    attrs: dict[str, tuple[str, str]]       # attribute -> (value, keyword)
    introduced: bool = False


@dataclasses.dataclass
class Said:
    """What one segment says and what memory should make of it (built by an event, recorded by the stream)."""

    kind: str
    source: str                              # 'robot', 'person', 'device' or 'none'
    present: list[Person]
    speaker: Person | None = None            # who perception singles out as the speaker (None: nobody / unknown)
    transcript: str = ''
    typed: str = ''
    speech: int = 0
    search: int = 0
    response: str = ''
    facts: list[dict[str, Any]] = dataclasses.field(default_factory=list)       # semantic: text, subject, keywords
    remembered: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # pinned, same form
    reminders: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    gold: int | None = None                  # memory index a retrieval should find
    answer: dict[str, Any] | None = None     # for questions: keywords, wrong, answerable, kind
    learn: dict[str, str] = dataclasses.field(default_factory=dict)   # face -> name introduced here
    #: what the segment teaches for later questions: (key, the fact it is in or None for the episodic entry, info)
    teach: list[tuple[tuple, dict[str, Any] | None, dict[str, Any]]] = dataclasses.field(default_factory=list)


def fact(text: str, subject: str, keywords: list[str]) -> dict[str, Any]:
    """A gold fact: its canonical text, who it is about ('' for nobody) and the keywords that score it."""
    return {'text': text, 'subject': subject, 'keywords': [k.lower() for k in keywords]}


class Stream:
    """Builds one stream: memory entries, segment records and generation-only probes, in time order."""

    def __init__(self, split: str, index: int, rng: random.Random, cfg: Any) -> None:
        self.split, self.index, self.rng, self.cfg = split, index, rng, cfg
        self.tpl = TEMPLATES[split]
        self.vocab = VOCAB[split]
        self.t = BASE_TIME + index * 86400.0 + rng.uniform(0, 3600)
        n = rng.randint(*cfg.people)
        self.people = [Person(f'<face_{i + 1}>', nm, {a: rng.choice(v) for a, v in ATTR_VALUES.items()})
                       for i, nm in enumerate(rng.sample(self.vocab['names'], n))]
        self.names: dict[str, str] = {}                 # what memory knows: face -> name
        self.memories: list[dict[str, Any]] = []
        self.episodes: list[int] = []
        self.examples: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []          # generation-only questions at the end of the stream
        self.recent: collections.deque = collections.deque(maxlen=8)   # (speaker, utterance) not yet questions
        # draws of the generation pairs only (pairs.EPISODE_ONLY): the stream's own draws stay as they were
        self.stand_in = random.Random(f'{split}:{index}:stand-in')
        # draws of the other wordings of the memory pairs only (restate module), one generator per wording (a second
        # one leaves the first's draws as they were), and this segment's wordings of each
        self.restaters = [random.Random(f'{split}:{index}:restate' + (str(k + 1) if k else ''))
                          for k in range(max(1, cfg.restatements))]
        self.renders: list[list[tuple[str, str]]] = [[] for _ in self.restaters]
        # and of the second wordings of the questions (generation pairs only), from a generator of their own
        self.ask_restate = random.Random(f'{split}:{index}:ask-restate')
        self.asked: list[tuple[str, str]] = []
        # which segments perception gives no frame labels, from a generator of their own (the rest of the stream as
        # it was: its people, facts and questions do not change with it)
        self.unlabelled = random.Random(f'{split}:{index}:no-labels')
        # and which voice perception's registry gives speech nobody in view singled out (voice key -> <voice_N>)
        self.voice_draws = random.Random(f'{split}:{index}:voices')
        self.voices: dict[str, str] = {}
        # what was said so far: key -> (memory index, value keyword, superseded keywords, extra)
        self.known: dict[tuple, dict[str, Any]] = {}
        # the newest words heard from each source: a face singled out as the speaker, or DEVICE (a radio or TV)
        # -> (the episode that heard them, the words; '' when they were said to the robot)
        self.heard: dict[str, tuple[int, str]] = {}

    # -- names -------------------------------------------------------------------------------------------------------
    def who(self, person: Person, learned: dict[str, str] | None = None) -> str:
        """How memory refers to a person: the name memory knows (or learns in this segment), else the face id."""
        name = (learned or {}).get(person.face) or self.names.get(person.face)
        return name or person.face

    def wake(self) -> str:
        """A wake phrase of the split."""
        return self.rng.choice(self.tpl['wake'])

    def phrase(self, key: str) -> str:
        """A template of ``key``: the training split goes through the lead-in grammar, the held-out split does not."""
        if self.split == 'train' and key.startswith(('ask_', 'general', 'chitchat')):
            return phrasing.choose(self.rng, self.tpl[key], key, forbidden=TEMPLATES['heldout'].get(key, ()))
        return self.rng.choice(self.tpl[key])

    def render(self, key: str, tpl: str, owner: str = '', **slots: Any) -> str:
        """``tpl`` (a ``key`` template the stream drew) with its slots; a training stream also keeps another wording."""
        text = tpl.format(**slots)
        if self.split == 'train':
            for rng, renders in zip(self.restaters, self.renders):
                other = restate.alternative(rng, key, owner, **slots)
                if other:
                    renders.append((text, other))
        return text

    def reword(self, key: str, text: str, **slots: Any) -> None:
        """Keep another wording of the question ``text`` (of kind ``key``) for a training stream's generation pair."""
        if self.split == 'train':
            other = restate.alternative(self.ask_restate, key, **slots)
            if other:
                self.asked.append((text, other))

    def reworded(self, said: Said) -> dict[str, str] | None:
        """The question of ``said`` in the other wording kept by :meth:`reword` (None without one); clears it."""
        other, self.asked = said_otherwise(said, self.asked), []
        return other

    def value_phrase(self, event_kind: str) -> tuple[str, str]:
        """("on Friday", "Friday") or ("at three", "three") for an event of ``event_kind``."""
        if event_kind == 'day':
            day = self.rng.choice(DAYS)
            return f'on {day}', day
        when = self.rng.choice(TIMES)
        return when, when[3:]

    # -- recording -----------------------------------------------------------------------------------------------------
    def _add_memory(self, kind: str, text: str, faces: list[str], start: float, end: float,
                    pinned: bool = False) -> int:
        mid = len(self.memories)
        self.memories.append({'id': f'{self.split}/{self.index}/{mid}', 'stream': self.index, 'kind': kind,
                              'text': text, 'start': round(start, 1), 'end': round(end, 1), 'face_ids': faces,
                              'pinned': pinned})
        if kind == 'episodic':
            self.episodes.append(mid)
        return mid

    def rendered(self, mid: int) -> str:
        """A memory entry as the store renders it for the reflex core (``[span]: text``)."""
        m = self.memories[mid]
        return f'{fmt_span(m["start"], m["end"], UTC)}: {m["text"]}'

    def sg(self) -> str:
        """The S_g script of the newest episodic events (level-0 lines, as the global state renders them)."""
        n = self.rng.randint(max(1, self.cfg.sg_events - 1), self.cfg.sg_events + 1)
        lines = []
        for i in self.episodes[-n:]:
            m = self.memories[i]
            lines.append(render_node(SgNode(0, 0, m['start'], m['end'], 0, 0, m['text']), UTC))
        return '\n'.join(lines)

    def segment_input(self, said: Said, start: float = 0.0, end: float = 0.0) -> SegmentInput:
        """The SegmentInput perception would give for ``said`` (its ``speaker`` is what the prompts render)."""
        spoke = bool(said.transcript)
        speaker = said.speaker.face if said.speaker is not None and spoke else ''
        return SegmentInput(segment_id=0, start=start, end=end, transcript=said.transcript, typed_text=said.typed,
                            face_ids=[p.face for p in said.present], speaker_face=speaker)

    def voice_of(self, said: Said) -> str:
        """The voice id perception gives speech whose speaker nobody saw.

        '' when a face was singled out or the words were too short for the voice registry to tell. Nobody in view,
        the voice reads "<voice_N>, an unseen speaker ..."; with people in view "<voice_N>" instead of "someone". A
        radio or TV speaks with one of two voices, a person out of sight with their own.
        """
        draw = self.voice_draws
        if not said.transcript or said.typed or said.speaker is not None or draw.random() >= self.cfg.voice_heard:
            return ''
        key = f'device:{draw.randint(1, 2)}' if said.source == 'device' else \
            f'person:{draw.choice(said.present or self.people).face}'
        return self.voices.setdefault(key, f'<voice_{len(self.voices) + 1}>')

    def visual(self, said: Said, tags: list[str], learned: dict[str, str]) -> str:
        """The episodic description of what was seen (who, who talked or typed, frame labels)."""
        seg = self.segment_input(said)
        active = 'typing' if said.typed else 'talking'
        people = [self.who(p, learned) + (f' {active}' if p.face == seg.speaker and seg.utterance else '')
                  for p in said.present]
        if not people:
            people = ['nobody in view'] + (['an unseen speaker talking'] if said.transcript else [])
        return '; '.join([', '.join(people)] + ([', '.join(tags)] if tags else []))

    def record(self, said: Said) -> dict[str, Any]:
        """Record a segment (inputs, labels, gold Topic) and consolidate it into the stream's memory."""
        rng = self.rng
        text = said.typed or said.transcript
        dur = 2.0 + len(text.split()) * 0.35 if text else rng.uniform(10.0, 30.0)
        start, end = self.t, self.t + dur
        tags = rng.sample(self.vocab['scenes'], rng.randint(1, 2))
        if self.unlabelled.random() < self.cfg.no_labels:
            tags = []
        seg = self.segment_input(said, start, end)
        learned = dict(said.learn)
        topic = {'visual': self.visual(said, tags, learned), 'semantic': [f['text'] for f in said.facts],
                 'remembered': [f['text'] for f in said.remembered],
                 'reminders': [{'text': r['text'], 'in_seconds': r['in_seconds']} for r in said.reminders]}
        ex = {'stream': self.index, 'seq': len(self.examples), 'kind': said.kind, 'source': said.source,
              'start': round(start, 1), 'end': round(end, 1), 'face_ids': seg.face_ids,
              'speaker_face': seg.speaker_face, 'voice': self.voice_of(said), 'visual_tags': tags,
              'transcript': said.transcript,
              'typed_text': said.typed, 'query': text, 'noise': '', 'names': dict(self.names),
              'speech': said.speech, 'search': said.search,
              'gold': self.memories[said.gold]['id'] if said.gold is not None else None,
              'gold_text': self.memories[said.gold]['text'] if said.gold is not None else '',
              'memory_ids': [m['id'] for m in self.memories], 'sg': self.sg(), 'response': said.response,
              'answer': said.answer, 'topic': topic, 'facts': said.facts + said.remembered}
        others = [said_otherwise(said, renders) for renders in self.renders]
        self.renders = [[] for _ in self.restaters]
        restated = [o for i, o in enumerate(others) if o and o not in others[:i]]
        if restated:
            ex['restated'] = restated
        asked = self.reworded(said)
        if asked:
            ex['reworded'] = asked
        if said.speech:
            ex['context'] = context(self, said, seg.utterance, said.gold, rng, self.stand_in)
        self.examples.append(ex)
        # consolidation with a perfect memory pass
        faces = [p.face for p in said.present]
        for f in said.facts:
            f['memory'] = self._add_memory('semantic', f['text'], faces, start, end)
        for f in said.remembered:
            f['memory'] = self._add_memory('semantic', f['text'], faces, start, end, pinned=True)
        script = EpisodicEntry(start, end, topic['visual'], text, said.response).script()
        epi = self._add_memory('episodic', script, faces, start, end)
        for f in said.facts + said.remembered:
            self.memories[f['memory']]['episode'] = epi     # where its words were heard
        if said.transcript:
            source = DEVICE if said.source == 'device' else said.speaker.face if said.speaker is not None else ''
            if source:      # words to the robot are no answer to "what did Ana say?": kept as '' (none to ask)
                self.heard[source] = (epi, '' if said.source == 'robot' else said.transcript)
        self.names.update(learned)
        for key, where, info in said.teach:
            old = self.known.get(key)
            wrong = list(old['wrong']) if old else []
            if old and old.get('kw') != info.get('kw') and old.get('kw'):
                wrong.append(old['kw'])        # a correction: the earlier value is now wrong
            self.known[key] = dict(info, memory=where['memory'] if where is not None else epi,
                                   wrong=[w for w in wrong if w != info.get('kw')])
        if text and not text.rstrip().endswith('?'):
            self.recent.append((seg.speaker, text, 'typed' if said.typed else 'said'))
        self.t = end + rng.uniform(3.0, 40.0)
        return ex

    # -- helpers for events and questions ----------------------------------------------------------------------------
    def present(self, lo: int = 1, hi: int = 3) -> list[Person]:
        """A random group of people in view (at least ``lo``)."""
        return self.rng.sample(self.people, self.rng.randint(lo, min(hi, len(self.people))))

    def speaker_of(self, present: list[Person]) -> Person | None:
        """Who perception singles out as the speaker: the only face, else usually the one who talks."""
        if len(present) == 1 or self.rng.random() < self.cfg.speaker_seen:
            return present[0]
        return None

    def subject(self, speaker: Person | None, learned: dict[str, str] | None = None) -> str:
        """The subject of a first-person fact: the speaker as memory names them; '' when nobody is singled out."""
        return self.who(speaker, learned) if speaker is not None else ''

    def attr_statement(self, person: Person, learned: dict[str, str] | None = None) -> tuple[str, dict, str] | None:
        """(what the person says about one of their attributes, its fact, the attribute)."""
        attr = self.rng.choice(list(ATTR_FACT))
        value, kw = person.attrs[attr]
        said = self.render(f'state_{attr}', self.rng.choice(self.tpl[f'state_{attr}']), value=value)
        who = self.who(person, learned)
        return said, fact(ATTR_FACT[attr].format(who=who, value=value), who, [kw]), attr

    def object_noun(self) -> tuple[str, bool]:
        """An object of the split and whether it is plural."""
        return self.rng.choice(self.vocab['objects'])

    def object_fact(self, obj: str, plural: bool, place: str, kw: str, owner: str) -> dict[str, Any]:
        """The canonical fact of where an object is ("Ana's car keys are in the blue drawer.")."""
        np = f"{owner}'s {obj}" if owner else f'the {obj}'
        return fact(capital(f'{np} {be(plural)} {place}.'), owner, [obj, kw])


def said_otherwise(said: Said, renders: list[tuple[str, str]]) -> dict[str, str] | None:
    """``said``'s transcript and typed text with the wordings of ``renders`` swapped in (None when nothing changes)."""
    other = {'transcript': restate.restated(said.transcript, renders),
             'typed_text': restate.restated(said.typed, renders)}
    return other if other != {'transcript': said.transcript, 'typed_text': said.typed} else None


def be_it(plural: bool) -> dict[str, str]:
    """The ``{be}``, ``{be_it}`` and ``{is_it}`` slots of an object."""
    return {'be': be(plural), 'be_it': 'they are' if plural else 'it is', 'is_it': 'are they' if plural else 'is it'}


__all__ = ['Stream', 'Said', 'Person', 'fact', 'be_it', 'UTC', 'BASE_TIME', 'UNSEEN_SPEAKER', 'DELAYS']
