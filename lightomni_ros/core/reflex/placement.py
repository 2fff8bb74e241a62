# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Where a thing was put, read by rule from the words: the memory a household robot is asked for most.

The memory adapter writes "Ana's keys are in the blue drawer." for the wordings it was trained on, but a verb or a
construction it has not seen ("I stuck the notebook on top of the fridge", "the gloves went in the green basket")
often gives no fact at all, or one the checks drop, and "where are my keys?" then finds only the words as heard. A
placement is a closed construction of English (someone put / left / dropped ... a thing in / on / under ... a place,
or the thing is / went / ended up there), so it is read here and stored in the form the adapter writes, for the
things no fact of the pass tells of (:func:`with_placements`). Questions, negations and intentions ("I will put",
"did I leave ...?", "I didn't put ...") place nothing.
"""

from __future__ import annotations

import dataclasses
import re
from typing import AbstractSet, Callable, Sequence

from ..text import CALENDAR_WORDS, sentences
from .attribution import PERSON_ID
from .grounding import asks, content_words, evidence, stem
from .types import MemoryItem, SegmentInput

#: verbs of putting something somewhere, as said of a deed done (past, or the present "put")
_VERBS = r'''put|placed|left|dropped|stuck|stashed|hid|set|tucked|threw|tossed|shoved|moved|kept|parked|hung|stored|
laid|packed|locked|popped|slipped|stowed'''.replace('\n', '')
_PREPS = r'on top of|in front of|next to|underneath|beneath|behind|beside|inside|under|into|onto|near|in|on|by'
_DET = r"(?i:the|my|our|your|his|her|their)|[A-Z][a-z]+'s"
#: a time after a place: "in the drawer in the morning"
_WHEN = r'(?:in|at|on|during|over)\s+(?:the\s+)?(?:morning|afternoon|evening|night|weekend)\b'
#: words that end a place ("in the drawer now", "on the shelf, I think", "under the bed and ...")
_END = r'''(?=\s*(?:[,.;!?]|$|\b(?:and|but|so|because|now|again|today|yesterday|earlier|this|for|when|while|
before|after|then|I|we)\b|WHEN))'''.replace('\n', '').replace('WHEN', _WHEN)
_NOUN = r"[a-z][a-z-]*(?: [a-z][a-z-]*){0,2}?"
#: a place, and where in it: "the top drawer of the desk", "the garage on the left shelf"
_PLACE = rf"(?P<place>(?:{_DET})\s+{_NOUN})(?P<tail>\s+(?:of|on|in)\s+(?:{_DET})\s+{_NOUN})?{_END}"
_DID = rf"\b(?P<who>I|we|[A-Z][a-z]+)\s+(?:(?:have|'ve|just|already|also)\s+)*(?:{_VERBS})\s+(?P<det>{_DET})\s+"
#: "I stuck the notebook on top of the fridge", "Ana left her keys in the car"
_PUT = re.compile(rf"{_DID}(?P<thing>{_NOUN})\s+(?P<prep>{_PREPS})\s+{_PLACE}")
#: "I moved the scissors, they are on the bookshelf now"
_MOVED = re.compile(rf"{_DID}(?P<thing>{_NOUN})\s*,\s*(?:and\s+)?(?:it|they)\s+(?:is|are|'s|'re)\s+"
                    rf"(?:(?:now|still)\s+)?(?P<prep>{_PREPS})\s+{_PLACE}")
#: "the gloves went in the green basket", "my keys are in the drawer now", "the keys ended up behind the sofa"
_IS = re.compile(rf"(?:^|[,;:]\s*|\b(?i:and|so|now|that)\s+)(?P<det>{_DET})\s+(?P<thing>{_NOUN})\s+"
                 rf"(?:is|are|went|ended up|'s|'re)\s+(?:(?:now|still|lying|sitting)\s+)?(?P<prep>{_PREPS})\s+"
                 rf"{_PLACE}")
_NOT = re.compile(r"\b(?:not|n't|never|no longer)\b|\b(?:will|'ll|shall|should|would|could|might|must|going to|want "
                  r"to|need to|have to|to)\s+(?:\w+\s+)?$", re.I)
_POSSESSIVE = {'my': 'own', 'our': 'own', 'his': 'subject', 'her': 'subject', 'their': 'subject'}
_PRONOUNS = frozenset('it them this that these those one something anything everything'.split())
#: a "place" that is a time: "I left the party in the evening" places nothing
_TIMES = frozenset('''morning afternoon evening night day week month year weekend end middle meantime time moment
while past future'''.split()) | CALENDAR_WORDS


@dataclasses.dataclass(frozen=True)
class Placement:
    """A thing and where it is: ``owner`` an id or a name ('' for "the"), ``where`` "in the green basket"."""

    thing: str
    where: str
    owner: str = ''

    def fact(self) -> str:
        """The stored form: "<face_1>'s keys are in the drawer.", "The notebook is on top of the fridge."."""
        subject = f"{self.owner}'s {self.thing}" if self.owner else f'The {self.thing}'
        return f'{subject} {"are" if plural(self.thing) else "is"} {self.where}.'


def plural(noun: str) -> bool:
    """Whether a thing's last word is a plural ("keys", "gloves", "glasses"; not "thermos", "glass", "bus")."""
    last = noun.split()[-1]
    return last.endswith('s') and not last.endswith(('ss', 'us', 'os', 'is', 'as'))


