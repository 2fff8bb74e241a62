# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Which memories answer a question (answering.py): quotes, refusals and claims about named people.

With the real MiniLM text embedder for the quotes.
"""

from __future__ import annotations

import pytest

from lightomni_ros.core.reflex.answering import (answering, extractive_answer, in_own_voice, leaves_out, misattributed,
                                                 of_others, off_topic, one_source, people_asked, unanswered_claim,
                                                 unfounded_refusal, unquoted)
from lightomni_ros.core.reflex.grounding import said_by
from lightomni_ros.core.reflex.prompts import said_at
from lightomni_ros.core.reflex.types import MemoryItem

ROBOT = ['robot', 'assistant']
MEMORIES = [
    MemoryItem('profile:<face_5>', '<face_5> is Lena (persona: a baker)'),
    MemoryItem('semantic:3', 'the garden hose is rolled up behind the shed', 0.4),
    MemoryItem('semantic:4', '<face_5> said: I feed the cat every evening at six', 0.5),
    MemoryItem('episodic:8', 'saw a person, a bench; heard "the lift in block B is out of order"; '
                             'answered "The scene is a railway station."', 0.3),
]


@pytest.fixture(scope='module')
def embed():
    from lightomni_ros.core.embedding import text_embedder

    return text_embedder(set_threads=False).embed


def test_extractive_answer_quotes_a_memory_that_answers(embed) -> None:
    assert 'shed' in extractive_answer('Where is the garden hose?', MEMORIES, embed)
    cat = extractive_answer('When does Lena feed the cat?', MEMORIES, embed)
    assert cat.startswith('From memory: Lena said: I feed the cat') and 'railway' not in cat
    assert 'block B' in extractive_answer('Which lift is out of order?', MEMORIES, embed)
    assert extractive_answer('anything?', [], embed) == ''
    # nothing retrieved is about the capital of Australia: no quote at all, rather than the closest unrelated one
    assert extractive_answer('Robot, what is the capital of Australia?', MEMORIES, embed, ROBOT) == ''


def test_an_earlier_question_is_not_quoted_as_the_answer(embed) -> None:
    asked = MemoryItem('episodic:9', '[2026-03-02 08:08:16]--[2026-03-02 08:08:21]: saw <face_1> talking; bedroom; '
                       'heard "Robot, where on earth is my laptop?"; answered "I do not know."')
    told = MemoryItem('semantic:4', '[2026-03-02 08:01:00]--[2026-03-02 08:01:05]: Ana put her laptop in the basket.')
    reply = extractive_answer('Robot, where is my laptop?', [asked, told], embed)
    assert 'basket' in reply and 'where on earth' not in reply, reply
    # asked what someone said, the question they asked is the answer
    assert 'where on earth' in extractive_answer('What did the person in the bedroom say?', [asked], embed)


def test_asked_what_someone_said_the_newest_words_answer_not_a_fact_drawn_from_them(embed) -> None:
    """Asked "could you repeat what Kwame said?", the robot said "Kwame is called Kwame." (the closest memory)."""
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Kwame'),
            MemoryItem('semantic:1', '[2026-05-21 08:57:40]--[2026-05-21 08:57:45]: <face_1> is called Kwame.'),
            MemoryItem('recent:2', '<face_1> said: Good morning robot, call me Kwame.', said='2026-05-21 08:57:45'),
            MemoryItem('recent:3', '<face_1> said: No cat hair for me please, allergy.', said='2026-05-21 09:04:48'),
            MemoryItem('recent:4', '<face_1> said: I have been a chef for ten years.', said='2026-05-21 09:01:07'),
            MemoryItem('recent:5', '<face_1> said: Astrid, could you close the window?', said='2026-05-21 09:05:10')]
    assert 'semantic:1' not in [m.ref for m in answering('Could you repeat what Kwame said?', mems, ROBOT)]
    # the two newest words, in the order they were said: a question to someone else is what they said too
    assert extractive_answer('Could you repeat what Kwame said?', mems, embed, ROBOT) == \
        'From memory: Kwame said: No cat hair for me please, allergy. Astrid, could you close the window?'
    # about a topic, the words about it, however old
    assert 'chef' in extractive_answer('What did Kwame say about his job as a chef?', mems, embed, ROBOT)


def test_a_newer_memory_of_what_was_asked_supersedes_a_closer_one(embed) -> None:
    """Asked "remind me when lunch is?", it quoted "... half past six" after "update: lunch got moved to two"."""
    mems = [MemoryItem('semantic:1', '[2026-05-27 08:56:22]--[2026-05-27 08:56:27]: The lunch is at half past six.'),
            MemoryItem('recent:3', '<face_1> said: They set lunch for half past six.', said='2026-05-27 08:56:27'),
            MemoryItem('recent:4', '<face_1> said: Okay robot, update: lunch got moved to two.',
                       said='2026-05-27 08:58:27')]
    assert extractive_answer('Remind me when lunch is?', mems, embed, ROBOT) == \
        'From memory: a person said: Update: lunch got moved to two.'


def test_asked_of_the_asker_the_quote_is_of_the_asker(embed) -> None:
    """Asked "what is my hometown?", it quoted the asker's words and "Astrid comes from Hanoi." beside them."""
    mems = [MemoryItem('profile:<face_3>', '<face_3> is Astrid'), MemoryItem('profile:<face_4>', '<face_4>'),
            MemoryItem('semantic:1', '[2026-05-26 08:54:48]--[2026-05-26 08:54:51]: Astrid comes from Hanoi.'),
            MemoryItem('recent:2', '<face_4> said: I was raised in Edinburgh.', said='2026-05-26 09:03:22')]
    assert 'Hanoi' in extractive_answer('Robot, what is my hometown?', mems, embed, ROBOT)
    mine = extractive_answer('Robot, what is my hometown?', mems, embed, ROBOT, asker='<face_4>')
    assert 'Edinburgh' in mine and 'Hanoi' not in mine, mine
    # Astrid asking: her own fact; a question not about the asker keeps every memory
    assert 'Edinburgh' not in extractive_answer('Robot, what is my hometown?', mems, embed, ROBOT, asker='<face_3>')
    assert 'Hanoi' in extractive_answer('Where does Astrid come from?', mems, embed, ROBOT, asker='<face_4>')


