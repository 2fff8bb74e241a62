# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Which retrieved memories answer a question: about what it asks, about whom it asks, and telling more than it.

Retrieval returns the closest entries, not entries that answer: asked "how does Kwame spend weekends?", the closest
may be Rahul's weekends, or "Kwame has a laptop". Three answer checks share one reading of what could answer:

- :func:`unfounded_refusal`: "I don't remember that." is not said over a memory that could answer (asked what someone
  said: over a memory of what they said);
- :func:`misattributed`: a reply to a question about a named person claims only what memories of that person hold
  (a small model readily moves Rahul's birthday to Kwame, and every word of it is in the memories);
- :func:`extractive_answer`: the quote spoken instead of a failed reply comes from a memory that could answer, or
  nothing is quoted and the robot says it does not know (:data:`DONT_KNOW`).

A memory could answer when it is no profile and not only a question (unless the question asks what was said); it
mentions a person the question names, by name or by a face the profiles name (when the question names anyone); it
shares a word stem with what the question asks about (its content words other than names, the robot's names and words
of asking); and it holds a content word the question does not ("Kwame has a laptop" does not say where the laptop is).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Callable, Iterable, Sequence

import numpy as np

from ..text import CALENDAR_WORDS, WHEN_WORDS, gist, names_person, sentences, unaddressed
from .attribution import PERSON_ID, said_names
from .grounding import (SAID_AS_FACT, asks, asks_to_keep, content_words, holds_only_a_question, is_quote_question,
                        is_refusal, names_a_device, promises_to_keep, said_by, said_in, speakable, stem,
                        words_heard)
from .prompts import face_names, said_at
from .types import MemoryItem

#: what the robot says when no reply passes the checks and no memory answers the question
DONT_KNOW = "I don't know."
#: why a claim is refused when no memory answers: only a refusal could pass, so no second chance is tried
UNANSWERED = 'no memory answers, and the reply is no refusal'
#: the confirmations of a reminder asked for, of what the robot was asked to keep, and of what it was only told
REMINDING = 'Okay, I will remind you.'
KEPT = 'Okay, I will remember that.'
NOTED = 'Thanks, I will keep that in mind.'
#: how a quote of memories begins: the listener hears that what follows is recalled, not answered
QUOTE = 'From memory: '


def confirmation(utterance: str, reminder: bool = False) -> str:
    """What the robot says to words that ask nothing: it will remind, remember what it was asked to keep, or noted it.

    ``reminder``: the words ask for a reminder (the time parser found one).
    """
    return REMINDING if reminder else KEPT if asks_to_keep(utterance) else NOTED


#: a reply that says the robot will remind: "Okay, I will remind you in two.", "I set a reminder."
_PROMISES_REMINDER = re.compile(r"\b(?:remind you|set (?:a|the|your) reminder|reminder (?:is )?set)\b", re.I)


def false_reminder(reply: str, reminders: Sequence[object]) -> str:
    """Why ``reply`` should not be said: it promises a reminder nobody asked for ('' when it does not).

    ``reminders``: those the time parser found in the words. A promise nobody keeps: "update: lunch got moved to two"
    got "Okay, I will remind you in two.".
    """
    return 'reply promises a reminder the words do not ask for' if not reminders and \
        _PROMISES_REMINDER.search(reply) else ''


#: words of asking, not of what is asked about: a memory that holds one of these is no sign it holds the answer
_ASKING = frozenset('''know knew idea remind remember think wonder tell news anything something thing things happened
please hey okay excuse sorry quick question like hello which whose must'''.split())
#: words with which memory renders who was there and how something was said: a memory made of these and of the
#: question's own words tells nothing new ("a person has a laptop")
_FRAME = frozenset('''person people someone somebody said says saw heard hear talking typing typed told unseen speaker
voice face'''.split())
#: verbs of putting something somewhere and of how a person relates to it: "where did Merak put the umbrella?" asks
#: about the umbrella, and "I put my wallet in the closet" does not tell of it. Not grounding's _RELATION: "what does
#: Noor work as?" asks about the work ("works" must stay a word of what was asked about; the wider set made an answer
#: that said it ungrounded on held-out streams 62-63)
_PLACING = frozenset('''put puts left leave leaves placed place stuck moved dropped kept keep keeps like likes love
loves enjoy enjoys has have had'''.split())
#: capitalised words that name nobody: the calendar, "I", devices
_NOT_NAMES = frozenset('i tv ok okay'.split()) | CALENDAR_WORDS
#: a capitalised word that does not open a sentence (a name, as text and speech recognition write names)
_CAPITAL = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+)\b")


def people_asked(question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = ()) -> set[str]:
    """The people ``question`` names, lower case.

    Names the profiles know, capitalised words inside a sentence, and the one who did what is asked about ("where did
    coffee put the wallet?": speech recognition writes a name it does not know as a word, in lower case).
    """
    q = question.lower()
    named = {n.lower() for n in face_names(memories).values() if re.search(rf'\b{re.escape(n.lower())}\b', q)}
    skip = _NOT_NAMES | _ASKING | _NOT_DOERS | {w.lower() for w in ignore}
    named |= {w.lower() for w in _CAPITAL.findall(question.strip()) + _DOER.findall(question)
              if w.lower() not in skip and content_words(w)}
    return named


