# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Retrieval (paper A.2): the text embedder e(.) for the fused query and the memory-client protocol.

The consolidation node owns memory; the reflex core talks to it through :class:`MemoryClient` (the node implements it
with the QueryMemory service; tests and the offline facade may use an in-process store).
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol, Sequence

import numpy as np

from ..models import ModelResolver
from .people import PersonSeen
from .types import Retrieved

log = logging.getLogger('lightomni.reflex')


class MemoryClient(Protocol):
    """Anything that answers a retrieval query like the QueryMemory service."""

    def query(self, vector: np.ndarray, text: str, k_semantic: int, k_episodic: int,
              face_ids: Sequence[str]) -> Retrieved:
        """Top entries for ``vector`` (or ``text`` when the vector is empty) and the profiles of ``face_ids``."""

    def people(self) -> list[PersonSeen] | None:
        """Every known person with the span they were seen in (None when the memory cannot be asked)."""


class TextEmbedder:
    """Sentence embeddings with the same model the memory node indexes with (mean pooling, L2-normalised)."""

    def __init__(self, resolver: ModelResolver | None = None, device: str = 'cpu') -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        resolved = (resolver or ModelResolver()).resolve('text_embedding')
        self.name = resolved.name
        self.tokenizer = AutoTokenizer.from_pretrained(resolved.path)
        self.model = AutoModel.from_pretrained(resolved.path, dtype=torch.float32).to(device).eval()
        self.device = device
        self.dim = int(self.model.config.hidden_size)
        self._torch = torch
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """[n, dim] float32, rows L2-normalised."""
        torch = self._torch
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock, torch.no_grad():
            enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=256, return_tensors='pt')
            enc = {k: v.to(self.device) for k, v in enc.items()}
            out = self.model(**enc).last_hidden_state
            mask = enc['attention_mask'].unsqueeze(-1).to(out.dtype)
            vec = (out * mask).sum(1) / mask.sum(1).clamp(min=1)
            vec = torch.nn.functional.normalize(vec, dim=-1)
        return vec.cpu().numpy().astype(np.float32)


class NoMemory:
    """A client for running without the memory node (nothing is retrieved; the reason is reported)."""

    def query(self, vector: np.ndarray, text: str, k_semantic: int, k_episodic: int,
              face_ids: Sequence[str]) -> Retrieved:
        """Return nothing, with the reason."""
        return Retrieved(error='no memory service')

    def people(self) -> list[PersonSeen] | None:
        """Nobody can be asked."""
        return None