def test_asked_of_the_asker_another_ones_fact_is_no_answer(embed) -> None:
    """Freya asked "what sport am I into?" and heard "You play golf.": only Tariq's golf was remembered."""
    mems = [MemoryItem('profile:<face_2>', '<face_2> is Freya'), MemoryItem('profile:<face_3>', '<face_3> is Tariq'),
            MemoryItem('semantic:1', 'Tariq plays golf.')]
    q = 'Hey assistant, what sport am I into?'
    assert of_others('You play golf.', q, mems, ROBOT, asker='<face_2>') == \
        'reply answers the one asking from memories of someone else'
    # nothing of theirs: no quote of Tariq's, and a refusal is founded
    assert extractive_answer(q, mems, embed, ROBOT, asker='<face_2>') == ''
    assert unfounded_refusal("I don't know.", q, mems, ROBOT, asker='<face_2>') == ''
    # Tariq asking: his own fact answers, and refusing it is not founded
    assert of_others('You play golf.', q, mems, ROBOT, asker='<face_3>') == ''
    assert unfounded_refusal("I don't know.", q, mems, ROBOT, asker='<face_3>') != ''
    # a memory that names nobody may be the asker's; a question about someone else is not checked
    assert of_others('They are in the drawer.', 'Where are my keys?',
                     mems + [MemoryItem('semantic:2', 'The keys are in the drawer.')], ROBOT, asker='<face_2>') == ''
    assert of_others('Tariq plays golf.', 'Which sport does Tariq play?', mems, ROBOT, asker='<face_2>') == ''
    # someone memory has no name for is someone else all the same
    raised = [mems[0], MemoryItem('profile:<face_5>', '<face_5> (persona: <face_5> enjoys rock climbing.)'),
              MemoryItem('recent:1', '<face_5> said: I was raised in Marseille.'),
              MemoryItem('semantic:2', '<face_5> comes from Marseille.')]
    assert of_others('You come from Marseille.', 'Okay robot, what is my hometown?', raised, ROBOT,
                     asker='<face_2>') == 'reply answers the one asking from memories of someone else'
    assert of_others('You come from Marseille.', 'Okay robot, what is my hometown?', raised, ROBOT,
                     asker='<face_5>') == ''
    # the asker's own words and another's fact both answer: the reply must tell the asker's
    jobs = [MemoryItem('profile:<face_1>', '<face_1> (persona: <face_1> enjoys salsa dancing.)'),
            MemoryItem('profile:<face_3>', '<face_3> is Leila'),
            MemoryItem('semantic:1', 'Leila works as an architect.'),
            MemoryItem('recent:1', '<face_1> said: Excuse me robot, I work as a plumber at the harbour.')]
    q = 'Robot, remind me what I do for work?'
    assert of_others('You work as an architect.', q, jobs, ROBOT, asker='<face_1>') == \
        'reply tells the one asking what memory holds of someone else'
    assert of_others('You work as a plumber.', q, jobs, ROBOT, asker='<face_1>') == ''
    assert of_others('You work as an architect.', q, jobs, ROBOT, asker='<face_3>') == ''
    # words the asker said of someone else are that person's: "which drink do I like?" has no answer here
    said = mems + [MemoryItem('recent:3', '<face_2> said: Tariq always orders sparkling water.'),
                   MemoryItem('episodic:4', 'saw <face_2> talking, <face_3>; heard "Tariq always orders sparkling '
                                            'water."')]
    q = 'Excuse me robot, which drink do I like?'
    assert unfounded_refusal("I don't know.", q, said, ROBOT, asker='<face_2>') == ''
    assert extractive_answer(q, said, embed, ROBOT, asker='<face_2>') == ''
    # while their own words are theirs, a name that only calls someone included
    own = mems + [MemoryItem('recent:5', '<face_2> said: Tariq, I always order sparkling water.')]
    assert 'sparkling water' in extractive_answer(q, own, embed, ROBOT, asker='<face_2>')


def test_a_memory_that_only_repeats_the_question_answers_nothing(embed) -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Kwame'),
            MemoryItem('semantic:1', '<face_1> has a laptop.'),
            MemoryItem('semantic:2', 'a person has a laptop.'),
            MemoryItem('semantic:3', 'Kwame said: I dropped my laptop in the green basket.')]
    assert [m.ref for m in answering('Robot, where is my laptop?', mems, ROBOT)] == ['semantic:3']
    assert 'green basket' in extractive_answer('Robot, where is my laptop?', mems, embed, ROBOT)
    assert extractive_answer('Robot, where is my laptop?', mems[:3], embed, ROBOT) == ''


def test_a_claim_moved_onto_someone_only_called_by_name_is_misattributed() -> None:
    """Pablo said "Sofia, I really enjoyed the birthday party.": asked Pablo's opinion, "Sofia enjoyed it" is wrong."""
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Pablo (updated_by: introduction)'),
            MemoryItem('episodic:7', '<face_1> enjoyed the birthday party.'),
            MemoryItem('recent:3', '<face_1> said: Sofia, I really enjoyed the birthday party.')]
    q = "Hey assistant, what was Pablo's opinion on the birthday party?"
    # no face of memory is called Sofia yet: her name is known only as someone Pablo spoke to
    assert 'tells of sofia' in misattributed('Sofia enjoyed the birthday party.', q, mems, ROBOT)
    assert misattributed('Pablo enjoyed the birthday party.', q, mems, ROBOT) == ''


def test_asked_when_only_a_memory_that_says_a_time_answers() -> None:
    """Asked in which month Pablo's birthday is, his words about the birthday party say no month: nothing answers."""
    from lightomni_ros.core.reflex.answering import unanswered_claim
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Pablo (updated_by: introduction)'),
            MemoryItem('episodic:7', 'Pablo thinks the birthday party was an absolute mess.'),
            MemoryItem('episodic:8', '<face_1> enjoyed the birthday party.')]
    q = "Robot, tell me, in which month is Pablo's birthday?"
    assert answering(q, mems, ROBOT) == []
    assert unanswered_claim('Pablo has a birthday party.', q, mems, ROBOT)
    told = mems + [MemoryItem('semantic:9', "Pablo's birthday is in May.")]
    assert [m.ref for m in answering(q, told, ROBOT)] == ['semantic:9']
    assert unanswered_claim("Pablo's birthday is in May.", q, told, ROBOT) == ''
    # a time in words or digits, a weekday: each says when
    meeting = [MemoryItem('semantic:1', 'The team meeting got moved to Friday.'),
               MemoryItem('semantic:2', 'The shop closes at 6.'), MemoryItem('semantic:3', 'The shop is very busy.')]
    assert [m.ref for m in answering('When is the team meeting?', meeting, ROBOT)] == ['semantic:1']
    assert [m.ref for m in answering('Hey assistant, what time does the shop close?', meeting, ROBOT)] == \
        ['semantic:2']
    # "when" later in a question that asks where is not asking for a time
    keys = [MemoryItem('semantic:4', 'Joe put the keys in the drawer.')]
    assert [m.ref for m in answering('Robot, where did Joe put the keys when he came in?', keys, ROBOT)] == \
        ['semantic:4']


