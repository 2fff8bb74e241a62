# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Where a thing was put, read by rule (placement.py), and how the memory pass adds it to what the adapter wrote."""

from __future__ import annotations

import pytest

from lightomni_ros.core.reflex.placement import (misplaced, placed_by_sight, placements, placing_within, plural,
                                                 with_placements)
from lightomni_ros.core.reflex.sleep import topic_from_reply
from lightomni_ros.core.reflex.types import MemoryItem, SegmentInput
from lightomni_ros.core.segment import SpeakerTurn


@pytest.mark.parametrize('words, facts', [
    ('I put my glasses on the kitchen table because I was tired.', ["<face_1>'s glasses are on the kitchen table."]),
    ('I stashed the torch under the bed.', ['The torch is under the bed.']),
    ('Ana left her keys in the car and went home.', ["Ana's keys are in the car."]),
    ("I hung Ana's scarf on the coat rack.", ["Ana's scarf is on the coat rack."]),
    ('I moved the scissors, they are on the bookshelf now.', ['The scissors are on the bookshelf.']),
    ('The sunglasses ended up in the garage on the left shelf.',
     ['The sunglasses are in the garage on the left shelf.']),
    ('I put the passport in the top drawer of the desk in the morning.',
     ['The passport is in the top drawer of the desk.']),
    ('Robot, note that my thermos is behind the front door.', ["<face_1>'s thermos is behind the front door."]),
    ('The remote is lying on the sofa.', ['The remote is on the sofa.']),
    # what places nothing: a question, a denial, an intention, a pronoun, a time, a direction
    ('Did I leave my keys in the car?', []),
    ("I didn't put the keys in the drawer.", []),
    ("I'll put the keys in the drawer.", []),
    ('I want to put the vase on the table.', []),
    ('I put it on the shelf.', []),
    ('I left the party in the evening.', []),
    ('I moved the meeting to Friday.', []),
])
def test_what_a_sentence_places(words: str, facts: list[str]) -> None:
    assert [p.fact() for p in placements(words, '<face_1>')] == facts


def test_my_thing_has_no_owner_when_the_speaker_is_not_known() -> None:
    assert [p.fact() for p in placements('I left my wallet in the closet.')] == ['The wallet is in the closet.']


def test_plural_things_are_and_singular_ones_is() -> None:
    assert plural('keys') and plural('gloves') and plural('glasses') and plural('car keys')
    assert not plural('thermos') and not plural('glass') and not plural('bus') and not plural('laptop')


def _seg(words: str, speaker: str = '<face_1>', faces: tuple[str, ...] = ('<face_1>',)) -> SegmentInput:
    turns = [SpeakerTurn(start=0.0, end=3.0, voice_id='<voice_1>', face_id=speaker, text=words)]
    return SegmentInput(segment_id=1, start=100.0, end=103.0, transcript=words, face_ids=list(faces),
                        speaker_face=speaker, turns=turns)


def test_a_fact_that_tells_of_the_thing_stands_and_others_are_added() -> None:
    seg = _seg('I put the keys in the drawer. I dropped my thermos on top of the fridge.')
    # the adapter's reading of the keys stands, wherever it says they are; the thermos is added
    assert with_placements(['The keys are in the blue drawer.'], seg) == \
        (['The keys are in the blue drawer.', "<face_1>'s thermos is on top of the fridge."], [])
    # a fact of the thing that does not say where it is tells nothing of the placement
    assert with_placements(['<face_1> has a thermos.'], _seg('I dropped my thermos on top of the fridge.')) == \
        (['<face_1> has a thermos.', "<face_1>'s thermos is on top of the fridge."], [])


def test_a_fact_with_part_of_the_place_gives_way_to_the_whole_place() -> None:
    seg = _seg('I dropped my thermos in the bathroom cabinet.')
    assert with_placements(["Mateo's thermos is in the cabinet."], seg) == \
        (["<face_1>'s thermos is in the bathroom cabinet."], ["Mateo's thermos is in the cabinet."])
    # whose it is comes from the fact it replaces when the words do not say ("my" of nobody seen speaking)
    words = 'Keep in mind: my notebook is on top of the fridge.'
    nobody = SegmentInput(segment_id=2, start=100.0, end=103.0, transcript=words, face_ids=['<face_1>'])
    assert with_placements(["<face_1>'s notebook is on the fridge."], nobody)[0] == \
        ["<face_1>'s notebook is on top of the fridge."]
    # one that says more than the rule read stands
    assert with_placements(["Mateo's thermos is in the cabinet, behind the towels."], seg)[1] == []
    # one that makes the place a thing owned gives way too
    keys = _seg('I dropped my house keys in the bathroom cabinet.')
    assert with_placements(['<face_1> has a house key in the bathroom cabinet.'], keys) == \
        (["<face_1>'s house keys are in the bathroom cabinet."], ['<face_1> has a house key in the bathroom cabinet.'])
    reply = '{"semantic": ["Mateo\'s thermos is in the cabinet."], "visual": "<face_1> talking"}'
    topic = topic_from_reply(seg, '', reply, names={'<face_1>': 'Mateo'})
    assert topic.semantic == ["Mateo's thermos is in the bathroom cabinet."] and topic.placed == 1
    assert topic.dropped == ["Mateo's thermos is in the cabinet."]


