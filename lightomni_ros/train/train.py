# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Training of the reaction adapter, soft prompts and heads (paper 3.3, C.1), and next-token training of adapters.

Reaction training builds exactly the reflex prompt of :class:`~lightomni_ros.core.reflex.engine.ReflexEngine`
(system prefix with S_g, the segment's user turn, then the N soft prompts), runs it through the backbone with the
``reaction`` LoRA adapter and optimises

    loss = BCE(p_speech, p_search) + lambda x InfoNCE(normalize(z_ret + e(transcript)), positive memory)

with in-batch negatives (plus optional hard negatives from the memory that existed at that moment) at a configurable
temperature. Two execution paths give the same numbers (a test checks it):

- ``full``: the whole prompt goes through the decoder with gradients (any backbone, the omni thinker included; the
  GPU recipe for the 7B model).
- ``cached`` (Llama-style text backbones): LoRA only on the top ``lora_layers``; the frozen lower layers' keys/values
  of the context and its hidden state at the split are computed once per example. Each step then runs only the N soft
  prompts through the lower layers (attending to the cached keys/values, so the soft prompts still get gradients
  through them) and the full sequence through the few LoRA layers. This is what makes CPU training feasible.

Next-token training of the memory and generation adapters uses the same loop (optimizer, cosine schedule with warm-up,
checkpoints, resume) with a cross-entropy over the target tokens of (input, target) pairs.

Checkpoints are safetensors + JSON only (no pickle). Batch order and dropout are seeded per step, so a resumed run
continues exactly where it stopped.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import math
import pathlib
import shutil
import time
from typing import Any, Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..core.embedding import embedder_id
from .pairs import segment_of

log = logging.getLogger('lightomni.train')

HEADS_FILE = 'reflex_heads.safetensors'


@dataclasses.dataclass
class TrainConfig:
    """One training run (defaults: the CPU recipe on SmolLM2-135M)."""

    data_dir: str = ''                # synthesized splits (train/, heldout/)
    out_dir: str = 'models'           # output laid out like a models_dir: reflex_heads.safetensors, adapters/<name>/
    work_dir: str = ''                # checkpoints (default <out_dir>/../.train_work or cache)
    backbone: str = 'text'            # 'text' or 'omni'
    pack: str = ''
    models_dir: str = ''              # where the backbone's pack is looked up ('' : $LIGHTOMNI_MODELS_DIR, packages)
    device: str = 'cpu'
    dtype: str = 'float32'
    threads: int = 0
    test_omni_hidden: int = 64
    test_omni_layers: int = 2
    # LoRA
    lora_rank: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    # 'all', 'top:K' or a comma list of layer indices. top:4 on the 135M backbone: held-out search F1 0.87-0.895 vs
    # 0.866 with top:2 and 0.885 with top:6 (models/README.md)
    lora_layers: str = 'top:4'
    # latent heads (must match the node's LatentConfig so the file loads)
    soft_prompts: int = 8
    projection_hidden: int = 1024
    # optimisation
    steps: int = 300
    batch: int = 16
    lr: float = 2e-4                  # LoRA
    head_lr: float = 1e-3             # soft prompts and heads
    proj_lr: float = 0.0              # projection head (0: head_lr); Adam moves z_ret by about proj_lr x 5000 per step
    weight_decay: float = 0.0
    warmup: float = 0.05
    min_lr_ratio: float = 0.1
    grad_clip: float = 1.0
    lambda_nce: float = 2.0
    temperature: float = 0.05
    hard_negatives: int = 4
    # data
    streams: int = 0                  # use the first N streams of the training split (0: all)
    max_examples: int = 0             # 0: all
    refusal_share: float = 0.0        # of those sampled, at most this share refuse (lm adapters; 0: as they come)
    max_tokens: int = 160             # context tokens (oldest S_g lines dropped first)
    cache_lower: bool = True          # the cached path (text backbones with LoRA on top layers only)
    seed: int = 0
    checkpoint_every: int = 50
    resume: bool = True
    progress: bool = True
    dataset_loss: bool = False        # also report the loss over the whole training set before and after
    refit_action: bool = True         # stage 2: fit the action head to convergence on frozen soft-prompt states
    refit_l2: float = 0.0             # stage 2 L2 penalty; 0: chosen by cross-validation over training streams
    # what stage 2's action head reads: 'act' (h_act, the paper's head) or 'act+ret' (h_act and h_ret side by side;
    # held-out search F1 0.895 -> 0.948 on the same stage-1 weights, models/README.md). Stage 1 trains the paper's head.
    action_input: str = 'act+ret'
    refit_max_tokens: int = 0         # stage 2 prompts: 0 = whole, as the node reads them (stage 1 cuts to max_tokens)


RECIPES: dict[str, dict[str, Any]] = {
    # CPU, 2 cores, about 25 minutes on SmolLM2-135M (--threads 1, 36 minutes, gives the shipped files bit for bit)
    'cpu': {'threads': 2},
    # the paper's recipe for the 7B omni backbone on a GPU (C.1)
    'gpu7b': dict(backbone='omni', device='cuda', dtype='bfloat16', lora_rank=64, lora_alpha=128, lr=2e-5,
                  head_lr=1e-4, lora_layers='all', cache_lower=False, steps=3000, batch=32, max_tokens=4096),
    # a smoke test on the tiny random omni thinker
    'omni-smoke': dict(backbone='omni', lora_layers='all', cache_lower=False, steps=4, batch=4, lora_rank=4,
                       lora_alpha=8, max_examples=16, max_tokens=256),
}
#: what each adapter changes in the CPU recipe (the reaction adapter is the recipe itself)
ADAPTER_RECIPES: dict[str, dict[str, Any]] = {
    'reaction': {'streams': 16},
    # next-token adapters: LoRA on the top layers over cached lower layers (train/lm.py); models/README.md
    'memory': dict(steps=500, batch=8, lr=1e-3, lora_layers='top:8', lora_rank=16, lora_alpha=32),
    'generation': dict(steps=400, batch=8, lr=1e-3, lora_layers='top:8', lora_rank=16, lora_alpha=32,
                       max_examples=1300),
}
ADAPTERS = ('reaction', 'memory', 'generation')


# -- schedule, losses ---------------------------------------------------------------------------------------------
def lr_lambda(step: int, total: int, warmup: float, min_ratio: float) -> float:
    """Linear warm-up over ``warmup`` x total steps, then cosine decay to ``min_ratio``."""
    w = max(1, int(round(warmup * total)))
    if step < w:
        return (step + 1) / w
    frac = min(1.0, (step - w) / max(1, total - w))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * frac))


