# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The names a reply writes: those memory knows, spelled as memory spells them.

A small model copies a rare name a letter off ("Ollek likes to drink peppermint tea." for Olek, "Merkak" for Merak),
or makes one up ("Olivia likes to drink peppermint tea."). The checks that read whom a claim is about look for the
names memory knows as they are written, so such a claim passes as nobody's: both were said from Olek's "Pablo always
orders peppermint tea.", a claim about Pablo, to "what would Olek want to drink?".
"""

from __future__ import annotations

import re
from typing import Sequence

from ..text import may_be_name
from .grounding import content_words
from .prompts import face_names
from .types import MemoryItem

#: a capitalised word: where a name is written
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
_WORD = re.compile(r"[A-Za-z]+")
#: words that open such a sentence and name nobody
_NOBODY = frozenset('which nothing everything something anything tonight tomorrow yesterday today'.split())
#: a sentence that tells of a person by name: "Olivia likes to drink tea.", "Olivia's umbrella is in the car."
_PERSON_CLAIM = re.compile(r"(?:^|[.!?;]\s+)([A-Z][a-z]{2,})(?:'s\s+\w+)?\s+(?:likes|loves|enjoys|has|is|was|plays|"
                           r"works|lives|comes|thinks|always|usually|often|said|says|wants|orders|trains|keeps|put|"
                           r"left|went)\b")


def edits(a: str, b: str) -> int:
    """Levenshtein distance: the fewest letters inserted, deleted or replaced to turn ``a`` into ``b``."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _known(memories: Sequence[MemoryItem], question: str) -> set[str]:
    """The words, lower case, that the memories and the question hold."""
    return {w.lower() for text in [question, *(m.text for m in memories)] for w in _WORD.findall(text)}


def misspelled_name(reply: str, memories: Sequence[MemoryItem], question: str = '') -> str:
    """Why a reply should not be said: it writes a name the profiles give as another word close to it ('' if not).

    A word counts when it is capitalised, carries content, appears in no memory and not in the question, and is a
    known name with a letter or two changed (one per four letters of the name, at least one).
    """
    names = {n for n in face_names(memories).values() if n}
    if not names:
        return ''
    known = _known(memories, question)
    carries = content_words(reply)
    for word in _CAPITALISED.findall(reply):
        low = word.lower()
        if low in known or low not in carries:
            continue
        for name in sorted(names):
            if name.lower() != low and edits(low, name.lower()) <= max(1, len(name) // 4):
                return f'reply writes "{word}" for the name {name}'
    return ''


def unknown_person(reply: str, memories: Sequence[MemoryItem], question: str = '') -> str:
    """Why a reply should not be said: it tells of someone by a name no memory and not the question holds ('' if not).

    Its sentences are read for a name that a claim about a person opens with ("Olivia likes to drink ...",
    "Olivia's umbrella is ..."); a word memory or the question holds, a word of no content ("She", "Their"), a day
    or month, or a word that opens sentences is no such name (:func:`~lightomni_ros.core.text.may_be_name`).
    """
    known = _known(memories, question)
    carries = content_words(reply)
    for word in _PERSON_CLAIM.findall(reply):
        if word.lower() not in known | _NOBODY and word.lower() in carries and may_be_name(word):
            return f'reply tells of "{word}", a name no memory holds'
    return ''


__all__ = ['edits', 'misspelled_name', 'unknown_person']