def placements(words: str, speaker: str = '') -> list[Placement]:
    """The placements ``words`` tell, in order; "my" is ``speaker``'s (an id, or '' when it is not known).

    A sentence that asks, a placement denied or intended ("I didn't put", "I'll put") and a pronoun for the thing
    ("I put it on the shelf") give none.
    """
    out: list[Placement] = []
    for sentence in sentences(words):
        if asks(sentence):
            continue
        for pattern in (_PUT, _MOVED, _IS):
            for m in pattern.finditer(sentence):
                if _NOT.search(sentence[:m.start('det')]) or m.group('thing').split()[0] in _PRONOUNS \
                        or m.group('place').split()[-1].lower() in _TIMES:
                    continue
                who = m.groupdict().get('who') or ''
                owner = _owner(m.group('det'), speaker, who)
                # where in the place, unless it is a time ("in the drawer in the morning")
                tail = m.group('tail') or ''
                tail = '' if tail.split()[-1:] and tail.split()[-1].lower() in _TIMES else tail.split()
                tail = f"{tail[0]} {_lower_det(' '.join(tail[1:]))}" if tail else ''
                place = ' '.join(filter(None, (m.group('prep').lower(), _lower_det(m.group('place')), tail)))
                found = Placement(thing=m.group('thing'), where=place, owner=owner)
                if all(p.thing != found.thing for p in out):
                    out.append(found)
    return out


def _owner(det: str, speaker: str, who: str) -> str:
    if det.endswith("'s"):
        return det[:-2]
    kind = _POSSESSIVE.get(det.lower(), '')
    if kind == 'own':
        return speaker
    if kind == 'subject' and who and who not in ('I', 'we'):
        return who
    return ''


def _lower_det(place: str) -> str:
    det, _, rest = place.partition(' ')
    return place if det.endswith("'s") else f'{det.lower()} {rest}'


def with_placements(facts: Sequence[str], seg: SegmentInput) -> tuple[list[str], list[str]]:
    """(facts, replaced): ``facts`` and the placements said (:func:`placements`) that none of them tells of.

    A fact tells of a placement when it holds the thing's last word and a word of the place ("The keys are in the blue
    drawer." tells of "the keys in the drawer": the adapter's reading stands); "<face_1> has a laptop." says nothing
    of where it is. One that says only part of the place and nothing else ("Mateo's thermos is in the cabinet." for
    "I dropped my thermos in the bathroom cabinet") is replaced by the rule's, and so is one that makes the place a
    thing owned ("<face_1> has a house key in the bathroom cabinet."). Typed words are read like speech; "my"
    is the one who said or typed it when that is a face or voice id.
    """
    out, replaced = list(facts), []
    for who, words in seg.said():
        for p in placements(words, who if PERSON_ID.fullmatch(who or '') else ''):
            thing, where = stem(p.thing.split()[-1]), fact_stems(p.where)
            told = [f for f in out if thing in fact_stems(f) and fact_stems(f) & where]
            if told and not all(_part_of(f, p) or _HAS.search(f) for f in told):
                continue
            # whose it is, when the words do not say and the fact it replaces does ("my notebook" said by nobody seen)
            owner = next((m.group(1) for m in map(_OWNER.match, told) if m), '')
            p = dataclasses.replace(p, owner=p.owner or owner)
            out = [f for f in out if f not in told] + [p.fact()]
            replaced += told
    return out, replaced