#: the one who did what a question asks about: "where did <Kofi> put ...", "what did <mum> buy ..." (only "did":
#: "what does tennis involve?" asks about a thing)
_DOER = re.compile(r"\b(?:where|what|when|which\s+\w+)\s+did\s+([a-z][\w'-]*)\s+[a-z]+", re.I)
#: words in a doer's place that are nobody's name
_NOT_DOERS = frozenset('''i you he she we they it me him her us them the a an my your his our their its this that these
those someone somebody anyone anybody everyone everybody nobody people one there here'''.split())


#: words with which a question asks about the one asking ("which drink do I like?", "where is my bike?"); "me" of
#: "tell me" and "remind me" asks nothing about them
_ASKER = re.compile(r"\b(?:I|I'm|I've|my|mine|myself)\b", re.I)


def asks_of_asker(question: str) -> bool:
    """Whether ``question`` asks about the one asking it (their drink, their keys, what they did)."""
    return bool(_ASKER.search(question))


def of_asker(found: Sequence[MemoryItem], question: str, asker: str, names: dict[str, str]) -> list[MemoryItem]:
    """Of ``found``, those that name the one asking (``asker``: a face or voice id) when ``question`` asks of them.

    "Which drink do I like?" is about the one asking: the drinks of the others are near misses. When none names
    them, those that name nobody else memory knows ("the keys are in the drawer" may be theirs; "Tariq plays golf."
    is no answer to "what sport am I into?"). All of ``found`` when the question is not about the asker.
    """
    if not (found and PERSON_ID.fullmatch(asker or '') and asks_of_asker(question)):
        return list(found)
    whose = [_whose(m, asker, names) for m in found]
    return [m for m, w in zip(found, whose) if w == 'asker'] or [m for m, w in zip(found, whose) if not w]


def _whose(memory: MemoryItem, asker: str, names: dict[str, str]) -> str:
    """'asker', 'other' or '' (nobody memory knows): whom ``memory`` tells of.

    Words someone said tell of the people they name, else of the one who said them: "<face_3> said: Leila always
    orders sparkling water." is Leila's drink, not that of <face_3>, who said it ("Noor, ..." only calls Noor). A face
    or voice id is someone memory knows, named or not: "<face_3> comes from Marseille." is not the asker's hometown.
    """
    told = _CALLING.sub('', next(iter(words_heard(memory.text)), ''))
    for text in (told, memory.text) if told else (memory.text,):
        if names_person(text, asker, names.get(asker, '')):
            return 'asker'
        if any(names_person(text, f, n) for f, n in names.items() if f != asker) or \
                any(i != asker for i in PERSON_ID.findall(text)):
            return 'other'
    return ''


#: a name the words open with to call someone ("Noor, the party was a mess"): no claim about them
_CALLING = re.compile(r"^[A-Z][a-z]+, ")


def of_others(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
              asker: str = '') -> str:
    """Why a reply should not be spoken: asked about the one asking, it answers from what memory holds of others.

    "You play golf." to Freya's "what sport am I into?" when only Tariq's golf is remembered: every word is
    grounded, and it tells the wrong person. When memories of both answer, what the reply adds must be in one of the
    asker's. A refusal, a confirmation, an asker memory knows no id of, and a question no memory answers (the other
    checks read those) are not checked here.
    """
    if not reply.strip() or is_refusal(reply) or promises_to_keep(reply) or is_quote_question(question):
        return ''
    found = answering(question, memories, ignore)
    if not found:
        return ''
    names = face_names(memories)
    mine = of_asker(found, question, asker, names)
    if not mine:
        return 'reply answers the one asking from memories of someone else'
    # theirs and others' answer: what the reply adds must come from theirs ("You work as an architect." to "what do
    # I do for work?" from Leila's job, beside the asker's own "I have been a plumber for ten years")
    others = [m for m in found if m not in mine]
    added = _added(reply, question, names, ignore)
    if others and added and not _said_in_one(added, mine) and _said_in_one(added, others):
        return 'reply tells the one asking what memory holds of someone else'
    return ''


def _added(reply: str, question: str, names: dict[str, str], ignore: Sequence[str] = ()) -> set[str]:
    """Stems of the content words ``reply`` adds to ``question``: not its people's names nor a quote's framing."""
    people = {n.lower() for n in names.values()} | {w.lower() for w in ignore}
    return _stems(content_words(reply) - content_words(question) - _FRAME - people)


def _said_in_one(stems: set[str], memories: Sequence[MemoryItem]) -> bool:
    """Whether one of ``memories`` says every word of ``stems``."""
    return any(stems <= _stems(content_words(m.text)) for m in memories)


def _mentions(text: str, people: set[str]) -> bool:
    return any(re.search(rf'\b{re.escape(p)}\b', text) for p in people)


#: an episode as :func:`~.grounding.speakable` says it: 'I saw Ana talking, Bob; kitchen and heard "..."'
_SPOKEN_EPISODE = re.compile(r'^I saw (.*?) and heard "(.*)"\.?$', re.S | re.I)


#: the name a quote opens with when it calls someone: 'said: kwame, i really enjoyed ...', 'heard "ana, look ...'
_VOCATIVE = re.compile(r'(said: |typed: |heard ")[a-z]+, ')


