# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The response prompt's bounded view of S_g (pure text; the engine's use is covered in test_reflex_core)."""

from __future__ import annotations

from lightomni_ros.core.reflex.generation import sg_tail, system_prefix


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
