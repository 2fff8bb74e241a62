# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Consolidation: Topics -> long-term memory, S_g merges, profile updates, reminders, forget (Algorithm 1, C.2)."""

from .config import ConsolidationConfig

__all__ = ['ConsolidationConfig']
