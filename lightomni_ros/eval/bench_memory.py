# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench memory``: S_g growth, QueryMemory latency by store size, consolidation throughput, disk use.

Figures (and ``--json`` keys):

- ``sg_nodes`` / ``sg_bytes`` by horizon (``1h``, ``1d``, ``1mo``, ``6mo``): live S_g nodes and serialized script size
  after simulated 30 s segments (k from the memory config, extractive merges); ``sg_ratio_6mo_1h`` (paper: about 3x).
- ``query_p50_ms`` / ``query_p99_ms`` by size (``1e3``, ``1e5``, ``1e6``): in-process ``Consolidator.query`` with a
  fused query vector (index search + SQLite fetch of 12 semantic + 4 episodic entries). The large stores are built
  fast: rows with synthetic text and batched random unit vectors, not real embeddings (said in the output).
  ``query_text_p99_ms``: the same at 1e3 with the query text embedded by all-MiniLM-L6-v2.
  ``service_p50_ms`` / ``service_p99_ms``: QueryMemory round trip through the node in another process (1e3 store).
- ``consolidation_segments_per_s``: Topics consolidated per second (real embedder, SQLite, FAISS, extractive
  merges and profile updates); ``disk_bytes_per_entry``: memory folder bytes per stored entry of that run.

``--backend milvus`` compares the two memory backends instead (one run, same vectors, same queries): ``backend``,
``insert_per_s`` at the largest size and ``insert_per_s_by_size`` (entries written through the backend until they
are in Milvus: local store + outbox + sync),
``query_p50_ms`` / ``query_p99_ms`` by size (``1e4``, ``1e5``; ``--memory-sizes`` for others) of QueryMemory
in-process on a second robot of the fleet (every row comes from Milvus), and ``embedded.*``: the same figures for
the embedded backend (queries on the robot that wrote the rows). Without ``--milvus-uri`` a Milvus standalone server
(PyPI ``milvus``) is started in the work folder.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

import faiss
import numpy as np

from ..core.consolidation.config import ConsolidationConfig
from ..core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime
from ..core.consolidation.summarizer import ExtractiveSummarizer
from ..core.memory.config import MemoryConfig
from ..core.memory.global_state import MergeTree, SgNode
from ..core.memory.store import KIND_EPISODIC, KIND_SEMANTIC, normalize
from ..core.topic import TopicData
from ..env import launched_here
from .bench import Report

HORIZONS = (('1h', 3600), ('1d', 86400), ('1mo', 30 * 86400), ('6mo', 182 * 86400 + 43200))
SEGMENT_S = 30
_OBJECTS = ('a cup', 'the sofa', 'a laptop', 'the window', 'a dog', 'the kitchen table', 'a red ball', 'the door',
            'a plant', 'the fridge', 'a book', 'the stairs')
