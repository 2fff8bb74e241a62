# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Feature cache (each segment encoded once, reused by every pass) and the S_g prefix KV cache per adapter."""

from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Hashable


class FeatureCache:
    """Bounded LRU of per-segment encoder outputs with hit/miss counters."""

    def __init__(self, entries: int = 64, enabled: bool = True) -> None:
        self.entries = entries
        self.enabled = enabled
        self._data: collections.OrderedDict[Hashable, Any] = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """Cached value for ``key`` or ``compute()`` (stored, evicting the least recently used)."""
        if self.enabled:
            with self._lock:
                if key in self._data:
                    self._data.move_to_end(key)
                    self.hits += 1
                    return self._data[key]
        value = compute()
        with self._lock:
            self.misses += 1
            if self.enabled:
                self._data[key] = value
                while len(self._data) > self.entries:
                    self._data.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Drop every entry (counters are kept)."""
        with self._lock:
            self._data.clear()


class PrefixCache:
    """KV cache of the S_g prefix per (adapter, global-state version, prompt kind).

    A cached entry is a transformers cache holding exactly the prefix; callers extend it for one pass and
    ``crop`` it back to the prefix afterwards, so one entry serves every pass until S_g changes.
    """

    def __init__(self, enabled: bool = True, entries: int = 8) -> None:
        self.enabled = enabled
        self.entries = entries
        self._data: collections.OrderedDict[Hashable, tuple[Any, int, int]] = collections.OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> tuple[Any, int, int] | None:
        """(cache, prefix tokens, next position) for ``key`` or None."""
        if not self.enabled or key not in self._data:
            return None
        self._data.move_to_end(key)
        self.hits += 1
        return self._data[key]

    def has(self, key: Hashable) -> bool:
        """Whether ``key`` is cached (not counted as a hit or miss)."""
        return self.enabled and key in self._data

    def put(self, key: Hashable, cache: Any, length: int, offset: int) -> None:
        """Store the prefix cache of ``key``; entries of older global-state versions go first."""
        self.misses += 1
        if not self.enabled:
            return
        self._data[key] = (cache, length, offset)
        while len(self._data) > self.entries:
            self._data.popitem(last=False)

    def invalidate(self, keep_version: int | None = None) -> None:
        """Drop entries whose version (second key element) differs from ``keep_version`` (all when None)."""
        for k in list(self._data):
            if keep_version is None or k[1] != keep_version:
                del self._data[k]


def crop_to(cache, length: int) -> None:
    """Cut a transformers KV cache back to its first ``length`` tokens (the cached prefix)."""
    extra = int(cache.get_seq_length()) - int(length)
    if extra > 0:
        cache.crop(-extra)  # transformers 5: a negative value removes that many trailing tokens
