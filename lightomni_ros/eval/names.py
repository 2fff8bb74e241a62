# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Names of the graph's topics as a replay sees them from outside (its namespace applied)."""

from __future__ import annotations


def output_name(namespace: str, rel: str) -> str:
    """Absolute name of an output topic."""
    if rel.startswith('/'):
        return rel
    ns = '/' + namespace.strip('/') if namespace.strip('/') else ''
    return f'{ns}/{rel}'


__all__ = ['output_name']
