# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Recall of a span of time (paper A.3, episodic summarisation): "what happened this morning?".

A question that names a window ("this morning", "yesterday", "in the last hour", "at ten": read by
:mod:`lightomni_ros.core.timeparse`) retrieves only entries of that window; a question that asks what happened in it
is answered from the S_g nodes and episodic entries of the window in time order, not from the newest part of S_g.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Sequence

from ..text import clipped, gist, unaddressed
from .types import MemoryItem, StateNode

#: "what happened ...", "what did I do ...", "summarize ...", "how was my day", "tell me about this morning"
_SUMMARY = re.compile(r"\b(?:what(?:'s| has| have)? (?:happen(?:ed|ing)|been going on|went on)|what did (?:i|we|you) "
                      r'(?:do|get up to)|summari[sz]e|sum up|recap|how was (?:my|our|the|this)|tell me (?:about|what)'
                      r' (?:my|our|the|this|happened)|give me an? (?:summary|overview|recap))\b', re.I)
_PROFILE = re.compile(r'^(<face_\d+>) is ([^(]+?)(?: \(|$)')
_FACE = re.compile(r'<face_\d+>')
_SPAN = re.compile(r'^\[\d{4}-\d\d-\d\d (?P<hm>\d\d:\d\d):\d\d\]--\[[^\]]*\]:\s*')


def is_summary_question(text: str) -> bool:
    """Whether ``text`` asks what happened (over a span of time) rather than about one thing."""
    return bool(_SUMMARY.search(text or ''))


def window_nodes(nodes: Sequence[StateNode], start: float, end: float) -> list[StateNode]:
    """S_g's nodes that overlap [start, end], in time order (their levels tile time: no span is told twice)."""
    return sorted((n for n in nodes if n.end >= start and n.start <= end), key=lambda n: (n.start, n.level))


def _clock(t: float, tz: _dt.tzinfo | None) -> str:
    return _dt.datetime.fromtimestamp(t, tz).strftime('%H:%M')


def named(text: str, known: dict[str, str]) -> str:
    """``text`` with its face ids said as the names memory knows ("someone" for a face no profile names)."""
    return _FACE.sub(lambda m: known.get(m.group(0), 'someone'), text)


def names(items: Sequence[MemoryItem]) -> dict[str, str]:
    """Face id -> name, from the profiles among retrieved items ("<face_1> is Ana (...)")."""
    found = (_PROFILE.match(m.text) for m in items if m.ref.startswith('profile:'))
    return {m.group(1): m.group(2) for m in found if m}


#: the parts of an episodic script (``saw <who>; <labels>; heard "<words>"; answered "<reply>"``)
_SAW = re.compile(r'^saw ([^;]*)')
_HEARD = re.compile(r'heard "(.*?)"(?=; answered "|$)', re.S)
_ACTIVE = re.compile(r'([^,;]+?) (talking|typing)\b')
_ANSWERED = re.compile(r';?\s*answered ".*$', re.S)


def told(script: str, robot: Sequence[str] = ()) -> str:
    """An episodic script as an event of a summary: who said what ('Ana said "..."'), else what was seen.

    The robot's own answer and the frame labels are left out when words were heard, and so are a call to the robot by
    one of its names (``robot``), the opening of a request to remember and a reminder's due time: a spoken summary has
    room for few words per event, and what people said is what it is asked about.
    """
    heard = _HEARD.search(script)
    if not heard or not heard.group(1).strip():
        return _ANSWERED.sub('', script).strip()
    saw = _SAW.match(script)
    who = _ACTIVE.search(saw.group(1)) if saw else None
    name, verb = (who.group(1).strip(), 'typed' if who.group(2) == 'typing' else 'said') if who else ('someone', 'said')
    return f'{name} {verb} "{gist(unaddressed(heard.group(1).strip(), robot))}"'


