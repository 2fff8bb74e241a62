# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Data synthesis: determinism, held-out disjointness, label consistency, noisy variants, files."""

from __future__ import annotations

import json
import random

from lightomni_ros.train import synth

SMALL = synth.SynthConfig(streams=3, segments=30)


def test_same_seed_same_data_other_seed_other_data():
    a = synth.generate('train', 0, SMALL)
    b = synth.generate('train', 0, SMALL)
    c = synth.generate('train', 1, SMALL)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert [e['transcript'] for e in a['examples']] != [e['transcript'] for e in c['examples']]


def test_heldout_uses_other_seed_and_other_phrasings():
    train = synth.generate('train', cfg=SMALL)
    held = synth.generate('heldout', cfg=SMALL)
    assert train['seed'] != held['seed']
    for key, phrasings in synth.TEMPLATES['train'].items():
        assert not set(phrasings) & set(synth.TEMPLATES['heldout'][key]), key
    tq = {e['query'] for e in train['examples'] if e['query']}
    hq = {e['query'] for e in held['examples'] if e['query']}
    addressed = {e['query'] for e in held['examples'] if e['speech']}
    assert hq and not (addressed & tq), 'a held-out request repeats a training phrasing'
    assert not {m['id'] for m in train['memories']} & {m['id'] for m in held['memories']}


def test_labels_are_consistent():
    d = synth.generate('train', cfg=SMALL)
    mem = {m['id']: m for m in d['memories']}
    kinds = {e['kind'] for e in d['examples']}
    assert {'idle', 'chat', 'remember', 'remind', 'general', 'ask_other', 'ask_object'} <= kinds
    for e in d['examples']:
        assert e['search'] <= e['speech']
        if e['gold']:
            assert e['search'] == 1 and e['gold'] in e['memory_ids'], e
            assert mem[e['gold']]['text'] == e['gold_text']
        else:
            assert e['search'] == 0
        if e['kind'] in ('idle', 'chat', 'self_talk', 'state'):
            assert e['speech'] == 0
        assert all(m in mem for m in e['memory_ids'])
    # memory grows along a stream: later segments see a superset
    s0 = [e for e in d['examples'] if e['stream'] == 0 and not e['noise']]
    for x, y in zip(s0, s0[1:]):
        assert set(x['memory_ids']) <= set(y['memory_ids'])
    # a "remember that" request puts its fact into memory for later questions
    rem = next(e for e in d['examples'] if e['kind'] == 'ask_object')
    assert 'The ' in rem['gold_text'] and rem['gold_text'].split(' is ')[0][4:] in rem['query']


def test_noisy_variants():
    rng = random.Random(0)
    q = 'Robot, where is the spare key?'
    noisy = synth.prefix_noise(q, synth.TEMPLATES['train']['noise'], rng)
    assert noisy.endswith(q) and len(noisy.split()) == 5 * len(q.split())
    asr = synth.asr_corrupt(q, random.Random(3))
    assert asr != q and '?' not in asr and asr == asr.lower()
    d = synth.generate('heldout', cfg=SMALL)
    nz = [e for e in d['examples'] if e['noise']]
    assert {e['noise'] for e in nz} == {'prefix', 'asr'}
    for e in nz:
        assert e['transcript'] != e['query']
        assert e['gold'] or e['speech']
    assert sum(1 for e in nz if e['gold']) >= 2 * sum(1 for e in d['examples'] if e['gold'] and not e['noise']) * 0.9


def test_write_and_load(tmp_path):
    d = synth.generate('heldout', cfg=synth.SynthConfig(streams=1, segments=12))
    folder = synth.write(d, tmp_path)
    back = synth.load_split(folder)
    assert back['examples'] == json.loads(json.dumps(d['examples']))
    assert back['meta']['examples'] == len(d['examples'])
    assert len(back['pairs']['memory']) and len(back['pairs']['generation'])
    sha = back['meta']['sha256']
    folder2 = synth.write(synth.generate('heldout', cfg=synth.SynthConfig(streams=1, segments=12)), tmp_path / 'x')
    assert synth.load_split(folder2)['meta']['sha256'] == sha
    for p in back['pairs']['memory']:
        json.loads(p['target'])
