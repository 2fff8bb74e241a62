# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Whether spoken words are meant for the robot: they call it by one of its names, or follow its reply closely.

The action head decides from one segment, and it cannot learn two things:

- the names a deployment gives its robot: a parameter, absent from any training data;
- whether the robot is in a conversation right now: the last exchange may not have reached S_g yet.

So a segment the head would answer is answered only when its words name the robot (whole words, any case, or a
close mishearing) or when the person the robot last answered speaks again within ``follow_up_s`` of the end of that
segment (the same face or voice: a radio, an unseen speaker or "someone" never continues a conversation, and one
reply does not open the floor to everybody in the room), or when the one person in view, seen saying them with nobody
else speaking, asks "you" something (:func:`alone_asking`, ``answer_alone``); a segment in which
nobody spoke addresses nobody (a spoken answer there would also open a follow-up window for whatever is said next).
The gate only ever keeps the robot quiet; typed text (the robot's own channel) and proactive speech (reminders,
flagged as such) pass untouched.

Words let through only as a follow-up may still be for someone else: they call another person in view by name
("Freya, have you eaten yet?": :func:`calls_other`), or they remark on something and ask nothing ("What a long day it
has been."); the reflex keeps quiet on the first, and on the second when all it would say is a refusal.

The other way round, :meth:`AddressGate.called` says when words call the robot by name as one calls a person
("Robot, where ...", "hey assistant ...", "... can you help, robot?"): a name without an article or possessive
before it ("the robot", "my assistant's" speak about it). The reflex answers those whatever the head says
(``latent.answer_when_called``): the head never saw the deployment's names, and misses some of them.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field

from ..text import UNSEEN_SPEAKER
from ..timeparse import asks_for_reminder
from .attribution import said_names
from .config import LatentConfig
from .grounding import asks
from .types import SOMEONE, SegmentInput


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
    names = [n for n in (w.replace(' ', '') for w in words) if len(n) >= 5]
    return any(abs(len(h) - len(n)) <= 2 and difflib.SequenceMatcher(None, h, n).ratio() >= SIMILARITY
               for n in names for h in heard)


#: words that make a name a thing spoken about, not someone spoken to: "the robot", "my assistant"
_ABOUT = frozenset('the a an this that these those my your our his her their its whose which every any no'.split())


def calls_robot(text: str, words: tuple[str, ...]) -> bool:
    """Whether ``text`` calls the robot by one of ``words`` (or a close mishearing): a name no article precedes."""
    tokens = re.sub(r"[^\w']+", ' ', (text or '').lower()).split()
    for i, tok in enumerate(tokens):
        if tok.endswith("'s") or (i and tokens[i - 1] in _ABOUT):
            continue
        pair = tok + tokens[i + 1] if i + 1 < len(tokens) else ''      # "row bot"
        if names_robot(tok, words) or (pair and len(tok) < 5 and names_robot(pair, words)
                                       and not names_robot(tokens[i + 1], words)):
            return True
    return False


def calls_robot_back(reply: str, words: tuple[str, ...]) -> str:
    """Why a reply is words said to the robot, not its own: it calls the robot by name ('' when it does not).

    "Okay robot, note that the torch is on top of the fridge." answered "what did they say on TV about the ferry?":
    a memory of what someone told the robot, copied whole. The robot does not call itself; "I am a robot." names it
    as a thing (:func:`calls_robot`).
    """
    return 'reply calls the robot by its name: words said to it, copied' if calls_robot(reply, words) else ''


def calls_other(text: str, names: list[str]) -> str:
    """The name among ``names`` that ``text`` opens or closes with as a call ("Ana, ...", "..., Ana?"); else ''."""
    called = {n.lower(): n for n in names if n}
    for m in (re.match(r"\s*([\w'-]+)\s*,", text or ''), re.search(r",\s*([\w'-]+)\s*[.?!]*\s*$", text or '')):
        if m and m.group(1).lower() in called:
            return called[m.group(1).lower()]
    return ''


#: words that speak to someone: "can you ...", "do you know ...", "your"
_YOU = re.compile(r"\b(?:you|your|you're|yourself)\b", re.I)


def alone_asking(seg: SegmentInput) -> bool:
    """Whether the one person in view, seen saying the words, asks something of "you" with nobody else speaking.

    Seen saying: perception saw the face talking or linked the voice to it (a radio heard beside one person is not
    theirs); nobody else: no other voice in the segment. Then "Can you tell me where the gloves are?" can only be for
    the robot, and so can "Please remind me in ten minutes to check the oven.", a request of what the robot does. A
    person on the phone alone in view still passes here; the action head decides, as for any follow-up.
    """
    if len(seg.face_ids) != 1 or seg.typed_text.strip():
        return False
    face = seg.face_ids[0]
    spoken = [t for t in seg.turns if t.text.strip()]
    seen_saying = seg.speaker_face == face or any(t.face_id == face for t in spoken)
    nobody_else = all(t.face_id == face for t in spoken)
    # "Jamal, could you close the window?": alone in view, but calling someone by name (the robot's would have
    # passed already), maybe out of sight or on the phone
    calls = said_names(seg.transcript)[1]
    asking = (bool(_YOU.search(seg.transcript)) and asks(seg.transcript)) or asks_for_reminder(seg.transcript)
    return seen_saying and nobody_else and asking and not calls


@dataclass
class AddressGate:
    """Remembers whom the robot last answered, and says whether a segment may be answered.

    ``cfg`` is the reflex's live :class:`~.config.LatentConfig` (``wake_words``, ``follow_up_s``), read at every
    decision, so a parameter change applies to the next segment.
    """

    cfg: LatentConfig
    last_reply_end: float = field(default=-math.inf)
    last_addressee: str = ''             # who the robot last answered (a face or voice id; '' when not known)

    def why_not(self, seg: SegmentInput) -> str:
        """'' when the segment may be answered, else the reason it is not (for the Action's notes)."""
        words = wake_words(self.cfg.wake_words)
        if not words or seg.typed_text.strip():       # no names: the action head alone decides
            return ''
        if not seg.transcript.strip():
            return 'quiet: nobody spoke to the robot (proactive speech comes as such)'
        if names_robot(seg.transcript, words):
            return ''
        if self.last_addressee and seg.speaker == self.last_addressee \
                and seg.start - self.last_reply_end <= self.cfg.follow_up_s:
            return ''
        if self.cfg.answer_alone and alone_asking(seg):
            return ''
        return f'quiet: not addressed (names none of {", ".join(words)}, is no follow-up of the last ' \
               f'person answered within {self.cfg.follow_up_s:g} s, and asks "you" nothing and no reminder alone in ' \
               f'view)'

    def follow_up_only(self, seg: SegmentInput) -> bool:
        """Whether spoken words may be answered only as a follow-up: they do not name the robot (the gate is on)."""
        words = wake_words(self.cfg.wake_words)
        return bool(words) and not seg.typed_text.strip() and bool(seg.transcript.strip()) \
            and not names_robot(seg.transcript, words) and not self.why_not(seg)

    def called(self, seg: SegmentInput) -> bool:
        """Whether the segment's speech calls the robot by one of its names (module docstring)."""
        words = wake_words(self.cfg.wake_words)
        return bool(words) and calls_robot(seg.transcript, words)

    def replied(self, seg: SegmentInput) -> None:
        """The robot answered ``seg`` aloud: its speaker may follow up without naming the robot."""
        self.last_reply_end = max(self.last_reply_end, seg.end)
        who = seg.speaker
        self.last_addressee = who if who not in (UNSEEN_SPEAKER, SOMEONE) else ''


__all__ = ['AddressGate', 'alone_asking', 'calls_other', 'calls_robot', 'names_robot', 'wake_words']