_PEOPLE = ('<face_1>', '<face_2>', '<face_3>', '<face_4>')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Memory-specific flags."""
    parser.add_argument('--memory-sizes', default='', help='store sizes for query latency, e.g. 1e3,1e5,1e6 '
                        '(default: all three; --quick: 1e3,1e4)')
    parser.add_argument('--memory-dir', default='', help='work folder (default: a temporary folder, removed after)')
    parser.add_argument('--backend', choices=('embedded', 'milvus'), default='embedded',
                        help='milvus: compare the Milvus backend with the embedded one (insert rate, query latency)')
    parser.add_argument('--milvus-uri', default='', help='with --backend milvus: an existing server (default: start '
                        'a Milvus standalone server here); token from LIGHTOMNI_MILVUS_TOKEN')


def _script(rng: random.Random, i: int) -> str:
    return (f'saw {rng.choice(_PEOPLE)} near {rng.choice(_OBJECTS)}; heard "the {rng.choice(_OBJECTS)} for task {i} '
            f'is ready"; answered "noted"')


def bench_sg(report: Report, k: int, node_max_tokens: int) -> None:
    """Simulate S_g over 6 months of 30 s segments with extractive merges."""
    rng = random.Random(0)
    tree, summ, nid = MergeTree(k), ExtractiveSummarizer(), 1
    marks = {h: s // SEGMENT_S for h, s in HORIZONS}
    counts: dict[str, int] = {}
    t0 = time.perf_counter()
    for i in range(1, marks['6mo'] + 1):
        tree.add_leaf(SgNode(nid, 0, i * SEGMENT_S, i * SEGMENT_S + 29, i, i, _script(rng, i)))
        nid += 1
        while (plan := tree.next_merge()) is not None:
            tree.apply(plan, tree.merged(plan, nid, summ.merge([c.text for c in plan.children], node_max_tokens).text))
            nid += 1
        for h, n in marks.items():
            if n == i:
                script, tokens, _ = tree.render(10 ** 9)
                counts[h] = len(tree.nodes())
                report.figure(f'sg_nodes.{h}', counts[h], 'nodes', f'{n} segments, {tree.depth()} levels')
                report.figure(f'sg_bytes.{h}', len(script.encode()), 'bytes', f'~{tokens} tokens')
    report.figure('sg_ratio_6mo_1h', round(counts['6mo'] / counts['1h'], 2), 'x', 'target <= 3 (paper)')
    report.figure('sg_simulation_s', round(time.perf_counter() - t0, 1), 's')


def _bulk_store(c: ConsolidationRuntime, n: int, rng: np.random.Generator) -> None:
    """Fill a store with ``n`` entries (3/4 semantic, 1/4 episodic): synthetic rows, random unit vectors."""
    from tqdm import tqdm

    n_sem = n * 3 // 4
    dim = c.memory.embedder.dim
    db = c.store.db
    batch = 50_000
    for kind, count in ((KIND_SEMANTIC, n_sem), (KIND_EPISODIC, n - n_sem)):
        index = c.entries._new_index()
        with tqdm(total=count, desc=f'{"semantic" if kind == KIND_SEMANTIC else "episodic"} x{count}',
                  leave=False, file=sys.stderr) as bar:
            for lo in range(0, count, batch):
                m = min(batch, count - lo)
                ids = np.arange(lo + 1, lo + m + 1, dtype=np.int64)
                with c.store.transaction():
                    if kind == KIND_SEMANTIC:
                        rows = [(int(i), float(i), float(i) + 25.0, f'fact {i}: {_OBJECTS[i % 12]} is in room {i % 97}',
                                 normalize(f'fact {i}'), int(i)) for i in ids]
                        db.executemany('INSERT INTO semantic(id, start, end, content, norm, source_segment) '
                                       'VALUES(?,?,?,?,?,?)', rows)
                    else:
                        rows = [(int(i), float(i), float(i) + 25.0, f'{_OBJECTS[i % 12]} on the table',
                                 f'task {i} is ready', 'noted', int(i)) for i in ids]
                        db.executemany('INSERT INTO episodic(id, start, end, visual, audio, response, source_segment) '
                                       'VALUES(?,?,?,?,?,?,?)', rows)
                x = rng.standard_normal((m, dim), dtype=np.float32)
                x /= np.linalg.norm(x, axis=1, keepdims=True)
                index.add(ids, x)
                bar.update(m)
        c.entries.indexes[kind] = index


def _runtime(mcfg: MemoryConfig, ccfg: ConsolidationConfig, folder: pathlib.Path, embedder) -> ConsolidationRuntime:
    return ConsolidationRuntime(ConsolidationConfigs(memory=MemoryConfig(**(vars(mcfg) | {'memory_dir': str(folder)})),
                                                     consolidation=ccfg), embedder=embedder)


def _measure(fn, n: int) -> tuple[float, float]:
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1000.0)
    return float(np.percentile(ts, 50)), float(np.percentile(ts, 99))


def bench_queries(report: Report, sizes: list[int], work: pathlib.Path, embedder, mcfg: MemoryConfig,
                  ccfg: ConsolidationConfig, quick: bool) -> pathlib.Path:
    """Measure QueryMemory latency in-process by store size; return the smallest store's folder."""
    rng = np.random.default_rng(0)
    report.note('large stores: synthetic rows + batched random unit vectors (not real embeddings); '
                'queries are random unit fused vectors, k = 12 semantic + 4 episodic')
    first = None
    for n in sizes:
        folder = work / f'query_{n}'
        c = _runtime(mcfg, ccfg, folder, embedder)
        t0 = time.perf_counter()
        faiss.omp_set_num_threads(os.cpu_count() or 1)  # building uses every core; queries run as configured
        _bulk_store(c, n, rng)
        faiss.omp_set_num_threads(max(1, mcfg.faiss_threads))
        key = f'{n:.0e}'.replace('+0', '').replace('+', '')
        report.figure(f'build_s.{key}', round(time.perf_counter() - t0, 1), 's',
                      f'index {c.entries.index_kind()}')
        qs = rng.standard_normal((200 if quick else 1000, embedder.dim), dtype=np.float32)
        it = iter(qs)
        for _ in range(20):  # warm-up
            c.query(vector=next(iter(qs)))
        p50, p99 = _measure(lambda: c.query(vector=next(it)), len(qs) - 1)
        report.figure(f'query_p50_ms.{key}', round(p50, 3), 'ms')
        report.figure(f'query_p99_ms.{key}', round(p99, 3), 'ms', 'target <= 10 ms at 1e6' if n >= 10 ** 6 else '')
        if first is None:
            texts = iter([f'where is the {o} from task {i}?' for i in range(400) for o in _OBJECTS])
            p50, p99 = _measure(lambda: c.query(text=next(texts)), 100 if quick else 300)
            report.figure(f'query_text_p50_ms.{key}', round(p50, 3), 'ms', 'incl. embedding the question')
            report.figure(f'query_text_p99_ms.{key}', round(p99, 3), 'ms')
            c.close()  # saved: the node loads this store for the round trip
            first = folder
        else:
            c.store.close()  # big stores are not reopened: skip writing their index files
            shutil.rmtree(folder, ignore_errors=True)
    return first