def info_nce(query: torch.Tensor, keys: torch.Tensor, pos: torch.Tensor, key_ids: Sequence[Any] | None = None,
             temperature: float = 0.05) -> torch.Tensor:
    """Compute InfoNCE of L2-normalised ``query`` [B, D] against ``keys`` [K, D]; ``pos[b]`` is the positive key index.

    Keys that are the same entry as the positive (equal ``key_ids``) are left out of the negatives.
    """
    q = F.normalize(query, dim=-1)
    k = F.normalize(keys, dim=-1)
    logits = q @ k.T / temperature
    if key_ids is not None:
        ids = list(key_ids)
        same = torch.tensor([[ids[j] == ids[int(p)] and j != int(p) for j in range(len(ids))] for p in pos],
                            dtype=torch.bool, device=logits.device)
        logits = logits.masked_fill(same, float('-inf'))
    return F.cross_entropy(logits, pos.to(logits.device))


def reaction_loss(act_logits: torch.Tensor, labels: torch.Tensor, fused: torch.Tensor | None, keys: torch.Tensor | None,
                  pos: torch.Tensor | None, key_ids: Sequence[Any] | None = None, lambda_nce: float = 2.0,
                  temperature: float = 0.05) -> tuple[torch.Tensor, dict[str, float]]:
    """BCE over the two triggers + lambda x InfoNCE (the latter only when the batch has retrieval targets)."""
    bce = F.binary_cross_entropy_with_logits(act_logits, labels.float())
    nce = torch.zeros((), device=act_logits.device)
    if fused is not None and len(fused):
        nce = info_nce(fused, keys, pos, key_ids, temperature)
    total = bce + lambda_nce * nce
    return total, {'loss': total.item(), 'bce': bce.item(), 'nce': nce.item()}


def act_logits_of(heads, states: torch.Tensor) -> torch.Tensor:
    """Pre-sigmoid action logits exactly as :meth:`LatentHeads.forward` computes them."""
    return heads.action(heads.action_features(states))


# -- LoRA --------------------------------------------------------------------------------------------------------
def lora_layer_indices(spec: str, n_layers: int) -> list[int]:
    """'all', 'top:K' or '3,4,5' -> sorted layer indices."""
    spec = spec.strip()
    if spec == 'all':
        return list(range(n_layers))
    if spec.startswith('top:'):
        k = int(spec[4:])
        if not 1 <= k <= n_layers:
            raise ValueError(f'lora_layers {spec!r}: K must be in 1..{n_layers}')
        return list(range(n_layers - k, n_layers))
    idx = sorted({int(x) for x in spec.split(',') if x.strip()})
    if not idx or idx[0] < 0 or idx[-1] >= n_layers:
        raise ValueError(f'lora_layers {spec!r}: indices must be in 0..{n_layers - 1}')
    return idx


def make_lora_config(cfg: TrainConfig, layers: Sequence[int]):  # -> peft.LoraConfig
    """The reflex LoRA recipe (all linear layers of the decoder) restricted to ``layers``."""
    from peft import LoraConfig

    alt = '|'.join(str(i) for i in layers)
    target = rf'.*(language_model|model)\.layers\.({alt})\..*(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)'
    return LoraConfig(r=cfg.lora_rank, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=target, bias='none', task_type='CAUSAL_LM')


def attach_lora(backbone, cfg: TrainConfig, name: str) -> tuple[Any, list[int]]:
    """Wrap the backbone's model with a fresh trainable adapter ``name``; return the peft model and its layers."""
    from peft import get_peft_model

    n_layers = len(backbone.decoder().layers)
    layers = lora_layer_indices(cfg.lora_layers, n_layers)
    torch.manual_seed(cfg.seed)
    for p in backbone.model.parameters():
        p.requires_grad_(False)
    model = get_peft_model(backbone.model, make_lora_config(cfg, layers), adapter_name=name)
    model.set_adapter(name)
    return model, layers


def lora_parameters(model) -> list[torch.nn.Parameter]:
    """Trainable LoRA parameters (in a stable order)."""
    return [p for n, p in model.named_parameters() if 'lora_' in n and p.requires_grad]


# -- backbone and prompts ------------------------------------------------------------------------------------------
def load_backbone(cfg: TrainConfig):
    """The configured backbone (the same loader the node uses)."""
    from ..core.models import ModelResolver
    from ..core.reflex.backbone import load_backbone as _load
    from ..core.reflex.config import BackboneConfig

    bcfg = BackboneConfig(kind=cfg.backbone, pack=cfg.pack, device=cfg.device, dtype=cfg.dtype, threads=cfg.threads,
                          test_omni_hidden=cfg.test_omni_hidden, test_omni_layers=cfg.test_omni_layers)
    return _load(bcfg, ModelResolver(cfg.models_dir or None))


def load_text_embedder():  # -> TextEmbedder
    """The retrieval text embedder of the nodes (fused queries live in the space memory is indexed in)."""
    from ..core.embedding import text_embedder

    # set_threads=False leaves torch's thread count to --threads: the nodes' one embedder thread would make training
    # single-threaded
    return text_embedder(set_threads=False)


