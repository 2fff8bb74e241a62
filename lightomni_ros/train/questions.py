# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Questions to the robot about what the stream said so far, answerable or not, with the answer it should give.

An answerable question names what was said (an attribute of a named person, where an object is, when an event is,
what someone thought of a topic, what the radio said about something, what someone or the radio said last, the
asker's name) and its answer comes from the newest entry about it (a correction supersedes the old value, which the
answer must not give: ``answer['wrong']``). An unanswerable one asks about something never said; the answer is a
refusal. Every question is addressed to the robot (wake word, typed, or asked with "you" by someone alone in view).
"""

from __future__ import annotations

from typing import Callable

from ..core.reflex.grounding import content_words
from .stream import DEVICE, Person, Said, Stream, be_it
from .world import ATTR_FACT, ATTR_YOU, capital

DONT_KNOW = "I don't know."
DONT_REMEMBER = "I don't remember that."


def _ask(st: Stream, kind: str, key: str, slots: dict[str, str], present: list[Person], speaker: Person | None,
         answer: str, keywords: list[str], answerable: bool, gold: int | None = None,
         wrong: list[str] | None = None) -> Said:
    """A question segment: spoken behind a wake word, typed, or asked with "you" by someone alone in view.

    Asked from out of view (nobody in view), a question always has its wake word: an unseen speaker without one is
    a radio or TV as far as the robot can tell.
    """
    text = st.phrase(key).format(**slots)
    st.reword(key, text, **slots)
    info = {'kind': kind, 'answerable': answerable, 'keywords': [k.lower() for k in keywords],
            'wrong': list(wrong or [])}
    common = dict(speech=1, search=1, response=answer, gold=gold, answer=info)
    if present and st.rng.random() < st.cfg.typed_questions:
        return Said(kind, 'robot', present, speaker, typed=capital(text), **common)
    if len(present) == 1 and ' you' in f' {text.lower()}' and st.rng.random() < st.cfg.no_wake:
        return Said(kind, 'robot', present, speaker, capital(text), **common)
    return Said(kind, 'robot', present, speaker, f'{st.wake()} {text}', **common)


def _asker(st: Stream, about: Person | None = None) -> tuple[list[Person], Person | None]:
    """People in view and the asker (not the person asked about; sometimes out of view, nobody in view)."""
    if st.rng.random() < st.cfg.unseen_asker:
        return [], None
    pool = [p for p in st.people if p is not about] or st.people
    asker = st.rng.choice(pool)
    others = [p for p in st.people if p is not asker]
    present = [asker] + (st.rng.sample(others, 1) if others and st.rng.random() < 0.3 else [])
    return present, asker


def _unanswerable(st: Stream) -> bool:
    return st.rng.random() < st.cfg.unanswerable


def ask_other(st: Stream) -> Said | None:
    """An attribute of a person memory knows by name."""
    named = [p for p in st.people if p.face in st.names]
    if not named:
        return None
    person = st.rng.choice(named)
    known = [a for a in ATTR_FACT if ('attr', person.face, a) in st.known]
    unknown = [a for a in ATTR_FACT if a not in known]
    present, asker = _asker(st, person)
    slots = {'name': person.name}
    if (_unanswerable(st) or not known) and unknown:
        attr = st.rng.choice(unknown)
        return _ask(st, 'ask_other', f'ask_other_{attr}', slots, present, asker, DONT_KNOW, [], False)
    if not known:
        return None
    attr = st.rng.choice(known)
    value, kw = person.attrs[attr]
    k = st.known[('attr', person.face, attr)]
    return _ask(st, 'ask_other', f'ask_other_{attr}', slots, present, asker,
                ATTR_FACT[attr].format(who=person.name, value=value), [kw], True, k['memory'], k['wrong'])


def ask_self(st: Stream) -> Said | None:
    """One of the asker's own attributes ("what do I usually drink?"), asked alone in view."""
    person = st.rng.choice(st.people)
    attrs = [a for a in ATTR_FACT if f'ask_self_{a}' in st.tpl]
    known = [a for a in attrs if ('attr', person.face, a) in st.known]
    if _unanswerable(st) or not known:
        unknown = [a for a in attrs if a not in known]
        if not unknown:
            return None
        return _ask(st, 'ask_self', f'ask_self_{st.rng.choice(unknown)}', {}, [person], person, DONT_KNOW, [],
                    False)
    attr = st.rng.choice(known)
    value, kw = person.attrs[attr]
    k = st.known[('attr', person.face, attr)]
    return _ask(st, 'ask_self', f'ask_self_{attr}', {}, [person], person, ATTR_YOU[attr].format(value=value), [kw],
                True, k['memory'], k['wrong'])


def ask_object(st: Stream) -> Said | None:
    """Where an object is: nobody's, a named person's, or the asker's own (asked in view)."""
    known = [k for k in st.known if k[0] == 'object']
    if _unanswerable(st) or not known:
        mentioned = {k[2] for k in known}
        fresh = [o for o in st.vocab['objects'] if o[0] not in mentioned]
        if not fresh:
            return None
        obj, plural = st.rng.choice(fresh)
        present, asker = _asker(st)
        return _ask(st, 'ask_object', 'ask_object', dict(obj=obj, **be_it(plural)), present, asker, DONT_REMEMBER,
                    [], False)
    key = st.rng.choice(known)
    _, owner_face, obj = key
    k = st.known[key]
    plural, place = k['plural'], k['place']
    slots = dict(obj=obj, **be_it(plural))
    if not owner_face:
        present, asker = _asker(st)
        answer = capital(f'the {obj} {slots["be"]} {place}.')
        return _ask(st, 'ask_object', 'ask_object', slots, present, asker, answer, [obj, k['kw']], True, k['memory'],
                    k['wrong'])
    owner = next(p for p in st.people if p.face == owner_face)
    if st.rng.random() < 0.5 or owner.face not in st.names:     # the owner asks, alone in view
        answer = f'Your {obj} {slots["be"]} {place}.'
        return _ask(st, 'ask_object', 'ask_object_own', slots, [owner], owner, answer, [obj, k['kw']], True,
                    k['memory'], k['wrong'])
    present, asker = _asker(st, owner)
    answer = f"{owner.name}'s {obj} {slots['be']} {place}."
    return _ask(st, 'ask_object', 'ask_object_of', dict(slots, name=owner.name), present, asker, answer,
                [obj, k['kw']], True, k['memory'], k['wrong'])


