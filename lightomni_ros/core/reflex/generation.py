# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Greedy decoding over prompt parts and the clean-up of a reply (shared by every backbone; prompts: prompts.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import torch

from .backbone import cache_kwargs
from .cache import crop_to


#: a reply whose last tokens repeat one block of at least LOOP_MIN_PERIOD tokens LOOP_REPEATS times in a row (and
#: LOOP_MIN_TOKENS tokens in all) is looping: greedy decoding never leaves such a cycle ("nobody in view, nobody in
#: view, ..." until the token budget ends), so the decode stops there and keeps the block once
LOOP_MIN_PERIOD = 3
LOOP_MAX_PERIOD = 32
LOOP_REPEATS = 3
LOOP_MIN_TOKENS = 12

#: a reply that must not open some way (``avoid`` of :func:`greedy_decode`) is judged over its first AVOID_TOKENS
#: tokens; an opening it refuses is decoded again from the start without that first token, AVOID_RESTARTS times at
#: most (the reply decoded after the last restart is kept, whatever it opens with: the grounding check judges it)
AVOID_TOKENS = 4
AVOID_RESTARTS = 4
#: a reply held to a constraint at every step (``keep`` of :func:`greedy_decode`) takes the most likely of the
#: KEEP_TOP_K most likely tokens that keeps it (the most likely of all when none does)
KEEP_TOP_K = 16


