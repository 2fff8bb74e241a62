# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Omni path on a tiny randomly initialised Qwen2.5-Omni thinker (TEST model) with the real Qwen2.5 tokenizer.

Visual token pruning (exact counts and original positions), the feature cache across passes, the S_g prefix cache,
and ONNX parity of the reflex pass (also for the real SmolLM2 text backbone).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lightomni_ros.core.reflex import export
from lightomni_ros.core.reflex.backbone import QWEN_SPECIAL_START, VISION_START
from lightomni_ros.core.reflex.config import BackboneConfig, PruningConfig
from lightomni_ros.core.reflex.engine import EngineConfigs, ReflexEngine
from lightomni_ros.core.reflex.pruning import anchor_indices, prune, salient_count
from lightomni_ros.core.embedding import text_embedder
from lightomni_ros.core.reflex.types import SegmentInput

SIZE = 224   # 8x8 = 64 visual tokens per frame keeps the test cheap; the bench uses 448 (256 tokens)


@pytest.fixture(scope='module')
def embedder():
    return text_embedder(set_threads=False)


@pytest.fixture(scope='module')
def omni(embedder):
    cfgs = EngineConfigs(backbone=BackboneConfig(kind='omni', test_omni_hidden=128, test_omni_layers=2,
                                                 max_new_tokens=3, memory_max_new_tokens=3, threads=2),
                         pruning=PruningConfig(frame_size=SIZE, anchor_tokens=32, keep_fraction=0.25,
                                               duplicate_cosine=0.9))
    eng = ReflexEngine(cfgs, embedder=embedder)
    eng.set_global_state(3, '[09:00--09:10] <face_2> watered the plants.')
    return eng


