# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Training-split phrasing grammar: label-neutral lead-ins and embedded-question forms.

With a fixed list of phrasings per kind, the heads learn which *framing* goes with which label: when only trivia
was asked as "can you tell me ...?" and only memory questions as "do you know ...?", the search trigger read the
framing instead of the content, and missed "can you tell me where the umbrella is?" in the held-out split. Here
every question, whatever its label, is asked plainly, behind a direct lead-in ("by the way, ...") or as an embedded
question behind an embedded lead-in ("could you tell me where the wallet is?"); the same lead-ins go in front of
memory questions, trivia and small talk, so they carry no label and the content has to decide.

Used for the training split only; the held-out split keeps its own fixed phrasings (``templates.TEMPLATES['heldout']``)
and never sees a training phrasing verbatim (checked by the tests on the generated queries).
"""

from __future__ import annotations

import random
from typing import Collection

# in front of a direct question: "sorry, where is the wallet?"
LEAD_DIRECT = ('sorry,', 'by the way,', 'one more thing,', 'out of curiosity,', 'hmm,', 'let me ask you something,',
               'remind me,', 'I forget,', 'help me out here,', 'so,', 'real quick,', 'okay so,', 'just checking,')
# in front of an embedded question: "could you tell me where the wallet is?"
LEAD_EMBEDDED = ('could you tell me', 'do you happen to know', 'I need to know', 'I would like to know',
                 'have you any idea', 'do you recall', 'can you remind me', 'I can\'t remember',
                 'I\'m trying to remember', 'would you know', 'can you check', 'I\'d love to know')
QUESTION_LEADS = ('can', 'could', 'do', 'have', 'would')

# embedded forms of each question kind (same slots as the direct templates in templates.TEMPLATES['train'])
EMBEDDED: dict[str, tuple[str, ...]] = {
    'ask_other_drink': ('what {name} likes to drink', 'which drink {name} usually orders',
                        'what {name} drinks in the morning'),
    'ask_other_job': ('what {name} does for a living', 'what job {name} has', 'what {name} works as'),
    'ask_other_pet': ('what pet {name} has', 'what animal {name} has at home', 'whether {name} has a pet'),
    'ask_other_city': ('where {name} is from', 'which city {name} grew up in', 'where {name} was born'),
    'ask_other_hobby': ('what {name} does for fun', 'what hobby {name} has', 'what {name} does at weekends'),
    'ask_other_allergy': ('what {name} is allergic to', 'whether {name} has an allergy'),
    'ask_other_birthday': ('when {name}\'s birthday is', 'which month {name} was born in'),
    'ask_self_drink': ('what I usually drink', 'what my favourite drink is', 'what I like to drink'),
    'ask_self_job': ('what my job is', 'what I told you about my work', 'what I do all day at work'),
    'ask_self_allergy': ('what I am allergic to', 'which food I must avoid'),
    'ask_self_city': ('where I grew up', 'which city I am from', 'where I was born'),
    'ask_other_sport': ('what sport {name} plays', 'which sport {name} is into'),
    'ask_self_sport': ('which sport I play',),
    'ask_object': ('where the {obj} {be}', 'where I put the {obj}', 'where the {obj} went', 'where I left the {obj}'),
    'ask_object_of': ("where {name}'s {obj} {be}", 'where {name} put the {obj}'),
    'ask_object_own': ('where my {obj} {be}', 'where I put my {obj}'),
    'ask_event': ('when {event} is', 'which day {event} is'),
    'ask_heard': ('what the radio said about {subject}', 'what the news said about {subject}'),
    'ask_said': ('what {who} said', 'what {who} was saying', 'what {who} said just now'),
    'ask_name': ('what my name is', 'who I am'),
    'ask_topic': ('what {name} said about {topic}', 'what {name} thinks of {topic}',
                  'how {name} felt about {topic}'),
    'general': ('{trivia}',),
    'chitchat': ('{chat_embedded}',),
}


def choose(rng: random.Random, direct: tuple[str, ...], kind: str, p_plain: float = 0.4,
           forbidden: Collection[str] = ()) -> str:
    """Pick a template for ``kind``: a direct phrasing, one behind a lead-in, or an embedded form behind one.

    ``p_plain`` of the draws are the direct phrasing alone; the rest split evenly between the two lead-in forms.
    A composed template in ``forbidden`` (the held-out split's phrasings of the kind) is drawn again.
    """
    for _ in range(100):
        tpl = _compose(rng, direct, kind, p_plain)
        if tpl not in forbidden:
            return tpl
    raise ValueError(f'no training phrasing of {kind!r} outside the held-out ones')


def _compose(rng: random.Random, direct: tuple[str, ...], kind: str, p_plain: float) -> str:
    r = rng.random()
    embedded = EMBEDDED.get(kind, ())
    if r < p_plain:
        return rng.choice(direct)
    if r < p_plain + (1 - p_plain) / 2 or not embedded:
        return f'{rng.choice(LEAD_DIRECT)} {rng.choice(direct)}'
    lead = rng.choice(LEAD_EMBEDDED)
    end = '?' if lead.split()[0] in QUESTION_LEADS else '.'
    return f'{lead} {rng.choice(embedded)}{end}'


__all__ = ['LEAD_DIRECT', 'LEAD_EMBEDDED', 'EMBEDDED', 'choose']
