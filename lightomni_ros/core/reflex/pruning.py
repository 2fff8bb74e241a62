# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Visual token pruning (paper D.4).

A frame whose mean token feature is within ``duplicate_cosine`` of the previous frame's keeps only an anchor set of
``anchor_tokens`` evenly spaced tokens; any other frame keeps its ``keep_fraction`` most salient tokens (largest
distance from the frame's mean feature). Kept indices are returned sorted, so the caller keeps the tokens' original
position ids (M-RoPE rows/columns) and the order of the sequence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from .config import PruningConfig


@dataclass
class PruneResult:
    """Indices kept per frame and what was removed."""

    keep: list[np.ndarray]
    duplicate: list[bool]
    total: int
    kept: int

    @property
    def removed_frac(self) -> float:
        """Fraction of visual tokens removed."""
        return 1.0 - self.kept / self.total if self.total else 0.0


def anchor_indices(n: int, count: int) -> np.ndarray:
    """``count`` evenly spaced indices in [0, n) (all of them when n <= count)."""
    if n <= count:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, count).round().astype(np.int64))


def salient_count(n: int, fraction: float) -> int:
    """How many tokens a non-duplicate frame keeps."""
    return max(1, min(n, math.ceil(n * fraction)))


def prune(frames: Sequence[torch.Tensor], cfg: PruningConfig) -> PruneResult:
    """Choose the tokens to keep of each frame's visual tokens [n_i, H]."""
    keep, dup, prev_mean = [], [], None
    total = kept = 0
    for tokens in frames:
        t = tokens.detach().float()
        n = int(t.shape[0])
        mean = t.mean(0)
        is_dup = prev_mean is not None and float(torch.nn.functional.cosine_similarity(
            mean, prev_mean, dim=0)) >= cfg.duplicate_cosine
        if is_dup:
            idx = anchor_indices(n, cfg.anchor_tokens)
        else:
            k = salient_count(n, cfg.keep_fraction)
            sal = (t - mean).norm(dim=-1)
            idx = np.sort(torch.topk(sal, k).indices.cpu().numpy())
        prev_mean = mean
        keep.append(idx)
        dup.append(is_dup)
        total += n
        kept += len(idx)
    return PruneResult(keep, dup, total, kept)
