# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The response check (grounding.py): what a reply may say, and a memory as a sentence to say."""

from __future__ import annotations

import pytest

from lightomni_ros.core.reflex.grounding import (asks, evidence, face_names, holds_only_a_question, is_quote_question,
                                                 names_in, opens_refusal, quoting_within, reply_problem, said_by,
                                                 speakable)
from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER, MemoryItem


MEMORIES = [
    MemoryItem('profile:<face_3>', '<face_3> is Maria (persona: a nurse)'),
    MemoryItem('semantic:1', 'the spare battery is charging in the kitchen', 0.4),
    MemoryItem('semantic:2', '<face_3> said: I walk my dog every morning at seven', 0.5),
    MemoryItem('episodic:7', 'saw a person, a desk; heard "the printer on floor two is broken"; '
                             'answered "The scene is set in a prison."', 0.3),
]


@pytest.mark.parametrize('reply, why', [
    ('', 'empty'),
    ('Relevant memories: - the spare battery', 'echoes'),
    ('The user is asking about a battery.', 'echoes'),
    ('[segment 4, 3 s]', 'echoes'),
    ('[15:30, 5 s]', 'echoes'),
    ('It is charging. It is charging.', 'repeats'),
    ('Where is the spare battery?', 'repeats the question'),
    ('Someone said: "where is the spare battery?"', 'repeats the question'),
    ("The battery said, 'the battery said, 'the battery said, 'the battery said", 'repeats itself'),
    ('The spare battery is.', 'adds nothing'),
    ('The spare battery is on the moon with the astronauts.', 'not grounded'),
    ('The printer is set in a prison.', 'not grounded'),     # the robot's own earlier answer is no evidence
    ("Yar's spare battery is charging in the kitchen.", 'names someone the memories do not (yar)'),
    ('The spare battery is charging in the kitchen with Tom.', 'names someone the memories do not (tom)'),
])
def test_bad_replies_are_named(reply: str, why: str) -> None:
    assert why in reply_problem(reply, 'Where is the spare battery?', MEMORIES)


def test_grounded_reply_passes() -> None:
    assert reply_problem('It is charging in the kitchen.', 'Where is the spare battery?', MEMORIES) == ''
    # a name the memories hold (a profile's) or the question says is no invention
    assert reply_problem("Maria walks her dog every morning at seven.", 'When does Maria walk the dog?', MEMORIES) == ''
    assert reply_problem("Bo's battery is charging in the kitchen.", "Where is Bo's spare battery?", MEMORIES) == ''
    # a quote opens with a capital: no name
    assert names_in('Maria said: "The battery is charging." I heard: Nothing else.') == set()
    assert names_in("The man on the radio said: \"And so my fellow Americans.\"") == {'americans'}
    # a function word opening an unquoted quote, or a letter of a code, is no name either
    assert names_in('The man in the video said, Where did he go?') == set()
    assert names_in('He said: Bimblo F2 now, Ana.') == {'ana'}


def test_a_quote_is_words_one_memory_holds() -> None:
    """Words of two memories and the robot's own phrase make no quote, though each word is remembered somewhere."""
    mems = MEMORIES + [MemoryItem('semantic:3', '<face_3> said: Okay robot, my family lives in Toronto.'),
                       MemoryItem('semantic:4', '<face_3> said: Remember the kitchen window.')]
    assert 'quotes words no memory holds together' in reply_problem('Maria said: "Okay, I will remember that."',
                                                                    'What did Maria say?', mems)
    assert reply_problem('Maria said: "Okay robot, my family lives in Toronto."', 'What did Maria say?', mems) == ''
    # a quote cut short is still one memory's words, when it says so; one that stops as if whole drops its point
    assert reply_problem('Maria said: "I walk my dog every ..."', 'What did Maria say?', mems) == ''
    news = [MemoryItem('episodic:2', 'an unseen speaker said: Petrol prices will rise by ten cents next week.')]
    q = 'What did the lady on the news say?'
    assert reply_problem('The lady on the news said: "Petrol prices will rise."', q, news) == \
        'reply quotes part of a sentence ("petrol prices will rise")'
    assert reply_problem('The lady on the news said: "Petrol prices will rise by ten cents next week."', q, news) == ''


