# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""When a planned event is, read by rule from the words: "lunch is at four", "the trip got moved to Saturday".

After where things are, when things happen is what a household asks a robot most ("when is the vet appointment?").
The memory adapter writes "The vet appointment is on Tuesday." for the wordings it was trained on, but a wording it
has not seen ("they set lunch for eleven", "update: the choir practice got moved to nine") often gives no fact at
all. An event's time is a closed construction of English (an event is / will be / got moved to / was set for a
time, or someone set / moved / booked an event for a time) with a closed set of times (clock times in digits or
words, noon, weekdays, months, today / tomorrow / tonight), so it is read here and stored in the adapter's form, for
the events no fact of the pass tells of with that time (:func:`with_schedule`). A question, a denial or an
intention ("should we move lunch to two?", "lunch is not at two") schedules nothing.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Sequence

from ..text import sentences
from .grounding import asks, stem
from .placement import fact_stems
from .types import SegmentInput

#: the hours of a clock, in digits or words
_HOUR = r'\d{1,2}(?:[:.]\d{2})?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve'
_NUMBER = rf"(?:(?:{_HOUR})(?:\s*[ap]\.?m\.?)?)(?:\s+(?:o'clock|thirty|fifteen|forty-five|[ap]\.?m\.?))?"
_CLOCK = rf"(?:{_NUMBER}|noon|midday|midnight|half past {_NUMBER}|(?:a )?quarter (?:past|to) {_NUMBER})"
_DAYS = r'monday|tuesday|wednesday|thursday|friday|saturday|sunday'
_MONTHS = r'january|february|march|april|may|june|july|august|september|october|november|december'
_DAY = rf"(?:(?:next |this |on )?(?:{_DAYS})|today|tonight|tomorrow|the weekend|this weekend|next week)"
#: a time: "at ten", "on Saturday", "tomorrow at noon", "in May", or bare after "for" / "to" ("set for ten")
_WHEN = rf"""(?P<when>(?:at\s+|around\s+|by\s+)?{_CLOCK}(?:\s+(?:on\s+)?{_DAY})?|(?:on\s+)?{_DAY}(?:\s+at\s+{_CLOCK})?|
in\s+(?:{_MONTHS}))""".replace('\n', '')
#: an event: "lunch", "the choir practice", "our budget review" (lower case: a name is no event; no word of a clause)
_WORD = r'(?!(?:that|in|to|of|for|and|or|is|are|was|with|at|on|by|the|a|an|me|us)\b)[a-z][a-z-]*'
_EVENT = rf'(?P<event>(?:(?:the|this|next)\s+)?{_WORD}(?:\s+{_WORD}){{0,2}}?)'
_END = r"(?=\s*(?:[,.;!?]|$|\b(?:now|then|instead|again|this|not|and|but|so)\b))"
_IS = re.compile(rf"\b{_EVENT}\s+(?:is|'s|will be|are)\s+(?:now\s+|still\s+|set\s+|planned\s+|scheduled\s+)?"
                 rf"(?:for\s+)?{_WHEN}{_END}", re.I)
_MOVED = re.compile(rf"\b{_EVENT}\s+(?:(?:got|was|has been|has|is being|had been)\s+)?(?:moved|changed|pushed|"
                    rf"put back|brought forward|rescheduled|set|planned|booked)\s+(?:back\s+)?(?:to|for|until|on)\s+"
                    rf"{_WHEN}{_END}", re.I)
_SET = re.compile(rf"\b(?:they|we|I|you|someone)\s+(?:have\s+|'ve\s+|just\s+)*(?:set|moved|scheduled|booked|planned|"
                  rf"arranged|fixed|put|pushed|changed)\s+{_EVENT}\s+(?:to|for|on|at|until)\s+{_WHEN}{_END}", re.I)
_HAVE = re.compile(rf"\b(?:we|I)\s+(?:have|'ve got|have got)\s+{_EVENT}\s+{_WHEN}{_END}", re.I)
_NOT = re.compile(r"\b(?:not|n't|never|no longer|if|maybe|should|could|might|would)\b", re.I)
#: first words that make no event: pronouns, people, the robot, words of time
_NO_EVENT = frozenset('''it that this there here he she they we i you who what which everything something nothing
anyone everyone one time day today tomorrow tonight my your our his her their mine yours ours hers theirs
robot assistant'''.split())
_DAY_WORDS = re.compile(rf"\b(?:{_DAYS}|{_MONTHS})\b", re.I)


@dataclasses.dataclass(frozen=True)
class Scheduled:
    """An event and when it is: ``when`` as the stored form says it ("at ten", "on Saturday", "in May")."""

    event: str
    when: str

    def fact(self) -> str:
        """The stored form: "Lunch is at eleven.", "The school trip is on Saturday."."""
        return f'{self.event[:1].upper()}{self.event[1:]} is {self.when}.'


def _when(words: str) -> str:
    """``words`` of a time as the stored form says them: a bare clock time "at", a bare day "on", days capitalised."""
    words = ' '.join(words.split()).rstrip('.')
    low = words.lower()
    if not re.match(r'(?:at|on|in|by|around|today|tonight|tomorrow|next|this|the)\b', low):
        words = ('on ' if _DAY_WORDS.match(low) else 'at ') + words
    return _DAY_WORDS.sub(lambda m: m.group(0).capitalize(), words)


def schedule(words: str) -> list[Scheduled]:
    """The events ``words`` give a time, in order (the first time given to each)."""
    out: list[Scheduled] = []
    for sentence in sentences(words):
        if asks(sentence):
            continue
        for pattern in (_SET, _MOVED, _HAVE, _IS):
            for m in pattern.finditer(sentence):
                event = ' '.join(m.group('event').split())
                head = event.split()
                if _NOT.search(sentence[:m.start()] + ' ' + m.group(0)) or head[0].lower() in _NO_EVENT \
                        or head[-1].lower() in _NO_EVENT or event[:1].isupper() and m.start('event') > 0:
                    continue
                found = Scheduled(event=event[:1].lower() + event[1:] if m.start('event') == 0 else event,
                                  when=_when(m.group('when')))
                if all(s.event.lower() != found.event.lower() for s in out):
                    out.append(found)
    return out


def with_schedule(facts: Sequence[str], seg: SegmentInput) -> tuple[list[str], list[str]]:
    """(facts, replaced): ``facts`` and the time facts of what was said (:func:`schedule`) that none of them tells of.

    A fact tells of an event's time when it holds the event's last word and a word of the time ("The choir practice
    is at nine." tells of "choir practice ... at nine"). A fact of the same event at another time ("Lunch is at
    three." after "actually, lunch is at four, not three") misread the correction: it is replaced.
    """
    out, replaced = list(facts), []
    for _, words in seg.said():
        for s in schedule(words):
            event, when = stem(s.event.split()[-1]), fact_stems(s.when)
            told = [f for f in out if event in fact_stems(f)]
            if any(fact_stems(f) & when for f in told):
                continue
            wrong = [f for f in told if _TIME.search(f)]
            out = [f for f in out if f not in wrong] + [s.fact()]
            replaced += wrong
    return out, replaced


#: a word of a time in a stored fact
_TIME = re.compile(rf"\b(?:{_DAYS}|{_MONTHS}|noon|midday|midnight|{_HOUR})\b", re.I)


__all__ = ['Scheduled', 'schedule', 'with_schedule']
