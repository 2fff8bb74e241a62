# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Reading people and statements out of plain text (shared by perception, reflex and consolidation; depends on none)."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Sequence

#: "my name is Ana", "I'm Ana", "call me Ana", "I go by Ana", "this is Ana speaking", "Ana here.": the phrase is
#: matched in any case, the name must be capitalised
_INTRO = re.compile(r"\b(?i:my name is|my name's|the name is|the name's|i am called|i'm called|i am|i'm|call me|"
                    r"calls me|i go by)\s+([A-Z][a-z]+)\b"
                    r"|\b(?i:this is)\s+([A-Z][a-z]+)\s+(?i:speaking)\b"
                    r"|(?:^|[,.!?]\s+)([A-Z][a-z]+)\s+here(?=\s*(?:[,.!?]|$))")
#: capitalised words after "I'm" / "I am" that are not names (sentence starts, ASR capitalisation)
_NOT_NAMES = frozenset('''Not So Sorry Fine Good Great Okay Ok Here There Back Just Very Still Going Afraid Happy Glad
Sure Done Ready Tired Home The A An In At On From Out Over Really Also Only Always Never Busy Late Early Hungry Cold Hot
Robot Assistant It That This What Your My Nobody Everyone Everybody Someone Somebody Anyone Well Hey Hi Hello Yes Yeah
No Thanks Please Listen Alright Actually Oh Hmm Anyway Um Uh'''.split())


#: Who spoke when speech was heard and nobody was in view: most often a device or someone out of the camera's sight,
#: which is also how people ask about it ("what did the man on the radio say?").
UNSEEN_SPEAKER = 'an unseen speaker (radio, TV, phone or out of sight)'
#: a voice identity in stored text, with the unseen-speaker phrase that follows it when its face was not in view
VOICE_SPEAKER = re.compile(r'<voice_\d+>(?:, ' + re.escape(UNSEEN_SPEAKER) + ')?')


def unseen_voice(voice_id: str) -> str:
    """How memory names a voice heard with nobody in view: "<voice_2>, an unseen speaker (radio, ...)"."""
    return f'{voice_id}, {UNSEEN_SPEAKER}' if voice_id else UNSEEN_SPEAKER


def resolve_voices(text: str, who: dict[str, str]) -> str:
    """Replace each voice (with its unseen-speaker phrase) that ``who`` knows by what it maps to (a name, a face)."""
    def sub(m: re.Match) -> str:
        voice = m.group(0).split(',')[0]
        return who.get(voice, m.group(0))
    return VOICE_SPEAKER.sub(sub, text or '')


#: "this is my cousin Mateo", "here's Ana", "meet my friend Joe", "say hello to Vera": someone else, introduced (the
#: phrase opens a clause or follows a call or a request: "I will meet Joe tomorrow" introduces nobody; "this is Joe
#: speaking" is Joe himself)
_OTHER = re.compile(r"(?:^|[,.!?;:]\s*|\b(?i:you to|let me|please|and|so|robot|assistant)\s+)"
                    r"(?i:this is|this here is|here is|here's|meet|say hello to|say hi to|introduce|introducing)\s+"
                    r"(?:(?i:my|our)\s+(?:[a-z]+\s+){0,2})?([A-Z][a-z]+)\b(?!\s+(?i:speaking|here)\b)")
#: capitalised words of the calendar, lower case: never a person's name
CALENDAR_WORDS = frozenset('''monday tuesday wednesday thursday friday saturday sunday january february march april may
june july august september october november december today tomorrow yesterday'''.split())
#: words that can say when something is, besides the calendar's names: seasons, feasts, ordinal days, spans
WHEN_WORDS = CALENDAR_WORDS | frozenset('''spring summer autumn fall winter christmas easter year month week weekend
first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth
sixteenth seventeenth eighteenth nineteenth twentieth thirtieth'''.split())


def may_be_name(word: str) -> bool:
    """Whether a capitalised word can be a person's name: not a sentence start ASR capitalises, not the calendar."""
    return bool(word) and word[:1].isupper() and word not in _NOT_NAMES and word.lower() not in CALENDAR_WORDS


def said_as_name(name: str, words: str) -> bool:
    """Whether ``words`` say ``name`` as a name: not in lower case after an article or a quantifier.

    "I could really use some espresso right now." gives nobody the name Espresso: "some espresso" is a thing. A name
    said in lower case elsewhere still counts, since speech recognition does not always case what it hears ("row bot
    here is my cousin olek"); so do words that do not say the name (other checks ask whether it was said).
    """
    said = list(re.finditer(rf'\b{re.escape(name)}\b', words or '', re.I))
    return not said or any(m.group()[:1].isupper() or not _ARTICLE_BEFORE.search(words[:m.start()]) for m in said)


#: the words before a thing, never before a name: "some espresso", "an espresso", "more tea"
_ARTICLE_BEFORE = re.compile(r"\b(?i:a|an|the|some|any|more|much|no|this|that|these|those)\s+$")


#: words said just before a town ("lives in Dublin", "from Porto", "born near Lyon")
TOWN_BEFORE = re.compile(r"\b(?:in|from|near|at|around|outside)\s+(?:the\s+)?$", re.I)


