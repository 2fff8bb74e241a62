# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Greedy decoding over prompt parts and the clean-up of a reply (shared by every backbone; prompts: prompts.py)."""

from __future__ import annotations

from typing import Callable

import torch

from .backbone import cache_kwargs


@torch.no_grad()
def greedy_decode(backbone, hidden_last: torch.Tensor, cache, offset: int, max_new_tokens: int,
                  stop: Callable[[], bool] | None = None,
                  end_token: Callable[[int], bool] | None = None,
                  on_token: Callable[[list[int]], None] | None = None) -> tuple[list[int], bool]:
    """Greedy tokens after a prefilled prompt; returns (ids, interrupted).

    ``stop`` is polled between steps; ``end_token`` ends the reply at a token it accepts once some text was
    generated (e.g. a line break); ``on_token`` sees the ids so far after each token (streaming).
    """
    dec = backbone.decoder()
    eos = getattr(backbone.tokenizer, 'eos_ids', set())
    ids: list[int] = []
    logits = backbone.logits(hidden_last)
    for i in range(max_new_tokens):
        nxt = int(torch.argmax(logits[-1]).item())
        if nxt in eos or (end_token is not None and ids and end_token(nxt)):
            break
        ids.append(nxt)
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


def _pos_arg(backbone, pos: torch.Tensor) -> torch.Tensor:
    """Position ids in the shape the decoder expects: [1, L] (plain) or [3, 1, L] (M-RoPE)."""
    return pos.unsqueeze(1) if backbone.pos_dims == 3 else pos


def clean_response(text: str) -> str:
    """Trim a generated reply to its first paragraph without role markers."""
    text = text.replace('<|im_end|>', '').replace('<end_of_turn>', '').strip()
    for marker in ('<|im_start|>', '<start_of_turn>', '\nuser', '\nUser:'):
        text = text.split(marker)[0]
    return text.strip()