def test_asked_what_was_said_a_question_said_is_the_answer() -> None:
    news = [MemoryItem('episodic:2', 'an unseen speaker said: Why did you lie to me about the money, Clara?')]
    q = 'What did the lady on the news say?'
    assert reply_problem('The lady on the news said: "Why did you lie to me about the money, Clara?"', q, news) == ''
    assert reply_problem('The lady on the news said: "Why did you lie to me?"', q, news) == \
        'reply quotes part of a sentence ("why did you lie to me")'
    # asked anything else, words someone only asked ground nothing
    assert reply_problem('Clara lied about the money.', 'Did Clara lie?', news).startswith('reply not grounded')


def test_a_word_said_twice_in_a_row_is_a_loop() -> None:
    mems = [MemoryItem('profile:<face_3>', '<face_3> is Tariq (persona: <face_3> plays golf.)')]
    assert reply_problem('Tariq trains golf golf golf', 'What does Tariq train for?', mems) == 'reply repeats itself'
    assert reply_problem('Tariq plays golf.', 'What does Tariq train for?', mems) == ''


def test_a_greeting_answers_no_question_from_nobody_new() -> None:
    assert reply_problem('Nice to meet you, petrol prices will rise next week.', 'Robot, any news about petrol prices?',
                         MEMORIES) == 'reply greets, but the question introduces nobody'
    assert reply_problem('Nice to meet you, Ana.', "Hi robot, I'm Ana.", MEMORIES) == ''
    # a name said only as someone's introduces nobody, asked or not (speech recognition drops the question mark)
    assert 'greets' in reply_problem('Nice to meet you, Kwame.', "okay robot in which month is kwame's birthday",
                                     MEMORIES)
    assert 'whom the words do not introduce' in reply_problem('Nice to meet you, Kwame.',
                                                              "row bot about kwame's birthday", MEMORIES)
    assert reply_problem('Nice to meet you, Kwame.', "robot this is kwame, kwame's my brother", MEMORIES) == ''


def test_an_absence_needs_a_memory_that_tells_it() -> None:
    mems = [MemoryItem('profile:<face_3>', '<face_3> is Tomasz (updated_by: introduction)'),
            MemoryItem('semantic:2', "<face_1> said: Robot, here is my cousin Tomasz.", 0.5),
            MemoryItem('semantic:3', "Ana doesn't eat meat.", 0.4)]
    assert reply_problem('My cousin Tomasz has no allergies.', 'does tomasz have any allergies', mems) == \
        'reply denies what no memory denies'
    assert reply_problem("Ana doesn't eat meat.", 'Does Ana eat meat?', mems) == ''


def test_a_person_memory_knows_is_no_hometown() -> None:
    mems = [MemoryItem('profile:<face_3>', '<face_3> is Jamal (updated_by: introduction)'),
            MemoryItem('profile:<face_4>', '<face_4> is Leila (updated_by: introduction)'),
            MemoryItem('semantic:2', 'Leila comes from Hanoi.', 0.5)]
    assert 'whom memory knows as a person' in reply_problem('Leila comes from Jamal.', "What is Leila's hometown?",
                                                            mems)
    assert reply_problem('Leila comes from Hanoi.', "What is Leila's hometown?", mems) == ''
    # without retrieved facts there is nothing to check the content against
    assert reply_problem('Hello there, nice to meet you.', 'hi robot', MEMORIES[:1]) == ''


