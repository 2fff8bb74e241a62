# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Evaluation metrics on hand-made cases, the plot, the shipped weights' checksums, the CLI verbs."""

from __future__ import annotations

import numpy as np
import pytest

from lightomni_ros.cli import build_parser
from lightomni_ros.train import eval_heads as E
from lightomni_ros.train import shipped


def test_precision_recall_f1():
    m = E.prf([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    assert m['precision'] == pytest.approx(2 / 3) and m['recall'] == pytest.approx(2 / 3)
    assert m['f1'] == pytest.approx(2 / 3) and m['support'] == 3
    assert E.prf([0, 0], [1, 0]) == {'precision': 0.0, 'recall': 0.0, 'f1': 0.0, 'support': 1}
    assert E.prf([1, 0], [1, 0])['f1'] == 1.0


def test_recall_at_k():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    cands = [np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]),      # gold 0 ranks first
             np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]),      # gold 2 ranks first
             np.array([[0.9, 0.0], [1.0, 0.0], [0.8, 0.0], [0.1, 0.0]])]  # gold 3 ranks fourth
    r = E.recall_at_k(q, cands, [0, 2, 3], ks=(1, 2, 4))
    assert r == {1: pytest.approx(2 / 3), 2: pytest.approx(2 / 3), 4: pytest.approx(1.0)}
    # a tie with another entry counts against the gold
    assert E.recall_at_k(q[:1], [np.array([[1.0, 0.0], [1.0, 0.0]])], [1], ks=(1,))[1] == 0.0


def test_similarity_snr():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    g = np.array([[0.8, 0.2], [0.1, 0.9], [0.8, 0.2]])
    snr, m, cols = E.similarity_snr(q, g, ['a', 'b', 'a'])
    assert cols == ['a', 'b'] and m.shape == (3, 2)
    signal = np.mean([0.8, 0.9, 0.8])
    noise = np.mean([0.1, 0.2, 0.1])
    assert snr == pytest.approx(signal / noise)


def test_error_groups():
    exs = [{'kind': 'ask', 'noise': '', 'speech': 1, 'search': 1},
           {'kind': 'ask', 'noise': 'asr', 'speech': 1, 'search': 1},
           {'kind': 'ask', 'noise': '', 'speech': 1, 'search': 1},
           {'kind': 'chat', 'noise': '', 'speech': 0, 'search': 0}]
    p = np.array([[0.9, 0.2], [0.9, 0.8], [0.4, 0.7], [0.1, 0.6]])
    g = E.error_groups(exs, p, (0.5, 0.5))
    assert list(g) == ['ask/asr', 'ask/clean', 'chat/clean']
    assert g['ask/clean'] == {'n': 2, 'speech': {'label': 1, 'wrong': 1}, 'search': {'label': 1, 'wrong': 1}}
    assert g['ask/asr']['search']['wrong'] == 0 and g['chat/clean']['search'] == {'label': 0, 'wrong': 1}


def test_plot(tmp_path):
    mats = {'fused': np.eye(5), 'text': np.full((5, 5), 0.3)}
    path = E.plot_matrices(mats, {'fused': 2.0, 'text': 1.0}, tmp_path / 'sim.png')
    assert path.stat().st_size > 1000


def test_verbs_registered():
    p = build_parser()
    args = p.parse_args(['eval', 'heads', '--json', 'x.json', '--limit', '3'])
    assert args.area == 'heads' and args.json_path == 'x.json' and args.limit == 3
    args = p.parse_args(['train', '--steps', '5', '--lora-layers', 'top:1', '--recipe', 'gpu7b'])
    assert args.steps == 5 and args.lora_layers == 'top:1' and args.recipe == 'gpu7b'


def test_shipped_weights_match_their_checksums():
    d = shipped.shipped_models_dir()
    if not (d / 'SHA256SUMS').is_file():
        pytest.skip('no trained weights shipped in this checkout')
    sums = shipped.check_sums(d)
    assert {'reflex_heads.safetensors', 'adapters/reaction/adapter_model.safetensors'} <= set(sums)
    assert all(sums.values()), sums
    total = sum((d / f).stat().st_size for f in sums)
    assert total < 50e6


def test_best_threshold_maximises_f1() -> None:
    scores = [0.9, 0.8, 0.35, 0.3, 0.2, 0.1]
    gold = [True, True, True, False, False, False]
    t, f1 = E.best_threshold(scores, gold)
    assert 0.3 < t <= 0.35 and f1 == pytest.approx(1.0)
    assert E.best_threshold([0.5] * 4, [False] * 4)[1] == 0.0       # nothing to find: F1 0
    args = build_parser().parse_args(['eval', 'heads', '--calibrate', '50', '--search-threshold', '0.4'])
    assert args.calibrate == 50 and args.search_threshold == 0.4


def test_calibrate_on_a_training_split_with_the_shipped_heads(tmp_path) -> None:
    from lightomni_ros.core.reflex.config import BackboneConfig
    from lightomni_ros.core.reflex.engine import EngineConfigs, ReflexEngine
    from lightomni_ros.train import synth

    split = synth.write(synth.generate('train', cfg=synth.SynthConfig(streams=1, segments=20)), tmp_path / 'train')
    engine = ReflexEngine(EngineConfigs(backbone=BackboneConfig(device='cpu', threads=2),
                                        models_dir=str(E.default_models_dir())))
    cal = E.calibrate(split, engine, limit=16, progress=False)
    assert cal['examples'] == 16
    for trig in ('speech', 'search'):
        assert 0.05 <= cal[trig]['threshold'] <= 0.95 and 0.0 <= cal[trig]['f1_on_calibration_split'] <= 1.0
