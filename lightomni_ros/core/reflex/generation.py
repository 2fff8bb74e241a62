# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Prompts of the three passes and greedy decoding over prompt parts (shared by every backbone)."""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from .backbone import cache_kwargs
from .types import MemoryItem

SYSTEM_REFLEX = ('You are the assistant of a robot that sees and hears continuously. Decide whether to speak now '
                 'and what to recall.')
SYSTEM_RESPONSE = ('You are a helpful robot assistant with long-term memory. Answer the user in one or two short '
                   'sentences, using the memories when they are relevant.')
SYSTEM_MEMORY = ('You are the memory of a robot assistant. Turn each interaction into JSON with keys "visual", '
                 '"audio", "semantic" (list of facts), "remembered" (list of things the user asked to remember) '
                 'and "reminders" (list of {"text", "in_seconds"}).')


def system_prefix(system: str, sg_script: str) -> str:
    """The cacheable prefix: system text and the global state S_g."""
    sg = sg_script.strip() or '(nothing remembered yet)'
    return f'<|im_start|>system\n{system}\nWhat happened so far (oldest first):\n{sg}<|im_end|>\n'


def sg_tail(sg_script: str, max_tokens: int) -> str:
    """The newest lines of S_g within ``max_tokens`` (about 4 characters a token); the whole script when 0.

    The response prompt reads this bounded view, so its prefill and decoding do not grow with months of memory;
    retrieval brings the older specifics, and the reflex pass still reads the whole S_g.
    """
    if max_tokens <= 0 or len(sg_script) <= 4 * max_tokens:
        return sg_script
    kept: list[str] = []
    budget = 4 * max_tokens
    for line in reversed(sg_script.splitlines()):
        if len(line) + 1 > budget:
            break
        kept.append(line)
        budget -= len(line) + 1
    return '\n'.join(['(older events: see the memories)'] + kept[::-1])


def clip_tokens(text: str, max_tokens: int) -> str:
    """``text`` cut at a word boundary to about ``max_tokens`` tokens (4 characters each); unchanged when 0."""
    if max_tokens <= 0 or len(text) <= 4 * max_tokens:
        return text
    return text[:4 * max_tokens].rsplit(' ', 1)[0] + ' ...'


def memories_text(items: Sequence[MemoryItem], max_tokens: int = 0) -> str:
    """Retrieved profiles and memories as a user-turn preamble, each cut to ``max_tokens`` (0: whole)."""
    if not items:
        return ''
    lines = ['Relevant memories:'] + [f'- {clip_tokens(m.text, max_tokens)}' for m in items]
    return '<|im_start|>system\n' + '\n'.join(lines) + '<|im_end|>\n'


ASSISTANT = '<|im_start|>assistant\n'


@torch.no_grad()
def greedy_decode(backbone, hidden_last: torch.Tensor, cache, offset: int, max_new_tokens: int,
                  stop: Callable[[], bool] | None = None,
                  end_token: Callable[[int], bool] | None = None) -> tuple[list[int], bool]:
    """Greedy tokens after a prefilled prompt; returns (ids, interrupted).

    ``stop`` is polled between steps; ``end_token`` ends the reply at a token it accepts once some text was
    generated (e.g. a line break).
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
    text = text.replace('<|im_end|>', '').strip()
    for marker in ('<|im_start|>', '\nuser', '\nUser:'):
        text = text.split(marker)[0]
    return text.strip()