def loop_excess(ids: list[int]) -> int:
    """How many tokens at the end of ``ids`` repeat a block already said (0 when the reply is not looping)."""
    n = len(ids)
    for p in range(LOOP_MIN_PERIOD, min(LOOP_MAX_PERIOD, n // LOOP_REPEATS) + 1):
        span = max(LOOP_REPEATS * p, LOOP_MIN_TOKENS)
        if span <= n and ids[n - span:n - p] == ids[n - span + p:]:
            return span - p
    return 0


@torch.no_grad()
def greedy_decode(backbone, hidden_last: torch.Tensor, cache, offset: int, max_new_tokens: int,
                  stop: Callable[[], bool] | None = None,
                  end_token: Callable[[int], bool] | None = None,
                  on_token: Callable[[list[int]], None] | None = None,
                  avoid: Callable[[list[int]], bool] | None = None,
                  keep: Callable[[list[int]], bool] | None = None) -> tuple[list[int], bool]:
    """Greedy tokens after a prefilled prompt; returns (ids, interrupted).

    ``stop`` is polled between steps; ``end_token`` ends the reply at a token it accepts once some text was
    generated (e.g. a line break); ``on_token`` sees the ids so far after each token (streaming); ``avoid`` refuses
    an opening (True for ids the reply must not begin with, judged over its first AVOID_TOKENS tokens): the reply
    is then decoded again from its start without that first token, so it is the most likely reply left, not a
    refused opening bent into another ("I don't" into "I am ..."); ``keep`` holds every step to a constraint (True
    for ids the reply may go on from, see :func:`_kept_token`). A looping reply ends where the loop began
    (:func:`loop_excess`).
    """
    dec = backbone.decoder()
    eos = getattr(backbone.tokenizer, 'eos_ids', set())
    ids: list[int] = []
    first = backbone.logits(hidden_last)
    logits = first
    prompt_len = int(cache.get_seq_length())
    barred: set[int] = set()       # first tokens of refused openings
    i = -1
    while i < max_new_tokens - 1:
        i += 1
        nxt = _kept_token(logits[-1], ids, keep)
        if nxt in eos or (end_token is not None and ids and end_token(nxt)):
            break
        ids.append(nxt)
        if avoid is not None and len(ids) <= AVOID_TOKENS and len(barred) < AVOID_RESTARTS and avoid(ids):
            # from the start again, without the refused opening's first token
            barred.add(ids[0])
            logits = first.clone()
            logits[:, list(barred)] = float('-inf')
            ids, i = [], -1
            crop_to(cache, prompt_len)
            continue
        excess = loop_excess(ids)
        if excess:
            del ids[len(ids) - excess:]
            break
        if on_token is not None:
            on_token(ids)
        if i == max_new_tokens - 1:
            break
        if stop is not None and stop():
            return ids, True
        emb = backbone.embedding(torch.tensor([[nxt]], device=backbone.device))
        pos = torch.full((backbone.pos_dims, 1), offset + i, dtype=torch.long, device=backbone.device)
        out = dec(inputs_embeds=emb, position_ids=_pos_arg(backbone, pos), **cache_kwargs(dec, cache))
        logits = backbone.logits(out.last_hidden_state[0])
    return ids, False


def _kept_token(logits: torch.Tensor, ids: list[int], keep: Callable[[list[int]], bool] | None) -> int:
    """The most likely next token; with ``keep``, the most likely of the KEEP_TOP_K that ``keep`` accepts.

    When none of them does, the most likely of all: the reply is then judged by the checks as it would be unheld.
    """
    best = int(torch.argmax(logits).item())
    if keep is None or keep(ids + [best]):
        return best
    for tok in torch.topk(logits, KEEP_TOP_K).indices.tolist()[1:]:
        if keep(ids + [tok]):
            return int(tok)
    return best


@dataclass
class PrefilledRow:
    """One prompt of a batched decode: its suffix after the shared prefix, prefilled alone (paper 3.3 sleep time)."""

    hidden_last: torch.Tensor          # [1, H]: the prompt's last hidden state
    keys: list[torch.Tensor]           # per layer [1, heads, L, d]: the suffix's keys (after the shared prefix)
    values: list[torch.Tensor]
    offset: int                        # position of the first generated token


@torch.no_grad()
def suffix_kv(cache, start: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Copies of the keys and values a cache holds from token ``start`` on, per layer."""
    layers = cache.layers
    return ([la.keys[:, :, start:].clone() for la in layers], [la.values[:, :, start:].clone() for la in layers])


@torch.no_grad()
def greedy_decode_batch(backbone, prefix_cache, rows: list[PrefilledRow], max_new_tokens: int,
                        stop: Callable[[], bool] | None = None,
                        keeps: list[Callable[[list[int]], bool] | None] | None = None) -> tuple[list[list[int]], bool]:
    """Greedy tokens for several prompts that share ``prefix_cache``, decoded together; returns (ids, interrupted).

    Each row's suffix sits after the shared prefix, right-padded to the longest; the padding is masked out and each
    row keeps its own positions, so every row decodes as it would alone (up to float rounding) while a decode step
    costs about one step of a single prompt on a memory-bound CPU. ``prefix_cache`` is not changed. A looping row
    ends where its loop began (:func:`loop_excess`); ``keeps`` holds each row to its constraint as
    :func:`greedy_decode`'s ``keep`` does.
    """
    from transformers import DynamicCache

    k = len(rows)
    dev = backbone.device
    longest = max(r.keys[0].shape[2] for r in rows)
    plen = int(prefix_cache.get_seq_length())
    cache = DynamicCache()
    for li, la in enumerate(prefix_cache.layers):
        ks, vs = [], []
        for r in rows:
            pad = longest - r.keys[li].shape[2]
            ks.append(torch.nn.functional.pad(r.keys[li], (0, 0, 0, pad)))
            vs.append(torch.nn.functional.pad(r.values[li], (0, 0, 0, pad)))
        cache.update(torch.cat([la.keys[:, :, :plen].expand(k, -1, -1, -1), torch.cat(ks)], dim=2),
                     torch.cat([la.values[:, :, :plen].expand(k, -1, -1, -1), torch.cat(vs)], dim=2), li)
    mask = torch.zeros((k, plen + longest), dtype=torch.long, device=dev)
    mask[:, :plen] = 1
    for i, r in enumerate(rows):
        mask[i, plen:plen + r.keys[0].shape[2]] = 1
    dec = backbone.decoder()
    eos = getattr(backbone.tokenizer, 'eos_ids', set())
    ids: list[list[int]] = [[] for _ in rows]
    done = [False] * k
    logits = backbone.logits(torch.cat([r.hidden_last[-1:] for r in rows]))
    offsets = torch.tensor([r.offset for r in rows], dtype=torch.long, device=dev)
    keeps = keeps or [None] * k
    for i in range(max_new_tokens):
        nxt = torch.argmax(logits, dim=-1)
        for j in range(k):
            if done[j]:
                continue
            t = _kept_token(logits[j], ids[j], keeps[j]) if keeps[j] is not None else int(nxt[j])
            nxt[j] = t
            if t in eos:
                done[j] = True
                continue
            ids[j].append(t)
            excess = loop_excess(ids[j])
            if excess:
                del ids[j][len(ids[j]) - excess:]
                done[j] = True
        if all(done) or i == max_new_tokens - 1:
            break
        if stop is not None and stop():
            return ids, True
        mask = torch.cat([mask, torch.ones((k, 1), dtype=torch.long, device=dev)], dim=1)
        pos = (offsets + i).view(1, k, 1).expand(backbone.pos_dims, k, 1)
        out = dec(inputs_embeds=backbone.embedding(nxt.view(k, 1)), attention_mask=mask,
                  position_ids=pos if backbone.pos_dims == 3 else pos[0], **cache_kwargs(dec, cache))
        logits = backbone.logits(out.last_hidden_state[:, -1])
    return ids, False


@torch.no_grad()
def beam_decode(backbone, hidden_last: torch.Tensor, cache, offset: int, max_new_tokens: int, width: int,
                stop: Callable[[], bool] | None = None,
                end_token: Callable[[int], bool] | None = None,
                keep: Callable[[list[int]], bool] | None = None) -> tuple[list[list[int]], bool]:
    """The ``width`` most likely replies after a prefilled prompt, best first; returns (replies, interrupted).

    A beam search over ``width`` hypotheses decoded together (one batched step costs about one greedy step on a
    memory-bound CPU); a reply is ranked by its mean token log-probability, so a short one is not preferred for
    being short. ``cache`` (the prompt's) is not changed: the beams decode on a copy. A reply ends where a greedy one
    would (end of turn, ``end_token``, a loop). With ``keep`` (see :func:`greedy_decode`) a beam grows only by
    tokens ``keep`` accepts, among the KEEP_TOP_K * ``width`` most likely (an end token too: a refused end is no end).
    """
    from transformers import DynamicCache

    dev = backbone.device
    dec = backbone.decoder()
    eos = getattr(backbone.tokenizer, 'eos_ids', set())
    beams = DynamicCache()
    for li, la in enumerate(cache.layers):
        # views, not copies: the first step's concatenation makes each layer a contiguous tensor of its own
        beams.update(la.keys.expand(width, -1, -1, -1), la.values.expand(width, -1, -1, -1), li)
    prompt = int(cache.get_seq_length())
    logp = torch.log_softmax(backbone.logits(hidden_last[-1:]).float(), dim=-1)[-1:]    # one live row at first
    scores = torch.zeros(1, device=dev)
    live: list[list[int]] = [[]]
    done: list[tuple[float, list[int]]] = []

    def finish(ids: list[int], score: float) -> None:
        done.append((score / max(1, len(ids)), ids))

    for i in range(max_new_tokens):
        total = (scores[:, None] + logp).view(-1)
        vocab = logp.shape[-1]
        rows, nxt, kept = [], [], []
        for flat in torch.topk(total, min((KEEP_TOP_K if keep else 2) * width, total.numel())).indices.tolist():
            row, tok = divmod(flat, vocab)
            ids, score = live[row], float(total[flat])
            if keep is not None and not keep(ids + [tok]):
                continue
            if tok in eos or (end_token is not None and ids and end_token(tok)):
                finish(ids, score)
                continue
            grown = ids + [tok]
            excess = loop_excess(grown)
            if excess:
                finish(grown[:len(grown) - excess], score)
                continue
            rows.append(row)
            nxt.append(tok)
            kept.append((grown, score))
            if len(kept) == width:
                break
        if not kept or len(done) >= width:     # enough finished replies (transformers' early stopping)
            break
        if i == max_new_tokens - 1:
            done.extend((s / len(g), g) for g, s in kept)
            break
        if stop is not None and stop():
            return [g for _, g in sorted(done, key=lambda d: -d[0])], True
        rows += [rows[-1]] * (width - len(rows))        # a full batch keeps the cache's shape; extras are dropped
        reorder_generated(beams, rows, prompt)
        live = [g for g, _ in kept]
        scores = torch.tensor([s for _, s in kept], device=dev)
        step = torch.tensor(nxt + [nxt[-1]] * (width - len(nxt)), device=dev).view(width, 1)
        pos = torch.full((backbone.pos_dims, width, 1), offset + i, dtype=torch.long, device=dev)
        out = dec(inputs_embeds=backbone.embedding(step), position_ids=pos if backbone.pos_dims == 3 else pos[0],
                  **cache_kwargs(dec, beams))
        logp = torch.log_softmax(backbone.logits(out.last_hidden_state[:, -1]).float(), dim=-1)[:len(kept)]
    return [g for _, g in sorted(done, key=lambda d: -d[0])][:width], False


def reorder_generated(cache, rows: list[int], start: int) -> None:
    """Give beam ``b`` of ``cache`` what beam ``rows[b]`` held, from token ``start`` on.

    Before ``start`` every beam holds the same prompt, so only the generated tokens move: reordering the whole
    cache (transformers' ``reorder_cache``) copied the prompt's keys and values of every beam at every step, on a
    memory-bound CPU most of a beam step's time beside the weights.
    """
    if rows == list(range(len(rows))) or int(cache.get_seq_length()) <= start:
        return
    idx = torch.tensor(rows, device=cache.layers[0].keys.device)
    for la in cache.layers:
        la.keys[:, :, start:] = la.keys[idx, :, start:]         # the right side is a copy: no overlap
        la.values[:, :, start:] = la.values[idx, :, start:]


def _pos_arg(backbone, pos: torch.Tensor) -> torch.Tensor:
    """Position ids in the shape the decoder expects: [1, L] (plain) or [3, 1, L] (M-RoPE)."""
    return pos.unsqueeze(1) if backbone.pos_dims == 3 else pos


def clean_response(text: str) -> str:
    """Trim a generated reply to its first paragraph without role markers, a list item's mark or a doubled quote."""
    text = text.replace('<|im_end|>', '').replace('<end_of_turn>', '').strip()
    for marker in ('<|im_start|>', '<start_of_turn>', '\nuser', '\nUser:'):
        text = text.split(marker)[0]
    # a list item's mark ("- Pablo thinks ..."): the small model's habit from list-like memories, not a word to say
    text = re.sub(r'^[-*\u2022]\s+', '', text.strip())
    # a quote closed twice ('... said: "Bimblo F2.""'): the stray mark would be read out or shown
    return text[:-1] if text.endswith('""') and text.count('"') % 2 else text