def _about(text: str) -> str:
    """What a spoken memory tells about: an episode without its bystanders and scene labels.

    What Ana said in Bob's presence is not about Bob, and a laptop in view while Ana spoke of Hanoi is not what she
    said about a laptop. Nor is "Kwame, I really enjoyed the race" about Kwame: the name only calls him.
    """
    text = _VOCATIVE.sub(r'\1', text)
    m = _SPOKEN_EPISODE.match(text)
    if not m:
        return text
    seen = m.group(1).split('; ')[0].split(', ')
    return f'i saw {", ".join(p for p in seen if p.endswith((" talking", " typing")))} and heard "{m.group(2)}"'


def _stems(words: set[str]) -> set[str]:
    return {stem(w) for w in words}


def _asked(question: str, memories: Sequence[MemoryItem], ignore: Sequence[str],
           about: str | None = None) -> tuple[set[str], set[str], dict[str, str]]:
    """(the people ``question`` names, the words that are not what it asks about, stem -> word of what it asks about).

    What it asks about is the content words of ``about`` (default: the question) other than the people's names, the
    robot's names (``ignore``) and words of asking.
    """
    people = people_asked(question, memories, ignore)
    skip = {w.lower() for w in ignore} | people | _ASKING
    topic = {stem(w): w for w in content_words(question if about is None else about) if w not in skip}
    for word in list(topic.values()):
        for other in _SAID_WITH.get(word, ()) or _BORN.get(_asking_word(question), ()) * (word == 'born'):
            topic.setdefault(stem(other), word)
    return people, skip, topic


def _thing(question: str, topic: dict[str, str]) -> dict[str, str]:
    """What a question asks about that a memory must tell of to answer it (``topic`` as :func:`_asked` reads it).

    Asked where, the thing is what follows an article or an owner ("the umbrella", "Joe's car keys"), and the verb
    is how it got there: "where did Merak put the umbrella?" is not answered by "I put my charger in the attic", nor
    is where the umbrella went superseded by it ("where did Joe buy the ticket?" by "I bought my keys ..." alike).
    With no such words, a verb of putting is still no thing. A reply may still say the verb for the thing ("Merak
    put it in the car.": :func:`off_topic` reads the whole topic).
    """
    if _asking_word(question) != 'where':
        return topic
    named = {stem(w) for m in _THING.finditer(question) for w in content_words(m.group(1))}
    return {s: w for s, w in topic.items() if s in named} or \
        {s: w for s, w in topic.items() if w not in _PLACING} or topic


#: the words of a thing after its article or owner: "the umbrella", "my car keys", "Joe's red ball"
_THING = re.compile(r"\b(?:the|a|an|my|your|his|her|their|our|its|\w+'s)\s+([a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})",
                    re.I)


#: "born" asks for a place after "where" ("where was Ana born?" -> "Ana comes from Porto.") and for a month or a
#: birthday after "when" ("when was Bo born?" -> "Bo has a birthday in May.")
_BORN = {'where': ('come', 'raised', 'grew'), 'when': ('birthday',)}


def _asking_word(question: str) -> str:
    m = re.search(r'\b(where|when)\b', question, re.I)
    return m.group(1).lower() if m else ''


#: animals people keep at home: "what pet does Ana have?" is answered by "Ana has a cat called Miso."
_PETS = tuple('''cat kitten dog puppy parrot budgie bird canary rabbit bunny tortoise turtle hamster gerbil guinea
mouse rat ferret fish goldfish snake lizard gecko horse pony chinchilla'''.split())
#: a word that asks for a kind of thing, and the words an answer says it with: "what is Ana's profession?" is
#: answered by "Ana works as a nurse.", "when is Bo's birthday?" by "Bo was born in May", "which city did Bo grow up
#: in?" by "Bo comes from Porto.", "which sport is Ana into?" by "Ana plays tennis." ("born" alone asks for a
#: place or a month: :data:`_BORN` reads which)
_SAID_WITH: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(('profession', 'occupation', 'job', 'career', 'living'), ('work', 'job')),
    'birthday': ('born',), 'month': ('birthday', 'born'),
    **dict.fromkeys(('hometown', 'city', 'town', 'grow', 'grew'), ('come', 'raised', 'grew', 'born')),
    'drink': ('order', 'orders'),
    **dict.fromkeys(('hobby', 'hobbies', 'pastime', 'fun', 'relax', 'weekend', 'weekends', 'busy'),
                    ('free', 'spare', 'spend', 'enjoy')),
    **dict.fromkeys(('sport', 'sports'), ('play', 'train')),
    **dict.fromkeys(('pet', 'pets', 'animal', 'animals'), _PETS),
    **dict.fromkeys(('avoid', 'allergy', 'allergies', 'eat', 'food', 'away'), ('allergic', 'allergy'))}