def _sg_fit(build: Callable[[str], list], sg: str, max_tokens: int) -> list:
    """Parts built with the newest S_g lines that fit ``max_tokens`` (the oldest are dropped first)."""
    lines = [x for x in sg.split('\n') if x.strip()]
    while True:
        parts = build('\n'.join(lines))
        if sum(len(p) for p in parts) <= max_tokens or not lines:
            return parts
        lines = lines[1:]


@torch.no_grad()
def reflex_context(backbone, ex: dict[str, Any], max_tokens: int) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Embeddings [L, H], positions [P, L] and end offset of [system + S_g, segment] as the engine builds them."""
    from ..core.reflex import prompts as P
    from ..core.reflex.backbone import assemble

    seg = segment_of(ex)

    def build(sg: str) -> list:
        return [backbone.text_part(P.system_prefix(P.SYSTEM_REFLEX, sg, backbone.chat))] + \
            backbone.segment_parts(seg, backbone.encode_segment(seg))

    emb, pos, end = assemble(_sg_fit(build, ex.get('sg', ''), max_tokens))
    return emb[0], pos, end


def soft_positions(backbone, n: int, offset: int) -> torch.Tensor:
    """Positions [P, n] of the soft prompts after a context ending at ``offset``."""
    return (torch.arange(n, device=backbone.device) + offset).unsqueeze(0).expand(backbone.pos_dims, n)


def _pos_arg(backbone, pos: torch.Tensor) -> torch.Tensor:
    return pos.unsqueeze(1) if backbone.pos_dims == 3 else pos.reshape(1, -1)


def full_soft_states(backbone, heads, ctx: torch.Tensor, pos: torch.Tensor, end: int) -> torch.Tensor:
    """Hidden states [N, H] at the soft prompts, the whole prompt through the decoder (with gradients)."""
    n = heads.n_prompts
    emb = torch.cat([ctx.to(backbone.dtype), heads.soft_prompts.to(backbone.dtype)], 0).unsqueeze(0)
    p = torch.cat([pos, soft_positions(backbone, n, end)], 1)
    out = backbone.decoder()(inputs_embeds=emb, position_ids=_pos_arg(backbone, p))
    return out.last_hidden_state[0, -n:]


# -- the cached path (Llama-style decoders) ------------------------------------------------------------------------
@dataclasses.dataclass
class CachedContext:
    """Frozen lower-layer keys/values [S, 2, KV, L, D] and the hidden state [L, H] at the split of one context."""

    kv: torch.Tensor
    h: torch.Tensor
    length: int


def supports_cached(backbone) -> bool:
    """Whether the manual layer path applies (plain 1-D RoPE decoder with q/k/v/o projections)."""
    dec = backbone.decoder()
    layer = dec.layers[0]
    return backbone.pos_dims == 1 and hasattr(dec, 'rotary_emb') and hasattr(dec, 'norm') and all(
        hasattr(layer.self_attn, a) for a in ('q_proj', 'k_proj', 'v_proj', 'o_proj', 'head_dim', 'scaling')) and \
        not getattr(layer.self_attn, 'attn_logit_softcapping', None)


@torch.no_grad()
def cache_context(backbone, ctx: torch.Tensor, pos: torch.Tensor, split: int, dtype=torch.float16) -> CachedContext:
    """Run the frozen decoder once over a context; keep the lower layers' K/V and the hidden state at the split."""
    from transformers import DynamicCache

    cache = DynamicCache()
    from ..core.reflex.backbone import cache_kwargs

    dec = backbone.decoder()
    out = dec(inputs_embeds=ctx.unsqueeze(0).to(backbone.dtype), position_ids=pos.reshape(1, -1),
              output_hidden_states=True, **cache_kwargs(dec, cache))
    kv = torch.stack([torch.stack([cache.layers[i].keys[0], cache.layers[i].values[0]]) for i in range(split)])
    h = out.hidden_states[split][0]
    if not torch.isfinite(h.to(dtype)).all():
        dtype = torch.float32       # Gemma's residual stream overflows float16
    return CachedContext(kv.to(dtype).cpu(), h.to(dtype).cpu(), int(ctx.shape[0]))


def _layer(layer, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor,
           past: tuple[torch.Tensor, torch.Tensor] | None = None, last: int = 0) -> torch.Tensor:
    """One pre-norm decoder layer (Llama/Qwen2, or Gemma 3 with its extra norms; LoRA-wrapped projections included).

    ``last`` > 0 computes the output of only the last ``last`` positions (all positions still give keys/values):
    the final layer's context outputs are never read.
    """
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    attn = layer.self_attn
    b, t, _ = x.shape
    h = layer.input_layernorm(x)
    k = attn.k_proj(h).view(b, t, -1, attn.head_dim)
    v = attn.v_proj(h).view(b, t, -1, attn.head_dim).transpose(1, 2)
    if last:
        x, h, mask = x[:, -last:], h[:, -last:], mask[..., -last:, :]
    tq = x.shape[1]
    q = attn.q_proj(h).view(b, tq, -1, attn.head_dim)
    if hasattr(attn, 'q_norm'):   # Qwen3-style per-head norms
        q, k = attn.q_norm(q), attn.k_norm(k)
    q, _ = apply_rotary_pos_emb(q.transpose(1, 2), q.transpose(1, 2), cos[:, -tq:], sin[:, -tq:])
    _, k = apply_rotary_pos_emb(k.transpose(1, 2), k.transpose(1, 2), cos, sin)
    if past is not None:
        k = torch.cat([past[0], k], 2)
        v = torch.cat([past[1], v], 2)
    rep = q.shape[1] // k.shape[1]
    if rep > 1:
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=attn.scaling)
    o = attn.o_proj(o.transpose(1, 2).reshape(b, tq, -1))
    if hasattr(layer, 'pre_feedforward_layernorm'):    # Gemma 3: sandwich norms around attention and MLP
        x = x + layer.post_attention_layernorm(o)
        return x + layer.post_feedforward_layernorm(layer.mlp(layer.pre_feedforward_layernorm(x)))
    x = x + o
    return x + layer.mlp(layer.post_attention_layernorm(x))


