# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""More ways to say a statement that holds a fact, or a question: second wordings for the memory and generation pairs.

The memory adapter saw every fact in the two to four wordings per kind of ``templates.TEMPLATES['train']`` and learned
those wordings rather than the facts: a statement said another way often gave an empty Topic (held-out fact recall
0.45-0.65). Here each training segment that states a fact is said a second time, in a wording drawn from this bank
by a generator of its own, and becomes a second memory pair with the same target. The streams' own draws never
change, so the segments, the labels, the other adapters' pairs and the held-out split stay as they were; only the
memory pairs grow.

Questions had the same fault in the generation adapter: asked in a held-out wording ("what does Ana train for?")
with the fact among its memories, it refused. Each training question is also asked in a wording of :data:`ASK`,
drawn by another generator of its own, and becomes a second generation pair with the same memories and reply. The
bank keeps the held-out split's own words: none of its content words is one that only held-out templates use (a
test checks), so held-out questions stay new to the adapter.

Slots are those of the templates they stand in for (``templates`` module docstring). Object statements are pairs
(template, owner) as there, opinions pairs (wording, attitude); every introduction names the robot, as the ones used
with others in view do. None of these is a held-out phrasing (checked by the tests).
"""

from __future__ import annotations

import random
import re
from typing import Any

from .world import capital

RESTATE: dict[str, tuple] = {
    'state_drink': ('{value} is my go-to drink.', 'I am never without my {value}.', 'give me {value} any day.',
                    'I drink {value} with every meal.', 'honestly, {value} is all I ever want to drink.',
                    'my drink of choice is {value}.', 'every morning I have {value}.',
                    "I can't face the day without {value}.", 'pour me some {value}, that is what I like.'),
    'state_job': ('I am {value} by trade.', 'I earn my living as {value}.', 'my job? I am {value}.',
                  'these days I work full time as {value}.', 'I got hired as {value} last year.',
                  'I am employed as {value}.', 'for work I am {value}.', 'I make my money as {value}.',
                  'I have a position as {value} at a clinic.'),
    'state_pet': ('I own {value}.', 'I adopted {value} last spring.', 'waiting for me at home is {value}.',
                  'I need to get home to feed {value}.', 'there is {value} living with me.',
                  'I take care of {value} at my place.', 'my companion at home is {value}.',
                  'every evening {value} greets me at the door.'),
    'state_city': ('I am from {value}.', 'I was born and bred in {value}.', 'I spent my childhood in {value}.',
                   'I lived in {value} until I was eighteen.', 'I am originally from {value}.',
                   '{value} is where I was born.', 'my roots are in {value}.', 'I lived most of my life in {value}.'),
    'state_hobby': ('I am a big fan of {value}.', 'nothing relaxes me like {value}.',
                    'I picked up {value} last year and love it.', 'my evenings are all about {value}.',
                    'my weekends are for {value}.', 'I have a hobby: {value}.', 'I am passionate about {value}.',
                    'after work I like {value}.'),
    'state_allergy': ('I have an allergy to {value}.', 'I get a rash from {value}.',
                      'no {value} near me, I am allergic.', 'I have to stay away from {value}.',
                      '{value} makes me ill, I am allergic.', 'please, no {value}, I have an allergy.',
                      'my doctor told me to avoid {value}.', 'one bite of {value} and I get sick.'),
    'state_birthday': ('my birthday falls in {value}.', 'I turn a year older every {value}.',
                       'my birthday comes up in {value}.', 'I always take a holiday for my birthday in {value}.',
                       'I was born in the month of {value}.', 'my birthday party is always in {value}.',
                       '{value} is my birthday month.'),
    'state_sport': ('I am on a {value} team.', 'I play {value} on Saturdays.',
                    'I have played {value} since school.', 'I go to {value} practice on Thursdays.',
                    'I play {value} with my friends.', '{value} is my sport.', 'I am in a {value} club.',
                    'I practise {value} on Mondays.'),
    'about_job': ('{name} earns a living as {value}.', '{name} is working as {value} these days.',
                  '{name} trained to be {value}.', '{name} has worked as {value} for ages.',
                  '{name} is employed as {value}.'),
    'about_drink': ('{name} drinks nothing but {value}.', 'if you make {name} a drink, make it {value}.',
                    '{name} loves {value}.', '{name} always asks for {value}.', '{name} is mad about {value}.'),
    'about_city': ('{name} grew up in {value}.', '{name} was born in {value}.', '{name} moved here from {value}.',
                   '{name} is from {value}.', '{name} was brought up in {value}.'),
    'about_hobby': ('{name} is really into {value}.', '{name} has a passion for {value}.', '{name} loves {value}.',
                    '{name} is always {value} at the weekend.'),
    'object_state': (('I placed the {obj} {place}.', 'the'), ('the {obj} {be} lying {place}.', 'the'),
                     ('you will find the {obj} {place}.', 'the'), ('I store my {obj} {place}.', 'own'),
                     ('I put my {obj} {place} for safekeeping.', 'own'), ('I hid my {obj} {place}.', 'own'),
                     ('I tucked the {obj} {place}.', 'the'), ('the {obj} {be} {place}, I saw it.', 'the'),
                     ('my {obj} {be} sitting {place}.', 'own'), ('I stashed my {obj} {place}.', 'own')),
    'object_move': (('someone moved the {obj}, {be_it} {place} now.', 'the'),
                    ('the {obj} {be} {place} from now on.', 'the'), ('I relocated the {obj}; {be_it} {place}.', 'the'),
                    ('I moved my {obj}, {be_it} {place} now.', 'own'),
                    ('I shifted the {obj}; {be_it} {place} now.', 'the'), ('now the {obj} {be} {place}.', 'the'),
                    ('my {obj} {be} {place} these days.', 'own')),
    'remember': ('do remember that {clause}.', 'save this for me: {clause}.', 'write this down: {clause}.',
                 'hold on to this: {clause}.', 'I want you to remember that {clause}.', 'please store that {clause}.',
                 'remember this: {clause}.', 'I need you to remember that {clause}.',
                 'make sure you remember {clause}.'),
    'typed_note': ('Reminder for you: {clause}.', 'Save this: {clause}.', 'Memo: {clause}.',
                   'Write down that {clause}.', 'To remember: {clause}.', 'Important: {clause}.',
                   'For the record, {clause}.'),
    'event': ('{event} will be {when}.', 'we have {event} {when}.', 'mark your calendar, {event} is {when}.',
              "it's confirmed, {event} is {when}.", '{event} is booked for {when_bare}.',
              '{event} takes place {when}.', 'we are doing {event} {when}.', 'the plan is {event} {when}.',
              '{event} got scheduled for {when_bare}.', 'FYI, {event} is {when}.'),
    'correction': ('correction: {event} is {when} now.', 'scratch that, {event} moved to {when_bare}.',
                   '{event} is not {old} any more, it is {when}.', 'they rescheduled {event} to {when_bare}.',
                   'I made a mistake, {event} is {when}.', 'new time: {event} is {when}.',
                   '{event} is {when} instead of {old}.', 'they pushed {event} to {when_bare}.'),
    'intro': ('Robot, my name is {name}.', 'Greetings robot, {name} here.', 'Hi robot, I go by {name}.',
              'Robot, let me introduce myself, I am {name}.', 'Robot, the name is {name}.',
              'Hello robot, I am {name}, pleased to meet you.'),
    'intro_other': ('Robot, I want you to meet {other}.', 'Robot, this here is {other}, a friend of mine.',
                    'Robot, {other} is visiting us today.', 'Robot, please meet {other}.'),
    # opinions are pairs (wording, attitude): a second wording keeps the attitude and the word the fact is scored by
    'opinion': (('{topic} went terribly, a real disaster.', 'disaster'),
                ('what a disaster {topic} turned out to be.', 'disaster'),
                ('I would say {topic} was a disaster.', 'disaster'), ('in my view {topic} was a disaster.', 'disaster'),
                ('I loved {topic}, what a day.', 'loved'), ('{topic}? I loved every minute of it.', 'loved'),
                ('we went to {topic} and I loved it.', 'loved'), ('I just loved {topic}.', 'loved'),
                ('{topic} was boring, I nearly fell asleep.', 'boring'), ('I thought {topic} was boring.', 'boring'),
                ('so boring, {topic}, I left before the end.', 'boring'),
                ('nothing went on at {topic}, boring.', 'boring'),
                ('I am so excited about {topic}!', 'excited'), ('{topic} has me excited.', 'excited'),
                ('I get excited just thinking about {topic}.', 'excited'),
                ('{topic} has me worried.', 'worried'), ('I am a bit worried about {topic}.', 'worried'),
                ('I lie awake worried about {topic}.', 'worried'), ('honestly {topic} makes me worried.', 'worried')),
    'tell_robot': ('you should know that {statement}', 'a fact for you: {statement}',
                   'something about me: {statement}', 'for the record, {statement}',
                   'you might want to know this, {statement}'),
}


#: other ways to ask each question kind (slots of the ``ask_*`` templates)
ASK: dict[str, tuple[str, ...]] = {
    'ask_other_drink': ("what is {name}'s drink of choice?", 'what does {name} usually have to drink?',
                        "what's {name}'s regular drink?", 'if I make {name} a drink, what should it be?'),
    'ask_other_job': ('what line of work is {name} in?', "what's {name}'s occupation?",
                      'how does {name} earn a living?',
                      'what sort of work does {name} do?', 'what does {name} do all day at work?'),
    'ask_other_pet': ('does {name} own a pet?', 'what sort of pet does {name} own?',
                      "is there an animal at {name}'s place?"),
    'ask_other_city': ('what city is {name} from?', 'where did {name} grow up?',
                       'which town is {name} originally from?',
                       "where's {name} from?"),
    'ask_other_hobby': ("what are {name}'s hobbies?", 'how does {name} like to relax?',
                        'what does {name} enjoy doing?', 'what keeps {name} busy on weekends?'),
    'ask_other_allergy': ('what can {name} not eat?', 'is there anything {name} is allergic to?',
                          'what should {name} stay away from?', 'does {name} have an allergy?'),
    'ask_other_birthday': ("what month is {name}'s birthday in?", 'when does {name} have a birthday?',
                           'when was {name} born?'),
    'ask_other_sport': ('does {name} play a sport?', "what's {name}'s sport?", 'which team sport does {name} play?'),
    'ask_self_drink': ('what drink do I always have?', 'what is my regular drink?', 'what do I like to drink?'),
    'ask_self_job': ('what do I do for a living?', 'do you know what I work as?', "what's my job again?"),
    'ask_self_allergy': ('what am I allergic to?', 'is there a food I can not eat?', 'what should I stay away from?'),
    'ask_self_city': ('where am I from?', 'where did I grow up?', 'which town did I say I am from?'),
    'ask_self_sport': ('what sport do I play?', 'do you remember my sport?', 'which team sport do I play?'),
    'ask_object': ('where can I find the {obj}?', 'where {be} the {obj} right now?',
                   'do you remember where the {obj} {be}?',
                   'what became of the {obj}, where {is_it}?', 'where was the {obj} put?'),
    'ask_object_of': ('where did {name} leave the {obj}?', "do you know where {name}'s {obj} {be}?",
                      'where has {name} put the {obj}?'),
    'ask_object_own': ('where did I leave my {obj}?', 'have you seen my {obj}?', 'do you know where my {obj} {be}?',
                       'I cannot find my {obj}, where {is_it}?'),
    'ask_event': ('when will {event} be?', 'what time is {event}?', 'when is {event} happening?',
                  'on what day is {event}?'),
    'ask_topic': ('how did {name} feel about {topic}?', 'what does {name} think about {topic}?',
                  'did {name} like {topic}?',
                  'what did {name} make of {topic}?'),
    'ask_heard': ('what did you hear about {subject}?', 'did the radio mention {subject}?',
                  'what was said on the radio about {subject}?', 'anything on the radio about {subject}?'),
    'ask_said': ('what did you hear {who} say?', 'what was it that {who} said?', 'tell me what {who} was saying.',
                 'what did {who} say a moment ago?'),
    'ask_name': ('what am I called?', 'who am I?', 'can you tell me my name?', "what's my name?"),
}


def alternative(rng: random.Random, key: str, owner: str = '', **slots: Any) -> str:
    """Another wording of a ``key`` statement or question with these slots ('' when the banks have none for it).

    ``owner`` picks, in a bank of pairs, the wordings of that variant: an object statement's owner ('own' / 'the'),
    an opinion's attitude ('disaster', 'loved', ...).
    """
    bank = RESTATE.get(key) or ASK.get(key, ())
    if owner:
        bank = tuple(t for t, o in bank if o == owner)
    return rng.choice(bank).format(**slots) if bank else ''


def restated(text: str, renders: list[tuple[str, str]]) -> str:
    """``text`` with each wording of ``renders`` ((as said, another wording), inner ones first) replaced.

    The outer wordings go first: a frame ("just so you know, {statement}") holds the inner statement as said. A wording
    may stand in the text capitalised or without its full stop (an introduction that goes on).
    """
    out = text
    for said, other in reversed(renders):
        for a, b in ((said, other), (capital(said), capital(other)),
                     (said.rstrip('.'), other.rstrip('.')), (capital(said).rstrip('.'), capital(other).rstrip('.'))):
            if a and a in out:
                out = out.replace(a, b, 1)
                break
    # a wording that opened lower case ("honestly, ...") may now open a sentence
    return re.sub(r'(^|[.!?] )([a-z])', lambda m: m.group(1) + m.group(2).upper(), out)


__all__ = ['RESTATE', 'ASK', 'alternative', 'restated']
