# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""What consolidation asks the memory adapter to summarize, and what comes back (the Summarize service's records).

Consolidation builds a :class:`SummaryRequest` for an S_g merge or a profile update; the reflex runtime answers it
with a :class:`SummaryResult`. Between the nodes the Summarize service carries exactly these fields; in the offline
facade the request goes to the reflex runtime directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MERGE, PROFILE = 'merge', 'profile'


@dataclass(kw_only=True)
class SummaryRequest:
    """Merge k S_g node texts (``merge``) or describe one person from recent events (``profile``)."""

    mode: str
    texts: list[str]
    face_id: str = ''
    #: what is already known about the person (attribute -> value, ``name`` included when known)
    known: dict[str, str] = field(default_factory=dict)
    max_tokens: int = 0                 # 0: the answering side's default bound

    def check(self) -> None:
        """Raise ValueError naming the first malformed field."""
        if self.mode not in (MERGE, PROFILE):
            raise ValueError(f'mode {self.mode!r}: expected {MERGE!r} or {PROFILE!r}')
        if not self.texts or not all(isinstance(t, str) for t in self.texts):
            raise ValueError('texts must be a non-empty list of strings')
        if self.mode == PROFILE and not self.face_id:
            raise ValueError('a profile summary needs a face_id')
        if self.max_tokens < 0:
            raise ValueError('max_tokens must not be negative')


@dataclass(kw_only=True)
class SummaryResult:
    """The summary text, who wrote it, and for profiles the name and attributes found."""

    summary: str
    producer: str                       # "memory-adapter" or "extractive"
    name: str = ''
    attributes: dict[str, str] = field(default_factory=dict)
    problem: str = ''                   # why the model's text was not used ('' when it was)


__all__ = ['SummaryRequest', 'SummaryResult', 'MERGE', 'PROFILE']
