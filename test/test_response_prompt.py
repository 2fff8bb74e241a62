# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The prompts of the response and the memory pass (pure text; the engine's use is covered in test_reflex_core)."""

from __future__ import annotations

import json

from lightomni_ros.core.reflex import prompts as P
from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER, MemoryItem, SegmentInput


def test_sg_tail_keeps_the_newest_whole_lines() -> None:
    lines = [f'[{i:02d}:00] event number {i} happened in the kitchen' for i in range(100)]
    script = '\n'.join(lines)
    assert P.sg_tail(script, 0) == script
    assert P.sg_tail('short', 512) == 'short'
    tail = P.sg_tail(script, 128)
    kept = tail.splitlines()
    assert kept[0] == '(older events: see the memories)'
    assert kept[1:] == lines[-(len(kept) - 1):], 'a suffix of whole lines, oldest first'
    assert len(tail) <= 4 * 128 + len(kept[0]) + 1 and len(kept) > 5
    assert '(nothing remembered yet)' in P.system_prefix('sys', '')


def test_memories_are_cut_at_a_word_boundary() -> None:
    long = 'Ana said: ' + ' '.join(f'word{i}' for i in range(200))
    cut = P.clip_tokens(long, 16)
    assert cut.endswith(' ...') and len(cut) <= 4 * 16 + 4 and long.startswith(cut[:-4])
    assert P.clip_tokens('short fact.', 16) == 'short fact.' and P.clip_tokens(long, 0) == long
    text = P.memories_text([MemoryItem('semantic:1', long), MemoryItem('semantic:2', 'Bob likes tea.')], 16)
    assert '- Bob likes tea.' in text and long not in text


def test_memories_show_names_then_entries_oldest_first_with_short_times() -> None:
    mems = [MemoryItem('semantic:2', '[2026-03-02 10:05:00]--[2026-03-02 10:05:04]: The meeting is on Friday.', 0.9),
            MemoryItem('profile:<face_1>', '<face_1> is Joe (persona: a nurse; updated_by: memory-adapter)'),
            MemoryItem('recent:7', '<face_1> said: actually it is on Friday'),
            MemoryItem('semantic:1', '[2026-03-02 09:00:00]--[2026-03-02 09:00:04]: The meeting is on Thursday.', 0.95),
            MemoryItem('profile:<face_2>', '<face_2>')]
    assert P.memory_lines(mems) == ['<face_1> is Joe.', '[09:00] The meeting is on Thursday.',
                                    '[10:05] The meeting is on Friday.', '<face_1> said: actually it is on Friday']
    assert P.short_span('L1 [2026-03-02 09:00:00]--[2026-03-02 11:30:00]: a summary') == ('[09:00-11:30]', 'a summary')
    assert P.short_span('no span here') == ('', 'no span here')
    sg = ('L0 [2026-03-02 09:00:00]--[2026-03-02 09:00:05]: saw Joe; heard "hi"\n'
          'L0 [2026-03-02 09:01:00]--[2026-03-02 09:01:05]: saw Ana')
    assert P.compact_sg(sg, 0) == '[09:00] saw Joe; heard "hi"\n[09:01] saw Ana'
    assert P.memories_text([]).strip().endswith('Memories: none.<|im_end|>')


def test_a_fact_said_again_is_shown_at_its_last_time_so_a_correction_between_is_older() -> None:
    # "in the basket" at 09:00, "under the bed" at 09:10, "in the basket" again at 09:20 (stored once, span extended)
    mems = [MemoryItem('semantic:1', '[2026-03-02 09:10:00]--[2026-03-02 09:10:04]: The thermos is under the bed.'),
            MemoryItem('semantic:2', '[2026-03-02 09:00:00]--[2026-03-02 09:20:04]: The thermos is in the basket.'),
            MemoryItem('episodic:3', '[2026-03-02 09:05:00]--[2026-03-02 09:25:00]: saw Ana; heard "hello"')]
    assert P.memory_lines(mems) == ['[09:05] saw Ana; heard "hello"', '[09:10] The thermos is under the bed.',
                                    '[09:20] The thermos is in the basket.']