def answering(question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
              quote: bool | None = None) -> list[MemoryItem]:
    """The memories that could answer ``question`` (module docstring), in their given order.

    ``quote`` (default: :func:`~.grounding.is_quote_question`): the question asks what was said, so the memories are
    those of the speaker it names (:func:`~.grounding.said_by`: a person, or a radio or TV), the topic is what it
    asks the words to be about ("... say on TV about petrol prices?"; anything when it names none), and a question
    someone asked answers only when nothing else does. When none of the speaker's memories is about that topic, any
    memory of it may answer: a TV heard while people were in view is remembered as their words.
    """
    quote = is_quote_question(question) if quote is None else quote
    if not quote:
        return _answering(question, memories, ignore, question, False)
    about = _ABOUT_TOPIC.search(question)
    found = _answering(question, said_by(question, memories, robot=ignore), ignore, about.group(1) if about else '',
                       True)
    found = found or (_answering(question, memories, ignore, about.group(1), True) if about else [])
    # asked what was said, the words themselves answer before a fact drawn from them ("Kwame is called Kwame.")
    return [m for m in found if holds_words(m)] or found


def holds_words(memory: MemoryItem) -> bool:
    """Whether a memory keeps words as they were said ("<face_1> said: ...", an episode's 'heard "..."')."""
    return bool(SAID_AS_FACT.match(said_in(memory)) or _HEARD_WORDS.search(memory.text))


_HEARD_WORDS = re.compile(r'\bheard "[^"]')


#: what a quote question asks the words to be about: "what did they say on TV about petrol prices?"
_ABOUT_TOPIC = re.compile(r'\babout\b(.+)$', re.I | re.S)


def _answering(question: str, memories: Sequence[MemoryItem], ignore: Sequence[str], asks_about: str,
               quote: bool) -> list[MemoryItem]:
    names = face_names(memories)
    people, skip, topic = _asked(question, memories, ignore, asks_about)
    topic = _thing(question, topic)
    asked = content_words(question)
    beside = _stems(asked) | _stems(_FRAME) | _stems(skip) | _stems({n.lower() for n in names.values()})
    when = not quote and asks_when(question)
    out, asked_only = [], []
    for m in memories:
        said = said_in(m)
        only_asks = holds_only_a_question(said)
        if m.ref.startswith('profile:') or not said or (not quote and only_asks):
            continue
        text = _about(speakable(m.text, names).lower())
        if people and not _mentions(text, people):
            continue
        words = content_words(text)
        if topic and not topic.keys() & _stems(words):
            continue
        if when and not says_when(text):
            continue
        if _stems(words) - beside:
            (asked_only if only_asks and asks_about else out).append(m)
    # with no topic ("what did Kwame just say?") a question someone asked is what they said like any other words
    return out or asked_only


#: a question that asks for a time: "when is ...?", "what time ...?", "in which month ...?", "on what day ...?"
_ASKS_WHEN = re.compile(r"^\W*(?:\w+\W+){0,6}?(?:when|what time|(?:which|what) (?:day|date|month|year|week|time))\b",
                        re.I)
#: words that say a time, besides any number: "at six", "this morning", "next week", "in May"
_TIME_WORDS = WHEN_WORDS | frozenset("""one two three four five six seven eight nine ten eleven twelve noon midnight
morning afternoon evening night tonight o'clock oclock am pm half quarter later soon ago earlier""".split())


def asks_when(question: str) -> bool:
    """Whether ``question`` asks for a time ("when is Bo's birthday?", "remind me when the review is?").

    The asking word comes early (within the first few words after a greeting): "where did Joe put the keys when he
    came in?" asks where.
    """
    m = _ASKS_WHEN.search(question or '')
    return bool(m) and _asking_word(question[:m.end()]) in ('when', '')


def says_when(text: str) -> bool:
    """Whether ``text`` says a time: a calendar word, a part of the day, a season, a clock or any number.

    Asked "in which month is Pablo's birthday?", "Pablo has a birthday party." and "The party was an absolute mess."
    tell of the birthday but not when it is: no memory answers, and a reply made of them answers nothing.
    """
    return any(w in _TIME_WORDS or any(c.isdigit() for c in w) for w in re.findall(r"[\w']+", text.lower()))


def unfounded_refusal(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
                      asker: str = '') -> str:
    """Why a refusal should not be spoken: a retrieved memory could answer the question ('' otherwise).

    The mirror of the grounding check: a claim must come from the memories, and "I don't remember that." must not
    be said over a memory that says where the laptop asked about is. ``ignore``: the robot's names; ``asker``: the
    one asking (a face or voice id), whose question about themself others' memories do not answer (:func:`of_asker`).
    """
    if not is_refusal(reply):
        return ''
    if is_quote_question(question):     # "what did the man on the radio say?": the speaker is what is asked about
        named = said_by(question, memories, strict=True, robot=ignore)
        if not _ABOUT_TOPIC.search(question) and not any(not m.ref.startswith('profile:') for m in named):
            return ''
        heard = answering(question, memories, ignore, quote=True)
        return 'refused, but a memory holds what was said by the one asked about' if heard else ''
    _, _, topic = _asked(question, memories, ignore)
    if not topic:               # nothing asked about but a person: no memory can show the refusal wrong
        return ''
    found = of_asker(answering(question, memories, ignore, quote=False), question, asker, face_names(memories))
    if not found:
        return ''
    told = _stems(content_words(speakable(found[0].text, face_names(memories))))
    return f'refused, but a memory tells of {", ".join(sorted({topic[s] for s in topic.keys() & told}))}'