def bench_consolidation(report: Report, work: pathlib.Path, embedder, mcfg: MemoryConfig,
                        ccfg: ConsolidationConfig, n: int) -> None:
    """Topics per second through the full consolidation path; bytes of disk per stored entry."""
    rng = random.Random(1)
    c = _runtime(mcfg, ccfg, work / 'consolidation', embedder)
    t0 = 1_780_000_000.0
    for i in range(1, n + 1):
        who = rng.choice(_PEOPLE)
        c.enqueue(TopicData(segment_id=i, start=t0 + SEGMENT_S * i, end=t0 + SEGMENT_S * i + 25, face_ids=[who],
                            semantic=[f'{who} put {rng.choice(_OBJECTS)} next to {rng.choice(_OBJECTS)} on day {i}',
                                      f'{who} mentioned task {i} about {rng.choice(_OBJECTS)}'],
                            visual=f'{who} near {rng.choice(_OBJECTS)}', audio=f'can you help me with task {i}?',
                            response=f'sure, task {i} is noted', producer='bench'))
    start = time.perf_counter()
    done = c.process_all()
    elapsed = time.perf_counter() - start
    report.figure('consolidation_segments_per_s', round(done / elapsed, 2), 'seg/s',
                  f'{done} topics, {c.stats.merges} merges, {c.stats.profile_updates} profile updates (extractive); '
                  f'real time needs {1 / SEGMENT_S:.3f}')
    c.flush()
    c.store.checkpoint()
    entries = c.entries.count(KIND_SEMANTIC) + c.entries.count(KIND_EPISODIC)
    report.figure('disk_bytes_per_entry', round(c.disk_bytes() / entries), 'B',
                  f'{entries} entries incl. {embedder.dim}-d vectors in SQLite and FAISS, S_g, profiles')
    c.close()


