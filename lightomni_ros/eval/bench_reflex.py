# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench reflex``: what caching and visual token pruning save, S_g-size independence, EOS -> Action.

Measured in one run:

- ``latency_ms.{none,cache,prune,both}``: all passes one segment goes through (reflex pass, response prefill with one
  decoded token, memory pass with one decoded token) on a randomly initialised Qwen2.5-Omni thinker (TEST model, its
  size is printed) at real token counts (30 keyframes x 256 visual tokens), with neither optimisation, with the
  feature + S_g prefix caches, with pruning, and with both;
- ``visual_tokens_removed_frac``: fraction of visual tokens pruning removed over those segments;
- ``sg_latency_ratio_6mo_1h``: reflex-pass latency (prefix cache on) with a 6-month-sized global state over a
  1-hour-sized one (node counts from the k = 8 merge rule, segments of 30 s);
- ``eos_to_action_ms_p50``: end of speech -> Action (reflex pass, retrieval from an in-process store, response)
  on the default backbone (SmolLM2-135M-Instruct), segments already closed (perception time not included);
- ``prefix_update_ms.{from_scratch,reused}``: the reflex and response prefixes of a 6-month S_g after one appended
  line, built from nothing vs extended from the cached version; ``preemption_wait_ms``: how long a question waited for
  the chunked warm-up of a new S_g (its bound: one ``cache.prefill_chunk_tokens`` chunk).
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np
import torch