def test_speakable_names_faces_and_drops_answers() -> None:
    names = face_names(MEMORIES)
    assert names == {'<face_3>': 'Maria'}
    assert speakable('[2026-01-05 09:00:01]--[09:00:04]: <face_3> said: hello', names) == 'Maria said: hello.'
    assert speakable('<face_9> waved', names) == 'a person waved.'
    assert speakable('<face_3> said: Ask not!', names) == 'Maria said: Ask not!'
    assert evidence(MEMORIES[3].text) == 'saw a person, a desk; heard "the printer on floor two is broken"'
    said = 'I saw a person, a desk and heard "the printer on floor two is broken".'
    assert speakable(MEMORIES[3].text, names) == said


def test_quote_questions() -> None:
    for q in ('What did the man on the radio say?', 'what was Joe saying about the match', 'What did she tell you?',
              'What did I ask you to remember?', 'Tell me the last thing Ana said.',
              'Which words did the TV use?', 'Tell me the last thing the voice on the radio said.'):
        assert is_quote_question(q), q
    for q in ('What did you see in the video?', 'Where are my keys?', 'Can you summarize what happened today?',
              'What sport does Barack play?', 'Where did I put the things I bought?', ''):
        assert not is_quote_question(q), q


def test_quote_candidates_follow_the_speaker_the_question_names() -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Joe'),
            MemoryItem('semantic:1', '<face_1> said: my keys are in the blue drawer', 0.3),
            MemoryItem('episodic:2', 'saw <face_2> talking; heard "I love basketball"', 0.9),
            MemoryItem('recent:3', f'{UNSEEN_SPEAKER} said: ask not what your country can do for you', 0.1)]
    assert [m.ref for m in said_by('What did Joe say about his keys?', mems)] == ['profile:<face_1>', 'semantic:1']
    assert [m.ref for m in said_by('What did the man on the radio say?', mems)] == ['profile:<face_1>', 'recent:3']
    # a broadcast voice, not a person described
    for device in ('the presenter', 'the woman on the news', 'the announcer', 'the commentator'):
        assert [m.ref for m in said_by(f'What did {device} say?', mems)] == ['profile:<face_1>', 'recent:3'], device
    assert said_by('What did Ana say?', mems) == mems, 'an unknown name filters nothing'
    # the source hint of an unseen speaker is no evidence: a reply about "a radio host" is not grounded by it
    assert evidence(mems[3].text).startswith('an unseen speaker said:')
    assert 'not grounded' in reply_problem('The speaker is a radio host on TV.', 'Where are the keys?', mems[3:])


def test_a_described_person_is_one_without_a_known_name() -> None:
    mems = [MemoryItem('profile:<face_1>', '<face_1> is Joe'),
            MemoryItem('recent:1', '<face_1> said: my keys are in the blue drawer'),
            MemoryItem('recent:2', 'saw <face_2> talking, <face_1>; heard "bin blue at f two now"'),
            MemoryItem('recent:3', f'{UNSEEN_SPEAKER} said: ask not')]
    assert [m.ref for m in said_by('What did the man in the video say?', mems)] == ['profile:<face_1>', 'recent:2']
    assert said_by('What did you hear?', mems) == mems