def test_the_memory_pass_adds_the_placement_the_adapter_missed_and_names_its_owner() -> None:
    seg = _seg('I dropped my thermos on top of the fridge.')
    reply = '{"semantic": ["<face_1>\'s breakfast is on the table."], "visual": "<face_1> talking"}'
    topic = topic_from_reply(seg, '', reply, names={'<face_1>': 'Ana'})
    assert topic.semantic == ["Ana's thermos is on top of the fridge."] and topic.placed == 1
    assert topic.dropped == ["<face_1>'s breakfast is on the table."]
    off = topic_from_reply(seg, '', reply, names={'<face_1>': 'Ana'}, placements=False)
    assert off.semantic == [] and off.placed == 0


def test_a_thing_is_not_put_where_only_a_frame_label_says() -> None:
    """The place of a thing is said; a label of the frame moves nothing there, while a person may be seen there."""
    seg = SegmentInput(segment_id=5, start=0.0, end=3.0, transcript='I dropped my notebook on top of the fridge.',
                       face_ids=['<face_2>', '<face_1>'], speaker_face='<face_2>', visual_tags=['dining table'])
    reply = ('{"visual": "<face_2> talking, <face_1>; dining table", "semantic": ["<face_2> has a notebook on the '
             'table.", "<face_2>\'s notebook is on top of the fridge.", "<face_2> is at the dining table."]}')
    topic = topic_from_reply(seg, '', reply)
    assert topic.semantic == ["<face_2>'s notebook is on top of the fridge.", '<face_2> is at the dining table.']
    assert topic.dropped == ['<face_2> has a notebook on the table.']
    cafe = SegmentInput(segment_id=6, start=0.0, end=3.0, transcript='Rahul, the new cafe was a mess, if you ask me.',
                        face_ids=['<face_3>'], speaker_face='<face_3>', visual_tags=['balcony'])
    assert placed_by_sight('The new cafe is at the balcony.', {'balcony'})
    assert 'The new cafe is at the balcony.' in topic_from_reply(
        cafe, '', '{"visual": "<face_3> talking; balcony", "semantic": ["The new cafe is at the balcony."]}').dropped
    # said, the same place stands: the label is no evidence against it
    said = SegmentInput(segment_id=7, start=0.0, end=3.0, transcript='I left the notebook on the table.',
                        face_ids=['<face_2>'], speaker_face='<face_2>', visual_tags=['dining table'])
    assert topic_from_reply(said, '', '{"visual": "<face_2> talking", "semantic": ["The notebook is on the table."]}'
                            ).semantic == [
        'The notebook is on the table.']


def test_a_broadcast_places_nothing_of_its_own() -> None:
    # a voice no face was seen with, the robot quiet: the radio's words stay its words (sleep.broadcast)
    seg = _seg('The keys are in the green basket.', speaker='', faces=())
    reply = '{"semantic": [], "visual": "nobody in view"}'
    topic = topic_from_reply(seg, '', reply)
    assert topic.placed == 0 and not any('green basket' in f for f in topic.semantic)


def test_a_reply_puts_a_thing_only_where_one_memory_does() -> None:
    """Each word of "Merak's umbrella is in the attic." is in a memory of Merak, the placement in none."""
    mems = [MemoryItem('profile:<face_5>', '<face_5> is Merak'),
            MemoryItem('semantic:1', "Merak's umbrella is in the car."),
            MemoryItem('semantic:2', "<face_5>'s charger is in the attic."),
            MemoryItem('episodic:3', 'saw Merak talking; heard "I hid the torch under the sink."; answered "The '
                                     'torch is in the attic."')]
    assert misplaced("Merak's umbrella is in the attic.", mems) == \
        'reply puts the umbrella in the attic, where no memory does'
    assert misplaced("Merak's umbrella is in the car.", mems) == ''
    # the words as heard place it too; the robot's own earlier answer does not
    assert misplaced('The torch is under the sink.', mems) == ''
    assert misplaced('The torch is in the attic.', mems) != ''
    # a reply that places nothing is not read here
    assert misplaced('They are in the car.', mems) == '' and misplaced("I don't know.", mems) == ''


@pytest.mark.parametrize('text, within', [
    ("Merak's umbrella is in the", True),
    ("Merak's umbrella is in the c", True),                 # "car" not finished yet
    ("Merak's umbrella is in the att", False),              # no memory of the umbrella has a word so begun
    ("Merak's umbrella is in the attic", False),            # the charger's place
    ("Merak's umbrella is in the car.", True),
    ("Joe's hammer is in the gar", True),
    ("Joe's hammer is in the garden", False),
    ('Nice to meet you, Joe.', True),                        # places nothing
])
def test_a_reply_places_things_where_a_memory_does_as_it_is_decoded(text: str, within: bool) -> None:
    test = placing_within([MemoryItem('semantic:1', "Merak's umbrella is in the car."),
                           MemoryItem('semantic:2', "<face_5>'s charger is in the attic."),
                           MemoryItem('semantic:3', 'Joe keeps the hammer in the garage.'),
                           MemoryItem('profile:<face_5>', '<face_5> is Ana (a hammer in the attic)')])
    assert test(text) is within