def _rope(dec, x: torch.Tensor, pos: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(cos, sin) of every layer: one rotary embedding (Llama, Qwen) or one per layer kind (Gemma 3)."""
    import inspect

    kinds = getattr(dec.config, 'layer_types', None)
    if kinds and 'layer_type' in inspect.signature(dec.rotary_emb.forward).parameters:
        per = {k: dec.rotary_emb(x, pos, k) for k in set(kinds)}
        return [per[k] for k in kinds]
    one = dec.rotary_emb(x, pos)
    return [one] * len(dec.layers)


def cached_soft_states(backbone, heads, items: Sequence[CachedContext], split: int) -> torch.Tensor:
    """Hidden states [B, N, H] at the soft prompts of a batch of cached contexts (gradients to prompts and LoRA)."""
    dec = backbone.decoder()
    dev, dt = backbone.device, backbone.dtype
    n, b = heads.n_prompts, len(items)
    lmax = max(c.length for c in items)
    s, _, kvh, _, hd = items[0].kv.shape
    kv = torch.zeros(s, 2, b, kvh, lmax, hd, dtype=dt, device=dev)
    hs = torch.zeros(b, lmax, items[0].h.shape[-1], dtype=dt, device=dev)
    valid = torch.zeros(b, lmax, dtype=torch.bool, device=dev)
    lengths = torch.tensor([c.length for c in items], device=dev)
    for i, c in enumerate(items):   # left padding: every sequence ends where its soft prompts start
        kv[:, :, i, :, lmax - c.length:] = c.kv.to(dev, dt)
        hs[i, lmax - c.length:] = c.h.to(dev, dt)
        valid[i, lmax - c.length:] = True
    ar = torch.arange(n, device=dev)
    soft_pos = lengths[:, None] + ar[None, :]                                   # [B, N]
    causal = ar[:, None] >= ar[None, :]                                         # [N, N]
    mask_soft = torch.cat([valid[:, None, None, :].expand(b, 1, n, lmax), causal[None, None].expand(b, 1, n, n)], -1)
    x = heads.soft_prompts.to(dt)[None].expand(b, n, -1)
    rope = _rope(dec, x, soft_pos)
    for i in range(split):
        x = _layer(dec.layers[i], x, *rope[i], mask_soft, (kv[i, 0], kv[i, 1]))
    # the LoRA layers: the whole sequence [context at the split, soft prompts]
    full = torch.cat([hs, x], 1)                                                # [B, T, H]
    t = lmax + n
    pos_ctx = (torch.arange(lmax, device=dev)[None, :] - (lmax - lengths)[:, None]).clamp(min=0)
    pos = torch.cat([pos_ctx, soft_pos], 1)
    keyok = torch.cat([valid, torch.ones(b, n, dtype=torch.bool, device=dev)], 1)
    tri = torch.ones(t, t, dtype=torch.bool, device=dev).tril()
    mask = (tri[None] & keyok[:, None, :]) | torch.eye(t, dtype=torch.bool, device=dev)[None]  # pads see themselves
    mask = mask[:, None]
    rope = _rope(dec, full, pos)
    top = len(dec.layers)
    for i in range(split, top):
        full = _layer(dec.layers[i], full, *rope[i], mask, last=n if i == top - 1 else 0)
    return dec.norm(full[:, -n:])


# -- data --------------------------------------------------------------------------------------------------------
def trigger_labels(examples: Sequence[dict[str, Any]]) -> torch.Tensor:
    """[n, 2] float labels (speech, search) of synthesized examples."""
    return torch.tensor([[e['speech'], e['search']] for e in examples], dtype=torch.float32)


class ReactionData:
    """Examples of one split with their prompts, labels, text embeddings and memory embeddings."""

    def __init__(self, split: dict[str, Any], backbone, embedder, max_tokens: int, max_examples: int = 0,
                 progress: bool = True) -> None:
        from tqdm import tqdm

        ex = split['examples']
        if max_examples:
            ex = ex[:max_examples]
        self.examples = ex
        self.memories = {m['id']: m for m in split['memories']}
        self.labels = trigger_labels(ex)
        texts = [segment_of(e).utterance for e in ex]
        self.has_text = [bool(t) for t in texts]
        self.text_emb = torch.from_numpy(embedder.embed([t or '(empty)' for t in texts]))
        used = sorted({m for e in ex for m in ([e['gold']] if e['gold'] else []) + e['memory_ids']})
        self.mem_index = {m: i for i, m in enumerate(used)}
        self.mem_ids = used
        self.mem_emb = torch.from_numpy(embedder.embed([self.memories[m]['text'] for m in used])) if used else \
            torch.zeros(0, embedder.dim)
        self.contexts = []
        for e in tqdm(ex, desc='prompts', disable=not progress, leave=False):
            self.contexts.append(reflex_context(backbone, e, max_tokens))

    def __len__(self) -> int:
        return len(self.examples)

    def gold(self, i: int) -> int | None:
        """Index of the gold memory of example ``i`` in :attr:`mem_emb` (None when it has none)."""
        g = self.examples[i]['gold']
        return self.mem_index[g] if g else None

    def retrieval_batch(self, idx: Sequence[int], hard: int, gen: torch.Generator
                        ) -> tuple[list[int], torch.Tensor, torch.Tensor, list[str]]:
        """Rows with a gold entry, the candidate key indices (gold of each row + hard negatives), positives, ids."""
        rows = [j for j, i in enumerate(idx) if self.gold(i) is not None and self.has_text[i]]
        keys: list[int] = []
        pos = []
        for j in rows:
            g = self.gold(idx[j])
            pos.append(len(keys))
            keys.append(g)
        for j in rows:
            e = self.examples[idx[j]]
            others = [self.mem_index[m] for m in e['memory_ids'] if m != e['gold']]
            if others and hard:
                pick = torch.randperm(len(others), generator=gen)[:hard].tolist()
                keys += [others[p] for p in pick]
        return rows, torch.tensor(keys, dtype=torch.long), torch.tensor(pos, dtype=torch.long), \
            [self.mem_ids[k] for k in keys]


# -- checkpoints (safetensors + JSON) ------------------------------------------------------------------------------
def save_checkpoint(folder: pathlib.Path, step: int, cfg: TrainConfig, modules: dict[str, dict[str, torch.Tensor]],
                    optimizer: torch.optim.Optimizer, extra: dict[str, Any] | None = None) -> None:
    """Write trainable tensors, optimizer state and progress atomically (a folder swap)."""
    from safetensors.torch import save_file

    tmp = folder.with_name(folder.name + '.tmp')
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, tensors in modules.items():
        save_file({k: v.detach().float().cpu().contiguous() for k, v in tensors.items()},
                  str(tmp / f'{name}.safetensors'))
    opt_t, opt_meta = {}, {}
    for gi, group in enumerate(optimizer.param_groups):
        for pi, p in enumerate(group['params']):
            st = optimizer.state.get(p, {})
            for k, v in st.items():
                if torch.is_tensor(v) and v.dim() > 0:
                    opt_t[f'{gi}.{pi}.{k}'] = v.detach().cpu().contiguous()
                else:
                    opt_meta[f'{gi}.{pi}.{k}'] = float(v)
    if opt_t:
        save_file(opt_t, str(tmp / 'optimizer.safetensors'))
    (tmp / 'state.json').write_text(json.dumps({'step': step, 'config': dataclasses.asdict(cfg),
                                                'optimizer_scalars': opt_meta, **(extra or {})}, indent=1))
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def load_checkpoint(folder: pathlib.Path, modules: dict[str, dict[str, torch.nn.Parameter]],
                    optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore what :func:`save_checkpoint` wrote; return its state.json."""
    from safetensors.torch import load_file

    state = json.loads((folder / 'state.json').read_text())
    for name, params in modules.items():
        got = load_file(str(folder / f'{name}.safetensors'))
        with torch.no_grad():
            for k, p in params.items():
                p.copy_(got[k].to(p.device, p.dtype))
    tensors = load_file(str(folder / 'optimizer.safetensors')) if (folder / 'optimizer.safetensors').is_file() else {}
    scal = state.get('optimizer_scalars', {})
    for gi, group in enumerate(optimizer.param_groups):
        for pi, p in enumerate(group['params']):
            st = {}
            for key, v in tensors.items():
                g, i, k = key.split('.', 2)
                if int(g) == gi and int(i) == pi:
                    st[k] = v.to(p.device)
            for key, v in scal.items():
                g, i, k = key.split('.', 2)
                if int(g) == gi and int(i) == pi:
                    st[k] = torch.tensor(v)
            if st:
                optimizer.state[p] = st
    return state


# -- the shared loop -----------------------------------------------------------------------------------------------
def run_loop(cfg: TrainConfig, groups: list[dict[str, Any]], modules: dict[str, dict[str, torch.nn.Parameter]],
             step_fn: Callable[[int, torch.Generator], tuple[torch.Tensor, dict[str, float]]],
             work: pathlib.Path, desc: str) -> list[dict[str, float]]:
    """Run the optimisation: AdamW, warm-up/cosine schedule, clipping, checkpoints, resume.

    ``step_fn(step, generator)`` returns the loss of a step and its parts for the log.
    """
    from tqdm import tqdm

    opt = torch.optim.AdamW(groups, weight_decay=cfg.weight_decay)
    for g in opt.param_groups:
        g['base_lr'] = g['lr']
    ckpt = work / 'checkpoint'
    start, history = 0, []
    if cfg.resume and (ckpt / 'state.json').is_file():
        state = load_checkpoint(ckpt, modules, opt)
        if state['config'].get('seed') == cfg.seed and state['config'].get('steps') == cfg.steps:
            start, history = int(state['step']), state.get('history', [])
            log.info('resumed from %s at step %d', ckpt, start)
        else:
            log.warning('checkpoint %s is of another run (seed/steps differ); starting over', ckpt)
            opt = torch.optim.AdamW(groups, weight_decay=cfg.weight_decay)
            for g in opt.param_groups:
                g['base_lr'] = g['lr']
    params = [p for g in opt.param_groups for p in g['params']]
    bar = tqdm(range(start, cfg.steps), desc=desc, disable=not cfg.progress, initial=start, total=cfg.steps)
    for step in bar:
        factor = lr_lambda(step, cfg.steps, cfg.warmup, cfg.min_lr_ratio)
        for g in opt.param_groups:
            g['lr'] = g['base_lr'] * factor
        gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)
        torch.manual_seed(cfg.seed * 7919 + step)    # LoRA dropout of this step
        loss, parts = step_fn(step, gen)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        opt.step()
        parts['lr_factor'] = factor
        history.append({k: round(v, 5) for k, v in parts.items()})
        bar.set_postfix({k: f'{v:.3f}' for k, v in parts.items() if k != 'lr_factor'})
        if cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0 and step + 1 < cfg.steps:
            save_checkpoint(ckpt, step + 1, cfg, {k: dict(v) for k, v in modules.items()}, opt, {'history': history})
    return history


