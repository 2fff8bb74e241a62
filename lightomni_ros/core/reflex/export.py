# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Acceleration of the reflex pass: ONNX export, ONNX Runtime / TensorRT runners, choice of the fastest path.

The export takes embeddings in and gives action probabilities and z_ret out; ONNX Runtime runs it with the TensorRT,
CUDA or CPU execution provider.

The exported graph is the decoder (with the reaction adapter active at export time) plus the latent heads, over the
whole prompt [S_g, I^t, P_soft] (no KV cache inside the graph). With the TensorRT execution provider the engine is
built once and cached under cache_dir()/tensorrt. Exports are cached under cache_dir()/onnx keyed by the model,
adapter, heads and sequence kind.
"""

from __future__ import annotations

import hashlib
import logging
import pathlib
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from ..models import cache_dir
from .config import ExportConfig
from .types import SegmentInput

log = logging.getLogger('lightomni.reflex')


class ReflexGraph(nn.Module):
    """decoder + latent heads: (inputs_embeds [1, L, H], position_ids) -> (p_act [2], z_ret [D])."""

    def __init__(self, backbone, heads) -> None:
        super().__init__()
        self.decoder = backbone.decoder()
        self.heads = heads
        self.n = heads.n_prompts

    def forward(self, inputs_embeds: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One reflex pass without cache."""
        # an explicit all-ones mask keeps transformers off its packed-sequence detection (aten::diff, no ONNX op)
        mask = torch.ones(inputs_embeds.shape[:2], dtype=torch.long, device=inputs_embeds.device)
        h = self.decoder(inputs_embeds=inputs_embeds, position_ids=position_ids, attention_mask=mask,
                         use_cache=False).last_hidden_state
        return self.heads(h[0, -self.n:])


def export_key(engine) -> str:
    """Identity of what gets exported (model, adapter, heads, dtype)."""
    d = engine.describe()
    text = repr((d['backbone'], d['adapters'].get('reaction'), d['heads'], engine.heads.n_prompts,
                 engine.heads.embed_dim, torch.__version__))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def export_onnx(engine, sample: SegmentInput, path: pathlib.Path | None = None) -> pathlib.Path:
    """Export the reflex pass (reaction adapter active) to ONNX; reuse a cached export of the same model."""
    path = path or cache_dir() / 'onnx' / f'reflex-{engine.backbone.kind}-{export_key(engine)}.onnx'
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    graph = ReflexGraph(engine.backbone, engine.heads).eval()
    with engine.adapters.use('reaction'), torch.no_grad():
        emb, pos = engine.full_sequence(sample)
        emb, pos = emb.float(), pos
        tmp = path.with_suffix(f'.tmp{id(graph)}.onnx')
        seq_axis = 2 if pos.dim() == 3 else 1
        t0 = time.perf_counter()
        prev = engine.backbone.model.dtype if hasattr(engine.backbone.model, 'dtype') else torch.float32
        engine.backbone.model.float()
        try:
            torch.onnx.export(graph, (emb, pos), str(tmp), input_names=['inputs_embeds', 'position_ids'],
                              output_names=['p_act', 'z_ret'],
                              dynamic_axes={'inputs_embeds': {1: 'seq'}, 'position_ids': {seq_axis: 'seq'}},
                              opset_version=17, dynamo=False)
        finally:
            engine.backbone.model.to(prev)
        tmp.replace(path)
        data = pathlib.Path(str(tmp) + '.data')
        if data.exists():
            data.replace(pathlib.Path(str(path) + '.data'))
        log.info('exported the reflex pass to %s in %.1f s', path, time.perf_counter() - t0)
    return path


def available_providers() -> list[str]:
    """ONNX Runtime execution providers usable here, fastest first."""
    import onnxruntime as ort

    have = set(ort.get_available_providers())
    order = ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']
    out = [p for p in order if p in have]
    if 'TensorrtExecutionProvider' in out:
        try:
            import tensorrt  # noqa: F401 - the EP needs TensorRT's libraries
        except ImportError:
            out.remove('TensorrtExecutionProvider')
    return out