def frames(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = (rng.random((SIZE, SIZE, 3)) * 255).astype(np.uint8)
    b = a.copy()
    b[:4] = 0                     # near-duplicate of a
    c = np.zeros_like(a)
    c[::2, ::3] = 255             # a different scene
    return [a, b, c]


def seg(sid: int) -> SegmentInput:
    return SegmentInput(segment_id=sid, start=0.0, end=5.0, transcript='What am I holding?', face_ids=['<face_2>'],
                        frames=frames())


def test_tokenizer_is_real_qwen(omni):
    tok = omni.backbone.tokenizer
    assert tok.encode('Hello world') == [9707, 1879]          # Qwen2.5 ids
    assert tok.encode('<|im_start|>') == [QWEN_SPECIAL_START + 1]
    assert tok.encode('<|vision_bos|>') == [VISION_START]
    assert omni.backbone.test_model and 'TEST' in omni.backbone.name


def test_pruning_counts_and_positions(omni):
    s = seg(1)
    feats = omni.segment_features(s)
    assert [t.shape[0] for t in feats['tokens']] == [64, 64, 64]
    res = prune(feats['tokens'], omni.cfgs.pruning)
    assert res.duplicate == [False, True, False]
    assert [len(k) for k in res.keep] == [salient_count(64, 0.25), 32, salient_count(64, 0.25)] == [16, 32, 16]
    assert np.array_equal(res.keep[1], anchor_indices(64, 32))
    assert res.removed_frac == pytest.approx(1 - 64 / 192)
    full = omni.backbone.segment_parts(s, feats)
    pruned = omni.backbone.segment_parts(s, feats, res.keep)
    for f, p, keep in zip(full[1:4], pruned[1:4], res.keep):
        cols = np.concatenate([[0], keep + 1, [65]])
        assert torch.equal(p.pos, f.pos[:, cols]), 'kept tokens keep their original M-RoPE positions'
        assert torch.equal(p.embeds, f.embeds[cols])
        assert p.extent == f.extent
    # everything after the visual tokens is numbered as if nothing had been removed
    assert torch.equal(pruned[-1].pos, full[-1].pos)
    emb, pos, end = __import__('lightomni_ros.core.reflex.backbone', fromlist=['assemble']).assemble(pruned)
    assert emb.shape[1] == sum(len(p) for p in pruned) and pos.shape == (3, emb.shape[1])


def test_feature_cache_serves_second_and_third_pass(omni):
    s = seg(2)
    before = dict(omni.cache_stats())
    omni.reflex_pass(s)
    omni.respond(s, [], max_new_tokens=2)
    topic = omni.memory_pass(s, '', max_new_tokens=2)
    after = omni.cache_stats()
    assert after['feature_misses'] - before['feature_misses'] == 1
    assert after['feature_hits'] - before['feature_hits'] == 2
    assert topic.producer == 'fallback-parser' and 'TEST' in topic.problem
    hits = omni.prefixes.hits
    omni.reflex_pass(seg(3))
    assert omni.prefixes.hits == hits + 1, 'same S_g version and adapter: prefix KV reused'


def test_batched_memory_passes_keep_each_rows_mrope_positions(omni, monkeypatch):
    """Omni segments of different lengths (frames, no frames) decoded together give each its own reply."""
    import lightomni_ros.core.reflex.engine as engine_module

    replies: list[str] = []
    monkeypatch.setattr(engine_module, 'topic_from_reply',
                        lambda seg, response, reply, *rest, **kw: replies.append(reply) or reply)
    monkeypatch.setattr(omni.backbone, 'test_model', False)
    # the greedy readings are compared: no second look (it would read the stub's replies as Topics)
    monkeypatch.setattr(omni.cfgs.backbone, 'memory_retry_beams', 0)
    monkeypatch.setattr(omni.cfgs.backbone, 'memory_read_alone', False)
    segs = [seg(20), SegmentInput(segment_id=21, start=0.0, end=3.0, transcript='Hello there, robot.')]
    for s in segs:
        omni.memory_pass(s, '', max_new_tokens=6)
    single = list(replies)
    replies.clear()
    omni.memory_passes([(s, '') for s in segs], max_new_tokens=6)
    assert replies == single


def test_a_beam_search_over_mrope_positions_starts_with_the_greedy_reply(omni):
    """The beam search decodes the omni backbone's M-RoPE positions as greedy decoding does (width 1: same reply)."""
    s = SegmentInput(segment_id=23, start=0.0, end=3.0, transcript='Robot, what am I holding?')
    greedy, _ = omni.respond(s, [], max_new_tokens=4)
    assert omni.respond_candidates(s, [], 1, max_new_tokens=4) == [greedy]
    assert 1 <= len(omni.respond_candidates(s, [], 3, max_new_tokens=4)) <= 3


def test_prefix_cache_matches_full_pass(omni):
    s = seg(4)
    cached = omni.reflex_pass(s)
    with torch.no_grad():
        emb, pos = omni.full_sequence(s)
        h = omni.backbone.decoder()(inputs_embeds=emb, position_ids=pos).last_hidden_state[0]
        p, z = omni.heads(h[-omni.heads.n_prompts:])
    assert abs(cached.p_speech - float(p[0])) < 1e-4
    assert np.allclose(cached.z_ret, z.numpy(), atol=1e-4)


@pytest.mark.parametrize('which', ['omni', 'text'])
def test_onnx_parity(which, omni, embedder, tmp_path):
    if which == 'omni':
        eng, s = omni, seg(5)
    else:
        eng = ReflexEngine(EngineConfigs(backbone=BackboneConfig(threads=2)), embedder=embedder)
        eng.set_global_state(1, '[10:00--10:05] <face_1> put the keys in the blue bowl.')
        s = SegmentInput(segment_id=6, start=0, end=5, transcript='Where are my keys?', face_ids=['<face_1>'])
    path = export.export_onnx(eng, s, tmp_path / f'{which}.onnx')
    runner = export.OnnxReflex(path)
    assert runner.name == 'onnxruntime-cpu'
    for probe in (s, SegmentInput(segment_id=s.segment_id + 100, start=0, end=9,
                                  transcript='A different, longer sentence for a '
                                  'different sequence length than the export.', frames=s.frames[:2])):
        ref = eng.reflex_pass(probe)
        emb, pos = eng.full_sequence(probe)
        p, z = runner.run(emb, pos)
        assert np.abs(p - np.array([ref.p_speech, ref.p_search])).max() < 1e-3
        assert np.abs(z - ref.z_ret).max() < 1e-3
    eng.accelerated = runner
    try:
        out = eng.reflex_pass(s)
    finally:
        eng.accelerated = None
    assert out.backend == 'onnxruntime-cpu' and out.query.shape == (embedder.dim,)


def test_audio_as_native_tokens(omni, tmp_path):
    import soundfile

    wav = tmp_path / 'a.wav'
    t = np.arange(16000 * 5) / 16000
    soundfile.write(wav, (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)
    s = SegmentInput(segment_id=40, start=0.0, end=5.0, transcript='Listen to this.', audio_uri=f'file://{wav}')
    feats = omni.segment_features(s)
    assert feats['audio'] is not None and feats['audio'].shape == (125, omni.backbone.hidden_size)  # 25 tokens/s
    parts = omni.backbone.segment_parts(s, feats)
    audio = [p for p in parts if p.kind == 'audio']
    assert len(audio) == 1 and len(audio[0]) == 127 and torch.equal(audio[0].pos[0], torch.arange(127))
    out = omni.reflex_pass(s)
    assert out.prompt_tokens > 127
    bad = SegmentInput(segment_id=41, start=0.0, end=5.0, transcript='x', audio_uri=str(tmp_path / 'missing.wav'))
    assert omni.segment_features(bad)['audio'] is None   # logged, not a crash


def test_choose_fastest_path(omni, tmp_path, monkeypatch):
    from lightomni_ros.core.reflex.config import ExportConfig

    monkeypatch.setenv('LIGHTOMNI_CACHE', str(tmp_path))
    s = seg(60)
    auto = export.choose(omni, ExportConfig(backend='auto'), s)
    assert set(auto.timings_ms) >= {'torch-cpu', 'onnxruntime-cpu'}
    assert auto.name == min(auto.timings_ms, key=auto.timings_ms.get) and auto.name in auto.note
    assert (auto.runner is None) == (auto.name == 'torch-cpu')
    assert list(tmp_path.glob('onnx/reflex-omni-*.onnx')), 'the export is cached'
    ort = export.choose(omni, ExportConfig(backend='onnxruntime'), s)
    assert ort.name == 'onnxruntime-cpu' and isinstance(ort.runner, export.OnnxReflex)
    if 'TensorrtExecutionProvider' not in export.available_providers():
        trt = export.choose(omni, ExportConfig(backend='tensorrt'), s)
        assert trt.name == 'torch-cpu' and 'tensorrt unavailable' in trt.note
    assert omni.accelerated is None


def test_patches_match_the_qwen_image_processor(omni):
    import cv2

    fr = [cv2.resize(f, (SIZE, SIZE)) for f in frames(3)]
    ref = omni.backbone.image_processor(images=fr, return_tensors='pt')
    px, grid = omni.backbone._pixels(fr)
    assert torch.equal(grid.cpu(), ref['image_grid_thw'])
    assert torch.allclose(px.cpu(), ref['pixel_values'], atol=1e-5)