def test_people_a_question_names() -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Kwame')]
    assert people_asked("Robot, tell me, what is Rahul's hometown?", mems, ROBOT) == {'rahul'}
    assert people_asked('okay robot how does kwame like to spend weekends', mems, ROBOT) == {'kwame'}
    assert people_asked('Robot, is the party on Friday? What did they say on TV?', mems, ROBOT) == set()
    assert people_asked('Where is my laptop?', mems, ROBOT) == set()


def test_a_claim_about_a_named_person_comes_from_their_memories() -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Kwame (attributes: plays chess)'),
            MemoryItem('semantic:1', "Rahul's birthday is in March."),
            MemoryItem('semantic:2', 'Kwame works as a carpenter.'),
            MemoryItem('semantic:3', '<face_1> comes from Accra.')]
    q = "Robot, in which month is Kwame's birthday?"
    assert 'memories of kwame' in misattributed("Kwame's birthday is in March.", q, mems, ROBOT)
    assert misattributed("I don't know.", q, mems, ROBOT) == ''
    assert misattributed('Kwame comes from Accra.', "Robot, where is Kwame's hometown?", mems, ROBOT) == ''
    assert misattributed('He plays chess.', 'Robot, what does Kwame do for fun?', mems, ROBOT) == ''
    assert misattributed("Rahul's birthday is in March.", "Robot, when is Rahul's birthday?", mems, ROBOT) == ''
    # nothing is known of Ana: any claim about her is unfounded; a statement to the robot asks nothing
    assert misattributed('Ana works as a nurse.', 'Robot, what does Ana do?', mems, ROBOT)
    assert misattributed('Okay, I will remember that.', 'Robot, remember that Ana is a nurse.', mems, ROBOT) == ''
    # one person's fact told of another the robot knows is no answer; naming who said it is
    both = mems + [MemoryItem('profile:<face_4>', '<face_4> is Noor'),
                   MemoryItem('semantic:4', '<face_1> said: I train for badminton twice a week.')]
    q = 'Robot, what does Kwame train for?'
    assert misattributed('Noor trained for badminton twice a week.', q, both, ROBOT) == \
        'reply tells of noor, not of kwame, whom the question asks about'
    assert misattributed('Kwame trains for badminton twice a week.', q, both, ROBOT) == ''


def test_a_refusal_stands_unless_a_memory_answers() -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Kwame'),
            MemoryItem('semantic:1', '[2026-03-02 08:00:00]--[2026-03-02 08:00:05]: a person said: I dropped my '
                                     'laptop in the green basket.'),
            MemoryItem('semantic:2', 'Kwame likes cycling on weekends.'),
            MemoryItem('semantic:3', 'Mei has a birthday in May.')]
    refuse = "I don't remember that."
    assert 'laptop' in unfounded_refusal(refuse, 'Robot, where is my laptop?', mems, ROBOT)
    # nothing about the pool; and neither a person's name nor the robot's is what a question is about
    assert unfounded_refusal(refuse, 'Robot, any news about the swimming pool?', mems, ROBOT) == ''
    assert unfounded_refusal('The laptop is in the green basket.', 'Robot, where is my laptop?', mems, ROBOT) == ''
    # Mei's birthday does not answer a question about Kwame's; Kwame's weekends do answer one
    assert unfounded_refusal("I don't know.", "Robot, when is Kwame's birthday?", mems, ROBOT) == ''
    assert 'weekends' in unfounded_refusal("I don't know.", 'Robot, how does Kwame spend weekends?', mems, ROBOT)
    only_asked = [MemoryItem('semantic:2', 'someone typed: Where is my laptop?')]
    assert unfounded_refusal(refuse, 'Robot, where is my laptop?', only_asked, ROBOT) == ''


def test_what_someone_said_in_a_bystanders_presence_is_not_about_the_bystander(embed) -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Kwame'), MemoryItem('profile:<face_2>', '<face_2> is Mei'),
            MemoryItem('episodic:1', 'saw <face_2> talking, <face_1>; bedroom, desk, desk; heard "I spend my '
                                     'weekends birdwatching."')]
    q = 'Robot, how does Kwame spend his weekends?'
    assert answering(q, mems, ROBOT) == [] and extractive_answer(q, mems, embed, ROBOT) == ''
    assert misattributed('Kwame spends weekends birdwatching.', q, mems, ROBOT)
    said = extractive_answer('Robot, how does Mei spend her weekends?', mems, embed, ROBOT)
    assert said == 'From memory: Mei said: I spend my weekends birdwatching.'
    # nor is what Mei said to Kwame, calling him by name
    called = [mems[0], MemoryItem('recent:2', '<face_2> said: Kwame, I really enjoyed the cycling race.')]
    weekends = 'Robot, how does Kwame like to spend weekends?'
    assert 'memories of kwame' in misattributed('Kwame enjoys cycling.', weekends, called, ROBOT)
    assert misattributed('Kwame comes from Accra.', "Robot, where is Kwame from?",
                         [mems[0], MemoryItem('recent:3', '<face_1> said: I come from Accra.')], ROBOT) == ''


def test_a_claim_about_a_thing_comes_from_memories_of_that_thing(embed) -> None:
    mems = [MemoryItem('semantic:1', 'The earrings are in the green basket.'),
            MemoryItem('semantic:2', 'The house keys are under the bed.')]
    q = 'Robot, where are the house keys?'
    assert 'what was asked about' in misattributed('The house keys are in the green basket.', q, mems, ROBOT)
    assert misattributed('They are under the bed.', q, mems, ROBOT) == ''
    assert misattributed('Okay.', 'Robot, hello there', mems, ROBOT) == ''


def test_a_quote_of_what_a_radio_said_comes_from_the_radio(embed) -> None:
    from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER

    mems = [MemoryItem('episodic:1', 'saw <face_1> talking; balcony; heard "Hey assistant, any news about the ferry?"'),
            MemoryItem('semantic:2', f'{UNSEEN_SPEAKER} said: The ferry to the island is cancelled.')]
    said = extractive_answer('Robot, what did they say on TV about the ferry?', mems, embed, ROBOT)
    assert 'cancelled' in said and 'any news' not in said, said
    # asked what a person said, their question is the answer only when they said nothing else
    assert extractive_answer('Robot, what did the person on the balcony say?', mems[:1], embed, ROBOT) == \
        'From memory: a person said: Any news about the ferry?'


