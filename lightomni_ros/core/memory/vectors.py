# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""FAISS vector index of one memory kind: exact inner product while small, HNSW past a size; persisted and checked.

Ids are the store's entry ids (``IndexIDMap2``). Vectors are L2-normalised, so inner product is cosine similarity.
Deleting an entry removes its vector: ``remove_ids`` on the exact index; HNSW cannot remove nodes, so there the vector
bytes are overwritten with zeros in place (the persisted file no longer holds them) and the id is excluded from every
search; :attr:`VectorIndex.needs_compaction` tells the owner when to rebuild. On a GPU (faiss-gpu), exact searches run
on a GPU mirror of the index.

A saved index is a ``.faiss`` file plus a JSON sidecar (type, dimension, embedder, count, largest id, the store's
deletion counter, tombstones, CRC32 of the index file); :func:`load` returns None for anything that does not check
out, and the owner rebuilds from SQLite.
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
import zlib
from typing import Any

import faiss
import numpy as np

log = logging.getLogger('lightomni.memory')


def gpu_count() -> int:
    """Count the GPUs visible to FAISS (0 with faiss-cpu)."""
    try:
        return int(faiss.get_num_gpus()) if hasattr(faiss, 'StandardGpuResources') else 0
    except Exception:  # noqa: BLE001 - a broken CUDA install must not stop a CPU search
        return 0


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Float32, C-contiguous, each row scaled to unit L2 norm (zero rows stay zero)."""
    x = np.ascontiguousarray(np.atleast_2d(np.asarray(x, dtype=np.float32)))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x / np.maximum(norms, 1e-12), dtype=np.float32)


class VectorIndex:
    """One FAISS index (``IndexIDMap2``) over the vectors of one memory kind."""

    def __init__(self, dim: int, *, hnsw_threshold: int = 10000, hnsw_m: int = 16, ef_construction: int = 40,
                 ef_search: int = 64, use_gpu: str = 'auto') -> None:
        self.dim = int(dim)
        self.hnsw_threshold = hnsw_threshold
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.tombstones: set[int] = set()
        self._selector: Any = None
        if use_gpu == 'on' and gpu_count() == 0:
            raise ValueError('use_gpu is "on" but FAISS sees no GPU (faiss-gpu not installed, or no CUDA device)')
        self._gpu_wanted = use_gpu != 'off' and gpu_count() > 0
        self._gpu: Any = None
        self._gpu_ids: np.ndarray | None = None
        self._gpu_res: Any = None
        self.index = self._empty('flat')

    # -- construction --------------------------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """``'flat'`` (exact) or ``'hnsw'``."""
        return 'hnsw' if isinstance(faiss.downcast_index(self.index.index), faiss.IndexHNSW) else 'flat'

    def _empty(self, kind: str) -> Any:
        if kind == 'hnsw':
            inner = faiss.IndexHNSWFlat(self.dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = self.ef_construction
            inner.hnsw.efSearch = self.ef_search
        else:
            inner = faiss.IndexFlatIP(self.dim)
        idx = faiss.IndexIDMap2(inner)
        idx.own_fields = True
        inner.this.disown()  # the IDMap owns the inner index now (it is freed with it)
        return idx

    @property
    def ntotal(self) -> int:
        """Searchable vectors (tombstones excluded)."""
        return int(self.index.ntotal) - len(self.tombstones)

    def ids(self) -> np.ndarray:
        """Ids held by the index (tombstones included)."""
        return faiss.vector_to_array(self.index.id_map).astype(np.int64)

    @property
    def needs_compaction(self) -> bool:
        """Whether tombstones are over 10% of the HNSW index (time to rebuild without them)."""
        return len(self.tombstones) > max(100, 0.1 * self.index.ntotal)

    # -- updates -------------------------------------------------------------------------------------------------
    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors under entry ids; switches to HNSW when the size passes the threshold."""
        ids = np.ascontiguousarray(np.asarray(ids, dtype=np.int64).reshape(-1))
        if not len(ids):
            return
        vectors = normalize_rows(vectors)
        if vectors.shape != (len(ids), self.dim):
            raise ValueError(f'expected {len(ids)} vectors of dimension {self.dim}, got shape {vectors.shape}')
        if self.kind == 'flat' and self.index.ntotal + len(ids) > self.hnsw_threshold:
            self._convert_to_hnsw(ids, vectors)
        else:
            self.index.add_with_ids(vectors, ids)
        self._gpu = None

    def _convert_to_hnsw(self, new_ids: np.ndarray, new_vectors: np.ndarray) -> None:
        old_ids = self.ids()
        old = (self.index.index.reconstruct_n(0, self.index.ntotal) if len(old_ids)
               else np.zeros((0, self.dim), np.float32))
        log.info('vector index passes %d vectors: switching from exact search to HNSW (M=%d)', self.hnsw_threshold,
                 self.hnsw_m)
        self.index = self._empty('hnsw')
        self.index.add_with_ids(np.vstack([old, new_vectors]), np.concatenate([old_ids, new_ids]))

    def remove(self, ids: Any) -> int:
        """Remove the vectors of ``ids``; return how many were present."""
        ids = np.asarray(list(ids), dtype=np.int64)
        if not len(ids):
            return 0
        held = self.ids()
        present = np.isin(held, ids) & ~np.isin(held, np.fromiter(self.tombstones, np.int64, len(self.tombstones)))
        n = int(present.sum())
        if not n:
            return 0
        if self.kind == 'flat':
            self.index.remove_ids(faiss.IDSelectorBatch(np.ascontiguousarray(held[present])))
        else:
            hnsw = faiss.downcast_index(self.index.index)
            storage = faiss.downcast_index(hnsw.storage)
            xb = faiss.rev_swig_ptr(storage.get_xb(), storage.ntotal * self.dim).reshape(-1, self.dim)
            xb[present] = 0.0  # the vector bytes are gone; the graph node stays as a dead end until compaction
            self.tombstones.update(int(i) for i in held[present])
            self._selector = None
        self._gpu = None
        return n

    # -- search --------------------------------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` (scores, ids) per query row; missing results have id -1.

        ``allowed`` restricts the search to those ids (a filter by robot or time window, resolved by the owner).
        """
        q = normalize_rows(queries)
        if q.shape[1] != self.dim:
            raise ValueError(f'query dimension {q.shape[1]} does not match the index dimension {self.dim}')
        k = max(1, int(k))
        if self.index.ntotal == 0 or (allowed is not None and not len(allowed)):
            return np.zeros((len(q), k), np.float32), -np.ones((len(q), k), np.int64)
        if self._gpu_wanted and self.kind == 'flat' and allowed is None:
            return self._search_gpu(q, k)
        if self.kind == 'hnsw':
            faiss.downcast_index(self.index.index).hnsw.efSearch = max(self.ef_search, k)
        sel = None
        if self.tombstones:
            if self._selector is None:
                batch = faiss.IDSelectorBatch(np.fromiter(self.tombstones, np.int64, len(self.tombstones)))
                self._selector = (batch, faiss.IDSelectorNot(batch))
            sel = self._selector[1]
        if allowed is not None:
            only = faiss.IDSelectorBatch(np.ascontiguousarray(np.asarray(allowed, np.int64)))
            sel = only if sel is None else faiss.IDSelectorAnd(only, sel)
            return self.index.search(q, k, params=faiss.SearchParameters(sel=sel))
        if sel is not None:
            return self.index.search(q, k, params=faiss.SearchParameters(sel=sel))
        return self.index.search(q, k)

    def _search_gpu(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._gpu is None:
            if self._gpu_res is None:
                self._gpu_res = faiss.StandardGpuResources()
            self._gpu = faiss.index_cpu_to_gpu(self._gpu_res, 0, faiss.downcast_index(self.index.index))
            self._gpu_ids = self.ids()
        scores, pos = self._gpu.search(q, k)
        ids = np.where(pos >= 0, self._gpu_ids[np.clip(pos, 0, None)], -1)
        return scores, ids

    # -- persistence -----------------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike, meta: dict[str, Any]) -> None:
        """Write ``path`` (.faiss) and ``path.json`` atomically (temp file + rename)."""
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + '.tmp')
        faiss.write_index(self.index, str(tmp))
        crc = _crc32(tmp)
        _fsync(tmp)
        os.replace(tmp, path)
        side = dict(meta, type=self.kind, dim=self.dim, ntotal=int(self.index.ntotal), crc32=crc,
                    tombstones=sorted(self.tombstones))
        tmp_side = path.with_suffix(path.suffix + '.json.tmp')
        tmp_side.write_text(json.dumps(side))
        _fsync(tmp_side)
        os.replace(tmp_side, sidecar_path(path))

    def clone_settings(self) -> 'VectorIndex':
        """An empty index with the same settings."""
        out = VectorIndex(self.dim, hnsw_threshold=self.hnsw_threshold, hnsw_m=self.hnsw_m,
                          ef_construction=self.ef_construction, ef_search=self.ef_search, use_gpu='off')
        out._gpu_wanted = self._gpu_wanted
        return out


def sidecar_path(path: str | os.PathLike) -> pathlib.Path:
    """JSON sidecar of an index file."""
    path = pathlib.Path(path)
    return path.with_suffix(path.suffix + '.json')


def load(path: str | os.PathLike, template: VectorIndex) -> tuple[VectorIndex, dict[str, Any]] | None:
    """Read a saved index into a copy of ``template``'s settings; None when missing, corrupt or inconsistent."""
    path = pathlib.Path(path)
    side_path = sidecar_path(path)
    if not path.exists() or not side_path.exists():
        return None
    try:
        side = json.loads(side_path.read_text())
        if _crc32(path) != side['crc32']:
            log.warning('vector index %s: checksum mismatch (corrupt file); it will be rebuilt', path)
            return None
        index = faiss.read_index(str(path))  # already the concrete type; downcasting again frees it
        if not isinstance(index, faiss.IndexIDMap2) or index.d != template.dim or index.ntotal != side['ntotal']:
            log.warning('vector index %s: unexpected type/dimension/count; it will be rebuilt', path)
            return None
    except Exception as e:  # noqa: BLE001 - any unreadable file means "rebuild"
        log.warning('vector index %s unreadable (%s); it will be rebuilt', path, e)
        return None
    out = template.clone_settings()
    out.index = index
    out.tombstones = set(int(i) for i in side.get('tombstones', []))
    if out.kind == 'hnsw':
        faiss.downcast_index(index.index).hnsw.efSearch = out.ef_search
    return out, side


def _crc32(path: pathlib.Path) -> int:
    crc = 0
    with open(path, 'rb') as f:
        while chunk := f.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


def _fsync(path: pathlib.Path) -> None:
    with open(path, 'rb+') as f:
        os.fsync(f.fileno())


__all__ = ['VectorIndex', 'load', 'sidecar_path', 'gpu_count', 'normalize_rows']
