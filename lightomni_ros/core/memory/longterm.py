# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Long-term memory M = {M_p, M_s, M_e} with S_g, on disk: the state every consolidation concern shares.

One object opens the memory folder (the SQLite store, the entry indexes, the merge tree of S_g) and holds the one
re-entrant lock around them; consolidation, forgetting, the archive and reminders each work on it, and say through
:meth:`LongTermMemory.state_changed` when S_g or the stored gallery changed (the node publishes them again).
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import pathlib
import threading
import time
import zoneinfo
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import faiss

from ..embedding import TextEmbedder
from . import profiles as prof
from .config import MemoryConfig
from .entries import EntryIndex
from .global_state import MergeTree, SgNode
from .store import Store

log = logging.getLogger('lightomni.memory')


@dataclass
class GlobalStateView:
    """S_g as the node publishes it."""

    version: int
    k: int
    nodes: list[SgNode]
    script: str
    script_tokens: int
    over_budget: bool
    timezone: str = ''         # the IANA zone times are read and rendered in ('' = the system zone)


def open_backend(store: Store, folder: pathlib.Path, cfg: MemoryConfig, embedder: TextEmbedder, *,
                 persist: bool = True) -> EntryIndex:
    """The backend ``cfg.backend`` names, opened on the robot's store (Milvus is imported only when chosen).

    ``persist`` False: no index files are written (encrypted memory).
    """
    if cfg.backend == 'milvus':
        from .milvus_backend import MilvusBackend
        return MilvusBackend(store, folder, cfg, embedder, persist=persist)
    return EntryIndex(store, folder, cfg, embedder, persist=persist)


def sg_node(r: Any) -> SgNode:
    """An S_g node from its store row."""
    return SgNode(id=r['id'], level=r['level'], start=r['start'], end=r['end'], first_segment=r['first_segment'],
                  last_segment=r['last_segment'], text=r['text'], children=json.loads(r['children']),
                  face_ids=json.loads(r['face_ids']), producer=r['producer'])


class LongTermMemory:
    """The memory folder opened: store, entry indexes, S_g tree, one lock, the clock and the time zone."""

    def __init__(self, cfg: MemoryConfig, embedder: TextEmbedder, *, timezone: str = '',
                 clock: Callable[[], float] = time.time, key: str | None = None) -> None:
        self.cfg = cfg
        self.embedder = embedder
        self.timezone = timezone
        self.tz: _dt.tzinfo | None = zoneinfo.ZoneInfo(timezone) if timezone else None
        self.clock = clock
        self.lock = threading.RLock()
        if cfg.faiss_threads > 0:
            faiss.omp_set_num_threads(cfg.faiss_threads)
        self.dir = pathlib.Path(cfg.memory_dir).expanduser()
        self.store = Store(self.dir / 'memory.db', key=key)
        #: the memory backend (embedded or fleet); typed by the embedded one, whose interface every backend keeps.
        #: Encrypted memory keeps no index files: vectors say too much about the text; rebuilt from SQLite at start
        self.entries: EntryIndex = open_backend(self.store, self.dir, cfg, embedder, persist=key is None)
        self.entries.lock = self.lock
        self.robot_id = cfg.robot_id
        self.tree = self.load_tree()
        #: called after a commit that changed S_g or the gallery (the node republishes them)
        self.on_state_change: Callable[[], None] | None = None

    def load_tree(self) -> MergeTree:
        """S_g's live nodes from the store."""
        return MergeTree(self.cfg.k, [sg_node(r) for r in self.store.sg_rows(live_only=True)])

    def state_changed(self) -> None:
        """Tell the owner that S_g or the gallery changed (a failing callback must not undo a commit)."""
        if self.on_state_change is not None:
            try:
                self.on_state_change()
            except Exception as e:  # noqa: BLE001
                log.warning('state-change callback failed: %s', e)

    # -- reading -------------------------------------------------------------------------------------------------
    def global_state(self, max_tokens: int = 0) -> GlobalStateView:
        """S_g with its script under ``max_tokens`` (0 = configured budget)."""
        with self.lock:
            script, tokens, over = self.tree.render(max_tokens or self.cfg.state_max_tokens, self.tz)
            return GlobalStateView(version=int(self.store.get_meta('sg.version', '0') or 0), k=self.tree.k,
                                   nodes=list(self.tree.nodes()), script=script, script_tokens=tokens,
                                   over_budget=over, timezone=self.timezone)

    def profiles(self, face_ids: Sequence[str] = ()) -> list[prof.Profile]:
        """Stored profiles (all when empty)."""
        with self.lock:
            return prof.list_all(self.store, list(face_ids))

    def gallery_version(self) -> int:
        """Incremented on every change of the stored face identities."""
        with self.lock:
            return int(self.store.get_meta('gallery.version', '0') or 0)

    # -- upkeep --------------------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the index files (the store is always durable)."""
        with self.lock:
            self.entries.flush()

    def close(self) -> None:
        """Flush and close the store."""
        with self.lock:
            self.entries.flush()
            self.entries.close()
            self.store.close()

    def disk_bytes(self) -> int:
        """Bytes on disk: SQLite file + WAL + index files."""
        return self.store.disk_bytes() + self.entries.disk_bytes()


__all__ = ['LongTermMemory', 'GlobalStateView', 'sg_node', 'open_backend']