from ..core.embedding import text_embedder
from ..core.models import ModelResolver
from ..core.reflex.backbone import OmniBackbone, assemble
from ..core.reflex.config import BackboneConfig, PruningConfig
from ..core.reflex.engine import EngineConfigs, ReflexEngine
from ..core.reflex.types import MemoryItem, Retrieved, SegmentInput


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Reflex-area flags."""
    g = p.add_argument_group('reflex')
    g.add_argument('--omni-hidden', type=int, default=0, help='hidden size of the random omni thinker '
                   '(default 2048 on GPU, 512 on CPU, 128 with --quick)')
    g.add_argument('--omni-layers', type=int, default=0, help='decoder layers (default 12 on GPU, 4 on CPU, 2 quick)')
    g.add_argument('--frames', type=int, default=0, help='keyframes per segment (default 30; 4 with --quick)')
    g.add_argument('--device', default='auto', help='torch device for the benchmark (auto, cpu, cuda)')
    g.add_argument('--reps', type=int, default=0, help='segments measured per configuration (default 3; 1 quick)')


def live_nodes(segments: int, k: int = 8) -> int:
    """Nodes of S_g after ``segments`` level-0 nodes under the merge rule (k+1 nodes -> oldest k merged)."""
    counts = [0]
    for _ in range(segments):
        counts[0] += 1
        lvl = 0
        while counts[lvl] == k + 1:
            counts[lvl] = 1
            if lvl + 1 == len(counts):
                counts.append(0)
            counts[lvl + 1] += 1
            lvl += 1
    return sum(counts)


def sg_script(nodes: int, seed: int = 0) -> str:
    """A global-state script of ``nodes`` nodes of about 60 words each."""
    rng = np.random.default_rng(seed)
    words = ('kitchen Ana Bob keys coffee window table walked said asked smiled phone book laptop door garden dog '
             'medicine reminder morning evening plants watered visited cooked meeting lunch').split()
    return '\n'.join(f'[node {i}] ' + ' '.join(rng.choice(words, 60)) + '.' for i in range(nodes))


def video(n: int, size: int, seed: int = 0) -> list[np.ndarray]:
    """Keyframes of a camera watching scenes: a cut every 10 frames, small jitter within a scene."""
    rng = np.random.default_rng(seed)
    out, base = [], None
    for i in range(n):
        if i % 10 == 0:
            yy, xx = np.mgrid[0:size, 0:size]
            base = np.stack([(np.sin(xx / rng.uniform(5, 40) + rng.uniform(0, 6)) * 127 + 128),
                             (np.cos(yy / rng.uniform(5, 40)) * 127 + 128),
                             rng.uniform(0, 255) * np.ones((size, size))], -1)
        jitter = rng.normal(0, 3, base.shape)
        out.append(np.clip(np.roll(base, i % 10, axis=1) + jitter, 0, 255).astype(np.uint8))
    return out


class FixedMemory:
    """In-process memory with fixed entries (the bench measures the model, not the memory node)."""

    def query(self, q):  # noqa: ANN001, ANN201 - MemoryQuery -> Retrieved
        """Return two facts and the visible profiles."""
        return Retrieved(semantic=[MemoryItem('semantic:1', 'Ana keeps her keys in the blue bowl.'),
                                   MemoryItem('semantic:2', 'Bob is Ana\'s brother.')],
                         profiles=[MemoryItem(f'profile:{f}', f'{f} is Ana.') for f in q.face_ids])


def _sync(dev: torch.device) -> None:
    if dev.type == 'cuda':
        torch.cuda.synchronize()


class _OmniBench:
    """The omni engine of one run and a source of fresh segments (new ids: no feature-cache hits across them)."""

    def __init__(self, args: argparse.Namespace, dev: str, embedder: Any) -> None:
        gpu, quick = dev.startswith('cuda'), args.quick
        # GPU default: the text dimensions of Qwen2.5-Omni-7B (hidden 3584, 28 layers, MLP 18944, 28 heads)
        self.hidden = args.omni_hidden or (128 if quick else 3584 if gpu else 512)
        self.layers = args.omni_layers or (2 if quick else 28 if gpu else 4)
        big = self.hidden == 3584
        self.n_frames = args.frames or (4 if quick else 30)
        self.size = 224 if quick else 448
        self.reps = args.reps or (1 if quick else 3)
        cfgs = EngineConfigs(backbone=BackboneConfig(kind='omni', test_omni_hidden=self.hidden,
                                                     test_omni_layers=self.layers, device=dev, dtype='auto'),
                             pruning=PruningConfig(frame_size=self.size))
        self.bb = OmniBackbone(cfgs.backbone, ModelResolver(), intermediate=18944 if big else None,
                               heads=28 if big else None)
        self.eng = ReflexEngine(cfgs, FixedMemory(), embedder=embedder, backbone=self.bb)
        self.frames = video(self.n_frames, self.size)
        self._sid = 1000

    def segment(self) -> SegmentInput:
        """A 30 s question segment with the run's keyframes."""
        self._sid += 1
        return SegmentInput(segment_id=self._sid, start=0.0, end=30.0,
                            transcript='Robot, can you tell me where I left my keys this morning?',
                            face_ids=['<face_1>'], frames=self.frames)

    def describe(self, report) -> None:  # noqa: ANN001
        """The model and segment the figures are about."""
        bb, tokens_per_frame = self.bb, (self.size // 28) ** 2
        report.note(f'omni model: {bb.name}; decoder {bb.param_count() / 1e6:.1f} M '
                    f'params (+{(bb.param_count("all") - bb.param_count()) / 1e6:.0f} M embeddings/vision), '
                    f'{self.layers} layers, hidden {self.hidden}, {bb.device} {str(bb.dtype).replace("torch.", "")}')
        report.note(f'segment: {self.n_frames} keyframes x {tokens_per_frame} visual tokens = '
                    f'{self.n_frames * tokens_per_frame} visual tokens + transcript; S_g of 1 hour '
                    f'({live_nodes(120)} nodes)')

    def timed(self, fn: Callable[[], Any]) -> float:
        """Milliseconds of ``fn`` (the device synchronised before and after)."""
        _sync(self.bb.device)
        t0 = time.perf_counter()
        fn()
        _sync(self.bb.device)
        return (time.perf_counter() - t0) * 1000.0


def _stage_split(ob: _OmniBench, report) -> None:  # noqa: ANN001
    """How much of a pass is the transformer: encoder (preprocessing + vision tower) vs one decoder prefill."""
    bb, probe = ob.bb, ob.segment()
    bb.encode_segment(probe)   # warm-up (first CUDA kernels)
    feats: list[Any] = []
    t_enc = ob.timed(lambda: feats.append(bb.encode_segment(probe)))
    emb, pos, _ = assemble(bb.segment_parts(probe, feats[0]))
    pos = pos.unsqueeze(1)
    bb.decoder()(inputs_embeds=emb, position_ids=pos)
    t_dec = ob.timed(lambda: bb.decoder()(inputs_embeds=emb, position_ids=pos))
    report.note(f'one segment: encoder (frame preprocessing + vision tower) {t_enc:.0f} ms, one unpruned decoder '
                f'prefill of {emb.shape[1]} tokens {t_dec:.0f} ms')


def _optimisations(ob: _OmniBench, report) -> None:  # noqa: ANN001
    """All passes of a segment with neither, either and both of feature caching and token pruning."""
    eng = ob.eng

    def all_passes(seg: SegmentInput) -> None:
        eng.reflex_pass(seg)
        eng.respond(seg, [], max_new_tokens=1)
        eng.memory_pass(seg, 'ok', max_new_tokens=1)

    removed, results = [], {}
    for name, cache, prune in (('none', False, False), ('cache', True, False), ('prune', False, True),
                               ('both', True, True)):
        eng.features.enabled = eng.prefixes.enabled = cache
        eng.features.clear()
        eng.prefixes.invalidate()
        eng.cfgs.pruning.enabled = prune
        all_passes(ob.segment())   # warm-up (and, with caching, the S_g prefix of this version)
        times = []
        for _ in range(ob.reps):
            seg = ob.segment()
            times.append(ob.timed(lambda: all_passes(seg)))
            if prune and eng.last_prune is not None:
                removed.append(eng.last_prune.removed_frac)
        results[name] = float(np.median(times))
        report.figure(f'latency_ms.{name}', round(results[name], 1), 'ms',
                      f'reflex + response prefill + memory pass, median of {ob.reps}')
    report.figure('visual_tokens_removed_frac', round(float(np.mean(removed)), 4), '',
                  'a property of the pruning settings (keep_fraction, anchors), not a result; target >= 0.75')
    report.note(f'both vs none: {1 - results["both"] / results["none"]:.1%} faster (target >= 40%); '
                f'cache alone {1 - results["cache"] / results["none"]:.1%}, prune alone '
                f'{1 - results["prune"] / results["none"]:.1%}')


def _sg_ratio(ob: _OmniBench, report) -> None:  # noqa: ANN001
    """The reflex pass with the prefix cache at 1 hour vs 6 months of input."""
    eng = ob.eng
    eng.features.enabled = eng.prefixes.enabled = True
    eng.cfgs.pruning.enabled = True
    lat = {}
    for label, segs in (('1h', 120), ('6mo', 6 * 30 * 24 * 120)):
        nodes = live_nodes(segs)
        eng.set_global_state(10 + segs, sg_script(nodes, seed=segs))
        eng.reflex_pass(ob.segment())   # builds this version's prefix
        ts = []
        for _ in range(max(3, ob.reps)):
            seg = ob.segment()
            eng.segment_features(seg)   # encoder output cached, as when perception's segment arrives
            ts.append(ob.timed(lambda: eng.reflex_pass(seg)))
        lat[label] = float(np.median(ts))
        report.note(f'S_g {label}: {nodes} nodes, ~{len(ob.bb.tokenizer.encode(eng.sg_script))} tokens; '
                    f'reflex pass {lat[label]:.1f} ms')
    report.figure('sg_latency_ratio_6mo_1h', round(lat['6mo'] / lat['1h'], 3), '', 'target <= 1.2')


def _text_eos(dev: str, quick: bool, embedder: Any, report) -> None:  # noqa: ANN001
    """End of speech -> Action on the default text backbone."""
    if not ModelResolver().available('backbone_text'):
        report.note('eos_to_action_ms_p50 not measured: the default text backbone is not installed here')
        return
    text = ReflexEngine(EngineConfigs(backbone=BackboneConfig(device=dev, max_new_tokens=8 if quick else 32)),
                        FixedMemory(), embedder=embedder)
    text.set_global_state(1, sg_script(live_nodes(120)))
    ts = []
    for i in range(2 if quick else 6):
        seg = SegmentInput(segment_id=5000 + i, start=0.0, end=5.0, transcript='Robot, where did I leave my keys?',
                           face_ids=['<face_1>'], visual_tags=['hallway'])
        t0 = time.perf_counter()
        d = text.decide(seg, 0.5, 0.5, 12, 4)
        if i:   # the first one builds the prefix cache
            ts.append((time.perf_counter() - t0) * 1000.0)
    report.figure('eos_to_action_ms_p50', round(float(np.median(ts)), 1), 'ms',
                  f'{text.backbone.name} on {text.backbone.device}, response up to '
                  f'{text.cfgs.backbone.max_new_tokens} tokens')
    report.note(f'last response: {d.response!r}; heads {"trained" if text.heads.trained else "untrained"}')
    _prefix_reuse(text, quick, report)


def _prefix_reuse(eng: ReflexEngine, quick: bool, report) -> None:  # noqa: ANN001
    """A new S_g version at 6 months: its prefix from scratch vs extended from the cached one; a question mid warm-up.

    The first question after an S_g change used to wait for the whole prefix; now the warm-up copies the cached
    prefix up to the first changed token, prefills the rest in chunks and yields to a question between chunks.
    """
    import threading

    base = sg_script(live_nodes(120 if quick else 6 * 30 * 24 * 120), seed=7)
    line = '\n[node new] Ana put the blue umbrella by the door and asked the robot to remind her at six.'
    eng.set_global_state(100, base)
    eng.warm_prefixes()
    eng.set_global_state(101, base + line)
    t0 = time.perf_counter()
    reused, filled = eng.prefixes.reused_tokens, eng.prefixes.prefilled_tokens
    eng.warm_prefixes()
    reuse_ms = (time.perf_counter() - t0) * 1000.0
    reused, filled = eng.prefixes.reused_tokens - reused, eng.prefixes.prefilled_tokens - filled
    eng.prefixes.invalidate()
    t0 = time.perf_counter()
    eng.warm_prefixes()
    scratch_ms = (time.perf_counter() - t0) * 1000.0
    report.figure('prefix_update_ms', {'from_scratch': round(scratch_ms, 1), 'reused': round(reuse_ms, 1)}, 'ms',
                  f'reflex + response prefixes after one appended S_g line; {reused} tokens reused, {filled} '
                  f'prefilled; S_g ~{len(eng.backbone.tokenizer.encode(base))} tokens')
    # a question arrives while the warm-up prefills a long new tail (a merge rewrote the newest lines)
    eng.set_global_state(102, base + line + '\n' + sg_script(12, seed=8))
    warm = threading.Thread(target=eng.warm_prefixes)
    filled = eng.prefixes.prefilled_tokens
    warm.start()
    while eng.prefixes.prefilled_tokens == filled and warm.is_alive():
        time.sleep(0.001)
    d = eng.decide(SegmentInput(segment_id=6000, start=0.0, end=5.0, transcript='Robot, where is the umbrella?'),
                   0.5, 0.5, 12, 4)
    warm.join()
    report.figure('preemption_wait_ms', round(d.latency_ms['preemption_wait'], 1), 'ms',
                  f'a question during the chunked prefix warm-up (cache.prefill_chunk_tokens='
                  f'{eng.cfgs.cache.prefill_chunk_tokens}); its whole reflex pass {d.latency_ms["reflex"]:.0f} ms '
                  'includes the rest of the prefix')


def run(args: argparse.Namespace, report) -> None:  # noqa: ANN001
    """Measure and report."""
    dev = args.device
    if dev == 'auto':
        dev = 'cuda' if torch.cuda.is_available() else 'cpu'
    torch.set_grad_enabled(False)
    embedder = text_embedder(set_threads=False)
    ob = _OmniBench(args, dev, embedder)
    ob.describe(report)
    ob.eng.set_global_state(1, sg_script(live_nodes(120)))
    _stage_split(ob, report)
    _optimisations(ob, report)
    _sg_ratio(ob, report)
    ob = None   # release the omni model before loading the text backbone
    if dev.startswith('cuda'):
        torch.cuda.empty_cache()
    _text_eos(dev, args.quick, embedder, report)
