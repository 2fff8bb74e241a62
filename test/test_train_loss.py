# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Training maths on small tensors: InfoNCE, the reaction loss, the schedule, head pooling, LoRA layers, resume."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lightomni_ros.core.reflex.latent import LatentHeads
from lightomni_ros.train import train as T


def test_info_nce_matches_hand_computation():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    tau = 0.5
    loss = T.info_nce(q, k, torch.tensor([0, 1]), temperature=tau)
    kn = F.normalize(k, dim=-1)
    want = 0.0
    for i, p in enumerate((0, 1)):
        s = (q[i] @ kn.T) / tau
        want += -(s[p] - torch.logsumexp(s, 0))
    assert loss.item() == pytest.approx(want.item() / 2, abs=1e-6)
    # a perfect, sharp match gives a loss near zero; a swapped positive a large one
    assert T.info_nce(q, k[:2], torch.tensor([0, 1]), temperature=0.01).item() < 1e-6
    assert T.info_nce(q, k[:2], torch.tensor([1, 0]), temperature=0.01).item() > 50


def test_info_nce_ignores_copies_of_the_positive():
    q = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    k = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    pos = torch.tensor([0, 1])
    masked = T.info_nce(q, k, pos, key_ids=['a', 'a', 'b'], temperature=0.1)
    unmasked = T.info_nce(q, k, pos, temperature=0.1)
    assert unmasked.item() > math.log(2) - 1e-3 > masked.item()


def test_reaction_loss_is_bce_plus_lambda_infonce():
    logits = torch.tensor([[2.0, -1.0], [-0.5, 0.3]])
    labels = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    q = torch.tensor([[0.6, 0.8]])
    k = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
    total, parts = T.reaction_loss(logits, labels, q, k, torch.tensor([0]), lambda_nce=2.0, temperature=0.1)
    bce = F.binary_cross_entropy_with_logits(logits, labels)
    nce = T.info_nce(q, k, torch.tensor([0]), temperature=0.1)
    assert total.item() == pytest.approx((bce + 2 * nce).item(), abs=1e-6)
    assert parts['bce'] == pytest.approx(bce.item()) and parts['nce'] == pytest.approx(nce.item())
    only_bce, p2 = T.reaction_loss(logits, labels, None, None, None)
    assert only_bce.item() == pytest.approx(bce.item()) and p2['nce'] == 0.0


def test_schedule_warmup_cosine_min_ratio():
    total = 100
    f = [T.lr_lambda(s, total, 0.05, 0.1) for s in range(total)]
    assert f[0] == pytest.approx(0.2) and f[4] == pytest.approx(1.0)
    assert all(a >= b - 1e-9 for a, b in zip(f[4:], f[5:]))
    assert f[-1] == pytest.approx(0.1, abs=0.002) and min(f) >= 0.1 - 1e-9


def test_action_logits_pool_like_the_heads():
    heads = LatentHeads(16, 8, n_prompts=6, projection_hidden=12, seed=3)
    states = torch.randn(5, 6, 16)
    p, _ = heads(states)
    assert torch.allclose(torch.sigmoid(T.act_logits_of(heads, states)), p, atol=1e-6)


def test_lora_layer_spec():
    assert T.lora_layer_indices('top:2', 30) == [28, 29]
    assert T.lora_layer_indices('all', 3) == [0, 1, 2]
    assert T.lora_layer_indices('4, 2', 30) == [2, 4]
    with pytest.raises(ValueError):
        T.lora_layer_indices('top:0', 30)
    with pytest.raises(ValueError):
        T.lora_layer_indices('31', 30)
    cfg = T.config_from('gpu7b')
    assert (cfg.lora_rank, cfg.lora_alpha, cfg.lr, cfg.min_lr_ratio, cfg.warmup) == (64, 128, 2e-5, 0.1, 0.05)
    with pytest.raises(ValueError):
        T.config_from('cpu', no_such_option=1)
    # the CPU recipe per adapter: the next-token adapters change it, the GPU recipe is left alone
    mem, react = T.config_from('cpu', 'memory'), T.config_from('cpu', 'reaction')
    assert (mem.lora_rank, mem.threads) == (T.ADAPTER_RECIPES['memory']['lora_rank'], 2) and react.lora_rank == 8
    assert react.streams == 16 and T.config_from('gpu7b', 'memory').lora_layers == 'all'
    with pytest.raises(ValueError):
        T.config_from('cpu', 'vision')


def _fit(work, stop_at=None):
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 1)
    x = torch.randn(64, 4)
    y = x @ torch.tensor([[1.0], [2.0], [-1.0], [0.5]])
    cfg = T.TrainConfig(steps=10, checkpoint_every=3, progress=False)

    def step_fn(step, gen):
        if step == stop_at:
            raise KeyboardInterrupt
        idx = torch.randint(64, (8,), generator=gen)
        loss = ((lin(x[idx]) - y[idx]) ** 2).mean()
        return loss, {'loss': loss.item()}

    hist = T.run_loop(cfg, [{'params': list(lin.parameters()), 'lr': 0.05}], {'lin': dict(lin.named_parameters())},
                      step_fn, work, 'fit')
    return hist, lin


