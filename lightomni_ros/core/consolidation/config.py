# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Configuration of the consolidation subsystem (content filter, retrieval defaults, summaries, reminders)."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass

from ..config import ConfigError, param


@dataclass
class ConsolidationConfig:
    """How Topics become memory, how memory is retrieved, and when reminders fire."""

    similarity_threshold: float = param(0.9, 'Content filter: a new semantic fact whose cosine similarity to a stored '
                                             'one reaches this extends that fact instead of being appended.',
                                        min=0.0, max=1.0)
    k_semantic: int = param(12, 'Semantic entries returned by QueryMemory when the request asks for 0.', min=1,
                            max=1000)
    k_episodic: int = param(4, 'Episodic entries returned by QueryMemory when the request asks for 0.', min=1,
                            max=1000)
    text_search: bool = param(True, 'A query that carries its words as well as a vector (the reflex node\'s fused '
                                    'query) also searches with the words\' own embedding, and the two rankings are '
                                    'merged (reciprocal rank): a fact the fused query ranks below months of other '
                                    'entries is still found by its words. Off: the vector alone.')
    summarize_service: str = param('summarize', 'Summarize service of the model owner (the reflex node); the '
                                                'extractive summarizer is used while it is unreachable.')
    summarize_timeout_s: float = param(20.0, 'Time-out of one Summarize call before falling back to the extractive '
                                             'summarizer. A stop (deactivate, Ctrl-C) gives a call up at once and '
                                             'leaves its merge or profile update due for the next start.',
                                       min=0.1, max=600.0)
    reminder_period_s: float = param(1.0, 'How often due reminders are checked.', min=0.05, max=60.0)
    timezone: str = param('', 'IANA time zone for time intents ("at 5 pm") and rendered times; empty uses the '
                              'system time zone.')

    def check(self) -> None:
        """Cross-field rules."""
        if self.timezone:
            try:
                zoneinfo.ZoneInfo(self.timezone)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
                raise ConfigError(f'timezone: unknown time zone {self.timezone!r}') from e

    def tzinfo(self):  # noqa: ANN201 - tzinfo or None
        """The configured zone (None = local)."""
        return zoneinfo.ZoneInfo(self.timezone) if self.timezone else None