def misattributed(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
                  min_overlap: float = 0.5) -> str:
    """Why a reply should not be spoken: its claim is not in the memories of whom or what the question asks about.

    The grounding check reads every retrieved memory; here the reply's new words must come from memories that mention
    a person the question names (profiles included: they hold attributes; those that also mention what it asks about,
    when any does), or, when it names nobody, from memories
    that mention what it asks about ("the house keys are in the green basket" from the earrings' basket is not
    grounded); asked what a radio, a TV or someone described said, from what they said (:func:`~.grounding.said_by`).
    A refusal is always fine.
    """
    if not reply.strip() or is_refusal(reply) or not asks(question):
        return ''
    people, _, topic = _asked(question, memories, ignore)
    if not people and not topic:
        return ''
    names = face_names(memories)
    others = _others_named(reply, people, [*names.values(), *_called(memories)])
    if others:
        # "Noor trained for badminton." to "what does Mateo train for?": Mateo's fact, told of someone else
        return f'reply tells of {", ".join(others)}, not of {", ".join(sorted(people))}, whom the question asks about'
    about = [_about(speakable(m.text, names).lower()) for m in memories]
    # "what did the man on the radio say?": what the speaker it describes said, though no memory says "radio"
    heard = [] if people or not is_quote_question(question) else \
        [m for m in said_by(question, memories, strict=True, robot=ignore) if not m.ref.startswith('profile:')]
    if people:
        # of what they hold, what tells of the thing asked about when any does: Merak's wallet in the closet does not
        # say where Merak put the umbrella
        theirs = [content_words(t) for t in about if _mentions(t, people)]
        thing = {s for s, w in topic.items() if w not in _PLACING} or topic.keys()
        on_topic = [words for words in theirs if thing & _stems(words)]
        known = set().union(*(on_topic or theirs))
    elif heard:
        known = set().union(*(content_words(_about(speakable(m.text, names).lower())) for m in heard))
    else:
        known = set().union(*(words for words in map(content_words, about) if topic.keys() & _stems(words)))
    new = content_words(reply) - content_words(question)
    if new and len(new & known) < min_overlap * len(new):
        what = ', '.join(sorted(people)) or 'what was asked about'
        return f'reply not grounded in the memories of {what} ({len(new & known)}/{len(new)} new words)'
    return ''


def in_own_voice(reply: str, memories: Sequence[MemoryItem]) -> str:
    """Why a reply should not be spoken: it tells in the robot's own voice what someone said of themself.

    Memory holds people's words as they said them ("Joe said: I bought my ticket in the attic."); the small model
    sometimes copies their "I" ("I bought the ticket in the attic."), which claims the robot did it. A reply that
    opens with "I" and the verb of someone's "I ..." is refused (a quote of their words says who said them).
    """
    m = _OWN_CLAIM.match(reply)
    if not m:
        return ''
    verb = m.group(1).lower()
    for mem in memories:
        for words in words_heard(mem.text):
            if re.search(rf"\bI\s+(?:\w+\s+)?{re.escape(verb)}\b", words, re.I):
                return f'reply says "I {verb}" of the robot, as someone said it of themself'
    return ''


#: a reply that opens with "I" and a verb, not a refusal or what the robot perceived or will do
_OWN_CLAIM = re.compile(r"^\s*I\s+(?!(?:don't|do|did|am|was|will|would|can|could|have|had|heard|saw|see|hear|think|"
                        r"remember|recall|know|believe|noticed)\b)([a-z]+)\b", re.I)


def _called(memories: Sequence[MemoryItem]) -> set[str]:
    """Names people were called by in the words memory heard ("Sofia, I really enjoyed it."), a face known or not.

    Someone called by a name is a person, though no face of memory carries it yet: a reply that moves a claim onto
    them ("Sofia enjoyed the birthday party." of Pablo's words to her) tells of someone other than the one asked about.
    """
    return {n for m in memories for words in words_heard(m.text) for n in said_names(words)[1]}


def _others_named(reply: str, people: set[str], known: Iterable[str]) -> list[str]:
    """The people memory knows that ``reply`` names while it names none of ``people`` (those a question asks about).

    One named as the source of what is told ("Joe said ...", "Ana told me ...") is no claim about them.
    """
    low = reply.lower()
    if not people or _mentions(low, people):
        return []
    return sorted({n for n in (k.lower() for k in known) if n not in people and _mentions(low, {n})
                   and not re.search(rf"\b{re.escape(n)}\b (?:said|says|told|tells|mentioned|asked)\b", low)})


def off_topic(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = ()) -> str:
    """Why a reply should not be spoken: it tells of none of what the question asks about.

    Asked "where did Ana put the book?" among many things Ana put somewhere, a small model readily answers "Ana's
    wallet is in the closet.": every word is in Ana's memories, so the grounding and attribution checks pass. A claim
    must share a word stem with what the question asks about (its content words other than the people it names, the
    robot's names and words of asking). A question that asks only about a person, or what someone said, and a refusal
    or a confirmation are not checked. A word that asks for a kind of thing is also told by the words that say it
    (:data:`_SAID_WITH`: "what is Ana's profession?" -> "Ana works as a nurse."); an answer in other words still
    gives way to the quote of the memory, which says it.
    """
    if not reply.strip() or is_refusal(reply) or promises_to_keep(reply) or not asks(question) \
            or is_quote_question(question):
        return ''
    _, _, topic = _asked(question, memories, ignore)
    if not topic or topic.keys() & _stems(content_words(reply)):
        return ''
    return f'reply tells of none of what was asked about ({", ".join(sorted(set(topic.values())))})'