def test_interrupted_run_resumes_exactly(tmp_path):
    hist, straight = _fit(tmp_path / 'a')
    with pytest.raises(KeyboardInterrupt):
        _fit(tmp_path / 'b', stop_at=7)
    assert (tmp_path / 'b' / 'checkpoint' / 'optimizer.safetensors').is_file()
    hist2, resumed = _fit(tmp_path / 'b')
    assert hist2 == hist and torch.equal(straight.weight, resumed.weight)
    assert hist[-1]['loss'] < hist[0]['loss']


def test_action_head_refit_fits_and_keeps_the_head_form():
    torch.manual_seed(0)
    heads = LatentHeads(8, 4, n_prompts=4, projection_hidden=6, seed=1)
    states = torch.randn(200, 4, 8) * torch.tensor([50.0, 1, 1, 1, 1, 1, 1, 0.1])   # badly scaled features
    h_act = states[:, :2].mean(1)
    labels = torch.stack([(h_act[:, 1] > 0), (h_act[:, 1] + h_act[:, 2] > 0.5)], 1).float()
    proj_before = [p.clone() for p in heads.proj.parameters()]
    r = T.refit_action_head(heads, states, labels, l2=1e-4)
    assert r['bce_after'] < 0.2 < r['bce_before']
    # the refit head is still FC + sigmoid on h_act (what the node runs), and it predicts the labels
    p, _ = heads(states)
    assert ((p >= 0.5).float() == labels).float().mean() > 0.95
    assert all(torch.equal(a, b) for a, b in zip(proj_before, heads.proj.parameters()))


def test_action_head_refit_on_both_halves():
    # a label only the retrieval half carries: the paper's h_act head cannot fit it, the act+ret head can
    torch.manual_seed(0)
    states = torch.randn(300, 4, 8)
    h_ret = states[:, 2:].mean(1)
    labels = torch.stack([h_ret[:, 0] > 0, h_ret[:, 3] > 0], 1).float()
    act = LatentHeads(8, 4, n_prompts=4, projection_hidden=6, seed=1)
    both = LatentHeads(8, 4, n_prompts=4, projection_hidden=6, seed=1)
    r_act = T.refit_action_head(act, states, labels, l2=1e-4)
    r_both = T.refit_action_head(both, states, labels, l2=1e-4, action_input='act+ret')
    assert both.action_input == 'act+ret' and act.action_input == 'act'
    assert r_both['bce_after'] < 0.2 < r_act['bce_after']
    assert torch.allclose(torch.sigmoid(T.act_logits_of(both, states)), both(states)[0], atol=1e-6)
    with pytest.raises(ValueError):
        T.config_from('cpu', action_input='h_ret')


def test_cross_validation_chooses_the_penalty_that_generalises():
    # few examples, many features, a noisy label: the unpenalised fit memorises; held-out streams show it
    torch.manual_seed(0)
    states = torch.randn(72, 4, 48)
    h_act = states[:, :2].mean(1)
    label = (h_act[:, 0] + 0.5 * torch.randn(72) > 0).float()
    labels = torch.stack([label, label], 1)
    groups = np.repeat(np.arange(8), 9)
    heads = LatentHeads(48, 4, n_prompts=4, projection_hidden=6, seed=1)
    r = T.choose_refit_l2(heads, states, labels, groups)
    bce = r['validation_bce']
    assert r['l2'] >= 0.1 and bce[f'{r["l2"]:g}'] < bce['0.001']
    # many examples and a clean label: the lightest penalty fits best, and stage 2 reports what it used
    states = torch.randn(400, 4, 8)
    h_act = states[:, :2].mean(1)
    labels = torch.stack([h_act[:, 1] > 0, h_act[:, 2] > 0], 1).float()
    heads = LatentHeads(8, 4, n_prompts=4, projection_hidden=6, seed=1)
    cfg = T.config_from('cpu', action_input='act')
    out = T.fit_action_head(heads, states, labels, np.arange(400) % 10, cfg)
    assert out['l2'] == min(T.REFIT_L2_GRID) and out['l2_by_cross_validation']['folds'] == 4
    assert out['bce_after'] < 0.2
    # one training stream cannot be cross-validated: the lightest penalty, no crash (a smoke run's few examples)
    one = T.choose_refit_l2(heads, states[:20], labels[:20], np.zeros(20, int))
    assert one['l2'] == min(T.REFIT_L2_GRID) and all(v == float('inf') for v in one['validation_bce'].values())


def test_generation_sample_can_cap_its_refusals():
    import random

    from lightomni_ros.train.lm import sample_pairs
    from lightomni_ros.train.questions import DONT_KNOW

    pairs = [{'target': DONT_KNOW if i % 2 else 'The keys are in the drawer.', 'i': i} for i in range(100)]
    # by default a plain sample, as the shipped adapters were trained on
    plain = sample_pairs(pairs, 40, random.Random(0))
    assert [p['i'] for p in plain] == sorted(random.Random(0).sample(range(100), 40))
    capped = sample_pairs(pairs, 40, random.Random(0), refusal_share=0.25)
    assert len(capped) == 40 and sum(p['target'] == DONT_KNOW for p in capped) == 10
    assert [p['i'] for p in capped] == sorted(p['i'] for p in capped)        # in the split's order
    # too few answers to fill the sample: the rest are refusals
    assert sum(p['target'] == DONT_KNOW for p in sample_pairs(pairs, 90, random.Random(0), 0.25)) == 40