#: a fact that says someone has a thing rather than where it is
_HAS = re.compile(r"\s(?:has|have|had|owns)\s", re.I)
#: the owner a stored placement opens with: "<face_1>'s notebook ...", "Mateo's thermos ..."
_OWNER = re.compile(r"^(<(?:face|voice)_\d+>|[A-Z][a-z]+)'s ")


def _part_of(fact: str, p: Placement) -> bool:
    """Whether ``fact`` tells of placement ``p`` with only some of the words of its place, and of nothing else."""
    words, where = fact_stems(fact), fact_stems(p.where)
    names = {stem(w.lower()) for w in re.findall(r"\b[A-Z][a-z]+", fact)}
    return bool(where - words) and not words - where - fact_stems(p.thing) - names


#: a place a fact puts something at: the preposition and its words to the end of the clause
_FACT_PLACE = re.compile(rf"\b(?:{_PREPS}|at)\s+(?P<place>[^,.;!?]+)", re.I)


def placed_by_sight(fact: str, seen_only: AbstractSet[str]) -> bool:
    """Whether ``fact`` puts something at a place only a frame label gives (``seen_only``: label words nobody said).

    "I dropped my notebook on top of the fridge" in a frame labelled "dining table": the adapter's "<face_2> has a
    notebook on the table." moves the thing said onto the thing seen, and "The new cafe is at the balcony." after a
    view on the new cafe, in a frame labelled "balcony", invents where it is. No fact of the training data takes a
    word from the labels alone. A label may still tell more of a place said ("in the bedroom drawer" for "in the
    drawer" in a bedroom), and where a person is, when seen, is :func:`~.sleep.place_heard`'s to judge.
    """
    for m in _FACT_PLACE.finditer(fact):
        words = {w.split("'")[0] for w in content_words(m.group('place'))}
        if words and words <= seen_only:
            return True
    return False


def misplaced(reply: str, memories: Sequence[MemoryItem]) -> str:
    """Why a reply should not be spoken: it puts a thing where no one memory does ('' when none, or every one does).

    "Merak's umbrella is in the attic." from "Merak's umbrella is in the car." and "<face_5>'s charger is in the
    attic.": each word is in a memory of Merak, and the answer is wrong. A placement the reply states must be one
    memory's: the thing and every word of its place in the same memory (the robot's own earlier answers are none).
    """
    held = [fact_stems(evidence(m.text)) for m in memories if not m.ref.startswith('profile:')]
    for p in placements(reply):
        told = {stem(p.thing.split()[-1])} | fact_stems(p.where)
        if not any(told <= words for words in held):
            return f'reply puts the {p.thing} {p.where}, where no memory does'
    return ''


def placing_within(memories: Sequence[MemoryItem]) -> Callable[[str], bool]:
    """A test of a reply as it is decoded: whether each thing it has placed so far is where one memory puts it.

    :func:`misplaced` for a reply not yet finished: a place's last word may be unfinished ("in the gar" for "in the
    garage"), so it must only begin a word of that memory. "Merak's umbrella is in the attic" fails as soon as
    "attic" is said, while a memory holds the umbrella in the car.
    """
    held = [(fact_stems(evidence(m.text)), set(re.findall(r"[a-z0-9]+", evidence(m.text).lower())))
            for m in memories if not m.ref.startswith('profile:')]

    def within(text: str) -> bool:
        going_on = text[-1:].isalnum()      # the last word may not be finished
        for p in placements(text):
            thing, words = stem(p.thing.split()[-1]), p.where.split()
            prefix = words[-1].lower() if going_on and text.lower().endswith(words[-1].lower()) else ''
            told = {thing} | fact_stems(' '.join(words[:-1]) if prefix else p.where)
            if not any(told <= stems and (not prefix or any(w.startswith(prefix) for w in raw))
                       for stems, raw in held):
                return False
        return True

    return within


def fact_stems(text: str) -> set[str]:
    """The word stems a stored fact tells with, people's ids left out."""
    return {stem(w) for w in content_words(PERSON_ID.sub(' ', text))}


__all__ = ['Placement', 'fact_stems', 'misplaced', 'placements', 'placing_within', 'plural', 'with_placements']
