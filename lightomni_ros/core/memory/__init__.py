# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Long-term memory M = {M_p, M_s, M_e}, its vector indexes and the global state S_g (paper 3.1, 3.2, A.1)."""

from .config import MemoryConfig

__all__ = ['MemoryConfig']