def test_a_refusal_to_say_what_someone_said_stands_only_when_nothing_they_said_is_remembered() -> None:
    from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER

    mems = [MemoryItem('profile:<face_1>', '<face_1> is Joe'),
            MemoryItem('episodic:1', 'saw <face_2> talking; hall; heard "Bimbloo F2 now."'),
            MemoryItem('semantic:2', f'{UNSEEN_SPEAKER} said: Ask not what your country can do for you.')]
    refuse = "I don't remember that."
    assert unfounded_refusal(refuse, 'Robot, what did the man on the radio say?', mems, ROBOT)
    assert unfounded_refusal(refuse, 'Robot, what did the man in the video say?', mems, ROBOT)
    # nothing Joe said is remembered; and a question that names no speaker is not read as one about the radio
    assert unfounded_refusal(refuse, 'Robot, what did Joe say?', mems, ROBOT) == ''
    assert unfounded_refusal(refuse, 'Robot, what did Ana say about the party?', mems, ROBOT) == ''


def test_a_device_heard_while_people_were_in_view_is_a_voice_no_face_spoke_with() -> None:
    # a TV heard with people in view is stored under its voice id; a voice that called the robot is a person's
    mems = [MemoryItem('profile:<face_2>', '<face_2>'),
            MemoryItem('semantic:1', '<voice_2> said: Okay robot, I react badly to shellfish.'),
            MemoryItem('semantic:2', '<voice_1> said: The ferry to the island is cancelled.'),
            MemoryItem('semantic:3', '<face_2> said: I celebrate my birthday in June.')]
    q = 'Could you repeat what the television said?'
    assert [m.ref for m in said_by(q, mems, strict=True, robot=ROBOT)] == ['profile:<face_2>', 'semantic:2']
    assert unfounded_refusal("I don't remember that.", q, mems, ROBOT)
    # without a device's voice there is nothing the TV said to quote
    assert unfounded_refusal("I don't remember that.", q, [mems[0], mems[1], mems[3]], ROBOT) == ''


def test_an_answer_to_what_someone_said_says_what_they_said() -> None:
    from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER

    radio = 'Robot, what did the man on the radio say?'
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Joe'),
            MemoryItem('semantic:1', "Joe's car keys are in the blue drawer."),
            MemoryItem('semantic:2', f'<voice_1>, {UNSEEN_SPEAKER} said: And so my fellow Americans.'),
            MemoryItem('semantic:3', '<face_1> said: The pool closes at six.')]
    # made of the question's words and a name from another memory: grounded, but not what the radio said
    assert unquoted('I heard that the man on the radio is Joe.', radio, mems, ROBOT).startswith(
        'reply does not say what was said')
    assert unquoted('The man on the radio said: my fellow Americans.', radio, mems, ROBOT) == ''
    assert unquoted('Joe said the pool closes at six.', 'Robot, what did Joe say?', mems, ROBOT) == ''
    assert unquoted('Joe said the keys are in the blue drawer.', 'Robot, what did Joe say?', mems, ROBOT)
    # nothing the radio said is remembered (yet): there is nothing to answer with; a refusal is always fine
    without = [m for m in mems if m.ref != 'semantic:2']
    assert unquoted('I heard that the man on the radio is Joe.', radio, without, ROBOT) == \
        'nothing the one asked about said is remembered'
    assert unquoted("I don't remember that.", radio, without, ROBOT) == ''
    assert unquoted('The keys are in the blue drawer.', 'Robot, where are the keys?', mems, ROBOT) == ''


def test_the_same_words_retrieved_twice_are_one_quote(embed) -> None:
    """A fact and the recent turn it came from say the same: the second quote is the next thing the radio said."""
    from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER

    mems = [MemoryItem('semantic:5', f'[2026-01-05 09:00:21]--[2026-01-05 09:00:23]: {UNSEEN_SPEAKER} said: Ask not!'),
            MemoryItem('recent:5', f'{UNSEEN_SPEAKER} said: Ask not!'),
            MemoryItem('semantic:4', f'<voice_1>, {UNSEEN_SPEAKER} said: And so my fellow Americans.'),
            MemoryItem('semantic:3', "Joe's car keys are in the blue drawer.")]
    said = extractive_answer('Robot, what did the man on the radio say?', mems, embed, ROBOT)
    assert 'Ask not!' in said and 'fellow Americans' in said and said.count('Ask not') == 1, said


def test_a_scene_label_is_not_what_was_said_and_a_possessive_is_no_news() -> None:
    from lightomni_ros.core.reflex.grounding import reply_problem

    mems = [MemoryItem('episodic:1', 'saw <face_1> talking, <face_2>; laptop, desk; heard "I was raised in Hanoi."')]
    assert answering('Robot, where did the laptop end up?', mems, ROBOT) == []
    q = "Robot, what was Rahul's opinion on the cycling race?"
    told = [MemoryItem('semantic:1', 'Rahul plays basketball.')]
    assert 'adds nothing' in reply_problem('Rahul is on the cycling race.', q, told)


def test_a_quote_about_a_topic_is_about_that_topic(embed) -> None:
    from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER

    mems = [MemoryItem('semantic:1', f'{UNSEEN_SPEAKER} said: The ferry to the island is cancelled.'),
            MemoryItem('episodic:2', 'saw Kwame, Rahul; studio; heard "Petrol prices will rise by ten cents."')]
    q = 'Robot, what did they say on TV about petrol prices?'
    assert 'ten cents' in extractive_answer(q, mems, embed, ROBOT)       # the TV was heard with people in view
    assert unfounded_refusal("I don't remember that.", q, mems, ROBOT)
    pool = 'Robot, what did they say on TV about the swimming pool?'
    assert unfounded_refusal("I don't remember that.", pool, mems, ROBOT) == ''


def test_a_quote_says_the_sentences_that_answer_and_who_said_them() -> None:
    from lightomni_ros.core.reflex.answering import answer_part
    from lightomni_ros.core.reflex.grounding import stem

    topic = {stem('sport'), stem('play')}
    intro = "Barack said: Hi robot, I'm Barack. I love playing basketball on weekends."
    assert answer_part(intro, topic) == 'Barack said: I love playing basketball on weekends.'
    # scene labels and bystanders are no answer; who was talking said it
    episode = 'I saw Joe talking, Barack; drum, gong and heard "I play chess. My keys are in the drawer."'
    assert answer_part(episode, topic) == 'Joe said: I play chess.'
    assert answer_part('I saw nobody in view, prison and heard "Basketball is what I play."', topic) == \
        'I heard: Basketball is what I play.'
    # the next sentence goes on about the one asked about
    laptop = answer_part('Kwame said: I lost my laptop. It is in the kitchen. I like tea.', {stem('laptop')})
    assert laptop == 'Kwame said: I lost my laptop. It is in the kitchen.'
    # neither the call to the robot nor the opening of a request to remember answers anything
    thermos = 'a person said: Robot, tell me, keep in mind that my thermos is in the green basket.'
    assert answer_part(thermos, {stem('thermos')}, ['robot']) == 'a person said: My thermos is in the green basket.'
    # told only by what was seen: the episode stays whole; asked what was said (no topic): all of it
    assert answer_part('I saw a red kite and heard "look up"', {stem('kite')}) == 'I saw a red kite and heard "look up"'
    assert answer_part(intro, set()) == intro


