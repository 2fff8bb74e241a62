# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Retention per memory kind (``memory.retention_days.*``): raw inputs expire first, then events, facts, people.

Run periodically by the consolidation node (and by the soak benchmark on its simulated clock). Expired events and
people go through :class:`~lightomni_ros.core.consolidation.forgetting.Forgetting`, so an expiry removes exactly what
a Forget of the same scope would (rows, vectors, S_g leaf text, files), never more.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from ..memory.longterm import LongTermMemory
from ..memory.privacy import DAY_S, RetentionConfig
from .forgetting import Forgetting
from .rawfiles import RawFiles, is_audio, is_image

log = logging.getLogger('lightomni.consolidation')


@dataclass
class RetentionResult:
    """What one retention pass removed."""

    raw_files: int = 0
    raw_refs: int = 0
    episodic: int = 0
    semantic: int = 0
    profiles: int = 0

    def any(self) -> bool:
        """Whether anything expired."""
        return any(vars(self).values())


class Retention:
    """Expire memory older than its kind's retention."""

    def __init__(self, memory: LongTermMemory, forgetting: Forgetting, files: RawFiles, cfg: RetentionConfig) -> None:
        self.memory = memory
        self.forgetting = forgetting
        self.files = files
        self.cfg = cfg

    def expire(self, now: float | None = None) -> RetentionResult:
        """One pass at ``now`` (memory's clock when None)."""
        m, c = self.memory, self.cfg
        now = m.clock() if now is None else now
        res = RetentionResult()
        for days, wanted in ((c.raw_audio, is_audio), (c.keyframes, is_image)):
            if days:
                self._expire_raw(now - days * DAY_S, wanted, res)
        if c.episodic:
            ids = self._ids('SELECT id FROM episodic WHERE end < ?', now - c.episodic * DAY_S)
            if ids:
                res.episodic = self.forgetting.entries([f'episodic:{i}' for i in ids]).removed_entries
        if c.semantic:
            ids = self._ids('SELECT id FROM semantic WHERE end < ? AND pinned = 0', now - c.semantic * DAY_S)
            if ids:
                res.semantic = self.forgetting.entries([f'semantic:{i}' for i in ids]).removed_entries
        if c.profiles:
            cutoff = now - c.profiles * DAY_S
            faces = [r[0] for r in m.store.db.execute(
                'SELECT face_id FROM profiles WHERE last_seen > 0 AND last_seen < ?', (cutoff,)).fetchall()]
            for face in faces:
                self.forgetting.face(face)
            res.profiles = len(faces)
        if res.any():
            log.info('retention: %s', res)
        return res

    def _ids(self, query: str, cutoff: float) -> list[int]:
        with self.memory.lock:
            return [r[0] for r in self.memory.store.db.execute(query, (cutoff,)).fetchall()]

    def _expire_raw(self, cutoff: float, wanted: object, res: RetentionResult) -> None:
        m = self.memory
        files: list[str] = []
        with m.lock:
            rows = m.store.db.execute("SELECT id, raw_refs FROM episodic WHERE end < ? AND raw_refs != '[]'",
                                      (cutoff,)).fetchall()
            with m.store.transaction():
                for eid, raw in rows:
                    refs = json.loads(raw)
                    gone = [r for r in refs if wanted(r)]
                    if gone:
                        m.store.db.execute('UPDATE episodic SET raw_refs=? WHERE id=?',
                                           (json.dumps([r for r in refs if r not in gone]), eid))
                        files += gone
        res.raw_refs += len(files)
        res.raw_files += self.files.delete(files)


__all__ = ['Retention', 'RetentionResult']
