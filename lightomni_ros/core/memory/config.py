# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Configuration of the long-term memory store, its vector indexes and S_g (the text embedder: core/embedding.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import ConfigError, param

_NAME = re.compile(r'^[A-Za-z0-9_-]{1,64}$')


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
    backend: str = param('embedded', 'Memory backend: "embedded" (SQLite + FAISS on this robot) or "milvus" (profiles '
                                     'and semantic memory shared by a fleet through Milvus; docs/FLEET.md).',
                         choices=('embedded', 'milvus'))
    milvus_uri: str = param('', 'Milvus server (http://host:19530, https://... for TLS) or a local *.db file '
                                '(milvus-lite, one process). Used when backend is "milvus".')
    fleet_id: str = param('default', 'Fleet name: the Milvus collections are named lightomni_<fleet_id>_<kind>, so '
                                     'several fleets can share one server.')
    robot_id: str = param('', 'This robot\'s id in the fleet (letters, digits, _ and -); stored with every row it '
                              'writes. Required when backend is "milvus".')
    milvus_token: str = param('', 'Milvus credentials ("user:password" or an API key); never logged. Empty: the '
                                  'environment variable LIGHTOMNI_MILVUS_TOKEN, else none.')
    milvus_ca_pem: str = param('', 'TLS: CA certificate (PEM) that signed the server\'s certificate.')
    milvus_client_pem: str = param('', 'TLS: client certificate (PEM) for mutual TLS.')
    milvus_client_key: str = param('', 'TLS: client private key (PEM) for mutual TLS.')
    milvus_server_name: str = param('', 'TLS: server name the certificate must carry (default: the URI\'s host).')
    milvus_timeout_s: float = param(5.0, 'Time-out of one Milvus call; past it the node works from the local store '
                                         'and retries later.', min=0.1, max=600.0)
    sync_period_s: float = param(1.0, 'How often the outbox is pushed to Milvus and fleet profiles and forgets are '
                                      'pulled (backend "milvus").', min=0.05, max=600.0)

    def __repr__(self) -> str:
        """Field values with the Milvus token masked (it must never reach a log)."""
        shown = {k: ('***' if k == 'milvus_token' and v else v) for k, v in vars(self).items()}
        return f'MemoryConfig({", ".join(f"{k}={v!r}" for k, v in shown.items())})'

    def check(self) -> None:
        """Cross-field rules."""
        if not self.memory_dir:
            raise ConfigError('memory_dir: must name a folder')
        if self.node_max_tokens > self.state_max_tokens:
            raise ConfigError('node_max_tokens: must not exceed state_max_tokens')
        if self.robot_id and not _NAME.match(self.robot_id):
            raise ConfigError(f'robot_id: {self.robot_id!r} must be 1-64 letters, digits, _ or -')
        if not _NAME.match(self.fleet_id or ''):
            raise ConfigError(f'fleet_id: {self.fleet_id!r} must be 1-64 letters, digits, _ or -')
        if self.backend == 'milvus':
            if not self.milvus_uri:
                raise ConfigError('milvus_uri: required when backend is "milvus"')
            if not self.robot_id:
                raise ConfigError('robot_id: required when backend is "milvus" (every row carries it)')
        if bool(self.milvus_client_pem) != bool(self.milvus_client_key):
            raise ConfigError('milvus_client_pem and milvus_client_key: give both for mutual TLS, or neither')