def test_a_second_quote_that_adds_nothing_is_not_said(embed) -> None:
    mems = [MemoryItem('profile:<face_0>', '<face_0> is Barack'),
            MemoryItem('semantic:9', "<face_0> said: Hi robot, I'm Barack. I love playing basketball on weekends."),
            MemoryItem('episodic:1', 'saw nobody in view, prison; heard "Hi robot, I\'m Barack. I love playing '
                                     'basketball on weekends."; answered "Nice to meet you, Barack."')]
    reply = extractive_answer('Robot, what sport does Barack like to play?', mems, embed, ROBOT)
    assert reply == 'From memory: Barack said: I love playing basketball on weekends.', reply


def test_two_quotes_of_one_speaker_name_the_speaker_once(embed) -> None:
    radio = 'an unseen speaker (radio, TV, phone or out of sight)'
    mems = [MemoryItem('semantic:1', f'{radio} said: Ask not!'),
            MemoryItem('semantic:2', f'{radio} said: And so my fellow Americans.')]
    said = extractive_answer('Robot, what did the man on the radio say?', mems, embed, ROBOT)
    assert said.count('an unseen speaker said:') == 1 and 'Ask not!' in said and 'fellow Americans' in said, said


def test_of_two_memories_that_tell_the_same_thing_the_newest_is_quoted(embed) -> None:
    mems = [MemoryItem('semantic:1', '[2026-03-02 09:00:00]--[2026-03-02 09:00:04]: <face_1> said: Heads up, the choir '
                                     'practice is at three.'),
            MemoryItem('semantic:2', '[2026-03-02 09:30:00]--[2026-03-02 09:30:04]: The choir practice is at nine.'),
            MemoryItem('semantic:3', '[2026-03-02 08:00:00]--[2026-03-02 08:00:04]: The bus leaves at noon.')]
    reply = extractive_answer('Robot, when do we have the choir practice?', mems, embed, ROBOT)
    assert 'nine' in reply and 'three' not in reply, reply
    # the same memories in another order, and the older one said again later: the repeat is the newest
    again = [mems[1], MemoryItem('semantic:1', '[2026-03-02 09:00:00]--[2026-03-02 09:45:00]: <face_1> said: Heads '
                                               'up, the choir practice is at three.')]
    assert said_at(again[1]) == '2026-03-02 09:45:00'
    reply = extractive_answer('Robot, when do we have the choir practice?', again, embed, ROBOT)
    assert 'three' in reply and 'nine' not in reply, reply
    # a recent interaction (no time) is the newest of all
    assert said_at(MemoryItem('recent:4', '<face_1> said: it is at ten')) > said_at(again[1])


def test_a_claim_about_another_thing_than_the_one_asked_about_is_no_answer() -> None:
    mems = [MemoryItem('profile:<face_0>', '<face_0> is Merak'),
            MemoryItem('semantic:1', "Merak's wallet is in the closet."),
            MemoryItem('semantic:2', "Merak's book is in the cellar.")]
    q = 'Robot, where did Merak put the book?'
    # every word is Merak's, but none is of what Merak's memories tell of the book
    assert 'memories of merak' in misattributed("Merak's wallet is in the closet.", q, mems, ROBOT)
    assert 'none of what was asked about' in off_topic("Merak's wallet is in the closet.", q, mems, ROBOT)
    assert off_topic("Merak's book is in the cellar.", q, mems, ROBOT) == ''
    assert off_topic('Merak put it in the cellar.', q, mems, ROBOT) == '', 'the verb asked about is told'
    # refusals, confirmations, questions about a person only and what someone said are not checked
    for reply in ("I don't remember that.", 'Okay, I will remember that.'):
        assert off_topic(reply, q, mems, ROBOT) == ''
    assert off_topic('You are Merak.', 'Robot, who am I?', mems, ROBOT) == ''
    assert off_topic('Merak said: hello.', 'Robot, what did Merak say?', mems, ROBOT) == ''
    assert off_topic("Merak's wallet is in the closet.", 'Merak put the book away.', mems, ROBOT) == ''


def test_a_kind_of_thing_asked_for_is_answered_in_the_words_that_say_it() -> None:
    mems = [MemoryItem('profile:<face_5>', '<face_5> is Giulia'),
            MemoryItem('semantic:1', 'Giulia works as a nurse.'),
            MemoryItem('semantic:2', 'Giulia has a cat called Miso.')]
    q = "Robot, what is Giulia's profession?"
    assert off_topic('Giulia works as a nurse.', q, mems, ROBOT) == ''
    assert off_topic('Giulia has a cat called Miso.', q, mems, ROBOT) == \
        'reply tells of none of what was asked about (profession)'
    assert [m.ref for m in answering(q, mems, ROBOT)] == ['semantic:1']
    assert unfounded_refusal("I don't know.", q, mems, ROBOT) == 'refused, but a memory tells of profession'
    assert leaves_out('Giulia works as a nurse.', q, mems, ROBOT) == ''


@pytest.mark.parametrize('question, answer', [
    ('Robot, which sport is Giulia into?', 'semantic:3'),
    ('Robot, which city did Giulia grow up in?', 'semantic:4'),
    ('Robot, which month was Giulia born in?', 'semantic:5'),
    ('Robot, does Giulia have any animals?', 'semantic:2'),
    ('Robot, what does Giulia do for fun?', 'semantic:6'),
    ('Robot, which food must Giulia avoid?', 'semantic:7'),
    # "born" asks for a place after "where", for a month after "when"
    ('Robot, where was Giulia born?', 'semantic:4'),
    ('Robot, when was Giulia born?', 'semantic:5'),
])
def test_each_kind_of_thing_is_found_in_the_words_that_say_it(question: str, answer: str) -> None:
    # the training split's wordings of the attribute questions over the forms the memory pass writes; "which" and
    # "must" ask, they are not what is asked about
    mems = [MemoryItem('profile:<face_5>', '<face_5> is Giulia'),
            MemoryItem('semantic:1', 'Giulia works as a nurse.'),
            MemoryItem('semantic:2', 'Giulia has a cat called Miso.'),
            MemoryItem('semantic:3', 'Giulia plays badminton twice a week.'),
            MemoryItem('semantic:4', 'Giulia comes from Porto.'),
            MemoryItem('semantic:5', 'Giulia has a birthday in May.'),
            MemoryItem('semantic:6', 'Giulia enjoys chess.'),
            MemoryItem('semantic:7', 'Giulia is allergic to peanuts.')]
    assert [m.ref for m in answering(question, mems, ROBOT)] == [answer]
    assert unfounded_refusal("I don't know.", question, mems, ROBOT).startswith('refused, but a memory tells of')
    told = next(m.text for m in mems if m.ref == answer)
    assert off_topic(told, question, mems, ROBOT) == ''
    assert off_topic('Giulia works as a nurse.', question, mems, ROBOT) != ''