def test_a_confirmation_does_not_answer_a_question() -> None:
    mems = [MemoryItem('semantic:1', 'The keys are in the car.')]
    assert reply_problem('Okay, I will remember that.', 'Robot, where are my keys?', mems) == \
        'a confirmation is no answer to a question'
    assert reply_problem('Okay, I will remember that.', 'Robot, remember that my keys are in the car.', mems) == ''
    # speech recognition drops question marks
    assert reply_problem('Thanks, I will keep that in mind.', 'okay robot do i have any allergies', mems)
    assert reply_problem('Okay.', 'hey assistant, where on earth is my laptop', mems)
    assert reply_problem('Okay, I will remind you.', 'Robot, remind me to call Mom when I get home.', mems) == ''
    # a question asked as a request, without its question mark; a reminder request with a "when" stays one
    assert reply_problem('Okay, I will remember that.', 'excuse me robot remind me when the school trip is', mems)
    assert reply_problem('Okay, I will remind you.', 'Robot, remind me when I get home to call Mom.', mems) == ''
    assert reply_problem('Thanks, I will keep that in mind.', 'excuse me row bot any news about the pool', mems)
    # "what a ..." exclaims; "what about ..." and "what is an ..." ask
    assert not asks('What a long day it has been.') and not asks('Robot, what an idea!')
    # a question word after a preposition opens a question too; a preposition alone does not
    assert asks('okay robot at what time is lunch') and asks('in which month is the party')
    assert not asks('in the morning I run') and not asks('I work in what they call a lab')
    assert asks('So, what about the keys') and asks('what is an allergy')
    # asked what someone said, as a request: a confirmation is no answer to that either
    assert asks('Tell me the last thing Ana said.')
    assert reply_problem('Okay, I will remember that.', 'Robot, tell me the last thing the presenter said.', mems)
    # words too garbled to show a question: the caller knows it is one (the heads chose to search)
    garbled = 'okay robot can you tel me were the thermos is'
    assert reply_problem('Okay, I will remember that.', garbled, mems) == ''
    assert reply_problem('Okay, I will remember that.', garbled, mems, asked=True)
    assert reply_problem('Okay, I will remember that.', 'Where is the thermos?', mems, asked=False) == ''


def test_what_someone_only_asked_grounds_nothing() -> None:
    mems = [MemoryItem('episodic:1', 'saw Ana; hall; heard "Who did I talk to in the last hour?"; answered "Bob."'),
            MemoryItem('semantic:2', 'someone typed: Where is my laptop?'),
            MemoryItem('semantic:3', 'The team meeting moved to Thursday.')]
    assert holds_only_a_question('<face_1> said: Where is my laptop?') and holds_only_a_question(mems[1].text)
    assert not holds_only_a_question('<face_1> said: My laptop is in the basket.')
    assert 'not grounded' in reply_problem('The team meeting is in the last hour.', 'When is the team meeting?', mems)
    assert reply_problem('The team meeting is on Thursday.', 'When is the team meeting?', mems) == ''


def test_what_a_reply_claims_must_be_remembered_not_only_how_it_relates() -> None:
    # "likes" is in Tariq's memories, so half the new words are there; "soda" is in none of them
    mems = [MemoryItem('profile:<face_2>', '<face_2> is Tariq (persona: <face_2> likes to paint watercolours.)'),
            MemoryItem('semantic:1', '<face_2> likes to paint watercolours.', 0.5),
            MemoryItem('semantic:2', '<face_3> likes to drink hot chocolate.', 0.4)]
    q = 'Excuse me robot, what would Tariq want to drink?'
    assert 'soda' in reply_problem('Tariq likes to drink soda.', q, mems)
    assert reply_problem('Tariq likes to paint watercolours.', q, mems) == ''
    assert reply_problem('Tariq likes hot chocolate.', q, mems) == ''


def test_a_device_is_the_voice_it_was_heard_as_with_people_in_view_too() -> None:
    """The TV heard with nobody in view and then beside a person is one voice: "the last thing the TV said" is both."""
    mems = [MemoryItem('profile:<face_3>', '<face_3>'),
            MemoryItem('recent:1', '<voice_1>, an unseen speaker (radio, TV, phone or out of sight) said: The ferry '
                                   'is cancelled.'),
            MemoryItem('recent:2', '<voice_1> said: The swimming pool reopens on Thursday.'),
            MemoryItem('recent:3', '<voice_2> said: Jamal has a job as a dentist.'),
            MemoryItem('recent:4', '<face_3> said: As a pilot I start work very early.')]
    q = 'Okay robot, tell me the last thing the television said.'
    assert [m.ref for m in said_by(q, mems, strict=True)] == ['profile:<face_3>', 'recent:1', 'recent:2']
    # with no unseen speaker remembered, a voice no face was seen speaking with is the device's
    assert [m.ref for m in said_by(q, mems[:1] + mems[2:], strict=True)] == ['profile:<face_3>', 'recent:2',
                                                                             'recent:3']


