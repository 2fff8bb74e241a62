# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni eval``: trained parts on held-out data, one area each (heads, answers, adapters)."""

from __future__ import annotations

import argparse

from . import eval_adapters, eval_answers, eval_heads


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``eval`` verb with its areas."""
    p = sub.add_parser('eval', help='evaluate trained parts on held-out data',
                       description='Evaluate trained weights on the held-out synthetic split.')
    areas = p.add_subparsers(dest='area', metavar='AREA', required=True)
    eval_heads.register_area(areas)
    eval_answers.register_area(areas)
    eval_adapters.register_area(areas)


__all__ = ['register']
