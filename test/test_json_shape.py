# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The memory reply's JSON shape: the parser, the decode's ``keep``, and the decoders held to it (real tokenizer)."""

from __future__ import annotations

import json

import pytest
import torch

from lightomni_ros.core.reflex import generation
from lightomni_ros.core.reflex.config import BackboneConfig
from lightomni_ros.core.reflex.engine import EngineConfigs, ReflexEngine
from lightomni_ros.core.reflex.jsonshape import MEMORY_BANNED, MEMORY_SHAPE, ShapeParser, keeper
from lightomni_ros.core.reflex.sleep import memory_opening
from lightomni_ros.core.reflex.types import SegmentInput

WHOLE = ('{"visual": "<face_2>, <face_1>; laptop", "semantic": ["<face_2> has a dog called \\"Rufus\\".", '
         '"Caf\\u00e9 opens at 9."], "remembered": ["the code is 4411"], '
         '"reminders": [{"in_seconds": 120, "text": "check the oven", "extra": [1, -2.5e3, true, null, {}]}]}')


def read(text: str) -> ShapeParser:
    parser = ShapeParser(shape=MEMORY_SHAPE)
    parser.feed(text)
    return parser


def test_every_prefix_of_a_whole_reply_is_kept_and_only_the_whole_one_is_complete():
    json.loads(WHOLE)
    for i in range(len(WHOLE) + 1):
        parser = read(WHOLE[:i])
        assert not parser.spent, WHOLE[:i]
        assert parser.complete == (i == len(WHOLE)), WHOLE[:i]
    assert not read(WHOLE + ' \n').spent and read(WHOLE + ' x').spent, 'only white space after the object'


@pytest.mark.parametrize('broken', [
    '{"visual": "a", "semantic": ["I enjoy to dance.", "b"}',        # a list closed by a brace
    '{"semantics": [',                                               # no such key
    '{"semantic": ["x"], "visual": "y"}',                            # keys out of their order
    '{"visual": "a", "visual": "b"}',                                # a key twice
    '{"visual": "a\nb"}',                                            # a raw line break inside a string
    '{"semantic": "one fact"}',                                      # a string where a list belongs
    '{"reminders": ["soon"]}',                                       # a string where an object belongs
    '{"visual": "x",}',                                              # a trailing comma
    '{"reminders": [{"due": tru }]}', '{"reminders": [{"due": 01}]}', '{"visual": "\\x"}',
    '["visual"]', 'visual: {',
])
def test_a_reply_of_another_shape_is_refused_where_it_breaks(broken):
    parser = read(broken)
    assert parser.spent and not parser.feed('"}') and not parser.complete, 'a spent parser keeps nothing after'


@pytest.fixture(scope='module')
def engine():
    from test_reflex_core import ListMemory
    return ReflexEngine(EngineConfigs(backbone=BackboneConfig(memory_max_new_tokens=24, threads=2)), ListMemory())


@pytest.fixture(scope='module')
def tokenizer(engine):
    return engine.backbone.tokenizer


def test_the_keep_takes_the_next_best_token_that_keeps_the_shape_and_ends_only_a_whole_object(tokenizer):
    head = '{"visual": "<face_4>, <face_2>; sofa'
    eos = next(iter(tokenizer.eos_ids))
    keep = keeper(tokenizer.decode, head, set(tokenizer.eos_ids))
    ids = tokenizer.encode('", "semantic": ["I enjoy dancing."')
    assert keep(ids) and not keep(ids + [eos]), 'an open list is no end'
    assert not keep(ids + tokenizer.encode('<|im_start|>')), 'a token that writes nothing is no step of the reply'
    brace, bracket = tokenizer.encode('}')[0], tokenizer.encode(']')[0]
    assert not keep(ids + [brace]) and keep(ids + [bracket])
    logits = torch.full((max(brace, bracket, eos) + 1,), -10.0)
    logits[brace], logits[bracket] = 5.0, 4.0
    assert generation._kept_token(logits, ids, keep) == bracket
    assert generation._kept_token(logits, ids, None) == brace, 'unheld, the most likely'
    # a bracket inside a string is a string the model never closed: the closing quote is taken instead
    copied = tokenizer.encode('", "semantic": ["<face_4>, <face_2>; sofa')
    shut, quote = tokenizer.encode(']}')[0], tokenizer.encode('"]}')[0]
    assert not keep(copied + [shut]) and keep(copied + [quote])
    assert ShapeParser(shape=MEMORY_SHAPE).feed('{"visual": "a]}') and not ShapeParser(
        shape=MEMORY_SHAPE, banned=MEMORY_BANNED).feed('{"visual": "a]}'), 'banned only where the keeper says so'
    whole = ids + tokenizer.encode(']}')
    assert keep(whole) and keep(whole + [eos])
    assert keeper(tokenizer.decode, '[', set(tokenizer.eos_ids)) is None, 'a head of another shape: unheld'


def test_a_memory_decode_of_the_real_model_is_held_to_the_shape_greedy_beams_and_batched(engine, tokenizer,
                                                                                         monkeypatch):
    """Each decode of the memory pass (greedy, beams, batched) gives a prefix of the shape at every token."""
    segs = [SegmentInput(segment_id=i, start=100.0 + 10 * i, end=104.0 + 10 * i, transcript=text,
                         face_ids=['<face_1>'], speaker_face='<face_1>')
            for i, text in enumerate(['I am Ana. My keys are in the blue bowl.', 'Lunch is at four, not at three.'])]
    kept, real = [], generation._kept_token

    def held(logits, ids, keep):
        kept.append(keep)
        return real(logits, ids, keep)
    monkeypatch.setattr(generation, '_kept_token', held)
    openings = [memory_opening(s, False, {}) for s in segs]
    replies = [engine._read(segs[0], {}, openings[0], None)[0], *engine._read(segs[0], {}, openings[0], None, 3)]
    assert kept and all(k is not None for k in kept), 'the greedy decode was held'
    batched = []
    real_batch = generation.greedy_decode_batch

    def spy(*a, **k):
        assert all(keep is not None for keep in k['keeps'])
        out = real_batch(*a, **k)
        batched.extend(out[0])
        return out
    monkeypatch.setattr(generation, 'greedy_decode_batch', spy)
    engine.memory_passes([(s, '') for s in segs])
    assert len(batched) == 2
    for opening, ids in [(openings[0], r) for r in replies] + list(zip(openings, batched)):
        for n in range(len(ids) + 1):
            assert not read('{' + opening + tokenizer.decode(ids[:n])).spent, tokenizer.decode(ids[:n])
    monkeypatch.setattr(engine.cfgs.backbone, 'memory_json_shape', False)
    kept.clear()
    engine._read(segs[0], {}, openings[0], None)
    assert kept and all(k is None for k in kept), 'off: unheld'
