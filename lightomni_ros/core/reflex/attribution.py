# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Who a fact is about: the person the memory pass names must be one the segment's words point to.

The small memory adapter sometimes hands a fact to the wrong person in view: "I train for basketball twice a week"
said by <face_1> with <face_2> beside them became "<face_2> plays basketball.", and "Giulia has a job as an architect."
said with Sofia in view became "Sofia works as an architect.". :func:`~.sleep.heard_facts` only asks that the people
a fact names were there; here the person a fact opens with must also be one the words point to: someone who spoke,
or someone the words name. A first-person statement of the one face heard speaking is about that face; a statement
that names one person is about that person; a fact whose person nothing points to is dropped (stored, it would be
recalled as truth about someone who never said it).
"""

from __future__ import annotations

import re
from typing import Sequence

from ..text import introduced_name, may_be_name, names_person, sentences
from .grounding import unsupported
from .types import SegmentInput

#: a face or voice id in stored text
PERSON_ID = re.compile(r'<(?:face|voice)_\d+>')
#: the person a fact opens with ("<face_2> plays ...", "Ana's keys are ...", "Sofia works as ..."), else no match
_OPENING = re.compile(r"^(<(?:face|voice)_\d+>|[A-Z][\w-]*)(?='s\b|\s)")
#: a naming fact ("<face_1> is called Pablo."): who it names is the introduction's business, not the speaker's
_NAMING = re.compile(r"^<(?:face|voice)_\d+> is called \S")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|mine|myself)\b", re.I)
#: a sentence (or clause) that opens with a capitalised word and goes on in the third person about it: "Mei has a
#: job as a carpenter.", "Pablo, Ana's bike is new" (a verb ending in -s, is/was/has/had, or a possessive)
_SUBJECT = re.compile(r"(?:^|[.!?,:]\s+)([A-Z][a-z][\w-]*)(?='s\b|\s+(?:is|was|has|had)\b|\s+[a-z]+s\b)")
#: a capitalised word and what follows it: "Update:" or "Wait," opening a sentence is no name
_CAPITALISED = re.compile(r"(^|[.!?]\s+)?\b([A-Z][a-z][\w-]*)\b([:,]?)")


def said_names(words: str, names: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(named, called): names of people the words speak of, and names they call out, in order.

    Names are names memory knows and capitalised words that can be names. A word opening a sentence is capitalised
    anyway: unless memory knows it, it counts only when a comma or colon follows, as called out ("Giulia, I loved
    it": the one addressed; "Update: ..." names nobody either way); "Hi robot" or "Giulia has a job" are neither.
    """
    known = {n for n in (names or {}).values() if n}
    named: list[str] = []
    called: list[str] = []
    for m in _CAPITALISED.finditer(words or ''):
        opening, word, mark = m.group(1) is not None or m.start() == 0, m.group(2), m.group(3)
        if not (word in known or may_be_name(word)):
            continue
        into = called if opening and mark else named if word in known or not opening else None
        if into is not None and word not in into:
            into.append(word)
    return named, called


def talkers(seg: SegmentInput) -> set[str]:
    """Who perception heard speak in the segment (faces, or voices no face is linked to); none when nobody spoke."""
    return {who for who, _ in seg.said()} if seg.transcript.strip() else set()


def one_speaker(seg: SegmentInput) -> str:
    """The one face or voice heard speaking in the segment ('' when nobody, several, or a speaker with no id)."""
    who = talkers(seg)
    one = who.pop() if len(who) == 1 else ''
    return one if PERSON_ID.fullmatch(one) else ''


def opening_person(fact: str, people: set[str]) -> str:
    """The person ``fact`` opens with: a face or voice id, or one of ``people``'s names ('' for none)."""
    m = _OPENING.match(fact)
    if not m:
        return ''
    who = m.group(1)
    return who if PERSON_ID.fullmatch(who) or who in people else ''