def names_a_place(name: str, words: str) -> bool:
    """Whether ``words`` say ``name`` only as a town ("my family still lives in Dublin"), never as someone's name."""
    said = list(re.finditer(rf"\b{re.escape(name)}\b", words or '', re.I))
    return bool(said) and all(TOWN_BEFORE.search(words[:m.start()]) for m in said)


def names_person(text: str, face_id: str, name: str = '') -> bool:
    """Whether ``text`` names the person: their face id, or their name as a word ("Ana's", not "Banana")."""
    needles = [n for n in (face_id, name) if n]
    return any(re.search(rf'(?<![\w<]){re.escape(n)}(?![\w>])', text or '', re.I) for n in needles)


def introduced_other(text: str) -> str:
    """The name a speaker gives for someone else ("Robot, here is my cousin Mateo" -> "Mateo"), else ''."""
    return next((m.group(1) for m in _OTHER.finditer(text or '') if may_be_name(m.group(1))), '')


def introduced_name(text: str) -> str:
    """The name a speaker gives for themself ("Hi robot, I'm Barack" -> "Barack"), else ''.

    A calendar word counts here ("my name is April"): the phrase itself says a name follows.
    """
    found = (next(g for g in m.groups() if g) for m in _INTRO.finditer(text or ''))
    return next((name for name in found if name not in _NOT_NAMES), '')


def named_in(face_id: str, texts: Sequence[str]) -> str:
    """The name ``texts`` give ``face_id`` ('' for none).

    A naming fact gives it ("<face_2> is called Ana."), or the person's own words ("<face_2> said: I'm Ana"). An
    event's script names everyone in view ("saw Mateo talking, <face_2>; heard "call me Mateo"): the name said
    there is the speaker's, not every face's, so events give none.
    """
    for text in texts:
        text = text.strip()
        m = re.match(rf"{re.escape(face_id)} is called ([A-Z][\w'-]*)", text)
        if m:
            return m.group(1)
        own = introduced_name(text) if text.startswith(f'{face_id} said:') else ''
        if own:
            return own
    return ''


def unaddressed(words: str, robot: Sequence[str]) -> str:
    """Words without their call to the robot ("Robot, tell me, the trip is ..." -> "The trip is ...")."""
    if not robot:
        return words
    names = '|'.join(re.escape(n) for n in robot)
    rest = re.sub(rf'^(?:(?:hey|hi|hello|good (?:morning|afternoon|evening)|okay|ok|excuse me|listen|right|yo)'
                  rf'[,\s]+)?(?:{names})\b[,.!]?\s*'
                  r'(?:tell me\b[,.]?\s*)?', '', words, flags=re.I)
    return rest[:1].upper() + rest[1:] if rest else words


#: how a request to remember opens ("Please keep in mind: ...", "..., remember that ..."): the event is what follows
_KEEP = re.compile(r"(?:^|(?<=[,;]\s))(?:please[,\s]+)?(?:keep in mind|remember|note|don't forget|do not forget)\b"
                   r"(?: that\b)?[:,]?\s*", re.I)
#: a greeting that opens what was said ("Hello, my name is Joe"): no part of what happened
_GREETING = re.compile(r"^(?:hello|hi|hey|good (?:morning|afternoon|evening))[,!.]\s*", re.I)
#: when a reminder is due ("remind me in two minutes to ..."): the reminder itself is the event
_DUE = re.compile(r'\bremind me (?:in|at|after|by) [^,.;]*? to\b', re.I)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, split after ".", "!" or "?"."""
    return [s for s in re.split(r'(?<=[.!?])\s+', text.strip()) if s]


def gist(words: str) -> str:
    """Words without an opening greeting, the framing of a request to remember or a reminder's due time.

    What is left is what was said: "Hello, my name is Joe, remember that my keys are in the drawer" -> "My name is
    Joe, my keys are in the drawer".
    """
    words = _DUE.sub('remind me to', words.strip())
    rest = _KEEP.sub('', _GREETING.sub('', words))
    return rest[:1].upper() + rest[1:] if rest and rest != words else words


def clipped(text: str, max_words: int) -> str:
    """The first ``max_words`` words of ``text``, with " ..." when some are left out."""
    words = text.split()
    return ' '.join(words[:max_words]) + (' ...' if len(words) > max_words else '')


def fmt_time(t: float, tz: _dt.tzinfo | None = None) -> str:
    """Render an epoch time as ``YYYY-MM-DD HH:MM:SS`` in ``tz`` (local time when None), as memory writes times."""
    return _dt.datetime.fromtimestamp(t, tz).strftime('%Y-%m-%d %H:%M:%S')


__all__ = ['CALENDAR_WORDS', 'WHEN_WORDS', 'clipped', 'fmt_time', 'TOWN_BEFORE', 'names_a_place', 'gist', 'sentences',
           'unaddressed',
           'introduced_name', 'introduced_other', 'named_in',
           'UNSEEN_SPEAKER', 'VOICE_SPEAKER', 'unseen_voice', 'resolve_voices']
