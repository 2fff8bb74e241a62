# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Configuration of the long-term memory store, its vector indexes and S_g (the text embedder: core/embedding.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ConfigError, param


@dataclass
class MemoryConfig:
    """Long-term memory on disk: SQLite store, FAISS indexes and the global state S_g."""

    memory_dir: str = param('~/.local/share/lightomni_ros/memory',
                            'Folder holding memory.db (SQLite, WAL) and the FAISS index files.')
    faiss_threads: int = param(1, 'OpenMP threads of FAISS (process-wide): 1 is fastest for single queries on a busy '
                                  'CPU (10x lower p99 measured on 2 shared cores); more speed up index rebuilds. '
                                  '0 keeps the FAISS default.', min=0, max=256)
    hnsw_threshold: int = param(10000, 'Vectors per index above which exact inner-product search is replaced by HNSW '
                                       '(exact search is memory-bound past ~10k x 384-d: 0.5 ms at 10k, 5 ms at 25k).',
                                min=1)
    hnsw_m: int = param(16, 'HNSW graph degree M.', min=4, max=128)
    hnsw_ef_construction: int = param(40, 'HNSW efConstruction (build quality).', min=8, max=1024)
    hnsw_ef_search: int = param(64, 'HNSW efSearch (query quality).', min=8, max=4096)
    use_gpu: str = param('auto', 'Search exact indexes on the GPU with faiss-gpu: "auto" (when a GPU is visible), '
                                 '"on" or "off".', choices=('auto', 'on', 'off'))
    k: int = param(8, 'Merge fan-in of S_g: a level holding k+1 nodes merges its oldest k into the next level; '
                      'profiles are updated every k segments of a face.', min=2, max=64)
    state_max_tokens: int = param(4096, 'Token budget of the serialized S_g script (oldest text is truncated '
                                        'with a warning when exceeded).', min=64)
    node_max_tokens: int = param(96, 'Length bound of one merged S_g node (extractive summaries and Summarize '
                                     'requests).', min=8, max=4096)
    flush_every: int = param(2000, 'Write the FAISS index files after this many vector changes (also on deactivate and '
                                   'after a forget); newer rows are re-added from SQLite at start-up.',
                             min=1)

    def check(self) -> None:
        """Cross-field rules."""
        if not self.memory_dir:
            raise ConfigError('memory_dir: must name a folder')
        if self.node_max_tokens > self.state_max_tokens:
            raise ConfigError('node_max_tokens: must not exceed state_max_tokens')