def unanswered_claim(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
                     asked: bool | None = None, answers: Sequence[MemoryItem] | None = None) -> str:
    """Why a reply should not be spoken: it claims something, and no memory answers the question.

    Asked "how does Freya like to spend weekends?" with nothing in memory about her weekends, the small model wrote
    "Freya likes to spend weekends at the studio couch.": the question's words and a couch in view while Freya was
    there, so every word was grounded and every check passed. Only a refusal may answer what no memory answers
    (:func:`answering`). A confirmation, words that ask nothing (``asked`` as for :func:`leaves_out`) and a question
    about what was said (checked by :func:`unquoted`) are not checked here; ``answers`` as for :func:`leaves_out`.
    """
    if not _answers_a_question(reply, question, asked):
        return ''
    answers = answering(question, memories, ignore) if answers is None else answers
    return '' if answers else UNANSWERED


def _answers_a_question(reply: str, question: str, asked: bool | None) -> bool:
    """Whether ``reply`` claims an answer to a question that asks for one, not what was said.

    A refusal and a confirmation claim nothing; ``asked`` is the caller's reading of whether the words ask (default
    :func:`~.grounding.asks`).
    """
    return bool(reply.strip()) and not is_refusal(reply) and not promises_to_keep(reply) \
        and bool(asks(question) if asked is None else asked) and not is_quote_question(question)


def leaves_out(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
               asked: bool | None = None, answers: Sequence[MemoryItem] | None = None) -> str:
    """Why a second-chance reply should not be spoken: it drops words of what was asked about that the answer holds.

    A beam search (``response.retry_beams``) finds replies that pass the checks by chance more readily than greedy
    decoding does: "Olek enjoyed cycling." to "what was Olek's opinion on the cycling race?", from "I really enjoyed
    the cycling race." (and a stored "Olek enjoys cycling."). Such a reply must keep every word of what was asked about
    that the memories which answer say ("race" here; "sport" in "what sport does Ana play?" is in no answer, so "Ana
    plays tennis." stands). With no memory that answers it may only refuse. A refusal, a confirmation, and words that
    ask nothing (``asked``: as the caller read them; default :func:`~.grounding.asks`, while speech recognition may
    drop the question mark) or ask what was said (checked by :func:`unquoted`) are not checked here. ``answers``:
    :func:`answering`'s reading, when the caller has it (it checks several replies to one question).
    """
    if not _answers_a_question(reply, question, asked):
        return ''
    answers = answering(question, memories, ignore) if answers is None else answers
    if not answers:
        return UNANSWERED
    _, _, topic = _asked(question, memories, ignore)
    told = _stems(content_words(reply))
    said = set(topic) & set().union(*(_stems(content_words(m.text)) for m in answers))
    if not topic or said and said <= told:     # answers that say none of the topic back no reply
        return ''
    left = sorted({topic[s] for s in said - told}) or sorted(set(topic.values()))
    return f'reply leaves out what the answers say of {", ".join(left)}'


def one_source(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
               answers: Sequence[MemoryItem] | None = None) -> str:
    """Why a second-chance reply should not be spoken: what it adds to the question is not all in one memory.

    The grounding check takes a reply's words from any memory, so a beam search can find one stitched from several:
    "The laptop comes from Kwame." from "saw nobody in view; laptop" and Kwame's introduction. Every content word a
    second-chance reply adds (besides the question's, people's names and the words that frame a quote) must be said
    by one memory that answers (word stems: "trained" from "I train for table tennis"). A refusal or a confirmation
    adds nothing. ``answers`` as for :func:`leaves_out`.
    """
    if not reply.strip() or is_refusal(reply) or promises_to_keep(reply):
        return ''
    added = _added(reply, question, face_names(memories), ignore)
    if not added:
        return ''
    answers = (answering(question, memories, ignore) if answers is None else answers) or list(memories)
    if _said_in_one(added, answers):
        return ''
    return 'the words the reply adds are in no one memory that answers'


def unquoted(reply: str, question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = (),
             min_overlap: float = 0.5) -> str:
    """Why an answer to "what did ... say?" should not be spoken: it does not say what the one asked about said.

    The grounding check accepts words of any memory; "I heard that the man on the radio is Joe." is made of the
    question's words and a name from another memory. The reply's new words must come from what the speaker asked
    about said (a person by name, the radio or TV, someone described), as :func:`answering` picks them; a question
    about a radio or a named person with nothing of theirs remembered has no answer to give.
    """
    if not reply.strip() or is_refusal(reply) or not is_quote_question(question):
        return ''
    theirs = [m for m in said_by(question, memories, strict=True, robot=ignore) if not m.ref.startswith('profile:')]
    named = names_a_device(question) or people_asked(question, memories, ignore)
    if named and not theirs and not _ABOUT_TOPIC.search(question):
        return 'nothing the one asked about said is remembered'
    # what they said about the topic asked, or any memory of it (a TV heard with people in view is their words)
    heard = answering(question, memories, ignore, quote=True) or theirs
    said = set().union(*(content_words(said_in(m)) for m in heard))
    new = content_words(reply) - content_words(question) - _FRAME
    if new and len(new & said) < min_overlap * len(new):
        return f'reply does not say what was said ({len(new & said)}/{len(new)} new words)'
    return ''


