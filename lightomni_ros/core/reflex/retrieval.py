# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Retrieval (paper A.2): the memory-client protocol the reflex core queries long-term memory through.

The consolidation node owns memory; the reflex core talks to it through :class:`MemoryClient` (the node implements it
with the QueryMemory service; tests and the offline facade may use an in-process store).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping, Protocol

import numpy as np

from .people import PersonSeen
from .types import MemoryItem, Retrieved

log = logging.getLogger('lightomni.reflex')


@dataclass(kw_only=True)
class MemoryQuery:
    """One retrieval request (what QueryMemory carries)."""

    #: fused query normalize(z_ret + e(transcript)); empty to let memory embed ``text``
    vector: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    text: str = ''
    k_semantic: int = 0
    k_episodic: int = 0
    face_ids: list[str] = field(default_factory=list)
    #: ``name/dim`` of the embedder that made ``vector`` (memory refuses a vector from another embedder)
    embedder: str = ''
    #: only entries overlapping [window_start, window_end] (epoch seconds; 0, 0: no window)
    window_start: float = 0.0
    window_end: float = 0.0
    #: episodic entries of the window in time order instead of by similarity ("what happened this morning?")
    chronological: bool = False


def entry_item(kind: str, entry_id: int, text: str, score: float) -> MemoryItem:
    """A retrieved semantic or episodic entry as the reflex core reads it (``text`` already rendered with its span)."""
    return MemoryItem(f'{kind}:{entry_id}', text, float(score))


def profile_item(face_id: str, name: str, attributes: Mapping[str, str]) -> MemoryItem:
    """A profile as the reflex core reads it: "<face_1> is Ana (job: nurse; ...)"."""
    attrs = '; '.join(f'{k}: {v}' for k, v in sorted(attributes.items()) if v)
    text = face_id + (f' is {name}' if name else '') + (f' ({attrs})' if attrs else '')
    return MemoryItem(f'profile:{face_id}', text)


class MemoryClient(Protocol):
    """Anything that answers a retrieval query like the QueryMemory service."""

    def query(self, q: MemoryQuery) -> Retrieved:
        """Top entries for ``q.vector`` (or ``q.text`` when the vector is empty) and the profiles of ``q.face_ids``."""

    def people(self) -> list[PersonSeen] | None:
        """Every known person with the span they were seen in (None when the memory cannot be asked)."""

    def forget_face(self, face_id: str) -> str:
        """Forget a person everywhere (the Forget service, scope face); '' when done, else why not."""


class NoMemory:
    """A client for running without the memory node (nothing is retrieved; the reason is reported)."""

    def query(self, q: MemoryQuery) -> Retrieved:
        """Return nothing, with the reason."""
        return Retrieved(error='no memory service')

    def people(self) -> list[PersonSeen] | None:
        """Nobody can be asked."""
        return None

    def forget_face(self, face_id: str) -> str:
        """Nothing to forget in."""
        return "no memory service"