def attributed(facts: Sequence[str], seg: SegmentInput,
               names: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(kept, dropped): each fact whose opening person the words do not point to is given to the right one or dropped.

    Pointed to: a person the words speak of (not one they only call out: "Giulia, I loved the race" is no fact about
    Giulia), and a face or voice heard speaking (or its name) unless its words are in the third person about someone
    memory knows ("Ana works as a nurse, you know" is no fact about the speaker). Otherwise the fact goes to the one
    face heard speaking when its words are in the first person and name nobody memory knows, or to the one person
    memory knows that words in the third person name (a capitalised word memory does not know may be a place), or to
    the name a sentence with no word in the first person opens with ("Mei has a job as a carpenter."); else
    (several speakers, a voice no face is linked to, names nobody can tell apart) it is dropped. Naming facts keep
    their id. Typed text is left as it is: perception does not know who typed it.
    """
    if seg.typed_text.strip() or not seg.transcript.strip():
        return list(facts), []      # perception does not know who typed: nothing to point with
    names = names or {}
    known = set(names.values()) - {''}
    speaking = talkers(seg)
    faces_talking = sorted(t for t in speaking if t.startswith('<face_'))
    words = seg.utterance
    said, called = said_names(words, names)
    first_person = bool(_FIRST_PERSON.search(words))
    # names the words give others: a speaker's own name ("I'm Tariq, I work as a nurse") points to the speaker; in the
    # first person only a name memory knows as someone's may be what a fact is about ("I was raised in Krakow")
    own = {names.get(t) for t in speaking} | {introduced_name(words)}
    others = [n for n in said if n not in own]
    known_others = [n for n in others if n in known]
    # with no word in the first person, a sentence that opens with a name is about that name, known or not ("Mei has
    # a job as a carpenter", said by someone else)
    subjects = [] if first_person else \
        [n for n in dict.fromkeys(_SUBJECT.findall(words)) if may_be_name(n) and n not in own and n not in called]
    # a third-person statement about someone memory knows ("Ana works as a nurse, you know") is not about its speaker;
    # a capitalised word memory does not know may be a place ("Back home in Osaka it is much warmer")
    about_others = known_others or subjects
    speakers = speaking | {names[t] for t in speaking if names.get(t)} if first_person or not about_others else set()
    pointed = speakers | set(said) | {f for f, n in names.items() if n and n in said}
    pointed |= set(PERSON_ID.findall(' '.join([words, *speakers])))
    kept, dropped = [], []
    for fact in facts:
        who = opening_person(fact, known | {*said, *called})
        # "<face_1> thinks Paris is lovely": the subject is what the fact is about, not who holds it
        if not who or who in pointed or _NAMING.match(fact) or any(names_person(fact, '', n) for n in subjects):
            kept.append(fact)
            continue
        if first_person and not known_others and len(faces_talking) == 1:
            right = faces_talking[0]
        elif not first_person and len(about_others) == 1:
            right = about_others[0]
        else:
            dropped.append(fact)
            continue
        kept.append(right + fact[len(who):])
    return kept, dropped


#: "I" with what follows it, in the third person ("I've been" -> "has been"); a verb of its own is conjugated
_I_AUX = ((re.compile(r"\bI(?:'m| am)\b"), 'is'), (re.compile(r"\bI(?:'ve| have)\b"), 'has'),
          (re.compile(r"\bI(?:'ll| will)\b"), 'will'), (re.compile(r"\bI(?:'d| would)\b"), 'would'),
          (re.compile(r"\bI (?:don't|do not)\b"), "doesn't"), (re.compile(r"\bI (?:can't|cannot)\b"), "can't"),
          (re.compile(r"\bI (was|can|could|should|must|might|had|did|used to)\b"), r'\1'))
_I_VERB = re.compile(r"\bI ([a-z]+)\b")
#: verbs whose past reads the same or that a plain "+s" would spoil: kept as said
_AS_SAID = frozenset('put set let cut hit read quit went got bought left came made took gave saw lost found kept met '
                     'ran sat spent sent told thought sold brought caught taught heard said paid'.split())
_ME = re.compile(r"\b(?:me|myself)\b", re.I)
MY = re.compile(r"\bmy\b", re.I)


def _third(verb: str) -> str:
    """``verb`` after "he" or "she" ("work" -> "works", "watch" -> "watches", "carry" -> "carries")."""
    if verb in _AS_SAID or verb.endswith('ed') or verb.endswith('s'):
        return verb
    if verb.endswith(('sh', 'ch', 'x', 'z', 'o')):
        return verb + 'es'
    if verb.endswith('y') and len(verb) > 1 and verb[-2] not in 'aeiou':
        return verb[:-1] + 'ies'
    return verb + 's'


def in_third_person(facts: Sequence[str], seg: SegmentInput) -> tuple[list[str], list[str]]:
    """(kept, dropped): a fact the adapter left in the first person is said of the one person heard speaking.

    Stored as "I have been a software engineer for ten years.", "I" would be whoever later reads it, and no question
    about the speaker would find it. With one face or voice heard and nothing typed, "I" becomes that person
    ("<face_2> has been a software engineer for ten years."), "my" and "me" theirs ("<face_2> put their keys ...",
    "<face_2>'s sister lives in Paris."); otherwise such a fact is dropped (the episode keeps the words and who said
    them).
    """
    who = '' if seg.typed_text.strip() else one_speaker(seg)
    kept, dropped = [], []
    for fact in facts:
        if not _FIRST_PERSON.search(fact):
            kept.append(fact)
            continue
        if not who:
            dropped.append(fact)
            continue
        text = fact
        for pattern, verb in _I_AUX:
            text = pattern.sub(lambda m, v=verb: f'{who} {m.expand(v)}', text)
        text = _I_VERB.sub(lambda m: f'{who} {_third(m.group(1))}', text)
        if who in text:     # named once: "<face_2> put their keys in the drawer"
            text = _ME.sub('them', MY.sub('their', text))
        else:
            text = _ME.sub(who, MY.sub(f"{who}'s", text))
        (dropped if _FIRST_PERSON.search(text) else kept).append(text)
    return kept, dropped


#: words that mark a statement as the speaker's own view ("..., if you ask me", "I think ...", "in my view ...")
_OPINION = re.compile(r"\b(?:if you ask me|in my (?:opinion|view|book)|i (?:think|reckon|feel|believe|guess|find)|"
                      r"i(?:'d| would) say|to me|personally|honestly|to be honest)\b", re.I)


def as_opinion(facts: Sequence[str], seg: SegmentInput) -> list[str]:
    """``facts``, each judgement the one speaker marked as their own view said as theirs.

    After "The power cut was an absolute mess, if you ask me." the adapter may keep "The power cut was an absolute
    mess.": stored so, it is nobody's view, told as a fact of the world, and "what did Ana think of the power cut?"
    finds no memory of Ana. With one face or voice heard and nothing typed, a fact that opens with no person and all
    of whose content words a sentence with a mark of opinion holds (in some form: :func:`~.grounding.unsupported`)
    becomes "<face_4> thinks the power cut was an absolute mess.". Spoken among several people with no speaker
    known, such a fact is someone's view told as the world's and is left out (the episode keeps the words heard);
    typed words stay as they are.
    """
    typed = bool(seg.typed_text.strip())
    who = '' if typed else one_speaker(seg)
    marked = ' '.join(s for s in sentences(seg.utterance) if _OPINION.search(s))
    if not marked or not who and typed:
        return list(facts)
    out = []
    for fact in facts:
        if not opening_person(fact, set()) and not PERSON_ID.search(fact) and not unsupported(fact, marked):
            if not who:
                continue
            fact = f'{who} thinks {fact[:1].lower()}{fact[1:]}'
        out.append(fact)
    return out


__all__ = ['MY', 'PERSON_ID', 'as_opinion', 'attributed', 'in_third_person', 'one_speaker', 'opening_person',
           'said_names', 'talkers']