def extractive_answer(question: str, memories: Sequence[MemoryItem],
                      embed: Callable[[Sequence[str]], np.ndarray], ignore: Sequence[str] = (), max_quotes: int = 2,
                      margin: float = 0.05, asker: str = '') -> str:
    """Quote the memories that could answer ``question``, closest first (a second only when nearly as close).

    Of those nearly as close as the closest (``margin``), the newest comes first (:func:`said_at`), and an older one
    that tells the same thing asked about is not quoted: "the choir practice is at nine" supersedes "... at three".
    Asked only what someone said, with no topic, the second quote is theirs too, however close.

    Of each memory only the sentences about what the question asks are said (:func:`answer_part`), a second quote
    only when it adds a word to the first, and who said it once when both are theirs. '' when none could answer: a
    quote of something else would be no answer (the caller says it does not know).
    """
    quote = is_quote_question(question)
    names = face_names(memories)
    facts = of_asker(answering(question, memories, ignore, quote=quote), question, asker, names)
    # not those a newer one supersedes, however much closer (the prompt's rule, :func:`newest_telling`): "update:
    # lunch got moved to two" after "lunch is at half past six"
    facts = newest_telling(question, facts, memories, ignore)
    if not facts:
        return ''
    texts = [speakable(m.text, names) for m in facts]
    vecs = embed([question] + texts)
    sims = vecs[1:] @ vecs[0]
    order = [int(i) for i in np.argsort(-sims)]
    about = _ABOUT_TOPIC.search(question) if quote else None
    topic = set(_thing(question, _asked(question, memories, ignore,
                                        (about.group(1) if about else '') if quote else None)[2]))
    # "what did the man on the radio say?" asks for what they said, all of it alike: closeness is no criterion, the
    # newest words are what was just said (quoted in the order they were said)
    by_closeness = not quote or about is not None
    near = margin if by_closeness else float('inf')
    if not by_closeness:
        order = sorted(order, key=lambda i: said_at(facts[i]), reverse=True)
    best = float(sims[order[0]])
    if by_closeness:
        # of the memories about as close as the closest, the newest is quoted first, and an older one that tells the
        # same thing asked about is superseded by it ("the choir practice is at nine" after "... at three")
        ties = [i for i in order if sims[i] >= best - near]
        order = sorted(ties, key=lambda i: said_at(facts[i]), reverse=True) + order[len(ties):]
    # the same words retrieved twice (a fact and the recent turn it came from) are one quote
    chosen: list[int] = []
    quoted: set[str] = set()
    for i in order:
        if chosen and (len(chosen) == max_quotes or sims[i] < best - near):
            break
        key = ' '.join(sorted(content_words(said_in(facts[i]))))
        if chosen and by_closeness and _tells_the_same(texts[chosen[0]], texts[i], topic):
            continue
        if key not in quoted:
            quoted.add(key)
            chosen.append(i)
    if not by_closeness:
        chosen.reverse()
    parts: list[str] = []
    said: set[str] = set()
    for i in chosen:
        part = answer_part(texts[i], topic, ignore)
        words = _stems(content_words(part)) - _stems(_FRAME)
        if parts and not words - said:
            continue
        who = SAID_AS_FACT.match(part)
        if parts and who and parts[-1].startswith(who.group(1)):     # the same speaker: said once
            parts[-1] += ' ' + who.group(2)
        else:
            parts.append(part)
        said |= words
    return QUOTE + ' '.join(parts)


def newest_telling(question: str, found: Sequence[MemoryItem], memories: Sequence[MemoryItem],
                   ignore: Sequence[str] = ()) -> list[MemoryItem]:
    """``found`` (memories that could answer ``question``) without those a newer one of them supersedes.

    "Where is the umbrella?" after it went from the car to the closet: "... in the closet" tells of everything asked
    about that "... in the car" tells of, so only the closet is shown (the quote's rule, :func:`extractive_answer`).
    Only words supersede: a thing among an episode's frame labels ("saw a person; laptop, bedroom") is a kind of
    thing in view, not where the one put "on the fridge" went. A question about what was said keeps every quote.
    """
    if is_quote_question(question):
        return list(found)
    topic = set(_thing(question, _asked(question, memories, ignore)[2]))
    names = face_names(memories)
    texts = {id(m): speakable(m.text, names) for m in found}
    return [m for m in found if not any(said_at(n) > said_at(m)
                                        and _tells_the_same(_in_words(texts[id(n)]), texts[id(m)], topic)
                                        for n in found)]


def _in_words(text: str) -> str:
    """What a memory said as :func:`speakable` says it tells in words: an episode's words heard, not what was seen."""
    episode = _SPOKEN_EPISODE.match(text)
    if episode:
        return episode.group(2)
    return '' if text.startswith('I saw ') else text