def _work_dir(cfg: TrainConfig, tag: str) -> pathlib.Path:
    from ..core.models import cache_dir

    base = pathlib.Path(cfg.work_dir) if cfg.work_dir else cache_dir() / 'train'
    d = base / tag
    d.mkdir(parents=True, exist_ok=True)
    return d


def _lora_state(model, name: str) -> dict[str, torch.nn.Parameter]:
    return {n: p for n, p in model.named_parameters() if 'lora_' in n and f'.{name}.' in n}


def save_adapter(model, name: str, out_dir: pathlib.Path) -> pathlib.Path:
    """Write ``out_dir/adapters/<name>/`` (adapter_config.json + adapter_model.safetensors)."""
    folder = out_dir / 'adapters'
    folder.mkdir(parents=True, exist_ok=True)
    card = folder / 'README.md'
    had_card = card.is_file()
    model.save_pretrained(str(folder), selected_adapters=[name], safe_serialization=True)
    if not had_card:
        card.unlink(missing_ok=True)    # peft's empty model card; how the adapters are made: models/README.md
    path = folder / name
    if not (path / 'adapter_model.safetensors').is_file():
        raise RuntimeError(f'peft did not write {path}')
    return path


# -- reaction training ---------------------------------------------------------------------------------------------
class _ReactionRun:
    """The reaction model under training: backbone with LoRA, heads, data and the frozen lower layers' caches."""

    def __init__(self, cfg: TrainConfig, train_split: dict[str, Any], backbone=None, embedder=None) -> None:
        from tqdm import tqdm

        from ..core.reflex.latent import LatentHeads

        self.cfg = cfg
        torch.manual_seed(cfg.seed)
        self.backbone = backbone = backbone or load_backbone(cfg)
        self.embedder = embedder or load_text_embedder()
        self.data = ReactionData(train_split, backbone, self.embedder, cfg.max_tokens, cfg.max_examples, cfg.progress)
        self.heads = LatentHeads(backbone.hidden_size, self.embedder.dim, cfg.soft_prompts, cfg.projection_hidden,
                                 cfg.seed).to(backbone.device)
        with torch.no_grad():
            # the projection starts near zero: the fused query starts as the text query and training adds to it
            self.heads.proj[2].weight.mul_(0.01)
        self.model, self.layers = attach_lora(backbone, cfg, 'reaction')
        self.model.train()
        self.split = self.layers[0]
        dec = backbone.decoder()
        self.cached = (cfg.cache_lower and supports_cached(backbone)
                       and self.layers == list(range(self.split, len(dec.layers))))
        if cfg.cache_lower and not self.cached:
            log.warning('cached path not applicable (backbone %s, LoRA layers %s): training on the full prompt',
                        backbone.kind, cfg.lora_layers)
        t_cache = time.time()
        self.caches: list[CachedContext] = []
        if self.cached:
            for ctx, pos, _ in tqdm(self.data.contexts, desc='caching frozen layers', disable=not cfg.progress):
                self.caches.append(cache_context(backbone, ctx.to(backbone.device), pos, self.split))
        self.cache_s = time.time() - t_cache
        self.mem_emb = self.data.mem_emb.to(backbone.device)
        self.text_emb = self.data.text_emb.to(backbone.device)
        self.labels = self.data.labels.to(backbone.device)

    def batch_loss(self, idx: list[int], gen: torch.Generator) -> tuple[torch.Tensor, dict[str, float]]:
        """Action-head cross-entropy plus the retrieval InfoNCE of the examples ``idx``."""
        cfg, data, heads = self.cfg, self.data, self.heads
        if self.cached:
            states = cached_soft_states(self.backbone, heads, [self.caches[i] for i in idx], self.split)
        else:
            states = torch.stack([full_soft_states(self.backbone, heads, data.contexts[i][0], data.contexts[i][1],
                                                   data.contexts[i][2]) for i in idx])
        logits = act_logits_of(heads, states)
        rows, keys, pos, ids = data.retrieval_batch(idx, cfg.hard_negatives, gen)
        fused = None
        if rows:
            _, z = heads(states[rows])
            fused = F.normalize(z + self.text_emb[[idx[j] for j in rows]], dim=-1)
        return reaction_loss(logits, self.labels[idx], fused, self.mem_emb[keys] if rows else None, pos, ids,
                             cfg.lambda_nce, cfg.temperature)

    @torch.no_grad()
    def dataset_loss(self) -> float:
        """Mean loss over the whole training set in fixed batches (dropout off), for before/after comparisons."""
        self.model.eval()
        gen = torch.Generator().manual_seed(self.cfg.seed)
        n, b = len(self.data), self.cfg.batch
        losses = [self.batch_loss(list(range(i, min(i + b, n))), gen)[0].item() for i in range(0, n, b)]
        self.model.train()
        return float(np.mean(losses))

    def param_groups(self) -> list[dict[str, Any]]:
        """LoRA, heads and projection, each with its learning rate."""
        proj = list(self.heads.proj.parameters())
        return [{'params': lora_parameters(self.model), 'lr': self.cfg.lr},
                {'params': [p for p in self.heads.parameters() if all(p is not q for q in proj)],
                 'lr': self.cfg.head_lr},
                {'params': proj, 'lr': self.cfg.proj_lr or self.cfg.head_lr}]


