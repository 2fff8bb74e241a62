# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Per-stage latency bookkeeping shared by the core and the nodes' diagnostics."""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from typing import Iterator

import numpy as np


class LatencyStats:
    """Rolling window of one stage's latencies (milliseconds) with percentiles; thread-safe."""

    def __init__(self, window: int = 512) -> None:
        self._values: collections.deque[float] = collections.deque(maxlen=window)
        self._lock = threading.Lock()
        self.count = 0

    def add(self, ms: float) -> None:
        """Record one measurement."""
        with self._lock:
            self._values.append(float(ms))
            self.count += 1

    def percentile(self, q: float) -> float:
        """Percentile ``q`` (0-100) of the window; 0.0 when empty."""
        with self._lock:
            if not self._values:
                return 0.0
            return float(np.percentile(np.fromiter(self._values, float), q))

    @property
    def last(self) -> float:
        """Most recent measurement (0.0 when none)."""
        with self._lock:
            return self._values[-1] if self._values else 0.0


class StageTimer:
    """Named :class:`LatencyStats`, one per processing stage, with a ``with timer.stage('asr'):`` helper."""

    def __init__(self, window: int = 512) -> None:
        self._window = window
        self.stages: dict[str, LatencyStats] = {}

    def add(self, stage: str, ms: float) -> None:
        """Record ``ms`` for ``stage``."""
        self.stages.setdefault(stage, LatencyStats(self._window)).add(ms)

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[dict]:
        """Time the body; the yielded dict receives ``ms`` when the body ends."""
        out: dict = {}
        t0 = time.perf_counter()
        try:
            yield out
        finally:
            out['ms'] = (time.perf_counter() - t0) * 1000.0
            self.add(name, out['ms'])

    def summary(self) -> dict[str, dict[str, float]]:
        """Per stage: last, p50, p99 (ms) and count."""
        return {name: {'last': s.last, 'p50': s.percentile(50), 'p99': s.percentile(99), 'count': s.count}
                for name, s in list(self.stages.items())}  # another thread may add a stage meanwhile