@pytest.mark.parametrize('text, refusing', [
    ('I don', True), ("I don't", True), ('I do not', True), ("I didn't", True), ('Sorry,', True),
    ('I', False), ('I heard that', False), ('I doubt', False), ('Ana', False), ('Your keys', False),
])
def test_a_reply_is_seen_to_refuse_from_its_first_words(text: str, refusing: bool) -> None:
    assert opens_refusal(text) is refusing


@pytest.mark.parametrize('text, within', [
    ('The man said: "', True),
    ('The man said: "Bim', True),                            # an unfinished word of the start of what was said
    ('The man said: "Bimblo F2 now."', True),
    ('The man said: "Bimblo F2."', False),                   # stops inside the sentence
    ('The man said: "The', False),                            # opens with words nobody said first
    ('He said "remember that my keys are', True),             # a later sentence of what was said
    ('He said "my keys', False),
    ('He said "Hello, my name is Joe."', True),
    ('They said on TV: "Ask not!"', True),                     # heard in an episode
    ('Joe is in the kitchen.', True),                          # no quotation
])
def test_a_quotation_is_held_to_what_the_memories_say_as_it_is_decoded(text: str, within: bool) -> None:
    test = quoting_within([MemoryItem('recent:3', '<face_2> said: Bimblo F2 now.'),
                           MemoryItem('semantic:1', 'Joe said: Hello, my name is Joe. Remember that my keys are in '
                                                    'the drawer.'),
                           MemoryItem('episodic:1', '[09:00] saw nobody in view; heard "Ask not!"')])
    assert test(text) is within


def test_a_known_name_written_a_letter_off_is_refused() -> None:
    """The robot said "Ollek likes to drink peppermint tea." from Olek's words about Pablo: no check read Olek."""
    from lightomni_ros.core.reflex.spelling import edits, misspelled_name

    mems = [MemoryItem('profile:<face_4>', '<face_4> is Olek'), MemoryItem('profile:<face_1>', '<face_1> is Theo'),
            MemoryItem('recent:1', '<face_4> said: Pablo always orders peppermint tea.')]
    asked = 'Okay robot, what would Olek want to drink?'
    assert misspelled_name('Ollek likes to drink peppermint tea.', mems, asked) == \
        'reply writes "Ollek" for the name Olek'
    # the name as memory spells it, a word memory or the question holds, and words of no content are no misspelling
    assert misspelled_name('Olek likes to drink peppermint tea.', mems, asked) == ''
    assert misspelled_name('Pablo always orders peppermint tea.', mems, asked) == ''
    assert misspelled_name('They like tea.', mems, asked) == ''
    # nobody known by name: nothing to misspell
    assert misspelled_name('Ollek likes tea.', mems[2:], asked) == ''
    assert (edits('ollek', 'olek'), edits('kitten', 'sitting'), edits('', 'abc')) == (1, 3, 3)


def test_a_claim_about_someone_by_a_name_no_memory_holds_is_refused() -> None:
    """The robot said "Olivia likes to drink peppermint tea." to "what would Olek want to drink?"."""
    from lightomni_ros.core.reflex.spelling import unknown_person

    mems = [MemoryItem('profile:<face_4>', '<face_4> is Olek'),
            MemoryItem('recent:1', '<face_4> said: Pablo always orders peppermint tea.'),
            MemoryItem('semantic:2', 'Lunch is at five.')]
    asked = 'Okay robot, what would Olek want to drink?'
    assert unknown_person('Olivia likes to drink peppermint tea.', mems, asked) == \
        'reply tells of "Olivia", a name no memory holds'
    assert unknown_person("Sure. Olivia's umbrella is in the car.", mems, asked)
    for fine in ('Olek likes to drink peppermint tea.', 'Pablo always orders peppermint tea.', 'Lunch is at five.',
                 'She is in the kitchen.', 'Monday is the day.', 'Okay, I will remember that.', 'Nothing is planned.',
                 'Your thermos is in the coat pocket.'):
        assert unknown_person(fine, mems, asked) == '', fine
