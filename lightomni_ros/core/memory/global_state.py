# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The global state S_g as a hierarchical merge tree (paper Eq. 2).

Level-0 nodes are episodic scripts. When a level holds k+1 live nodes, its oldest k are merged (a summary) into one
node of the next level; the newest node of a level is therefore never merged early. After every merge cascade each
level holds at most k nodes, the number of levels grows as log_k(n) and the live nodes' segment ranges tile every
segment ever added, without overlap: recent detail and distant summaries fit one bounded context.

This module is pure logic (no I/O); the consolidator persists nodes in the store and asks a Summarizer for merge text.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .store import fmt_span

log = logging.getLogger('lightomni.memory')


@dataclass
class SgNode:
    """One node of S_g."""

    id: int
    level: int
    start: float
    end: float
    first_segment: int
    last_segment: int
    text: str
    children: list[int] = field(default_factory=list)
    face_ids: list[str] = field(default_factory=list)
    producer: str = ''


def approx_tokens(text: str) -> int:
    """Token estimate of a text (about 4 characters per token for English BPE vocabularies)."""
    return math.ceil(len(text) / 4)


@dataclass
class MergePlan:
    """A merge the tree needs: the oldest k live nodes of ``level``."""

    level: int
    children: list[SgNode]


class MergeTree:
    """Live nodes of S_g per level, oldest first, with the merge rule and the text rendering."""

    def __init__(self, k: int = 8, nodes: Iterable[SgNode] = ()) -> None:
        if k < 2:
            raise ValueError('k must be at least 2')
        self.k = k
        self.levels: list[list[SgNode]] = []
        self.version = 0
        for n in sorted(nodes, key=lambda n: (n.level, n.first_segment, n.id)):
            self._level(n.level).append(n)

    def _level(self, level: int) -> list[SgNode]:
        while len(self.levels) <= level:
            self.levels.append([])
        return self.levels[level]

    def add_leaf(self, node: SgNode) -> None:
        """Append a level-0 node (the newest detail)."""
        if node.level != 0:
            raise ValueError('leaves are level 0')
        self._level(0).append(node)
        self.version += 1

    def next_merge(self) -> MergePlan | None:
        """The lowest level holding more than k nodes, with its oldest k (None when none needs merging)."""
        for level, nodes in enumerate(self.levels):
            if len(nodes) > self.k:
                return MergePlan(level, list(nodes[:self.k]))
        return None

    def merged(self, plan: MergePlan, node_id: int, text: str, producer: str = '') -> SgNode:
        """The parent node a plan produces (not yet applied)."""
        ch = plan.children
        faces = sorted({f for c in ch for f in c.face_ids})
        return SgNode(id=node_id, level=plan.level + 1, start=min(c.start for c in ch), end=max(c.end for c in ch),
                      first_segment=ch[0].first_segment, last_segment=ch[-1].last_segment, text=text,
                      children=[c.id for c in ch], face_ids=faces, producer=producer)

    def is_current(self, plan: MergePlan) -> bool:
        """Whether the plan's children are still the oldest k of their level (nothing changed meanwhile)."""
        nodes = self.levels[plan.level] if plan.level < len(self.levels) else []
        return len(nodes) > self.k and [n.id for n in nodes[:self.k]] == [c.id for c in plan.children]

    def apply(self, plan: MergePlan, parent: SgNode) -> None:
        """Replace the plan's children with ``parent`` one level up."""
        if not self.is_current(plan):
            raise ValueError('stale merge plan')
        del self.levels[plan.level][:self.k]
        self._level(plan.level + 1).append(parent)
        self.version += 1

    def nodes(self) -> list[SgNode]:
        """Live nodes from the most summarised (highest level, oldest) to the most recent detail."""
        return [n for level in reversed(self.levels) for n in level]

    def find(self, node_id: int) -> SgNode | None:
        """A live node by id."""
        return next((n for level in self.levels for n in level if n.id == node_id), None)

    def depth(self) -> int:
        """Number of non-empty levels."""
        return sum(1 for level in self.levels if level)

    def render(self, max_tokens: int, tz: _dt.tzinfo | None = None) -> tuple[str, int, bool]:
        """The script the backbone reads: (text, approximate tokens, over budget).

        Over budget, the oldest (most summarised) lines are cut first: recent detail matters most for a reply.
        """
        lines = [render_node(n, tz) for n in self.nodes()]
        tokens = [approx_tokens(line) + 1 for line in lines]
        total = sum(tokens)
        over = total > max_tokens
        if over:
            newest = lines[-1]
            while lines and total > max_tokens:
                total -= tokens.pop(0)
                lines.pop(0)
            if not lines:  # the newest line alone is over budget: keep its end
                lines = ['…' + newest[-(max_tokens - 1) * 4 + 1:]]
                total = approx_tokens(lines[0])
            log.warning('S_g script exceeds its budget of %d tokens: the oldest lines were truncated', max_tokens)
        return '\n'.join(lines), total, over


def render_node(n: SgNode, tz: _dt.tzinfo | None = None) -> str:
    """One line of the S_g script: level, span and text."""
    return f'L{n.level} {fmt_span(n.start, n.end, tz)}: {n.text}'


def check_invariants(tree: MergeTree, segments: Sequence[int]) -> None:
    """Raise AssertionError when the tree breaks a merge invariant for the given added segment ids (in order)."""
    for level, nodes in enumerate(tree.levels):
        assert len(nodes) <= tree.k, f'level {level} holds {len(nodes)} > k={tree.k} nodes'
    covered = sorted((n.first_segment, n.last_segment) for n in tree.nodes())
    expect = sorted(segments)
    pos = 0
    for first, last in covered:
        assert first <= last
        span = [s for s in expect[pos:] if first <= s <= last]
        assert span and span[0] == expect[pos], f'gap or overlap before segment {first}'
        pos += len(span)
    assert pos == len(expect), f'{len(expect) - pos} segments not covered'


__all__ = ['SgNode', 'MergeTree', 'MergePlan', 'approx_tokens', 'render_node', 'check_invariants']
