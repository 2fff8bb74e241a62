# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench soak``: six months of a robot's memory in compressed time; RSS, open files, disk per month.

The consolidation runtime (real SQLite, FAISS and all-MiniLM-L6-v2) and the reflex runtime's durable sleep queue run
on a simulated clock: every simulated day brings ``--soak-per-day`` interactions (people, facts that repeat and
facts that do not, events, now and then a reminder, a "remember that", a forget), each passing through the sleep
queue (queued, written, acknowledged) into consolidation with its S_g merges and profile updates, plus questions to
QueryMemory and the daily retention pass. At the end of each month the process's RSS, its open files and the bytes
on disk are printed: after warm-up RSS and open files must stay flat and disk grow linearly with the entries.

Also: QueryMemory p50/p99 on a store of ``--soak-query-n`` entries, plain and SQLCipher-encrypted, side by side.
"""

from __future__ import annotations

import argparse
import gc
import os
import pathlib
import random
import tempfile
import time

import numpy as np

from .bench import Report

DAY = 86400.0
T0 = 1_780_000_000.0
PEOPLE = [f'<face_{i}>' for i in range(1, 13)]
OBJECTS = ['keys', 'umbrella', 'passport', 'charger', 'glasses', 'wallet', 'scarf', 'hammer', 'ticket', 'book',
           'mug', 'remote', 'laptop', 'pills', 'letter', 'lamp']
PLACES = ['drawer', 'garage', 'attic', 'kitchen', 'cellar', 'garden', 'car', 'closet', 'shelf', 'basket']


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Flags of this area."""
    p.add_argument('--soak-months', type=int, default=6, help='soak: simulated months')
    p.add_argument('--soak-per-day', type=int, default=48, help='soak: interactions per simulated day')
    p.add_argument('--soak-query-n', type=int, default=20000, help='soak: entries of the plain/encrypted query store')


def _process() -> tuple[float, int]:
    import psutil

    p = psutil.Process()
    return p.memory_info().rss / 2**20, p.num_fds()


def _runtime(folder: pathlib.Path, embedder, clock, key: str | None = None):  # noqa: ANN001, ANN202
    from lightomni_ros.core.consolidation.config import ConsolidationConfig
    from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime
    from lightomni_ros.core.memory.config import MemoryConfig
    from lightomni_ros.core.memory.privacy import PrivacyConfig, RetentionConfig

    privacy = PrivacyConfig(encryption='on' if key else 'off', key_env='LIGHTOMNI_SOAK_KEY', audio_dir=str(folder))
    if key:
        os.environ['LIGHTOMNI_SOAK_KEY'] = key
    cfgs = ConsolidationConfigs(memory=MemoryConfig(memory_dir=str(folder / 'memory')),
                                consolidation=ConsolidationConfig(timezone='UTC'), privacy=privacy,
                                retention=RetentionConfig(raw_audio=14, keyframes=14, episodic=120, semantic=0,
                                                          profiles=0))
    return ConsolidationRuntime(cfgs, embedder=embedder, clock=clock)


def run(args: argparse.Namespace, report: Report) -> None:
    """Simulate, print the monthly figures, then the plain/encrypted query latency."""
    from lightomni_ros.core.embedding import EmbeddingConfig, text_embedder

    months = 1 if args.quick else args.soak_months
    per_day = 12 if args.quick else args.soak_per_day
    embedder = text_embedder(EmbeddingConfig(backend='auto'))
    with tempfile.TemporaryDirectory(prefix='lightomni_soak_') as tmp:
        _soak(pathlib.Path(tmp), embedder, months, per_day, report)
    with tempfile.TemporaryDirectory(prefix='lightomni_soak_q_') as tmp:
        _queries(pathlib.Path(tmp), embedder, 2000 if args.quick else args.soak_query_n, report)