def test_a_recent_interaction_sorts_by_its_time_among_stored_memories() -> None:
    # a typed note at 09:30 is still a recent interaction when "... in the green basket", said at 09:40, is stored
    note = MemoryItem('recent:3', 'someone typed: the earrings are on top of the fridge', said='2026-03-02 09:30:00')
    moved = MemoryItem('semantic:4', '[2026-03-02 09:40:00]--[2026-03-02 09:40:04]: The earrings are in the green '
                                     'basket.')
    assert P.memory_lines([note, moved]) == ['someone typed: the earrings are on top of the fridge',
                                             '[09:40] The earrings are in the green basket.']
    assert P.said_at(note) < P.said_at(moved)
    # one with no time (as training renders them) is still the newest
    assert P.said_at(MemoryItem('recent:5', '<face_1> said: they are in the drawer')) > P.said_at(moved)


def test_perception_names_who_spoke_and_marks_an_unseen_speaker() -> None:
    seg = SegmentInput(segment_id=3, start=0.0, end=4.0, transcript='Where are my keys?',
                       face_ids=['<face_1>', '<face_2>'],
                       visual_tags=['kitchen'], speaker_face='<face_1>')
    text = P.perception_text(seg, {'<face_1>': 'Joe'})
    assert 'Visible people: Joe (<face_1>), <face_2>' in text and 'Joe (<face_1>) said: "Where are my keys?"' in text
    assert 'segment' not in text and '3' not in text.split('\n')[0], 'no segment id'
    radio = SegmentInput(segment_id=4, start=0.0, end=4.0, transcript='The bridge is closed.')
    text = P.perception_text(radio)
    assert f'{UNSEEN_SPEAKER} said:' in text and 'Visible people: nobody' in text
    typed = SegmentInput(segment_id=5, start=0.0, end=1.0, typed_text='Remember the keys.', face_ids=['<face_2>'])
    assert 'Typed by <face_2>: "Remember the keys."' in P.perception_text(typed)


def test_memory_target_is_the_json_the_parser_reads() -> None:
    topic = {'visual': 'Joe talking; kitchen', 'semantic': ["Joe's car keys are in the blue drawer."],
             'remembered': [], 'reminders': [{'text': 'call mum', 'in_seconds': 600}]}
    out = P.memory_target(topic)
    assert not out.startswith('{') and json.loads('{' + out) == {k: v for k, v in topic.items() if v}
    assert list(json.loads('{' + out)) == ['visual', 'semantic', 'reminders']


def test_with_nobody_in_view_the_memory_reply_starts_with_what_was_seen() -> None:
    """The rules know the description then: the pass starts after it, in the form the targets have."""
    from lightomni_ros.core.reflex.sleep import memory_opening

    radio = SegmentInput(segment_id=1, start=0.0, end=3.0, transcript='And so my fellow Americans.',
                         visual_tags=['tv', 'sofa'])
    opening = memory_opening(radio)
    assert opening == '"visual": "nobody in view, an unseen speaker talking; tv, sofa'
    target = P.memory_target({'visual': 'nobody in view, an unseen speaker talking; tv, sofa', 'semantic': ['x']})
    assert target.startswith(opening) and target[len(opening)] == '"'
    # someone in view: the rules' description with the people named; a model that reads the frames writes its own
    assert memory_opening(SegmentInput(segment_id=2, start=0.0, end=1.0, face_ids=['<face_1>']),
                          names={'<face_1>': 'Ana'}) == '"visual": "Ana'
    assert memory_opening(radio, saw_frames=True) == ''

    class Backbone:
        kind, chat = 'text', P.CHATML

        @staticmethod
        def text_part(text):
            return text
    parts = P.memory_parts(Backbone, radio, opening=opening)
    # its own part: tokenized as in the training targets, which follow the "{"
    assert parts[-2:] == [P.CHATML.open('assistant') + '{', opening]


def test_chat_formats() -> None:
    class Tok:
        def __init__(self, vocab):
            self.vocab = vocab

        def get_vocab(self):
            return self.vocab

    assert P.chat_format(Tok({'<|im_start|>': 1, '<|im_end|>': 2})) is P.CHATML
    gemma = P.chat_format(Tok({'<start_of_turn>': 105, '<end_of_turn>': 106}))
    assert gemma is P.GEMMA
    assert gemma.turn('system', 'x') == '<start_of_turn>user\nx<end_of_turn>\n'
    assert gemma.open('assistant') == '<start_of_turn>model\n'
    assert P.memory_prefix(gemma).startswith('<bos><start_of_turn>user\n')
    assert P.CHATML.turn('user', 'hi') == '<|im_start|>user\nhi<|im_end|>\n'
