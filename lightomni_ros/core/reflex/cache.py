# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Feature cache (each segment encoded once, reused by every pass) and the S_g prefix KV cache per adapter."""

from __future__ import annotations

import collections
import copy
import threading
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence


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


@dataclass
class PrefixEntry:
    """The KV cache of one prefix: its token ids and how many of them are in ``cache`` so far.

    An entry is complete when ``done == len(ids)``; a partial one (its prefill pre-empted, or seeded from another
    entry) is still a valid cache of ``ids[:done]``.
    """

    ids: list[int]
    cache: Any
    done: int = 0

    @property
    def complete(self) -> bool:
        """Whether every token of the prefix is in the cache."""
        return self.done >= len(self.ids)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token id sequences."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class PrefixCache:
    """KV cache of the S_g prefix per (adapter, global-state version, prompt kind).

    A cached entry is a transformers cache holding exactly its prefix (or the first ``done`` tokens of it); callers
    extend it for one pass and ``crop`` it back afterwards, so one entry serves every pass until S_g changes. A new S_g
    version starts from the entry of the same adapter and kind that shares the most leading tokens with it (S_g grows
    at its tail), so only the changed tail is prefilled again; ``reused_tokens`` and ``prefilled_tokens`` count both.
    """

    def __init__(self, enabled: bool = True, entries: int = 8) -> None:
        self.enabled = enabled
        self.entries = entries
        self._data: collections.OrderedDict[Hashable, PrefixEntry] = collections.OrderedDict()
        self.hits = 0
        self.misses = 0
        self.reused_tokens = 0
        self.prefilled_tokens = 0

    def get(self, key: Hashable) -> PrefixEntry | None:
        """The entry of ``key`` (complete or not) or None; a complete one counts as a hit."""
        if not self.enabled or key not in self._data:
            return None
        self._data.move_to_end(key)
        entry = self._data[key]
        if entry.complete:
            self.hits += 1
        return entry

    def has(self, key: Hashable) -> bool:
        """Whether ``key`` is cached complete (not counted as a hit or miss)."""
        return self.enabled and key in self._data and self._data[key].complete

    def closest(self, adapter: str, kind: str, ids: Sequence[int]) -> tuple[PrefixEntry | None, int]:
        """The entry of ``adapter`` and ``kind`` sharing the most leading tokens with ``ids``, and that number.

        Kinds match by family ("response:..." is "response"); only the tokens an entry holds count.
        """
        family = kind.split(':')[0]
        best, best_n = None, 0
        for key, entry in self._data.items():
            if key[0] != adapter or str(key[2]).split(':')[0] != family:
                continue
            n = common_prefix(entry.ids[:entry.done], ids)
            if n > best_n:
                best, best_n = entry, n
        return best, best_n

    def put(self, key: Hashable, entry: PrefixEntry) -> None:
        """Store the (possibly partial) entry of ``key``, evicting the least recently used beyond ``entries``."""
        self.misses += 1
        if not self.enabled:
            return
        self._data[key] = entry
        self._data.move_to_end(key)
        while len(self._data) > self.entries:
            self._data.popitem(last=False)

    def drop(self, key: Hashable) -> None:
        """Forget ``key`` (its cache is in an unknown state after a failed prefill)."""
        self._data.pop(key, None)

    def invalidate(self, keep_version: int | None = None) -> None:
        """Drop entries whose version (second key element) differs from ``keep_version`` (all when None).

        With a version, the newest entry of every (adapter, kind) of older versions stays: the base the new version's
        prefix is extended from.
        """
        if keep_version is None:
            self._data.clear()
            return
        bases: dict[tuple[Any, Any], Hashable] = {}
        for k in self._data:       # least recently used first: the last one seen per (adapter, kind) is the newest
            if k[1] != keep_version:
                bases[(k[0], k[2])] = k
        keep = set(bases.values())
        for k in list(self._data):
            if k[1] != keep_version and k not in keep:
                del self._data[k]


def copy_cache(cache: Any, length: int) -> Any:
    """A copy of a transformers KV cache holding its first ``length`` tokens (the source is left as it was)."""
    out = copy.deepcopy(cache)
    crop_to(out, length)
    return out


def crop_to(cache, length: int) -> None:
    """Cut a transformers KV cache back to its first ``length`` tokens (the cached prefix)."""
    extra = int(cache.get_seq_length()) - int(length)
    if extra > 0:
        cache.crop(-extra)  # transformers 5: a negative value removes that many trailing tokens