def spread(items: list, n: int) -> list:
    """``n`` of ``items`` spread evenly (first and last kept), in their order."""
    if len(items) <= n:
        return list(items)
    if n <= 1:
        return items[len(items) // 2:len(items) // 2 + 1] if n == 1 else []
    step = (len(items) - 1) / (n - 1)
    return [items[round(i * step)] for i in range(n)]


#: an exclamation ("What a long day it has been.", "Goal!"): a feeling, seldom something to remember
_EXCLAIMS = re.compile(r"^(?:what an? |how (?:nice|lovely|great|awful|bad|good|beautiful|strange|funny)\b)", re.I)


def _tier(text: str, heard: re.Match | None) -> int:
    """How main an event is (0 first).

    A person said something, an unseen speaker did or someone exclaimed, a question, only seen.
    """
    if not heard or not heard.group(1).strip():
        return 3
    words = heard.group(1).strip()
    if words.endswith('?'):
        return 2
    saw = _SAW.match(text)
    unseen = saw and ('unseen speaker' in saw.group(1) or saw.group(1).startswith('nobody in view'))
    return 1 if unseen or words.endswith('!') or _EXCLAIMS.match(words) else 0


def window_events(items: Sequence[MemoryItem], nodes: Sequence[StateNode], start: float, end: float,
                  tz: _dt.tzinfo | None, max_events: int = 6, robot: Sequence[str] = ()) -> list[str]:
    """What happened in the window, in time order, one line each (face ids named where a profile knows the name).

    The episodic entries retrieved for it (in the order memory returned them: time order), else the S_g nodes over
    it; at most ``max_events``. The main events come first: those where a person said something that is not only a
    question or an exclamation (spread evenly over the window when there are more), then what an unseen speaker (a
    radio, a TV) said and exclamations, then questions, then what was only seen. ``robot``: the robot's names, whose
    calls are left out of the quotes.
    """
    spans = [(_SPAN.match(it.text), it.text) for it in items if it.ref.startswith('episodic:')]
    lines = [(m.group('hm'), text[m.end():]) if m else ('', text) for m, text in spans]
    if not lines:
        lines = [(_clock(n.start, tz), n.text) for n in window_nodes(nodes, start, end)]
    tiers = [_tier(text, _HEARD.search(text)) for _, text in lines]
    keep: list[int] = []
    for tier in (0, 1, 2, 3):
        keep += spread([i for i, t in enumerate(tiers) if t == tier], max_events - len(keep))
        if len(keep) >= max_events:
            break
    known = names(items)
    # a face no profile names is "someone" (a face id is no word to say)
    return [named(f'{lines[i][0]} {told(lines[i][1], robot)}'.strip(), known) for i in sorted(keep)]


def window_context(events: Sequence[str], phrase: str) -> str:
    """The part of the response prompt that replaces S_g's newest lines for a question about a window."""
    body = '\n'.join(f'- {e}' for e in events) or '- (nothing remembered in that time)'
    return f'What happened {phrase} (oldest first):\n{body}'


#: the clock time an event of :func:`window_events` starts with
_CLOCK = re.compile(r'^(\d\d):(\d\d) ')
#: an event that quotes someone: who, the verb, the words
_QUOTE = re.compile(r'^(?P<who>.+?) (?P<verb>said|typed) "(?P<words>.*)"$', re.S)
#: a clause of a quote ends at a sentence end, or at a comma or semicolon before the next clause
_CLAUSE_END = re.compile(r'(?<=[.!?,;])\s+')
#: minutes between two clock times a summary says: within one stretch the order alone tells the time
STRETCH_MINUTES = 5
#: quotes of one speaker told as one event at most ('Ana said "..." and "..." and "..."')
MERGED_QUOTES = 3


def _minutes(clock: str) -> int:
    h, m = clock.split(':')
    return int(h) * 60 + int(m)


def _without_own_name(who: str, words: str) -> str:
    """A quote without the speaker's introduction of their own name, which the summary says already.

    'Mateo said "I'm Mateo, I just moved in."' -> 'I just moved in.'; a quote that is only the introduction is kept.
    """
    rest = re.sub(rf"^(?:(?:hi|hello|hey)[,!.]?\s+)?(?:i'm|i am|my name is|this is|call me) {re.escape(who)}\b"
                  r"[,.!;]?\s*", '', words, flags=re.I)
    return gist(rest[:1].upper() + rest[1:]) if rest and rest != words else words


def clip_quote(words: str, max_words: int, slack: int = 4) -> str:
    """About ``max_words`` of a quote, ended after a whole clause where one ends near there, "..." when cut.

    A quote up to ``slack`` words over is kept whole; a longer one ends at its longest clause (a sentence, or a part
    ending in a comma) within ``max_words + slack`` words when that keeps at least half of ``max_words``, else after
    ``max_words`` words. A quote cut mid-clause ("my torch is in the green") reads as broken, and one cut before its
    last few words loses what they tell ("I have been a nurse for ten years.").
    """
    if len(words.split()) <= max_words + slack:
        return words
    kept = ''
    for clause_end in _CLAUSE_END.finditer(words):
        head = words[:clause_end.start()]
        if len(head.split()) > max_words + slack:
            break
        kept = head
    if len(kept.split()) * 2 < max_words:     # no clause fits, or only a short one: the words themselves
        kept = ' '.join(words.split()[:max_words])
    return kept.rstrip(',;:') + ' ...' if not kept.endswith(('.', '!', '?')) else kept


def _event(text: str) -> tuple[str, str, str]:
    """(who, verb, words) of an event that quotes someone; ('', '', text) for another."""
    m = _QUOTE.match(text)
    if not m:
        return '', '', text
    who, verb = m.group('who'), m.group('verb')
    words = _without_own_name(who, m.group('words').strip()) if who not in ('someone', 'an unseen speaker') \
        else m.group('words').strip()
    return who, verb, words


def summary_answer(events: Sequence[str], phrase: str, max_words: int = 14) -> str:
    """The main events of a window in order, in a sentence the robot can say (no model: used when none is).

    A clock time is said when a new stretch starts (:data:`STRETCH_MINUTES` after the last one said): "at 09:00 Ana
    said ...; then Bob said ...; then at 10:30 ...". One speaker's consecutive quotes of one stretch are told as
    one event ('Ana said "..." and "..."'); a named speaker's introduction of their own name is left out of the
    quote (the name is said already); a long quote ends after a whole clause.
    """
    if not events:
        return f'I do not remember anything {phrase}.'
    events_: list[list] = []     # [clock said or '', who, verb, [quotes]] or [clock, '', '', [text]]
    last = None
    for e in events:
        m = _CLOCK.match(e)
        at = f'{m.group(1)}:{m.group(2)}' if m else ''
        who, verb, words = _event(e[m.end():] if m else e)
        # (the next day's clock reads earlier: a new stretch too)
        new_stretch = bool(at) and (last is None or abs(_minutes(at) - last) >= STRETCH_MINUTES)
        prev = events_[-1] if events_ else None
        # each quote keeps its own budget: a merged one cut short would lose what it says ("in the green ...")
        budget = max(4, max_words - len(who.split()) - 1) if who else max_words
        if prev and who and who != 'someone' and prev[1:3] == [who, verb] and not new_stretch \
                and len(prev[3]) < MERGED_QUOTES:
            prev[3].append(clip_quote(words, budget))
            continue
        quote = clip_quote(words, budget) if who else clipped(words, budget)
        events_.append([at if new_stretch else '', who, verb, [quote]])
        last = _minutes(at) if new_stretch else last
    said = []
    for at, who, verb, quotes in events_:
        body = f'{who} {verb} ' + ' and '.join(f'"{q}"' for q in quotes) if who else \
            quotes[0] if quotes[0].endswith('...') else quotes[0].rstrip('.')
        said.append(f'at {at} {body}' if at else body)
    text = '; then '.join(said)
    # no second full stop after a quote's own ('..."in the drawer."')
    return f'{phrase[0].upper()}{phrase[1:]}: {text}' + ('' if text.rstrip('"').endswith(('.', '!', '?')) else '.')


__all__ = ['is_summary_question', 'window_nodes', 'window_events', 'told', 'window_context', 'summary_answer',
           'clip_quote', 'names', 'named', 'spread']