#: words a question about someone's last words asks with, and says who with ("the man on the radio"), not a topic
_LAST_WORDS = frozenset('''repeat again last latest recent recently just word words say says saying tell told telling
mention mentioned exactly minute moment ago now man woman person guy lady boy girl kid child visitor stranger video
clip radio television phone telephone loudspeaker speaker speakers podcast intercom broadcast news presenter announcer
newsreader reporter commentator'''.split())
#: seconds between the ends of one speaker's pieces of speech that are one turn (a speech cut at its pauses)
TURN_GAP_S = 10.0


def last_words(question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = ()) -> list[MemoryItem] | None:
    """The newest turn of the one ``question`` asks about, when it asks what they said with no topic (else None).

    "Could you repeat what Tariq said?", "the last thing Leila said": their newest words answer, not the words of an
    hour ago that the question is as close to. A turn is the newest memory of their words and those of theirs before
    it, each ending within :data:`TURN_GAP_S` of the next (a radio speech heard as three pieces is one). None also
    when no memory is of the one asked about (``said_by``, strict); ``ignore``: the robot's names.
    """
    if not is_quote_question(question):
        return None
    if set(_asked(question, memories, ignore)[2].values()) - _LAST_WORDS:
        return None
    said = sorted((m for m in said_by(question, memories, strict=True, robot=ignore)
                   if not m.ref.startswith('profile:') and words_heard(m.text)), key=said_at)
    if not said:
        return None
    turn = [said[-1]]
    for m in reversed(said[:-1]):
        if _seconds(said_at(turn[-1])) - _seconds(said_at(m)) > TURN_GAP_S:
            break
        turn.append(m)
    return turn[::-1]


def last_turn(question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = ()) -> list[MemoryItem]:
    """``memories`` with, of the words said, only those of :func:`last_words` when ``question`` asks for them."""
    last = last_words(question, memories, ignore)
    return list(memories) if last is None else [m for m in memories if m.ref.startswith('profile:')] + last


def words_of_asked(question: str, memories: Sequence[MemoryItem], ignore: Sequence[str] = ()) -> list[MemoryItem]:
    """What a quote question's answer may quote: the words of the one asked about, only their newest when no topic.

    ``said_by``, then :func:`last_turn`.
    """
    return last_turn(question, said_by(question, memories, robot=ignore), ignore)


def _seconds(at: str) -> float:
    """A time as memory writes it ('2026-07-14 09:09:44') in seconds; undated (the newest) as the latest time."""
    try:
        return _dt.datetime.strptime(at, '%Y-%m-%d %H:%M:%S').timestamp()
    except ValueError:
        return float('inf')


def _tells_the_same(newer: str, older: str, topic: set[str]) -> bool:
    """Whether ``older`` tells of everything asked about that ``newer`` tells of (so ``newer`` supersedes it)."""
    told = topic & _stems(content_words(newer))
    return bool(told) and told <= _stems(content_words(older))


#: a sentence that goes on about the one before ("I lost my laptop. It is in the kitchen now.")
_GOES_ON = re.compile(r"^(?:it|it's|they|they're|he|he's|she|she's|that|this|there|these|those)\b", re.I)


def answer_part(text: str, topic: set[str], robot: Sequence[str] = ()) -> str:
    """The part of a spoken memory that answers: the sentences about ``topic`` (word stems), with who said them.

    An episode's frame labels and bystanders are no answer ("I saw nobody in view, prison and heard ..." becomes
    "I heard: ..."; with Ana in view and talking, "Ana said: ..."), nor are a call to the robot (``robot``: its names)
    and the opening of a request to remember ("Robot, keep in mind that my thermos ..." says "My thermos ..."). Of
    what someone said in several sentences only those about what was asked are said, each with the sentence after it
    when that one goes on about it; with no topic (asked what someone said), everything that was said. A memory that
    tells ``topic`` only by what was seen stays whole.
    """
    episode = _SPOKEN_EPISODE.match(text)
    if episode:
        seen, heard = episode.groups()
        if topic and not topic & _stems(content_words(heard)):
            return text
        active = [p.rsplit(' ', 1) for p in seen.split('; ')[0].split(', ') if p.endswith((' talking', ' typing'))]
        verbs = {verb for _, verb in active}
        prefix = (f'{" and ".join(who for who, _ in active)} {"typed" if verbs == {"typing"} else "said"}: '
                  if active else 'I heard: ')
        body = heard
    else:
        fact = SAID_AS_FACT.match(text)
        prefix, body = (fact.group(1), fact.group(2)) if fact else ('', text)
    said = sentences(gist(unaddressed(body.strip(), robot)))
    if topic:
        keep = {i for i, s in enumerate(said) if topic & _stems(content_words(s))}
        keep |= {i + 1 for i in keep if i + 1 < len(said) and _GOES_ON.match(said[i + 1])}
        if keep:
            said = [s for i, s in enumerate(said) if i in keep]
    part = prefix + ' '.join(said)
    return part if part.endswith(('.', '!', '?')) else part + '.'


__all__ = ['DONT_KNOW', 'QUOTE', 'answer_part', 'answering', 'asks_of_asker', 'extractive_answer', 'in_own_voice',
           'leaves_out', 'last_turn', 'last_words', 'misattributed', 'newest_telling', 'of_asker', 'of_others',
           'off_topic', 'one_source', 'people_asked', 'unfounded_refusal', 'unquoted', 'words_of_asked']
