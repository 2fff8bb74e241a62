# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Reading people out of plain text (shared by perception, reflex and consolidation, so it depends on none of them)."""

from __future__ import annotations

import re

#: "my name is Ana", "I'm Ana", "call me Ana": the phrase is matched in any case, the name must be capitalised
_INTRO = re.compile(r"\b(?i:my name is|my name's|i am called|i'm called|i am|i'm|call me)\s+([A-Z][a-z]+)\b")
#: capitalised words after "I'm" / "I am" that are not names (sentence starts, ASR capitalisation)
_NOT_NAMES = frozenset('''Not So Sorry Fine Good Great Okay Ok Here There Back Just Very Still Going Afraid Happy Glad
Sure Done Ready Tired Home The A An In At On From Out Over Really Also Only Always Never Busy Late Early Hungry Cold Hot
Robot Assistant It That This What Your My'''.split())


def introduced_name(text: str) -> str:
    """The name a speaker gives for themself ("Hi robot, I'm Barack" -> "Barack"), else ''."""
    for m in _INTRO.finditer(text or ''):
        if m.group(1) not in _NOT_NAMES:
            return m.group(1)
    return ''


__all__ = ['introduced_name']