def test_what_a_radio_said_is_grounded_in_the_unseen_speaker_memories() -> None:
    # no memory says "radio": the quote question's speaker is the unseen one, and the reply is checked against it
    mems = [MemoryItem('profile:<face_0>', '<face_0> is Barack'),
            MemoryItem('recent:4', '<voice_1>, an unseen speaker (radio, TV, phone or out of sight) said: '
                                   'And so my fellow Americans.', 0.5),
            MemoryItem('recent:1', '<face_0> said: I love playing basketball on weekends.', 0.4)]
    q = 'Robot, what did the man on the radio say?'
    assert misattributed('The man on the radio said: "And so my fellow Americans."', q, mems, ROBOT) == ''
    # words only Barack said are not the radio's
    assert misattributed('The man on the radio said: "I love playing basketball."', q, mems, ROBOT)


def test_the_response_prompt_shows_what_answers_and_the_names_it_needs() -> None:
    from types import SimpleNamespace

    from lightomni_ros.core.reflex.config import LatentConfig, ResponseConfig
    from lightomni_ros.core.reflex.engine import ReflexEngine
    from lightomni_ros.core.reflex.types import SegmentInput

    engine = SimpleNamespace(cfgs=SimpleNamespace(response=ResponseConfig(), latent=LatentConfig()))
    mems = [MemoryItem('profile:<face_0>', '<face_0> is Barack (updated_by: introduction)'),
            MemoryItem('profile:<face_1>', '<face_1> is Joe (updated_by: introduction)'),
            MemoryItem('semantic:3', "[2026-01-05 09:00:04]--[2026-01-05 09:00:11]: Joe's car keys are in the blue "
                                     "drawer.", 0.6),
            MemoryItem('episodic:2', '[2026-01-05 09:00:04]--[2026-01-05 09:00:11]: saw Joe talking, Barack; heard '
                                     '"my car keys are in the blue drawer"', 0.5),
            MemoryItem('semantic:5', '[2026-01-05 09:00:20]--[2026-01-05 09:00:24]: The meeting is on Thursday.', 0.55),
            MemoryItem('semantic:6', '[2026-01-05 09:00:30]--[2026-01-05 09:00:34]: <face_0> likes to drink tea.', 0.3),
            MemoryItem('semantic:7', '[2026-01-05 09:00:40]--[2026-01-05 09:00:44]: Joe likes to drink coffee.', 0.4)]
    keys = SegmentInput(segment_id=1, start=0.0, end=1.0, transcript="Robot, where are Joe's car keys?")
    shown = ReflexEngine.response_memories(engine, mems, keys)
    # what answers, and Joe's name (asked of); Barack, a bystander of the episode named in its words, is left out
    assert [m.ref for m in shown] == ['profile:<face_1>', 'semantic:3', 'episodic:2']
    # asked by Barack about himself: his drink, and his profile (in view, and the id the fact names)
    drink = SegmentInput(segment_id=2, start=0.0, end=1.0, transcript='Robot, which drink do I like?',
                         face_ids=['<face_0>'], speaker_face='<face_0>')
    assert [m.ref for m in ReflexEngine.response_memories(engine, mems, drink)] == ['profile:<face_0>', 'semantic:6']
    # nothing answers: the closest, as before
    none = SegmentInput(segment_id=3, start=0.0, end=1.0, transcript='Robot, what is the capital of Peru?')
    assert [m.ref for m in ReflexEngine.response_memories(engine, mems, none)][-4:] == \
        ['semantic:3', 'semantic:5', 'episodic:2', 'semantic:7']


def test_the_response_prompt_shows_the_newest_place_of_a_thing_moved() -> None:
    from types import SimpleNamespace

    from lightomni_ros.core.reflex.answering import newest_telling
    from lightomni_ros.core.reflex.config import LatentConfig, ResponseConfig
    from lightomni_ros.core.reflex.engine import ReflexEngine
    from lightomni_ros.core.reflex.types import SegmentInput

    mems = [MemoryItem('profile:<face_0>', '<face_0> is Merak'),
            MemoryItem('semantic:1', '[2026-01-05 09:01:00]--[2026-01-05 09:01:04]: <face_0> said: I put my umbrella '
                                     'in the car.', 0.7),
            MemoryItem('semantic:2', '[2026-01-05 09:09:00]--[2026-01-05 09:09:04]: <face_0> said: I put my umbrella '
                                     'in the closet.', 0.6),
            MemoryItem('semantic:3', '[2026-01-05 09:05:00]--[2026-01-05 09:05:04]: The ticket is in the garage.', 0.5)]
    q = "Robot, where is Merak's umbrella?"
    assert [m.ref for m in newest_telling(q, mems[1:3], mems)] == ['semantic:2']
    # what someone said is quoted whole, every time they said it
    said = 'Robot, what did Merak say?'
    assert [m.ref for m in newest_telling(said, mems[1:3], mems)] == ['semantic:1', 'semantic:2']
    # a recent interaction outlives its consolidation: older than a fact stored since, it supersedes nothing
    note = MemoryItem('recent:9', '<face_0> said: I put my umbrella in the car.', 0.8, said='2026-01-05 09:01:04')
    assert [m.ref for m in newest_telling(q, [note, mems[2]], mems)] == ['semantic:2']
    engine = SimpleNamespace(cfgs=SimpleNamespace(response=ResponseConfig(), latent=LatentConfig()))
    seg = SegmentInput(segment_id=1, start=0.0, end=1.0, transcript=q)
    assert [m.ref for m in ReflexEngine.response_memories(engine, mems, seg)] == ['profile:<face_0>', 'semantic:2']


