# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The memory backend boundary: where semantic and episodic entries (and their vectors) are kept and searched.

Everything above it (the consolidator, forgetting, the archive, QueryMemory) works on one :class:`MemoryBackend`
and never asks which one runs (:func:`~lightomni_ros.core.memory.longterm.open_backend` opens the configured one).
Two implementations:

- ``embedded`` (default): :class:`~lightomni_ros.core.memory.entries.EntryIndex`, SQLite rows + FAISS indexes in
  the robot's memory folder.
- ``milvus``: :class:`~lightomni_ros.core.memory.milvus_backend.MilvusBackend`, the same local store written first
  (so the robot keeps working offline) plus a Milvus server that a fleet shares: profiles and semantic memory are
  the fleet's, episodic memory stays each robot's and is searched by others with a robot filter (docs/FLEET.md).

Ids are public ids: in the embedded store the SQLite row id; in a fleet the robot's slot in the high bits and the
row id in the low 40 bits, so ids never collide between robots.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .store import EpisodicEntry, SemanticEntry

Entry = SemanticEntry | EpisodicEntry
ALL_ROBOTS = '*'


@dataclass(frozen=True)
class EntryFilter:
    """Which entries a search or count may return.

    ``robots`` None: any robot; otherwise only rows written by those robot ids. ``start``/``end`` (epoch seconds,
    None = open): only entries whose span overlaps the window.
    """

    robots: tuple[str, ...] | None = None
    start: float | None = None
    end: float | None = None

    @property
    def is_open(self) -> bool:
        """Whether the filter lets every entry through."""
        return self.robots is None and self.start is None and self.end is None

    def overlaps(self, start: float, end: float) -> bool:
        """Whether a span passes the time window."""
        return (self.end is None or start <= self.end) and (self.start is None or end >= self.start)


@dataclass
class SyncReport:
    """What one synchronisation with the shared store did (all zero for the embedded backend)."""

    shared: bool = False               # a fleet backend is configured
    connected: bool = True             # the shared store answered this time
    pushed: int = 0                    # outbox operations applied to the shared store
    backlog: int = 0                   # outbox operations still waiting
    error: str = ''                    # why the shared store was not reached (no credentials in it)
    profiles_changed: int = 0          # fleet profiles adopted into the local copy
    forgotten: list[tuple[str, list[str]]] = field(default_factory=list)  # (face id, words) forgotten elsewhere
    conflicts: list[str] = field(default_factory=list)                    # face ids another robot took first


class MemoryBackend(abc.ABC):
    """Entries of M_s and M_e with their vectors: add, search with filters, get, delete, count, persist."""

    #: the robot id rows are written with ('' in a single-robot store)
    robot_id: str = ''
    #: the owner's lock around the store (set by the owner; a backend takes it for local reads in :meth:`sync`)
    lock: Any = None

    @abc.abstractmethod
    def add(self, kind: int, entries: Sequence[Entry], vectors: np.ndarray | None = None) -> list[int]:
        """Store entries with their vectors (embedded when not given); return their public ids."""

    @abc.abstractmethod
    def search(self, kind: int, query: np.ndarray, k: int,
               filt: EntryFilter | None = None) -> list[tuple[Entry, float]]:
        """The ``k`` entries of ``kind`` that pass ``filt`` closest to ``query`` (cosine), best first."""

    @abc.abstractmethod
    def get(self, kind: int, ids: Sequence[int]) -> dict[int, Entry]:
        """Entries by public id (missing ids are absent from the result)."""

    @abc.abstractmethod
    def delete(self, kind: int, ids: Sequence[int]) -> int:
        """Delete entries and their vectors; return how many existed."""

    @abc.abstractmethod
    def count(self, kind: int, filt: EntryFilter | None = None) -> int:
        """Number of entries of ``kind`` that pass ``filt``."""

    @abc.abstractmethod
    def flush(self) -> None:
        """Persist what is only in memory (index files)."""

    def sync(self) -> SyncReport:
        """Exchange with the shared store: push the outbox, pull what other robots changed (no-op when embedded)."""
        return SyncReport()

    def record_forget(self, face_id: str, words: Sequence[str]) -> None:
        """A person was forgotten here: make it fleet-wide (no-op when embedded). Inside the caller's transaction."""

    def backend_name(self) -> str:
        """``embedded`` or ``milvus``."""
        return 'embedded'

    def close(self) -> None:
        """Release connections (the store itself is closed by its owner)."""


__all__ = ['MemoryBackend', 'EntryFilter', 'SyncReport', 'Entry', 'ALL_ROBOTS']
