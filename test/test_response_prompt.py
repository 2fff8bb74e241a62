# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The response prompt's bounded view of S_g (pure text; the engine's use is covered in test_reflex_core)."""

from __future__ import annotations

from lightomni_ros.core.reflex.generation import clip_tokens, memories_text, sg_tail, system_prefix
from lightomni_ros.core.reflex.types import MemoryItem


def test_sg_tail_keeps_the_newest_whole_lines() -> None:
    lines = [f'[{i:02d}:00] event number {i} happened in the kitchen' for i in range(100)]
    script = '\n'.join(lines)
    assert sg_tail(script, 0) == script
    assert sg_tail('short', 512) == 'short'
    tail = sg_tail(script, 128)
    kept = tail.splitlines()
    assert kept[0] == '(older events: see the memories)'
    assert kept[1:] == lines[-(len(kept) - 1):], 'a suffix of whole lines, oldest first'
    assert len(tail) <= 4 * 128 + len(kept[0]) + 1 and len(kept) > 5
    assert '(nothing remembered yet)' in system_prefix('sys', '')


def test_memories_are_cut_at_a_word_boundary() -> None:
    long = 'Ana said: ' + ' '.join(f'word{i}' for i in range(200))
    cut = clip_tokens(long, 16)
    assert cut.endswith(' ...') and len(cut) <= 4 * 16 + 4 and long.startswith(cut[:-4])
    assert clip_tokens('short fact.', 16) == 'short fact.' and clip_tokens(long, 0) == long
    text = memories_text([MemoryItem('semantic:1', long), MemoryItem('semantic:2', 'Bob likes tea.')], 16)
    assert '- Bob likes tea.' in text and long not in text