def test_a_place_of_another_thing_of_the_same_person_is_no_answer() -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Merak'),
            MemoryItem('semantic:487', "[2026-01-05 09:01:00]--[2026-01-05 09:01:04]: Merak's umbrella is in the car.",
                       0.6),
            MemoryItem('recent:3', '<face_1> said: I put my wallet in the closet.', 0.5)]
    q = 'Robot, where did Merak put the umbrella?'
    assert 'memories of merak' in misattributed("Merak's umbrella is in the closet.", q, mems, ROBOT)
    assert misattributed("Merak's umbrella is in the car.", q, mems, ROBOT) == ''
    # nothing of Merak's tells of the umbrella: all of Merak's memories may ground the reply, as before
    assert misattributed("Merak's umbrella is in the closet.", q, mems[:1] + mems[2:], ROBOT) == ''


def test_a_second_chance_reply_keeps_what_the_answer_says_of_the_topic() -> None:
    """A beam search's reply must not drop words of what was asked that the answer holds, and without one, refuse."""
    ignore = ['robot']
    race = [MemoryItem('recent:1', '<face_1> said: Freya, I really enjoyed the cycling race.'),
            MemoryItem('profile:<face_1>', '<face_1> is Olek')]
    asked = "What was Olek's opinion on the cycling race?"
    assert 'race' in leaves_out('Olek enjoyed cycling.', asked, race, ignore)
    assert not leaves_out('Olek enjoyed the cycling race.', asked, race, ignore)
    # a word of the question that no answer says is not required
    tennis = [MemoryItem('semantic:1', 'Ana plays tennis.')]
    assert not leaves_out('Ana plays tennis.', 'What sport does Ana play?', tennis, ignore)
    lunch = [MemoryItem('recent:3', '<face_3> said: They set lunch for half past six.')]
    moon = 'Robot, how far away is the moon?'
    assert leaves_out('The moon is at half past six.', moon, lunch, ignore) == \
        'no memory answers, and the reply is no refusal'
    assert not leaves_out("I don't remember that.", moon, lunch, ignore)
    # what asks is the caller's reading (the heads read a question into speech that lost its question mark)
    assert not leaves_out('The moon is at half past six.', moon, lunch, ignore, asked=False)
    assert leaves_out('The moon is at half past six.', 'robot the moon far away', lunch, ignore, asked=True)


def test_a_claim_needs_a_memory_that_answers() -> None:
    """Any reply that claims something needs a memory that answers; a refusal or a confirmation does not."""
    ignore = ['robot']
    seen = [MemoryItem('profile:<face_3>', '<face_3> is Freya'),
            MemoryItem('episodic:2', '[08:21:39]--[08:21:59]: saw Freya, Giulia, Mateo; living room, studio couch'),
            MemoryItem('semantic:1', '<face_3> works as a carpenter.')]
    weekends = 'Excuse me robot, how does Freya like to spend weekends?'
    assert unanswered_claim('Freya likes to spend weekends at the studio couch.', weekends, seen, ignore) == \
        'no memory answers, and the reply is no refusal'
    assert not unanswered_claim("I don't remember that.", weekends, seen, ignore)
    assert not unanswered_claim('Freya works as a carpenter.', 'Robot, what does Freya do for a living?', seen,
                                ignore)
    hobby = seen + [MemoryItem('semantic:4', 'Freya enjoys painting watercolours.')]
    assert not unanswered_claim('Freya enjoys painting watercolours.', weekends, hobby, ignore)
    # told something, the robot confirms it; asked what was said, the quote checks answer for it
    told = 'Robot, keep in mind that the torch is under the bed.'
    assert not unanswered_claim('Okay, I will remember that.', told, seen, ignore, asked=True)
    assert not unanswered_claim('Freya said: "Hello."', 'Robot, what did Freya say?', seen, ignore)


def test_a_second_chance_reply_is_not_stitched_from_several_memories() -> None:
    """What a beam search's reply adds must all be in one memory that answers (stems; names and the question aside)."""
    ignore = ['robot']
    memories = [MemoryItem('episodic:4', '[09:00--09:01]: saw nobody in view; laptop'),
                MemoryItem('semantic:2', '<face_1> comes from Lisbon.'),
                MemoryItem('profile:<face_1>', '<face_1> is Kwame')]
    asked = 'Robot, any idea where the laptop ended up?'
    assert one_source('The laptop comes from Kwame.', asked, memories, ignore)
    tennis = [MemoryItem('recent:3', '<face_3> said: I train for table tennis twice a week.'),
              MemoryItem('profile:<face_3>', '<face_3> is Pablo')]
    assert not one_source('Pablo trained for table tennis.', 'Robot, what does Pablo train for?', tennis, ignore)
    assert not one_source("I don't remember that.", asked, memories, ignore)


def test_words_that_ask_nothing_get_the_confirmation_they_ask_for() -> None:
    """A reminder asked for, something to keep, or only something told: each has its own confirmation."""
    from lightomni_ros.core.reflex.answering import confirmation
    from lightomni_ros.core.reflex.grounding import greets_stranger

    assert confirmation('Please remind me in ten minutes to check the oven.', reminder=True) == \
        'Okay, I will remind you.'
    assert confirmation('Keep in mind that lunch is at five.') == 'Okay, I will remember that.'
    assert confirmation('Robot, my family still lives in Dublin.') == 'Thanks, I will keep that in mind.'
    # a greeting by a name the words give nobody is refused; one the words introduce is not
    assert greets_stranger('Nice to meet you, Dublin.', 'Robot, my family still lives in Dublin.')
    assert not greets_stranger('Nice to meet you, Mateo.', "Robot, I'm Mateo, I just moved in.")
    assert not greets_stranger('Nice to meet you, Sofia.', 'Robot, here is my cousin Sofia.')
    # an introduction speech recognition garbled still says the name; a name nobody said is refused
    assert not greets_stranger('Nice to meet you, Mateo.', 'robot im mateo i just moved in')
    assert greets_stranger('Nice to meet you, Rahul.', 'hey assistant were on earth is my thermos')


