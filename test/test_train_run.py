# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Training on the real SmolLM2-135M weights (tiny sizes) and next-token training on the tiny omni test thinker.

The cached path equals the full prompt; a short run lowers the loss and writes weights the reflex engine loads.
"""

from __future__ import annotations

import pytest
import torch

from lightomni_ros.core.reflex.adapters import AdapterSet
from lightomni_ros.core.reflex.config import AdapterConfig
from lightomni_ros.core.reflex.latent import LatentHeads
from lightomni_ros.train import lm, synth
from lightomni_ros.train import train as T


@pytest.fixture(scope='module')
def data():
    return synth.generate('train', cfg=synth.SynthConfig(streams=1, segments=30))


def _picked(d, n):
    """A mix of labels: memory questions, requests and idle/chat segments."""
    ex = d['examples']
    pos = [e for e in ex if e['gold'] and not e['noise']][:n // 2]
    neg = [e for e in ex if not e['speech'] and e['transcript']][:n - len(pos)]
    return {'examples': pos + neg, 'memories': d['memories']}


def _random_lora(layers: str, name: str):
    """The backbone with a non-trivial adapter ``name`` on ``layers`` (eval mode); returns it and the layer list."""
    cfg = T.TrainConfig(lora_layers=layers, threads=1)
    bb = T.load_backbone(cfg)
    model, idx = T.attach_lora(bb, cfg, name)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if 'lora_B' in n:
                p.normal_(0, 0.05)
    model.eval()
    return bb, idx


def test_cached_path_equals_full_prompt(data):
    bb, layers = _random_lora('top:2', 'reaction')
    heads = LatentHeads(bb.hidden_size, 384, 8, 32, 0)
    assert T.supports_cached(bb)
    ctxs = [T.reflex_context(bb, e, 110) for e in _picked(data, 3)['examples']]
    with torch.no_grad():
        full = torch.stack([T.full_soft_states(bb, heads, *c) for c in ctxs])
        caches = [T.cache_context(bb, c[0], c[1], layers[0], dtype=torch.float32) for c in ctxs]
        cached = T.cached_soft_states(bb, heads, caches, layers[0])
    assert len({c.length for c in caches}) > 1, 'lengths must differ to exercise the padding'
    assert torch.allclose(full, cached, atol=2e-3, rtol=1e-4), (full - cached).abs().max()


def test_short_run_lowers_loss_and_engine_loads_it(data, tmp_path):
    cfg = T.TrainConfig(out_dir=str(tmp_path / 'models'), work_dir=str(tmp_path / 'work'), steps=20, batch=6,
                        head_lr=1e-3, proj_lr=1e-6, lr=2e-4, lora_rank=4, lora_alpha=8, lora_layers='top:1',
                        max_tokens=110,
                        checkpoint_every=0, progress=False, threads=1, dataset_loss=True, refit_action=False)
    s = T.train_reaction(cfg, _picked(data, 6))
    assert s['path'] == 'cached'
    # the loss over the (fixed) training set, before and after, in eval mode
    assert s['dataset_loss_after'] < 0.85 * s['dataset_loss_before'], s
    heads = LatentHeads(576, 384, 8, 1024)
    assert heads.load(tmp_path / 'models' / T.HEADS_FILE) and heads.trained

    bb = T.load_backbone(T.TrainConfig())
    adapters = AdapterSet(bb, AdapterConfig(), tmp_path / 'models')
    # the adapters of the run's folder only (not mixed with the shipped memory adapter)
    assert set(adapters.loaded) == {'reaction'} and str(tmp_path / 'models') in adapters.loaded['reaction']


def test_next_token_training_on_tiny_omni(data, tmp_path):
    cfg = T.config_from('omni-smoke', out_dir=str(tmp_path / 'out'), work_dir=str(tmp_path / 'work'),
                        progress=False, lr=5e-3, steps=6, checkpoint_every=0)
    for adapter in ('memory', 'generation'):
        pairs = data['pairs'][adapter][:4]
        s = lm.train_lm_adapter(cfg, pairs, adapter)
        assert s['path'] == 'full'
        assert (tmp_path / 'out' / 'adapters' / adapter / 'adapter_model.safetensors').is_file()
        losses = [h['loss'] for h in s['history']]
        assert all(torch.isfinite(torch.tensor(losses))) and losses[-1] < losses[0], losses


def test_top_layer_path_equals_the_whole_model(data):
    """Next-token loss from cached lower-layer states through the cut decoder = the whole model's loss."""
    bb, layers = _random_lora('top:3', 'generation')
    assert lm.supports_top(bb)
    pairs = [lm.pair_prompt(bb, p, 'generation') for p in data['pairs']['generation'][:2]]
    pairs += [lm.pair_prompt(bb, p, 'memory') for p in data['pairs']['memory'][:2]]
    with torch.no_grad():
        full = torch.stack([lm.full_loss(bb, *p) for p in pairs]).mean()
        items = [lm.cache_pair(bb, *p, layers[0]) for p in pairs]
        cached = lm.cached_loss(bb, items, layers[0])
    assert len({int(x.h.shape[0]) for x in items}) > 1, 'lengths must differ to exercise the padding'
    assert abs(float(full) - float(cached)) < 2e-2 * float(full), (float(full), float(cached))
    assert len(bb.decoder().layers) == 30, 'the layer list is restored'


