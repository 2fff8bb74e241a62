# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Generation pairs for questions about a span of time ("what happened in the past 12 minutes?", "today?").

At the end of a stream someone asks the robot what happened over its last minutes, or today, or this morning. The
prompt is the one the engine builds for such a question (``ReflexEngine._recall``): the window's events, picked and
worded by :func:`~lightomni_ros.core.reflex.recall.window_events` from the window's episodic entries as the store
renders them, take S_g's place (``window``), and the memories are the profiles of the people memory knows. The
target names the shown events that taught something (at most four, spread over the window), in order and in the
robot's words: the facts a segment taught ("Mei is allergic to pollen"), "I met Kwame" for an introduction, "I heard
that ..." for what a radio or TV announced. Questions, small talk and silence are left out: they are not what a
summary is for. The draws come from a generator of their own, so the streams (segments, labels, other pairs) do not
change.
"""

from __future__ import annotations

import random
from typing import Any

from ..core.reflex.addressing import wake_words
from ..core.reflex.config import LatentConfig, ResponseConfig
from ..core.reflex.recall import named, spread, window_context, window_events
from ..core.reflex.sleep import CALLED_FACT
from ..core.reflex.types import MemoryItem
from ..core.timeparse import find_window
from .stream import UTC, Stream

#: the robot's names, as the engine leaves them out of the events' quotes
ROBOT = wake_words(LatentConfig().wake_words)
#: events a summary names at most (its reply is bounded by ``response.summary_max_new_tokens``)
MAX_CLAUSES = 4


#: words that open a fact and are lower case inside a sentence ("then the yoga class is at eleven")
_ARTICLES = ('The ', 'A ', 'An ', 'My ', 'Our ')


def clause(ex: dict[str, Any], names: dict[str, str], news: set[str]) -> str:
    """What one segment taught, as a summary says it ('' when nothing: a question, small talk, silence).

    ``news``: the broadcasts of the split that announce something (a drama's or a match's lines do not).
    """
    if ex['source'] == 'device':
        said = ex['transcript'].strip().rstrip('.')
        return f'I heard that {said[0].lower()}{said[1:]}' if ex['transcript'].strip() in news else ''
    told = []
    for f in ex.get('facts') or []:
        called = CALLED_FACT.match(f['text'])
        if called:
            told.append(f'I met {called.group(2)}')
            continue
        text = named(f['text'], names).rstrip('.')
        told.append(f'{text[0].lower()}{text[1:]}' if text.startswith(_ARTICLES) else text)
    return ' and '.join(told)


def told_once(clauses: list[str]) -> list[str]:
    """The non-empty ``clauses``, each once, where it last happened (a thing moved and moved back).

    The engine refuses a reply that repeats itself, so a summary that names one event twice would teach a reply
    the node never says.
    """
    return [c for i, c in enumerate(clauses) if c and c not in clauses[i + 1:]]


def target(phrase: str, clauses: list[str]) -> str:
    """The reply: the clauses in order, at most :data:`MAX_CLAUSES` spread over the window ('' when none)."""
    if not clauses:
        return ''
    return f'{phrase[0].upper()}{phrase[1:]}, ' + '; then '.join(spread(clauses, MAX_CLAUSES)) + '.'


def window_probe(st: Stream, rng: random.Random, at: float, minutes: int) -> dict[str, Any] | None:
    """One "what happened ...?" generation pair asked at ``at`` (None: nothing to tell).

    The question asks about the last ``minutes`` minutes, or about a span the day names ("today", "this morning"),
    as the split's templates word it; the window is the one the engine reads from those words.
    """
    asker = rng.choice(st.people)
    question = f'{rng.choice(st.tpl["wake"])} {rng.choice(st.tpl["ask_window"]).format(n=minutes)}'
    window = find_window(question, at + 3.0, UTC)     # the phrase the engine reads, as it reads it
    if window is None:
        return None
    shown = [i for i, ex in enumerate(st.examples) if ex['end'] >= window.start and ex['start'] <= at]
    if not shown:
        return None
    profiles = [MemoryItem(f'profile:{f}', f'{f} is {n}') for f, n in st.names.items()]
    items = [MemoryItem(f'episodic:{st.episodes[i]}', st.rendered(st.episodes[i])) for i in shown]
    k = ResponseConfig().summary_events

    def events(of: list[MemoryItem]) -> list[str]:
        return window_events(profiles + of, [], window.start, at, UTC, k, ROBOT)
    lines = events(items)
    # which segment each shown line tells of: the line that segment alone gives
    own = {}
    for i, item in zip(shown, items):
        own.setdefault(events([item])[0], i)
    news = {line for line, _, subject in st.vocab['broadcasts'] if subject}
    told = [clause(st.examples[own[line]], st.names, news) for line in lines if line in own]
    reply = target(window.phrase, told_once(told))
    if not reply:
        return None
    typed = rng.random() < 0.3
    return {'kind': 'ask_window', 'start': round(at, 1), 'end': round(at + 3.0, 1), 'face_ids': [asker.face],
            'speaker_face': '' if typed else asker.face, 'visual_tags': rng.sample(st.vocab['scenes'], 1),
            'transcript': '' if typed else question, 'typed_text': question if typed else '', 'sg': '',
            'window': window_context(lines, window.phrase), 'names': dict(st.names), 'response': reply,
            'answer': None, 'context': [{'ref': m.ref, 'text': m.text} for m in profiles]}


def window_probes(st: Stream, n: int) -> list[dict[str, Any]]:
    """``n`` window questions at the end of ``st``, over a quarter to nine tenths of it (fewer when nothing to tell)."""
    rng = random.Random(f'{st.split}:{st.index}:windows')
    if not st.examples or n <= 0:
        return []
    at = st.t + 5.0
    span = (at - st.examples[0]['start']) / 60.0
    out = []
    for _ in range(n):
        probe = window_probe(st, rng, at, max(1, round(span * rng.uniform(0.25, 0.9))))
        if probe is not None:
            out.append(probe)
        at += rng.uniform(5.0, 30.0)
    return out


__all__ = ['clause', 'told_once', 'target', 'window_probe', 'window_probes']