def bench_service(report: Report, folder: pathlib.Path, n_calls: int) -> None:
    """Measure the QueryMemory round trip to the node in another process."""
    try:
        import rclpy
        import rclpy.executors
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState

        from lightomni_ros.srv import QueryMemory
    except ImportError as e:  # a machine without rclpy: the in-process figures stand alone
        report.note(f'service round trip skipped: {e}')
        return
    domain = 90 + os.getpid() % 10
    params = folder.parent / 'node.yaml'
    params.write_text(f'/**:\n  ros__parameters:\n    memory:\n      memory_dir: "{folder}"\n')
    env = launched_here(dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST'))
    proc = subprocess.Popen([sys.executable, '-m', 'lightomni_ros.nodes.consolidation', '--ros-args', '-r',
                             '__ns:=/bench', '--params-file', str(params)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node('bench_memory', context=ctx)
    executor = rclpy.executors.SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    try:
        def call(srv, name, req, timeout=120.0):
            cli = node.create_client(srv, name)
            if not cli.wait_for_service(timeout_sec=timeout):
                raise TimeoutError(name)
            fut = cli.call_async(req)
            executor.spin_until_future_complete(fut, timeout_sec=timeout)
            node.destroy_client(cli)
            return fut.result()

        for tid in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
            call(ChangeState, '/bench/consolidation/change_state', ChangeState.Request(transition=Transition(id=tid)))
        cli = node.create_client(QueryMemory, '/bench/query_memory')
        cli.wait_for_service(timeout_sec=30)
        rng = np.random.default_rng(2)
        inside = []

        def once():
            v = rng.standard_normal(384).astype(np.float32)
            fut = cli.call_async(QueryMemory.Request(query_vector=list(v / np.linalg.norm(v))))
            executor.spin_until_future_complete(fut, timeout_sec=10)
            inside.append(fut.result().latency_ms)

        for _ in range(20):
            once()
        p50, p99 = _measure(once, n_calls)
        report.figure('service_p50_ms', round(p50, 3), 'ms', 'QueryMemory round trip, 1e3 store, fused vector')
        report.figure('service_p99_ms', round(p99, 3), 'ms', f'inside the node p50 {np.median(inside):.2f} ms')
    except Exception as e:  # noqa: BLE001 - the in-process figures stand; say why this one is missing
        report.note(f'service round trip failed: {type(e).__name__}: {e}')
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _fill(c: ConsolidationRuntime, n: int, rng: np.random.Generator, batch: int = 1000) -> float:
    """Write ``n`` entries (3/4 semantic, 1/4 episodic) through the backend; return entries per second.

    For the Milvus backend the time includes the sync that puts them into Milvus (the outbox drained).
    """
    from tqdm import tqdm

    from ..core.memory.store import EpisodicEntry, SemanticEntry

    dim = c.memory.embedder.dim
    t0 = time.perf_counter()
    with tqdm(total=n, desc=f'{c.backend_name()} x{n}', leave=False, file=sys.stderr) as bar:
        for lo in range(0, n, batch):
            m = min(batch, n - lo)
            x = rng.standard_normal((m, dim), dtype=np.float32)
            x /= np.linalg.norm(x, axis=1, keepdims=True)
            n_sem = m * 3 // 4
            sem = [SemanticEntry(f'fact {lo + i}: {_OBJECTS[i % 12]} is in room {i % 97}', T + i, T + i + 25)
                   for i in range(n_sem)]
            epi = [EpisodicEntry(T + i, T + i + 25, f'{_OBJECTS[i % 12]} on the table', f'task {lo + i} is ready')
                   for i in range(m - n_sem)]
            with c.memory.lock:
                c.entries.add(KIND_SEMANTIC, sem, x[:n_sem])
                c.entries.add(KIND_EPISODIC, epi, x[n_sem:])
            while c.sync().backlog:
                pass
            bar.update(m)
    return n / (time.perf_counter() - t0)


T = 1_780_000_000.0


def bench_backends(report: Report, sizes: list[int], work: pathlib.Path, embedder, quick: bool,
                   uri: str) -> None:
    """Insert rate and QueryMemory latency of the Milvus backend and the embedded one, in one run."""
    ccfg = ConsolidationConfig(timezone='UTC')
    report.figure('backend', 'milvus')
    report.note('rows: synthetic texts with random unit vectors (no embedding cost); queries: random unit fused '
                'vectors, k = 12 semantic + 4 episodic, robot_ids "*"; Milvus queries run on a second robot of the '
                'fleet, so every result comes from the server')
    server = None
    if not uri:
        from ..tools.milvus_server import MilvusServer
        server = MilvusServer(work / 'milvus-server').start()
        uri = server.uri
        report.note(f'Milvus 2.3.5 standalone (PyPI milvus) started here at {uri}')
    n_q = 200 if quick else 1000
    try:
        for n in sizes:
            key = f'{n:.0e}'.replace('+0', '').replace('+', '')
            rng = np.random.default_rng(n)
            qs = rng.standard_normal((n_q + 20, embedder.dim), dtype=np.float32)
            for backend in ('milvus', 'embedded'):
                prefix = '' if backend == 'milvus' else 'embedded.'
                fleet = f'bench{n}_{os.getpid()}'
                mem = dict(memory_dir=str(work / f'{backend}_{n}_w'), backend=backend, milvus_uri=uri,
                           fleet_id=fleet, robot_id='writer')
                writer = ConsolidationRuntime(ConsolidationConfigs(memory=MemoryConfig(**mem), consolidation=ccfg),
                                              embedder=embedder)
                faiss.omp_set_num_threads(os.cpu_count() or 1)
                rate = _fill(writer, n, rng)
                faiss.omp_set_num_threads(1)
                report.figure(f'{prefix}insert_per_s_by_size.{key}', round(rate, 1), 'entries/s')
                reader = writer
                if backend == 'milvus':
                    reader = ConsolidationRuntime(ConsolidationConfigs(
                        memory=MemoryConfig(**(mem | {'memory_dir': str(work / f'{backend}_{n}_r'),
                                                      'robot_id': 'reader'})), consolidation=ccfg), embedder=embedder)
                it = iter(qs)
                for _ in range(20):
                    reader.query(vector=next(it), robot_ids=['*'])
                got = reader.query(vector=qs[0], robot_ids=['*'])
                if len(got.semantic) != 12 or len(got.episodic) != 4:
                    report.note(f'{backend} {key}: a query returned {len(got.semantic)}+{len(got.episodic)} entries')
                p50, p99 = _measure(lambda: reader.query(vector=next(it), robot_ids=['*']), n_q)
                report.figure(f'{prefix}query_p50_ms.{key}', round(p50, 3), 'ms')
                report.figure(f'{prefix}query_p99_ms.{key}', round(p99, 3), 'ms')
                if reader is not writer:
                    reader.close()
                writer.close()
        last = f'{sizes[-1]:.0e}'.replace('+0', '').replace('+', '')
        for prefix in ('', 'embedded.'):
            node = report.figures[prefix[:-1]] if prefix else report.figures
            report.figure(f'{prefix}insert_per_s', node['insert_per_s_by_size'][last], 'entries/s', f'at {last}')
    finally:
        if server is not None:
            server.stop()


def run(args: argparse.Namespace, report: Report) -> None:
    """Measure everything in one run."""
    from ..core.embedding import EmbeddingConfig, text_embedder

    quick = bool(getattr(args, 'quick', False))
    spec = getattr(args, 'memory_sizes', '') or ('1e3,1e4' if quick else '1e3,1e5,1e6')
    sizes = [int(float(s)) for s in spec.split(',') if s.strip()]
    mcfg, ccfg = MemoryConfig(), ConsolidationConfig(timezone='UTC')
    work_arg = getattr(args, 'memory_dir', '')
    work = pathlib.Path(work_arg or tempfile.mkdtemp(prefix='lightomni-bench-memory-'))
    work.mkdir(parents=True, exist_ok=True)
    try:
        embedder = text_embedder(EmbeddingConfig())
        if getattr(args, 'backend', 'embedded') == 'milvus':
            spec = getattr(args, 'memory_sizes', '') or ('1e3,1e4' if quick else '1e4,1e5')
            bench_backends(report, [int(float(s)) for s in spec.split(',') if s.strip()], work, embedder, quick,
                           getattr(args, 'milvus_uri', ''))
            return
        report.note(f'embedder {embedder.name} ({embedder.dim}-d), k={mcfg.k}, HNSW past {mcfg.hnsw_threshold} '
                    f'vectors (M={mcfg.hnsw_m}, efSearch={mcfg.hnsw_ef_search}); {os.cpu_count()} cpus')
        bench_sg(report, mcfg.k, mcfg.node_max_tokens)
        bench_consolidation(report, work, embedder, mcfg, ccfg, 60 if quick else 300)
        small = bench_queries(report, sizes, work, embedder, mcfg, ccfg, quick)
        bench_service(report, small, 100 if quick else 500)
    finally:
        if not work_arg:
            shutil.rmtree(work, ignore_errors=True)
