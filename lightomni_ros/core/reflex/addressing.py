# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Whether spoken words are meant for the robot: they call it by one of its names, or follow its reply closely.

The action head decides from one segment, and it cannot learn two things:

- the names a deployment gives its robot: a parameter, absent from any training data;
- whether the robot is in a conversation right now: the last exchange may not have reached S_g yet.

So a spoken segment the head would answer is answered only when it names the robot (whole words, any case) or
starts within ``follow_up_s`` of the end of the robot's last spoken reply. The gate only ever keeps the robot quiet:
it never makes it speak, and typed text (the robot's own channel) and proactive speech pass untouched.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field

from .types import SegmentInput


def wake_words(spec: str) -> tuple[str, ...]:
    """The robot's names from a comma-separated parameter ("robot, assistant"), lower case, blanks dropped."""
    return tuple(dict.fromkeys(w.strip().lower() for w in (spec or '').split(',') if w.strip()))


#: how close a heard word (or two heard words run together) must be to a name: speech recognition splits and bends
#: names ("row bot", "robo"), and a gate that needs the exact spelling would silence the people it misheard
SIMILARITY = 0.8


def names_robot(text: str, words: tuple[str, ...]) -> bool:
    """Whether ``text`` calls the robot by one of ``words``: the name as whole words, or a close mishearing of it.

    "Hey robot," and "row bot, where ..." yes; "robotics" and "Robert" no. Names shorter than 5 letters are matched
    exactly only (a short name has too many near neighbours).
    """
    t = ' '.join(re.sub(r"[^\w']+", ' ', (text or '').lower()).split())
    if any(re.search(rf'(?<![\w]){re.escape(w)}(?![\w])', t) for w in words):
        return True
    tokens = t.split()
    heard = tokens + [a + b for a, b in zip(tokens, tokens[1:])]
    return any(len(w.replace(' ', '')) >= 5 and abs(len(h) - len(w)) <= 2
               and difflib.SequenceMatcher(None, h, w.replace(' ', '')).ratio() >= SIMILARITY
               for w in words for h in heard)


@dataclass
class AddressGate:
    """Remembers when the robot last spoke, and says whether a spoken segment may be answered."""

    words: tuple[str, ...] = ()
    follow_up_s: float = 0.0
    last_reply_end: float = field(default=-math.inf)

    @property
    def enabled(self) -> bool:
        """False without names: the action head alone decides."""
        return bool(self.words)

    def configure(self, spec: str, follow_up_s: float) -> None:
        """Adopt the parameters (they may change at run time)."""
        self.words, self.follow_up_s = wake_words(spec), float(follow_up_s)

    def why_not(self, seg: SegmentInput) -> str:
        """'' when the segment may be answered, else the reason it is not (for the Action's notes)."""
        if not self.enabled or seg.typed_text.strip() or not seg.transcript.strip():
            return ''
        if names_robot(seg.transcript, self.words):
            return ''
        if seg.start - self.last_reply_end <= self.follow_up_s:
            return ''
        return f'quiet: not addressed (names none of {", ".join(self.words)}; no reply of ours in the last ' \
               f'{self.follow_up_s:g} s)'

    def replied(self, end: float) -> None:
        """The robot said something that ended at ``end``: a reply within ``follow_up_s`` continues the exchange."""
        self.last_reply_end = max(self.last_reply_end, end)


__all__ = ['AddressGate', 'wake_words', 'names_robot']