def test_asked_for_someones_last_words_their_newest_turn_answers() -> None:
    """Asked "could you repeat what Tariq said?", the robot quoted his words of three minutes before."""
    from lightomni_ros.core.reflex.answering import last_turn, last_words

    unseen = 'an unseen speaker (radio, TV, phone or out of sight)'
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Tariq'), MemoryItem('profile:<face_2>', '<face_2> is Leila'),
            MemoryItem('recent:1', '<face_1> said: The cycling race was an absolute mess.', said='2026-07-14 09:06:56'),
            MemoryItem('recent:2', '<face_2> said: Hello there.', said='2026-07-14 09:08:00'),
            MemoryItem('recent:3', '<face_1> said: The power cut was a mess.', said='2026-07-14 09:09:44'),
            MemoryItem('recent:4', f'<voice_1>, {unseen} said: And so my fellow Americans.',
                       said='2026-07-14 09:10:01'),
            MemoryItem('recent:5', f'{unseen} said: Ask not!', said='2026-07-14 09:10:03'),
            MemoryItem('recent:6', f'<voice_1>, {unseen} said: What your country can do.', said='2026-07-14 09:10:10')]

    def refs(question: str) -> list[str] | None:
        found = last_words(question, mems, ROBOT)
        return None if found is None else [m.ref for m in found]
    assert refs('Okay robot, could you repeat what Tariq said?') == ['recent:3']
    assert refs('Excuse me robot, tell me the last thing Leila said.') == ['recent:2']
    # a speech heard in pieces, one after the other, is one turn
    assert refs('Robot, what did the man on the radio say?') == ['recent:4', 'recent:5', 'recent:6']
    # a topic asks for the words about it, however old; a question about nobody's words is no such question
    assert refs('What did Tariq say about the cycling race?') is None
    assert refs('Robot, where is the laptop?') is None
    assert refs('What did Mateo just say?') is None
    # the profiles stay (they name the faces); the rest is the turn, or everything when none is asked for
    assert [m.ref for m in last_turn('Could you repeat what Tariq said?', mems, ROBOT)] == \
        ['profile:<face_1>', 'profile:<face_2>', 'recent:3']
    assert last_turn('What did Tariq say about the cycling race?', mems, ROBOT) == mems


def test_a_thing_among_the_frame_labels_does_not_supersede_where_it_was_put() -> None:
    """Asked "where is the laptop?", the robot said "in the bedroom" from a later episode that saw both."""
    from types import SimpleNamespace

    from lightomni_ros.core.reflex.answering import newest_telling
    from lightomni_ros.core.reflex.config import LatentConfig, ResponseConfig
    from lightomni_ros.core.reflex.engine import ReflexEngine
    from lightomni_ros.core.reflex.types import SegmentInput

    told = MemoryItem('semantic:1', '[2026-07-17 09:00:00]--[2026-07-17 09:00:05]: The laptop is on top of the fridge.')
    seen = MemoryItem('episodic:3', '[2026-07-17 09:05:00]--[2026-07-17 09:05:05]: saw <face_1>, <face_2>; laptop, '
                                    'bedroom')
    heard = MemoryItem('episodic:4', '[2026-07-17 09:06:00]--[2026-07-17 09:06:05]: saw <face_1> talking; kitchen; '
                                     'heard "I moved the laptop to the bedroom."')
    q = 'Robot, can you tell me where the laptop is?'
    assert [m.ref for m in newest_telling(q, [told, seen], [told, seen])] == ['semantic:1', 'episodic:3']
    # words heard later do move it (and tell of everything the sighting did)
    assert [m.ref for m in newest_telling(q, [told, seen, heard], [told, seen, heard])] == ['episodic:4']
    # and asked what Tariq said, the prompt shows his newest words only
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Tariq'),
            MemoryItem('recent:1', '<face_1> said: The cycling race was an absolute mess.', 0.9,
                       said='2026-07-14 09:06:56'),
            MemoryItem('recent:3', '<face_1> said: The power cut was a mess.', 0.5, said='2026-07-14 09:09:44')]
    engine = SimpleNamespace(cfgs=SimpleNamespace(response=ResponseConfig(), latent=LatentConfig()))
    seg = SegmentInput(segment_id=1, start=0.0, end=1.0, transcript='Okay robot, could you repeat what Tariq said?')
    assert [m.ref for m in ReflexEngine.response_memories(engine, mems, seg)] == ['profile:<face_1>', 'recent:3']


def test_asked_where_someone_put_a_thing_only_what_tells_of_that_thing_answers(embed) -> None:
    mems = [MemoryItem('profile:<face_0>', '<face_0> is Merak'),
            MemoryItem('recent:11', '<face_0> said: I put my umbrella in the car.', said='2026-03-02 09:00:50'),
            MemoryItem('recent:13', '<face_0> said: I put my charger in the attic.', said='2026-03-02 09:01:04')]
    # the newer words put another thing somewhere: they neither answer nor supersede where the umbrella went
    reply = extractive_answer('Robot, where did Merak put the umbrella?', mems, embed, ROBOT)
    assert 'car' in reply and 'attic' not in reply, reply
    assert [m.ref for m in answering('Robot, where did Merak put the umbrella?', mems, ROBOT)] == ['recent:11']
    # nothing of the book was heard: no quote of another thing stands in for an answer
    assert extractive_answer('Robot, where did Merak put the book?', mems, embed, ROBOT) == ''
    # asked what was put somewhere, the verb is still part of what is asked about
    assert 'recent:13' in [m.ref for m in answering('Robot, what did Merak put in the attic?', mems, ROBOT)]


def test_asked_where_the_thing_is_what_follows_its_article_and_the_doer_is_a_person(embed) -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Joe'),
            MemoryItem('recent:6', '<face_1> said: I bought my ticket in the attic.', said='2026-03-02 09:00:25'),
            MemoryItem('recent:19', '<face_1> said: I bought my keys in the basket.', said='2026-03-02 09:01:21'),
            MemoryItem('recent:4', '<voice_3>, an unseen speaker, said: My name is Coffee and I work as a pilot.',
                       said='2026-03-02 09:00:14')]
    # speech recognition heard "put" as "bought": the verb is still not what is asked about
    reply = extractive_answer('Robot, where did Joe bought the ticket?', mems, embed, ROBOT)
    assert 'attic' in reply and 'basket' not in reply, reply
    # a name speech recognition wrote as a word is still the one asked about: Joe's wallet is not Kofi's
    assert people_asked('Robot, where did coffee put the wallet?', mems, ROBOT) == {'coffee'}
    mems.append(MemoryItem('recent:29', '<face_1> said: I bought my wallet in the attic.', said='2026-03-02 09:03:00'))
    assert answering('Robot, where did coffee put the wallet?', mems, ROBOT) == []
    assert people_asked('Robot, where did you put my keys?', mems, ROBOT) == set()


def test_what_someone_said_of_themself_is_not_told_in_the_robots_voice() -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Joe'),
            MemoryItem('recent:6', '<face_1> said: I bought my ticket in the attic.')]
    assert 'of the robot' in in_own_voice('I bought the ticket in the attic.', mems)
    for fine in ('Joe bought the ticket in the attic.', "I don't know.", 'I heard Joe say it is in the attic.',
                 'I put it on the list.'):
        assert in_own_voice(fine, mems) == '', fine