def _soak(work: pathlib.Path, embedder, months: int, per_day: int, report: Report) -> None:  # noqa: ANN001
    from tqdm import tqdm

    from lightomni_ros.core.reflex.sleep import fallback_topic
    from lightomni_ros.core.reflex.sleep_queue import SleepQueue
    from lightomni_ros.core.reflex.types import SegmentInput

    now = [T0]
    rng = random.Random(7)
    mem = _runtime(work, embedder, lambda: now[0])
    queue = SleepQueue(work / 'reflex' / 'sleep_queue.db', high_water=256)
    seg_id = 0
    rows = []
    days = 30 * months
    for day in tqdm(range(days), desc='soak', unit='day', disable=None):
        for k in range(per_day):
            seg_id += 1
            now[0] = T0 + day * DAY + (k + 1) * DAY / (per_day + 1)
            who = rng.choice(PEOPLE)
            obj, place = rng.choice(OBJECTS), rng.choice(PLACES)
            r = rng.random()
            if r < 0.02:
                said = f'Remind me to take the {obj} in {rng.randint(1, 30)} minutes.'
            elif r < 0.06:
                said = f'Remember that the {obj} of {who} is in the {place}.'
            elif r < 0.5:
                said = f'I put the {obj} in the {place}.'                       # repeats: the content filter
            else:
                said = f'On day {day} I talked about task {seg_id} and the {obj}.'
            seg = SegmentInput(segment_id=seg_id, start=now[0] - 20, end=now[0], transcript=said, face_ids=[who],
                               visual_tags=[place])
            queue.put(seg, 'noted')
            item = queue.next_interaction()
            queue.written(item.item_id, fallback_topic(item.segment, item.response, 'soak'))
            out = queue.next_topic(now[0], 5.0)
            queue.sent(out.item_id, now[0])
            mem.enqueue(out.topic)
            queue.acknowledged(out.topic.segment_id, out.topic.start)
            mem.process_all()
            if k % 6 == 0:
                mem.query(text=f'where is the {rng.choice(OBJECTS)}?')
            mem.fire_due(now[0])
        if day % 30 == 17:          # now and then somebody asks to be forgotten
            mem.forget_face(rng.choice(PEOPLE))
        mem.expire(now[0])
        if (day + 1) % 30 == 0:
            mem.flush()
            mem.store.checkpoint()      # the WAL folded in: disk says what is stored, not what is in flight
            gc.collect()
            rss, fds = _process()
            entries = sum(mem.entries.count(kind) for kind in (0, 1))
            disk = mem.disk_bytes() + sum(p.stat().st_size for p in (work / 'reflex').iterdir())
            rows.append({'month': (day + 1) // 30, 'rss_mb': round(rss, 1), 'open_files': fds,
                         'disk_mb': round(disk / 2**20, 2), 'entries': entries,
                         'bytes_per_entry': round(disk / max(1, entries)), 'sg_nodes': len(mem.tree.nodes()),
                         'merges': mem.stats.merges})
            report.figure(f'month.{rows[-1]["month"]}', rows[-1])
    mem.close()
    queue.close()
    report.figure('simulated_segments', seg_id)
    if len(rows) >= 3:
        warm = rows[1]
        report.figure('rss_growth_after_warmup_mb', round(rows[-1]['rss_mb'] - warm['rss_mb'], 1), 'MB',
                      f'month {warm["month"]} -> {rows[-1]["month"]}')
        report.figure('open_files_growth_after_warmup', rows[-1]['open_files'] - warm['open_files'])
        x = np.array([r['entries'] for r in rows], float)
        y = np.array([r['disk_mb'] for r in rows], float)
        fit = np.polyfit(x, y, 1)
        resid = y - np.polyval(fit, x)
        r2 = 1 - float((resid ** 2).sum() / max(1e-12, ((y - y.mean()) ** 2).sum()))
        report.figure('disk_linear_r2', round(r2, 4), note='disk vs entries, monthly points')
        report.figure('disk_bytes_per_entry_marginal', round(fit[0] * 2**20), 'B')
    report.note('entries drop when retention expires episodic events (120 days here) and when people are forgotten')


def _queries(work: pathlib.Path, embedder, n: int, report: Report) -> None:  # noqa: ANN001
    from lightomni_ros.core.memory.store import KIND_EPISODIC, KIND_SEMANTIC, EpisodicEntry, SemanticEntry

    rng = np.random.default_rng(3)
    out = {}
    for mode, key in (('plain', None), ('encrypted', 'soak passphrase')):
        mem = _runtime(work / mode, embedder, time.time, key)
        vecs = rng.standard_normal((n, embedder.dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        half = n // 2
        mem.entries.add(KIND_SEMANTIC, [SemanticEntry(f'fact {i} about the {OBJECTS[i % 16]}', T0 + i, T0 + i)
                                        for i in range(half)], vecs[:half])
        mem.entries.add(KIND_EPISODIC, [EpisodicEntry(T0 + i, T0 + i + 1, visual='a room', audio=f'event {i}')
                                        for i in range(n - half)], vecs[half:])
        qs = rng.standard_normal((520, embedder.dim)).astype(np.float32)
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        lat = []
        for i, q in enumerate(qs):
            t0 = time.perf_counter()
            mem.query(vector=q, k_semantic=12, k_episodic=4)
            if i >= 20:
                lat.append((time.perf_counter() - t0) * 1000)
        out[mode] = (float(np.percentile(lat, 50)), float(np.percentile(lat, 99)))
        assert mem.encrypted == (key is not None)
        mem.close()
    for mode, (p50, p99) in out.items():
        report.figure(f'query_p50_ms.{mode}', round(p50, 3), 'ms', f'{n} entries, in process')
        report.figure(f'query_p99_ms.{mode}', round(p99, 3), 'ms')
    report.figure('query_p99_ratio_encrypted_plain', round(out['encrypted'][1] / out['plain'][1], 2))


__all__ = ['run', 'add_arguments']