def train_reaction(cfg: TrainConfig, train_split: dict[str, Any], backbone=None, embedder=None) -> dict[str, Any]:
    """Train the reaction adapter, soft prompts and heads; write them to ``cfg.out_dir``; return a summary."""
    t0 = time.time()
    run = _ReactionRun(cfg, train_split, backbone, embedder)
    model, heads = run.model, run.heads

    def step_fn(step: int, gen: torch.Generator) -> tuple[torch.Tensor, dict[str, float]]:
        return run.batch_loss(torch.randint(len(run.data), (cfg.batch,), generator=gen).tolist(), gen)

    before = run.dataset_loss() if cfg.dataset_loss else None
    modules = {'heads': dict(heads.named_parameters()), 'lora': _lora_state(model, 'reaction')}
    work = _work_dir(cfg, 'reaction')
    t_train = time.time()
    history = run_loop(cfg, run.param_groups(), modules, step_fn, work, 'reaction')
    t_train = time.time() - t_train
    refit = None
    if cfg.refit_action:
        model.eval()
        states = node_states(run.backbone, heads, run.data.examples, cfg.refit_max_tokens, cfg.progress)
        refit = fit_action_head(heads, states, run.data.labels, streams_of_examples(run.data.examples), cfg)
        model.train()
    after = run.dataset_loss() if cfg.dataset_loss else None
    out = pathlib.Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    heads.eval()
    heads.save(out / HEADS_FILE, trained=True, embedder=embedder_id(run.embedder))
    model.eval()
    adapter = save_adapter(model, 'reaction', out)
    shutil.rmtree(work / 'checkpoint', ignore_errors=True)
    first = np.mean([h['loss'] for h in history[:20]]) if history else float('nan')
    last = np.mean([h['loss'] for h in history[-20:]]) if history else float('nan')
    return {'examples': len(run.data), 'path': 'cached' if run.cached else 'full', 'lora_layers': run.layers,
            'loss_first20': float(first), 'loss_last20': float(last), 'cache_s': round(run.cache_s, 1),
            'train_s': round(t_train, 1), 'total_s': round(time.time() - t0, 1), 'heads': str(out / HEADS_FILE),
            'adapter': str(adapter), 'history': history, 'dataset_loss_before': before,
            'dataset_loss_after': after, 'action_refit': refit}