def test_short_lm_runs_on_the_cached_path(data, tmp_path):
    """The CPU recipe's path for both next-token adapters, a few steps each (the CI smoke test)."""
    for adapter in ('memory', 'generation'):
        cfg = T.config_from('cpu', adapter, out_dir=str(tmp_path / 'out'), work_dir=str(tmp_path / 'work'),
                            progress=False, lr=2e-3, steps=8, batch=4, lora_layers='top:2', lora_rank=4,
                            lora_alpha=8, max_examples=8, checkpoint_every=0, threads=1, dataset_loss=True)
        s = lm.train_lm_adapter(cfg, data['pairs'][adapter], adapter)
        assert s['path'] == 'cached' and s['pairs'] == 8
        # the loss over the same 8 pairs before and after (per-step losses are of random batches: too noisy to compare)
        assert s['dataset_loss_after'] < s['dataset_loss_before'], (adapter, s['dataset_loss_before'],
                                                                    s['dataset_loss_after'])
    bb = T.load_backbone(T.TrainConfig())
    assert set(AdapterSet(bb, AdapterConfig(), tmp_path / 'out').loaded) == {'memory', 'generation'}
    assert not (tmp_path / 'out' / 'adapters' / 'README.md').exists(), "peft's empty model card is not kept"


def test_stage2_states_are_what_the_node_computes(data):
    """Stage 2 fits the action head on the node's features: the whole prompt through the engine's own path."""
    from lightomni_ros.core.reflex.cache import crop_to
    from lightomni_ros.core.reflex.config import BackboneConfig
    from lightomni_ros.core.reflex.engine import EngineConfigs, ReflexEngine

    eng = ReflexEngine(EngineConfigs(backbone=BackboneConfig(threads=1)))
    # examples whose S_g has several lines, so that a prompt one token shorter loses its oldest line
    ex = [e for e in data['examples'] if e['transcript'] and e['sg'].count('\n') >= 1][-2:]
    assert len(ex) == 2
    n = eng.heads.n_prompts
    shorter = min(T.reflex_context(eng.backbone, e, 1 << 30)[0].shape[0] for e in ex) - 1
    with eng.adapters.use('reaction') as active:
        whole = T.node_states(eng.backbone, eng.heads, ex, 0, progress=False)
        cut = T.node_states(eng.backbone, eng.heads, ex, shorter, progress=False)
        for i, e in enumerate(ex):
            eng.set_global_state(i + 1, e['sg'])
            with torch.no_grad():
                parts = eng.segment_parts(T.segment_of(e, i + 1)) + [eng.soft_part()]
                hidden, cache, plen, _ = eng.prefill('reflex', parts, active)
                crop_to(cache, plen)
            assert torch.allclose(whole[i], hidden[-n:].float(), atol=2e-3), (whole[i] - hidden[-n:]).abs().max()
            assert not torch.allclose(cut[i], hidden[-n:].float(), atol=2e-3), 'a cut prompt must give other states'


def test_loading_the_embedder_keeps_the_training_thread_count():
    """The memory embedder's default (1 thread) once made every `--threads 2` run single-threaded."""
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        T.load_text_embedder()
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
