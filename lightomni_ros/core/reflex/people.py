# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Answers to "who did I talk to this morning?" from the profiles M_p of the people seen in a time window.

A quoted memory names at most the one or two people of the entries closest to the question, and a generated reply
from a small backbone invents or drops names. The profiles already know who was seen and when (``first_seen`` /
``last_seen``), so a question about *who* was around is answered from them directly, without a model call.
A person counts as seen in a window when their [first_seen, last_seen] span overlaps it: someone seen at 8:00 and
at 20:00 also counts for "this afternoon" (the profile keeps no finer history).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Sequence

from ..timeparse import find_window

#: a question about people met or seen ("who did I talk to", "who visited", "who was here", "who have you seen")
_WHO = re.compile(r"\bwho\b(?:\s+\w+){0,4}?\s+(?:talk|talked|spoke|speak|chat|chatted|meet|met|see|seen|saw|visit|"
                  r"visited|came|come|stopped|dropped|was here|were here|was around|were around)\b", re.I)


@dataclass
class PersonSeen:
    """A profile reduced to what a "who" answer needs."""

    face_id: str
    name: str
    first_seen: float
    last_seen: float


#: a face last seen this long before the speech started still counts as in view (keyframes come about 1 s apart)
SIGHTING_SLACK_S = 0.5


def speaking_face(sightings: Sequence[tuple[str, float]], speech_start: float) -> str:
    """The face in view while the speech was heard: the only one seen since the speech started, else ''.

    ``sightings`` are (face id, time of its latest sighting in the segment). A segment often opens while the previous
    person is still in view; whoever is seen while the words are spoken is the speaker.
    """
    during = {face for face, stamp in sightings if face and stamp >= speech_start - SIGHTING_SLACK_S}
    return during.pop() if len(during) == 1 else ''


def people_window(question: str, now: float, tz: _dt.tzinfo | None = None) -> tuple[float, float, str] | None:
    """(start, end, phrase) of the window a "who" question asks about, or None when it is not such a question.

    The window is read by :func:`lightomni_ros.core.timeparse.find_window` ("this morning", "yesterday", "in the last
    hour", "at ten", ...); a "who" question that names none asks about today so far.
    """
    if not _WHO.search(question or ''):
        return None
    w = find_window(question, now, tz)
    if w is not None:
        return w.start, w.end, w.phrase
    midnight = _dt.datetime.fromtimestamp(now, tz).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight.timestamp(), now, 'today'


def people_answer(people: Sequence[PersonSeen], start: float, end: float, phrase: str,
                  exclude: Sequence[str] = ()) -> str:
    """The sentence to say: the named people seen in the window, and how many more were seen without a name."""
    seen = [p for p in people if p.face_id not in exclude and p.last_seen >= start and 0 < p.first_seen <= end]
    seen.sort(key=lambda p: p.first_seen)
    names = list(dict.fromkeys(p.name for p in seen if p.name))
    unnamed = sum(1 for p in seen if not p.name)
    parts = names + ([f'{unnamed} {"person" if unnamed == 1 else "people"} whose name I do not know']
                     if unnamed else [])
    if not parts:
        return f'I did not see anyone {phrase}.'
    listed = parts[0] if len(parts) == 1 else ', '.join(parts[:-1]) + ' and ' + parts[-1]
    return f'{phrase[0].upper()}{phrase[1:]} I saw {listed}.'


#: "who am I?", "do you know who I am?", "what is my name?"
_WHO_AM_I = re.compile(r"\b(?:who am i|who i am|what(?:'s| is) my name|do you know my name)\b", re.I)


def who_am_i(question: str, speaker: str, names: dict[str, str]) -> str:
    """The answer to "who am I?" from the profile of the face that asked ('' for any other question).

    Who is asking is what perception saw, and the profile says the name: no model call, and no quote of someone
    else's introduction. A speaker memory has no name for gets "I don't know your name yet."
    """
    if not _WHO_AM_I.search(question or ''):
        return ''
    name = names.get(speaker, '')
    return f'You are {name}.' if name else "I don't know your name yet."


__all__ = ['PersonSeen', 'speaking_face', 'people_window', 'people_answer', 'who_am_i']