def refit_saved(cfg: TrainConfig, train_split: dict[str, Any], validate_streams: Sequence[int] = ()) -> dict[str, Any]:
    """Apply stage 2 (:func:`refit_action_head`) to reaction weights already in ``cfg.out_dir``.

    With ``validate_streams``, first fit on the other training streams and report trigger F1 on those streams
    before/after (a check on training data only), then fit on everything and save the heads.
    """
    from peft import PeftModel

    from ..core.reflex.latent import LatentHeads

    out = pathlib.Path(cfg.out_dir)
    backbone = load_backbone(cfg)
    embedder = load_text_embedder()
    backbone.model = PeftModel.from_pretrained(backbone.model, str(out / 'adapters' / 'reaction'),
                                               adapter_name='reaction', is_trainable=False).eval()
    heads = LatentHeads(backbone.hidden_size, embedder.dim, cfg.soft_prompts, cfg.projection_hidden, cfg.seed)
    if not heads.load(out / HEADS_FILE):
        raise FileNotFoundError(f'no reaction heads in {out}')
    # stage 2 reads whole prompts and labels only: no cut prompts or embeddings of the split to prepare
    examples = train_split['examples'][:cfg.max_examples or None]
    labels = trigger_labels(examples)
    states = node_states(backbone, heads, examples, cfg.refit_max_tokens, cfg.progress)
    report: dict[str, Any] = {}
    if validate_streams:
        val = torch.tensor([e['stream'] in validate_streams for e in examples])
        trial = copy.deepcopy(heads)

        def f1s(h) -> list[float]:
            with torch.no_grad():
                p = torch.sigmoid(act_logits_of(h, states[val])) >= 0.5
            y = labels[val].bool()
            return [float(2 * (p[:, j] & y[:, j]).sum() / max(1, int(p[:, j].sum() + y[:, j].sum())))
                    for j in range(2)]
        report['validation_f1_before'] = f1s(trial)
        fit_action_head(trial, states[~val], labels[~val], streams_of_examples(examples)[~val.numpy()], cfg)
        report['validation_f1_after'] = f1s(trial)
    report.update(fit_action_head(heads, states, labels, streams_of_examples(examples), cfg))
    heads.save(out / HEADS_FILE, trained=True, embedder=embedder_id(embedder))
    return report


@torch.no_grad()
def node_states(backbone, heads, examples: Sequence[dict[str, Any]], max_tokens: int = 0,
                progress: bool = True) -> torch.Tensor:
    """Soft-prompt states [n, N, H] of each example's prompt cut to ``max_tokens`` (0: whole, as the node reads it).

    Stage 1 cuts prompts for speed (most of the CPU recipe's prompts lose old S_g lines); the action head is then fit
    on what the node will compute, so its decision boundary is not drawn on features it never sees at run time.
    """
    from tqdm import tqdm

    limit = max_tokens or 1 << 30
    return torch.stack([full_soft_states(backbone, heads, *reflex_context(backbone, e, limit))
                        for e in tqdm(examples, desc='stage 2 states', disable=not progress)])


#: stage 2's L2 penalties tried by cross-validation (on standardised features, so one grid fits every backbone)
REFIT_L2_GRID = (1e-3, 1e-2, 0.1, 1.0, 10.0)


def streams_of_examples(examples: Sequence[dict[str, Any]]) -> np.ndarray:
    """The stream of each example (the groups of cross-validation: a stream's segments share people and memory)."""
    return np.asarray([e.get('stream', 0) for e in examples])