def ask_event(st: Stream) -> Said | None:
    """When an event is (after a correction: its new day or time)."""
    known = [k[1] for k in st.known if k[0] == 'event']
    present, asker = _asker(st)
    if _unanswerable(st) or not known:
        fresh = [e for e, _ in st.vocab['events'] if e not in known]
        if not fresh:
            return None
        return _ask(st, 'ask_event', 'ask_event', {'event': st.rng.choice(fresh)}, present, asker, DONT_REMEMBER,
                    [], False)
    ev = st.rng.choice(known)
    k = st.known[('event', ev)]
    return _ask(st, 'ask_event', 'ask_event', {'event': ev}, present, asker, capital(f'{ev} is {k["when"]}.'),
                [ev.replace('the ', '', 1), k['kw']], True, k['memory'], k['wrong'])


def ask_topic(st: Stream) -> Said | None:
    """What a named person thought of a topic."""
    named = [p for p in st.people if p.face in st.names]
    if not named:
        return None
    person = st.rng.choice(named)
    known = [k[2] for k in st.known if k[0] == 'opinion' and k[1] == person.face]
    present, asker = _asker(st, person)
    if _unanswerable(st) or not known:
        fresh = [t for t in st.vocab['topics'] if t not in known]
        if not fresh:
            return None
        return _ask(st, 'ask_topic', 'ask_topic', {'name': person.name, 'topic': st.rng.choice(fresh)}, present,
                    asker, DONT_REMEMBER, [], False)
    topic = st.rng.choice(known)
    k = st.known[('opinion', person.face, topic)]
    answer = capital(k['tpl'].format(who=person.name, topic=topic))
    return _ask(st, 'ask_topic', 'ask_topic', {'name': person.name, 'topic': topic}, present, asker, answer,
                [topic.replace('the ', '', 1), k['kw']], True, k['memory'])


def ask_heard(st: Stream) -> Said | None:
    """What the radio or TV said about something."""
    known = [k[1] for k in st.known if k[0] == 'broadcast']
    present, asker = _asker(st)
    if _unanswerable(st) or not known:
        fresh = [b[2] for b in st.vocab['broadcasts'] if b[2] and b[2] not in known]
        if not fresh:
            return None
        return _ask(st, 'ask_heard', 'ask_heard', {'subject': st.rng.choice(fresh)}, present, asker, DONT_REMEMBER,
                    [], False)
    subject = st.rng.choice(known)
    k = st.known[('broadcast', subject)]
    line = k['line']
    answer = f'I heard that {line[0].lower()}{line[1:].rstrip(".!?")}.'
    return _ask(st, 'ask_heard', 'ask_heard', {'subject': subject}, present, asker, answer, k['kws'], True,
                k['memory'])


def _quoted_keywords(words: str, names: list[str]) -> list[str]:
    """The two longest content words of ``words`` (not a name): what a reply must repeat of them."""
    skip = {n.lower() for n in names}
    found = sorted((w for w in content_words(words) if w not in skip), key=lambda w: (-len(w), w))
    return found[:2]


def ask_said(st: Stream) -> Said | None:
    """What a named person or the radio/TV said last, with no topic: answered with their words, quoted.

    Only the newest words of the one asked about answer (older ones are not what "just said" asks); a person whose
    newest words were said to the robot is not asked about (those are requests, not what they said to anyone).
    """
    named = [p for p in st.people if p.face in st.names]
    asked_device = not named or st.rng.random() < 0.4
    person = None if asked_device else st.rng.choice(named)
    who = st.rng.choice(st.vocab['devices']) if person is None else person.name
    present, asker = _asker(st, person)
    heard = st.heard.get(DEVICE if person is None else person.face)
    if heard is None:      # nothing ever heard from them
        return _ask(st, 'ask_said', 'ask_said', {'who': who}, present, asker, DONT_REMEMBER, [], False)
    epi, words = heard
    if not words:
        return None
    answer = f'{capital(who)} said: "{words}"'
    return _ask(st, 'ask_said', 'ask_said', {'who': who}, present, asker, answer,
                _quoted_keywords(words, list(st.names.values())), True, epi)


def ask_name(st: Stream) -> Said | None:
    """The asker's own name, asked alone in view."""
    person = st.rng.choice(st.people)
    k = st.known.get(('name', person.face))
    if k is None:
        return _ask(st, 'ask_name', 'ask_name', {}, [person], person, DONT_KNOW, [], False)
    return _ask(st, 'ask_name', 'ask_name', {}, [person], person, f'You are {person.name}.', [person.name], True,
                k['memory'])


QUESTIONS: dict[str, Callable[[Stream], Said | None]] = {
    'ask_other': ask_other, 'ask_self': ask_self, 'ask_object': ask_object, 'ask_event': ask_event,
    'ask_topic': ask_topic, 'ask_heard': ask_heard, 'ask_said': ask_said, 'ask_name': ask_name,
}
REFUSALS = (DONT_KNOW, DONT_REMEMBER)

__all__ = ['QUESTIONS', 'REFUSALS', 'DONT_KNOW', 'DONT_REMEMBER']
