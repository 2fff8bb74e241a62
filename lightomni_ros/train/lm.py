# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Next-token training of the memory and generation adapters: cross-entropy on the target tokens only.

A pair is rendered by :mod:`~lightomni_ros.core.reflex.prompts` exactly as the engine renders the memory pass and the
response (same prefix, same parts, the target closed by the turn's end marker, which ends the reply at run time).

CPU path (``cache_lower``, text backbones): the LoRA sits on the top layers only, so the frozen lower layers see
the same inputs at every step. One forward per pair computes the hidden state at the first LoRA layer for the whole
sequence [prompt, target] (teacher forcing: the target's own tokens are inputs too); each step then runs only the top
layers, with the model's own layer code (the decoder's layer list cut to the top, so masks, rotary embeddings and
layer kinds are the ones the whole model uses), and the loss reads the target positions. A test checks that this
gives the full model's loss. The full path (any backbone, the GPU recipe) runs the whole prompt with gradients.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import logging
import pathlib
import random
import shutil
import time
from typing import Any, Iterator, Sequence

import torch
import torch.nn.functional as F

from .questions import REFUSALS
from .train import (_lora_state, _work_dir, attach_lora, load_backbone, lora_parameters, run_loop, save_adapter,
                    segment_of)

log = logging.getLogger('lightomni.train')
UTC = _dt.timezone.utc
LM_ADAPTERS = ('memory', 'generation')


@dataclasses.dataclass
class LMExample:
    """One pair ready for training: inputs of the first trained layer [L, H], prompt length, target ids."""

    h: torch.Tensor
    n_prompt: int
    ids: torch.Tensor


def pair_segment(pair: dict[str, Any]):
    """The SegmentInput of an adapter pair (as the synthesized record describes it)."""
    return segment_of(pair)


def pair_prompt(backbone, pair: dict[str, Any], adapter: str) -> tuple[list, str]:
    """Prompt parts (prefix included) and target text of a pair, rendered as the engine renders them."""
    from ..core.reflex import prompts as P
    from ..core.reflex.config import ResponseConfig
    from ..core.reflex.types import MemoryItem

    chat = backbone.chat
    seg = pair_segment(pair)
    if adapter == 'memory':
        parts = [backbone.text_part(P.memory_prefix(chat))] + P.memory_parts(backbone, seg, pair.get('names'), UTC)
        return parts, P.memory_target(pair['target']) + chat.end
    if adapter != 'generation':
        raise ValueError(f'adapter must be one of {LM_ADAPTERS}, not {adapter!r}')
    rc = ResponseConfig()
    mems = [MemoryItem(m['ref'], m['text']) for m in pair.get('memories', [])]
    # a question about a span of time reads that span's events instead of S_g (ReflexEngine._recall)
    prefix = P.response_prefix(pair.get('sg', ''), rc.sg_max_tokens, chat, window=pair.get('window') or None)
    parts = [backbone.text_part(prefix)] + \
        P.response_parts(backbone, seg, mems, pair.get('names'), rc.memory_max_tokens, UTC)
    return parts, pair['target'] + chat.end


def _pos_arg(backbone, pos: torch.Tensor) -> torch.Tensor:
    return pos.unsqueeze(1) if backbone.pos_dims == 3 else pos.reshape(1, -1)


def sequence(backbone, parts: list, target: str) -> tuple[torch.Tensor, torch.Tensor, int, torch.Tensor]:
    """inputs_embeds [1, L, H], positions, prompt length and target ids of [prompt, target]."""
    from ..core.reflex.backbone import assemble

    ids = torch.tensor(backbone.tokenizer.encode(target), dtype=torch.long)
    emb, pos, _ = assemble(list(parts) + [backbone.text_part(target)])
    return emb.to(backbone.dtype), pos, int(emb.shape[1]) - len(ids), ids


def target_loss(backbone, hidden: torch.Tensor, n_prompt: int, ids: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``ids`` from the final hidden states [L, H] of [prompt, target]."""
    n = len(ids)
    logits = backbone.logits(hidden[n_prompt - 1:n_prompt - 1 + n]).float()
    return F.cross_entropy(logits, ids.to(logits.device))


def full_loss(backbone, parts: list, target: str) -> torch.Tensor:
    """Target cross-entropy with the whole sequence through the decoder (any backbone; gradients everywhere)."""
    emb, pos, n_prompt, ids = sequence(backbone, parts, target)
    out = backbone.decoder()(inputs_embeds=emb, position_ids=_pos_arg(backbone, pos))
    return target_loss(backbone, out.last_hidden_state[0], n_prompt, ids)


@contextlib.contextmanager
def top_layers(backbone, split: int) -> Iterator[torch.nn.Module]:
    """The decoder with only its layers ``split``.. (and their layer kinds): its input is the hidden state there."""
    dec = backbone.decoder()
    layers, cfg = dec.layers, dec.config
    kinds = getattr(cfg, 'layer_types', None)
    n = cfg.num_hidden_layers
    dec.layers = torch.nn.ModuleList(list(layers)[split:])
    if kinds is not None:
        cfg.layer_types = list(kinds)[split:]
    cfg.num_hidden_layers = n - split
    try:
        yield dec
    finally:
        dec.layers, cfg.num_hidden_layers = layers, n
        if kinds is not None:
            cfg.layer_types = kinds


def compact(t: torch.Tensor) -> torch.Tensor:
    """``t`` on the CPU in float16 when it fits (half the memory), else float32 (Gemma's residual stream does not)."""
    half = t.detach().to(torch.float16)
    return (half if torch.isfinite(half).all() else t.detach().float()).cpu()


@torch.no_grad()
def cache_pair(backbone, parts: list, target: str, split: int) -> LMExample:
    """One frozen forward: the hidden state entering layer ``split`` for the whole [prompt, target] sequence."""
    emb, pos, n_prompt, ids = sequence(backbone, parts, target)
    if split == 0:
        return LMExample(compact(emb[0]), n_prompt, ids)
    out = backbone.decoder()(inputs_embeds=emb, position_ids=_pos_arg(backbone, pos), output_hidden_states=True)
    return LMExample(compact(out.hidden_states[split][0]), n_prompt, ids)


def cached_loss(backbone, items: Sequence[LMExample], split: int) -> torch.Tensor:
    """Mean target cross-entropy of a batch of cached pairs through the top layers (right-padded)."""
    dev, dt = backbone.device, backbone.dtype
    lmax = max(int(x.h.shape[0]) for x in items)
    h = torch.zeros(len(items), lmax, items[0].h.shape[-1], dtype=dt, device=dev)
    mask = torch.zeros(len(items), lmax, dtype=torch.long, device=dev)
    for i, x in enumerate(items):
        h[i, :x.h.shape[0]] = x.h.to(dev, dt)
        mask[i, :x.h.shape[0]] = 1
    pos = torch.arange(lmax, device=dev).unsqueeze(0).expand(len(items), lmax)
    with top_layers(backbone, split) as dec:
        out = dec(inputs_embeds=h, attention_mask=mask, position_ids=pos, use_cache=False).last_hidden_state
    return torch.stack([target_loss(backbone, out[i], x.n_prompt, x.ids) for i, x in enumerate(items)]).mean()


def supports_top(backbone) -> bool:
    """Whether the cached path applies: a plain-position text decoder with a cuttable layer list."""
    dec = backbone.decoder()
    return backbone.kind == 'text' and backbone.pos_dims == 1 and hasattr(dec, 'layers') and hasattr(dec, 'norm')


def sample_pairs(pairs: list[dict[str, Any]], n: int, rng: random.Random,
                 refusal_share: float = 0.0) -> list[dict[str, Any]]:
    """``n`` of ``pairs``, in their order; with ``refusal_share``, at most that share of them refusals.

    A sample of the whole split: the first pairs are one part of the streams (the generation pairs end with the
    probes, mostly answerable questions, which a cut at the front never reached). A question the streams left
    nothing known about becomes unanswerable, so about half the generation pairs of questions refuse, twice the
    synthesizer's ``unanswerable`` share; ``refusal_share`` caps them.
    """
    if not refusal_share:
        return [pairs[i] for i in sorted(rng.sample(range(len(pairs)), n))]
    refusing: list[int] = []
    others: list[int] = []
    for i, p in enumerate(pairs):
        (refusing if p.get('target') in REFUSALS else others).append(i)
    k = min(len(refusing), round(refusal_share * n))
    if len(others) < n - k:             # too few others: the rest are refusals
        k = min(len(refusing), n - len(others))
    keep = rng.sample(refusing, k) + rng.sample(others, min(len(others), n - k))
    return [pairs[i] for i in sorted(keep)]


def train_lm_adapter(cfg, pairs: list[dict[str, Any]], adapter: str, backbone=None) -> dict[str, Any]:
    """Next-token training of adapter ``memory`` or ``generation`` on its pairs; writes ``<out>/adapters/<name>``."""
    from tqdm import tqdm

    if adapter not in LM_ADAPTERS:
        raise ValueError(f'adapter must be one of {LM_ADAPTERS}, not {adapter!r}')
    t0 = time.time()
    torch.manual_seed(cfg.seed)
    backbone = backbone or load_backbone(cfg)
    if cfg.max_examples and cfg.max_examples < len(pairs):
        pairs = sample_pairs(pairs, cfg.max_examples, random.Random(f'{cfg.seed}:{adapter}'), cfg.refusal_share)
    with torch.no_grad():
        prompts = [pair_prompt(backbone, p, adapter) for p in pairs]
    model, layers = attach_lora(backbone, cfg, adapter)
    split = layers[0]
    cached = cfg.cache_lower and supports_top(backbone) and layers == list(range(split, len(backbone.decoder().layers)))
    t_cache = time.time()
    items: list[LMExample] = []
    if cached:
        model.eval()
        items = [cache_pair(backbone, parts, target, split)
                 for parts, target in tqdm(prompts, desc=f'{adapter}: caching frozen layers', disable=not cfg.progress)]
    t_cache = time.time() - t_cache
    model.train()

    def batch_loss(idx: list[int]) -> torch.Tensor:
        if cached:
            return cached_loss(backbone, [items[i] for i in idx], split)
        return torch.stack([full_loss(backbone, *prompts[i]) for i in idx]).mean()

    def step_fn(step: int, gen: torch.Generator) -> tuple[torch.Tensor, dict[str, float]]:
        loss = batch_loss(torch.randint(len(prompts), (cfg.batch,), generator=gen).tolist())
        return loss, {'loss': loss.item()}

    @torch.no_grad()
    def dataset_loss() -> float:
        # the mean over every pair in fixed batches, dropout off: a before/after figure that batch noise cannot fake
        model.eval()
        b = max(1, cfg.batch)
        losses = [batch_loss(list(range(i, min(i + b, len(prompts))))) for i in range(0, len(prompts), b)]
        model.train()
        return float(torch.stack(losses).mean())

    before = dataset_loss() if cfg.dataset_loss else None
    groups = [{'params': lora_parameters(model), 'lr': cfg.lr}]
    work = _work_dir(cfg, adapter)
    t_train = time.time()
    history = run_loop(cfg, groups, {'lora': _lora_state(model, adapter)}, step_fn, work, adapter)
    t_train = time.time() - t_train
    after = dataset_loss() if cfg.dataset_loss else None
    model.eval()
    path = save_adapter(model, adapter, pathlib.Path(cfg.out_dir))
    shutil.rmtree(work / 'checkpoint', ignore_errors=True)
    n = max(1, min(20, len(history)))
    first = sum(h['loss'] for h in history[:n]) / n if history else float('nan')
    last = sum(h['loss'] for h in history[-n:]) / n if history else float('nan')
    return {'adapter': str(path), 'pairs': len(prompts), 'lora_layers': layers, 'path': 'cached' if cached else 'full',
            'history': history, 'loss_first20': first, 'loss_last20': last, 'dataset_loss_before': before,
            'dataset_loss_after': after, 'cache_s': round(t_cache, 1),
            'train_s': round(t_train, 1), 'total_s': round(time.time() - t0, 1),
            'tokens_mean': sum(int(x.h.shape[0]) for x in items) / max(1, len(items)) if items else None}


__all__ = ['LMExample', 'LM_ADAPTERS', 'pair_prompt', 'sequence', 'full_loss', 'cache_pair', 'cached_loss',
           'top_layers', 'train_lm_adapter']