def choose_refit_l2(heads, states: torch.Tensor, labels: torch.Tensor, groups: np.ndarray,
                    grid: Sequence[float] = REFIT_L2_GRID, folds: int = 4,
                    action_input: str | None = None) -> dict[str, Any]:
    """The stage-2 L2 penalty with the lowest validation log-loss, by ``folds``-fold cross-validation over streams.

    With about a thousand examples and two 576-wide states, the nearly unpenalised fit separates the training set
    perfectly (BCE 0.008) and learns the split's exact phrasings; whole streams are held out so a fold never validates
    on the people and memories it was fitted on. Training data only: the held-out split is never consulted.
    Returns the chosen ``l2`` and the mean validation BCE of each candidate.
    """
    fold_of = {g: i % folds for i, g in enumerate(sorted(set(groups.tolist())))}
    fold = torch.as_tensor(np.asarray([fold_of[g] for g in groups.tolist()]))
    y = labels.float()
    scores: dict[str, float] = {}
    for l2 in grid:
        losses = []
        for k in range(min(folds, len(fold_of))):
            val = fold == k
            if not val.any() or val.all():
                continue
            trial = copy.deepcopy(heads)
            refit_action_head(trial, states[~val], labels[~val], l2, action_input=action_input)
            with torch.no_grad():
                losses.append(F.binary_cross_entropy_with_logits(
                    trial.action(trial.action_features(states[val])), y[val].to(states.device)).item())
        scores[f'{l2:g}'] = float(np.mean(losses)) if losses else float('inf')
    best = min(grid, key=lambda v: scores[f'{v:g}'])
    return {'l2': float(best), 'validation_bce': scores, 'folds': folds}


def fit_action_head(heads, states: torch.Tensor, labels: torch.Tensor, groups: np.ndarray,
                    cfg: TrainConfig) -> dict[str, Any]:
    """Stage 2 on every training example, with ``cfg.refit_l2`` or (when 0) the L2 cross-validation chooses."""
    chosen = {} if cfg.refit_l2 else choose_refit_l2(heads, states, labels, groups, action_input=cfg.action_input)
    l2 = cfg.refit_l2 or chosen['l2']
    out = refit_action_head(heads, states, labels, l2, action_input=cfg.action_input)
    return {**out, 'l2': l2, **({'l2_by_cross_validation': chosen} if chosen else {})}


def refit_action_head(heads, states: torch.Tensor, labels: torch.Tensor, l2: float = 1e-3, iters: int = 200,
                      action_input: str | None = None) -> dict[str, float]:
    """Stage 2: fit the action head FC to convergence on the (frozen) soft-prompt states of every training example.

    The same BCE as stage 1, full batch with L-BFGS on standardised features (folded back into the FC afterwards)
    and a small L2 penalty; stage 1's few hundred noisy minibatch steps leave the linear head far from its optimum.
    ``action_input`` first switches what the FC reads (``LatentHeads.set_action_input``; widening starts from the
    current head). Returns the BCE before and after.
    """
    if action_input:
        heads.set_action_input(action_input)
    x = heads.action_features(states).detach()
    y = labels.float().to(x.device)
    mu, sd = x.mean(0), x.std(0).clamp(min=1e-4)
    z = (x - mu) / sd
    with torch.no_grad():
        before = F.binary_cross_entropy_with_logits(heads.action(x), y).item()
        w0 = heads.action.weight * sd          # the current head in standardised coordinates
        b0 = heads.action.bias + heads.action.weight @ mu
    w = w0.clone().requires_grad_(True)
    b = b0.clone().requires_grad_(True)
    opt = torch.optim.LBFGS([w, b], lr=1.0, max_iter=iters, line_search_fn='strong_wolfe')

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(z @ w.T + b, y) + l2 * (w ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        heads.action.weight.copy_(w / sd)
        heads.action.bias.copy_(b - (w / sd) @ mu)
        after = F.binary_cross_entropy_with_logits(heads.action(x), y).item()
    return {'bce_before': before, 'bce_after': after}


def default_synth_configs():  # -> tuple[SynthConfig, SynthConfig]
    """Sizes of the shipped run: the training split (reaction: its first streams) and the held-out split."""
    from .synth import HELDOUT_NOISE, SynthConfig

    return SynthConfig(streams=48, probes=12), SynthConfig(streams=12, noise_kinds=HELDOUT_NOISE)


def streams_of(split: dict[str, Any], n: int) -> dict[str, Any]:
    """The split restricted to its first ``n`` streams (examples, memories and pairs; all when 0)."""
    if not n:
        return split
    keep = [e for e in split['examples'] if e['stream'] < n]
    return dict(split, examples=keep, memories=[m for m in split['memories'] if m['stream'] < n])


def config_from(recipe: str = 'cpu', adapter: str = 'reaction', **overrides: Any) -> TrainConfig:
    """A TrainConfig from a named recipe (and, for the CPU recipe, the adapter's changes) plus overrides.

    None values are ignored.
    """
    if recipe not in RECIPES:
        raise ValueError(f'unknown recipe {recipe!r}; known: {sorted(RECIPES)}')
    if adapter not in ADAPTERS:
        raise ValueError(f'unknown adapter {adapter!r}; known: {ADAPTERS}')
    base = dict(RECIPES[recipe])
    if recipe == 'cpu':
        base.update(ADAPTER_RECIPES[adapter])
    base.update({k: v for k, v in overrides.items() if v is not None})
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    bad = sorted(set(base) - names)
    if bad:
        raise ValueError(f'unknown training options {bad}')
    from ..core.reflex.latent import ACTION_INPUTS

    if base.get('action_input', 'act+ret') not in ACTION_INPUTS:   # fail now, not after stage 1
        raise ValueError(f'action_input {base["action_input"]!r}: expected one of {ACTION_INPUTS}')
    return TrainConfig(**base)


__all__ = ['TrainConfig', 'RECIPES', 'ADAPTER_RECIPES', 'ADAPTERS', 'config_from', 'train_reaction',
           'streams_of', 'reaction_loss', 'info_nce',
           'lr_lambda', 'cached_soft_states', 'full_soft_states', 'cache_context', 'reflex_context',
           'lora_layer_indices', 'act_logits_of', 'choose_refit_l2', 'fit_action_head', 'REFIT_L2_GRID']