class OnnxReflex:
    """The exported reflex pass on ONNX Runtime with one execution provider (plus CPU fallback)."""

    def __init__(self, path: pathlib.Path, provider: str = 'CPUExecutionProvider', threads: int = 0) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        providers: list[Any] = []
        if provider == 'TensorrtExecutionProvider':
            trt = cache_dir() / 'tensorrt'
            trt.mkdir(parents=True, exist_ok=True)
            providers.append((provider, {'trt_engine_cache_enable': True, 'trt_engine_cache_path': str(trt),
                                         'trt_fp16_enable': True}))
            providers.append('CUDAExecutionProvider')
        elif provider != 'CPUExecutionProvider':
            providers.append(provider)
        providers.append('CPUExecutionProvider')
        self.session = ort.InferenceSession(str(path), opts, providers=providers)
        self.provider = self.session.get_providers()[0]
        self.name = {'TensorrtExecutionProvider': 'tensorrt', 'CUDAExecutionProvider': 'onnxruntime-cuda',
                     'CPUExecutionProvider': 'onnxruntime-cpu'}[self.provider]
        self._pos_dtype = np.int64

    def run(self, inputs_embeds: torch.Tensor, position_ids: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        """(p_act [2], z_ret [D]) as numpy."""
        feeds = {'inputs_embeds': inputs_embeds.detach().float().cpu().numpy(),
                 'position_ids': position_ids.detach().cpu().numpy().astype(self._pos_dtype)}
        p, z = self.session.run(None, feeds)
        return p, z


@dataclass
class Choice:
    """The reflex-pass path in use and why."""

    name: str
    runner: Any
    note: str
    timings_ms: dict[str, float]


def _time(fn, repeats: int = 3) -> float:
    fn()
    best = float('inf')
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - t0) * 1000.0)
    return best


def choose(engine, cfg: ExportConfig, sample: SegmentInput | None = None) -> Choice:
    """Measure the configured/available paths on a sample segment and keep the fastest (``auto``)."""
    sample = sample or SegmentInput(segment_id=0, start=0.0, end=5.0, transcript='What did I tell you this morning?',
                                    face_ids=['<face_1>'], visual_tags=['kitchen'])
    torch_name = engine.backend
    timings: dict[str, float] = {}
    runners: dict[str, Any] = {torch_name: None}
    engine.accelerated = None
    saved = (engine.sg_version, engine.sg_script)
    saved_kw = {'timezone': getattr(engine.tz, 'key', ''), 'nodes': engine.sg_nodes}
    engine.set_global_state(-1, synthetic_sg(cfg.choose_sg_tokens))
    try:
        return _choose(engine, cfg, sample, torch_name, timings, runners)
    finally:
        engine.set_global_state(*saved, **saved_kw)


def synthetic_sg(tokens: int) -> str:
    """A global-state script of about ``tokens`` tokens (events of an ordinary day), for timing only."""
    lines, n, k = [], 0, 0
    while n < tokens:
        line = (f'L0 [09:{k % 60:02d}--09:{k % 60:02d}]: someone talked with the robot about item {k} '
                f'in the kitchen and asked it to remember where it was put.')
        lines.append(line)
        n += len(line) // 4
        k += 1
    return '\n'.join(lines)


def _choose(engine, cfg: ExportConfig, sample: SegmentInput, torch_name: str, timings: dict[str, float],
            runners: dict[str, Any]) -> Choice:
    timings[torch_name] = _time(lambda: engine.reflex_pass(sample))
    wanted = cfg.backend
    try:
        path = export_onnx(engine, sample)
        for prov in available_providers():
            if wanted == 'tensorrt' and prov != 'TensorrtExecutionProvider':
                continue
            try:
                runner = OnnxReflex(path, prov)
            except Exception as e:  # noqa: BLE001 - a provider that fails to start is skipped, with the reason
                log.warning('ONNX Runtime provider %s failed: %s', prov, e)
                continue
            engine.accelerated = runner
            try:
                timings[runner.name] = _time(lambda: engine.reflex_pass(sample))
                runners[runner.name] = runner
            finally:
                engine.accelerated = None
    except Exception as e:  # noqa: BLE001 - export failure leaves the torch path, reported
        log.warning('ONNX export of the reflex pass failed (%s: %s); using %s', type(e).__name__, e, torch_name)
        return Choice(torch_name, None, f'{torch_name} (export failed: {type(e).__name__})', timings)
    if wanted == 'auto':
        name = min(timings, key=timings.get)
    else:
        pref = [n for n in timings if (wanted == 'onnxruntime' and n.startswith('onnxruntime'))
                or (wanted == 'tensorrt' and n == 'tensorrt')]
        name = pref[0] if pref else torch_name
    note = f'{name} (' + ', '.join(f'{k} {v:.0f} ms' for k, v in sorted(timings.items(), key=lambda x: x[1])) + ')'
    if wanted != 'auto' and name == torch_name:
        note += f'; {wanted} unavailable'
    return Choice(name, runners[name], note, timings)
