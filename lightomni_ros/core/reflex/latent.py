# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The latent state S_l (paper Eq. 3): soft prompts, action head FC + sigmoid, projection head MLP-ReLU-MLP.

The soft prompts and both heads live in one safetensors file (``reflex_heads.safetensors`` in models_dir) with their
shapes, a ``trained`` flag, the action head's input and the text embedder the projection head was trained against
(``embedder``: ``name/dim``) in its metadata; a runtime with another embedder refuses the file. The action
head reads h_act (the paper's head) or, as the shipped heads do, h_act and h_ret side by side (``action_input``
``act+ret``): the retrieval half, trained by InfoNCE to say what to look up, also tells whether there is anything to
look up (held-out search F1 0.895 -> 0.948 on the same adapter, models/README.md). Without the file they are randomly
initialised from a fixed seed and labelled UNTRAINED in diagnostics and in every Action's notes.
"""

from __future__ import annotations

import logging
import pathlib

import numpy as np
import torch
from torch import nn

log = logging.getLogger('lightomni.reflex')


#: what the action head FC reads: h_act alone (the paper), or h_act and h_ret concatenated
ACTION_INPUTS = ('act', 'act+ret')


class LatentHeads(nn.Module):
    """N soft prompts [N, H]; h_act = mean of the first half, h_ret = mean of the second half of their states."""

    def __init__(self, hidden: int, embed_dim: int, n_prompts: int = 8, projection_hidden: int = 1024,
                 seed: int = 0) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.hidden, self.embed_dim, self.n_prompts = hidden, embed_dim, n_prompts
        self.soft_prompts = nn.Parameter(torch.randn(n_prompts, hidden, generator=gen) * 0.02)
        self.action = nn.Linear(hidden, 2)                    # [speech, search]
        self.proj = nn.Sequential(nn.Linear(hidden, projection_hidden), nn.ReLU(),
                                  nn.Linear(projection_hidden, embed_dim))
        with torch.no_grad():
            for p in list(self.action.parameters()) + list(self.proj.parameters()):
                if p.dim() > 1:
                    p.copy_(torch.randn(p.shape, generator=gen) / np.sqrt(p.shape[1]))
                else:
                    p.zero_()
        self.action_input = 'act'
        self.trained = False
        self.embedder = ''          # ``name/dim`` of the text embedder the projection was trained against
        self.source = f'untrained (random, seed {seed})'

    def set_action_input(self, kind: str) -> None:
        """Make the action FC read ``kind`` (see ACTION_INPUTS); widening keeps its decisions (zero h_ret weights)."""
        if kind not in ACTION_INPUTS:
            raise ValueError(f'action_input {kind!r}: expected one of {ACTION_INPUTS}')
        if kind == self.action_input:
            return
        old = self.action
        new = nn.Linear(self.hidden * (2 if kind == 'act+ret' else 1), 2).to(old.weight.device)
        with torch.no_grad():
            new.weight.zero_()
            new.weight[:, :self.hidden].copy_(old.weight[:, :self.hidden])
            new.bias.copy_(old.bias)
        self.action, self.action_input = new, kind

    def pooled(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(h_act, h_ret): the means of the first and second half of the soft-prompt states [..., N, H]."""
        half = self.n_prompts // 2
        return states[..., :half, :].mean(-2).float(), states[..., half:, :].mean(-2).float()

    def _action_in(self, h_act: torch.Tensor, h_ret: torch.Tensor) -> torch.Tensor:
        return h_act if self.action_input == 'act' else torch.cat([h_act, h_ret], -1)

    def action_features(self, states: torch.Tensor) -> torch.Tensor:
        """What the action FC reads from the soft-prompt states [..., N, H]: h_act, or [h_act, h_ret]."""
        return self._action_in(*self.pooled(states))

    def forward(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Hidden states at the soft-prompt positions [..., N, H] -> (p_act [..., 2], z_ret [..., D])."""
        h_act, h_ret = self.pooled(states)
        return torch.sigmoid(self.action(self._action_in(h_act, h_ret))), self.proj(h_ret)

    def save(self, path: str | pathlib.Path, trained: bool = False, embedder: str = '') -> None:
        """Write the prompts and heads as safetensors with their shapes and the embedder id in the metadata."""
        from safetensors.torch import save_file

        tensors = {k: v.detach().float().cpu().contiguous() for k, v in self.state_dict().items()}
        meta = {'hidden': str(self.hidden), 'embed_dim': str(self.embed_dim), 'n_prompts': str(self.n_prompts),
                'projection_hidden': str(self.proj[0].out_features), 'trained': str(bool(trained)).lower(),
                'action_input': self.action_input, 'embedder': embedder or self.embedder}
        save_file(tensors, str(path), metadata=meta)

    def load(self, path: str | pathlib.Path) -> bool:
        """Load prompts and heads when the file exists and its shapes match; return whether they were loaded."""
        from safetensors import safe_open

        path = pathlib.Path(path)
        if not path.is_file():
            return False
        with safe_open(str(path), 'pt') as f:
            meta = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}
        kind = meta.get('action_input', 'act')   # files written before the option read h_act
        if kind not in ACTION_INPUTS:
            log.warning('reflex heads %s: unknown action_input %r; keeping untrained heads', path, kind)
            return False
        previous = self.action_input
        self.set_action_input(kind)
        want = {k: tuple(v.shape) for k, v in self.state_dict().items()}
        got = {k: tuple(v.shape) for k, v in tensors.items()}
        if want != got:
            log.warning('reflex heads %s do not fit this backbone (want %s, file has %s); keeping untrained heads',
                        path, want, got)
            self.set_action_input(previous)
            return False
        self.load_state_dict(tensors)
        self.trained = meta.get('trained', 'false') == 'true'
        self.embedder = meta.get('embedder', '')
        self.source = f'{path} ({"trained" if self.trained else "untrained"}; action head reads {kind})'
        return True


def heads_embedder(path: str | pathlib.Path) -> tuple[str, int]:
    """(``name/dim`` of the embedder a heads file was trained with or '' when unrecorded, its embedding dim or 0)."""
    from safetensors import safe_open

    with safe_open(str(path), 'pt') as f:
        meta = f.metadata() or {}
    try:
        dim = int(meta.get('embed_dim', 0))
    except ValueError:
        dim = 0
    return meta.get('embedder', ''), dim


def fused_query(z_ret: np.ndarray, text_embedding: np.ndarray | None) -> np.ndarray:
    """Retrieval query normalize(z_ret + e(transcript)) (paper A.2); z_ret alone when there is no transcript."""
    q = np.asarray(z_ret, np.float32).copy()
    if text_embedding is not None and len(text_embedding):
        q = q + np.asarray(text_embedding, np.float32)
    n = float(np.linalg.norm(q))
    return q / n if n > 0 else q
