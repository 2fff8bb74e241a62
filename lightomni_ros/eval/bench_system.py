# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench system``: the whole method through the offline ``LightOmni`` facade, on the default backbone.

Figures (and ``--json`` keys), all measured in one run with one loaded model:

- ``answer_latency_ms`` by memory horizon (``1min``, ``2h``, ``6mo``): end of a spoken question (the VAD's end of
  speech) -> Action, i.e. ASR + reflex pass + retrieval against the memory core + response, p50 over the questions
  after the first (``warm``: the S_g prefix cache holds the current S_g version) and the first one (``cold``:
  the prefix of a new S_g version is computed). The questions are espeak-ng speech pushed as 20 ms audio chunks.
  Memory does not change between the questions of one horizon (no sleep-time work meanwhile).
- ``answer_latency_ratio_6mo_1min`` (warm p50; target <= 1.2) and ``answer_latency_ratio_2h_1min``;
  ``answer_latency_cold_ratio_6mo_1min``.
- ``sleep_rtf``: sleep-time real-time factor = time to consolidate / duration of the input, for synthetic 30 s
  segments (about 75 transcript words each, one face, visual hints): memory-adapter pass -> Topic -> consolidation
  (embeddings, SQLite, FAISS) with S_g merges and profile updates by the same model (paper: 0.72).
- ``memory_pass_s.{single,batched}`` and ``memory_batch_speedup``: a backlog of 30 s segments put in the reflex
  runtime's sleep queue and drained by ``ReflexRuntime.memory_step`` as the node runs it, once one at a time
  (``sleep_batch`` 1) and once with the configured ``sleep_batch``: seconds of memory pass per segment, same segments.

How memory is filled (stated in the output): 1 minute = 2 segments and 2 hours = 240 segments of 30 s, consolidated
through the consolidation core with the real embedder (S_g merges extractive while filling, to keep it fast);
6 months = simulated: S_g built by the same merge tree over 524,160 segments (extractive merges), and the store filled
with synthetic rows and random unit vectors (``--system-entries``, default 1e6 entries), not real embeddings.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import shutil
import tempfile
import time
from typing import Any

import numpy as np

from .bench import Report

SEGMENT_S = 30
HORIZONS = (('1min', 60), ('2h', 2 * 3600), ('6mo', 182 * 86400 + 43200))
#: addressed to the robot by name, as the node's addressing gate (latent.wake_words) wants spoken questions
QUESTIONS = ('Robot, where did I leave my keys?', 'Robot, what did Ana say about the meeting?',
             'Robot, who visited me this morning?', 'Robot, what is the name of my doctor?',
             'Robot, when is the team meeting?', 'Robot, what did I eat for lunch?')
_PEOPLE = ('Ana', 'Ben', 'Chen', 'Dara')
_OBJECTS = ('the keys', 'a cup', 'the laptop', 'the red ball', 'the book', 'the phone', 'the umbrella', 'a plant')
_PLACES = ('the blue drawer', 'the kitchen table', 'the sofa', 'the hallway shelf', 'the window sill')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """System-specific flags."""
    parser.add_argument('--system-entries', type=float, default=1e6,
                        help='entries in the simulated 6-month store (default 1e6; --quick: 2e4)')
    parser.add_argument('--system-questions', type=int, default=0,
                        help='spoken questions per horizon (default 6; --quick: 2)')
    parser.add_argument('--system-sleep-segments', type=int, default=0,
                        help='30 s segments consolidated for sleep_rtf (default 9: one S_g merge; --quick: 1)')
    parser.add_argument('--system-backlog', type=int, default=0,
                        help='30 s segments in the backlog drained one at a time and batched (default 8; --quick: 2)')


def _utterance(rng: random.Random, i: int, words: int = 75) -> str:
    out = []
    while sum(len(s.split()) for s in out) < words:
        who, obj, where = rng.choice(_PEOPLE), rng.choice(_OBJECTS), rng.choice(_PLACES)
        out.append(rng.choice((f'{who} put {obj} on {where} before the call number {i}.',
                               f'I think {obj} is still on {where}, said {who}.',
                               f'Remember that {who} likes tea in the afternoon.',
                               f'We talked about the project plan and {obj} for a while.')))
    return ' '.join(out)


def _topic(rng: random.Random, i: int, t0: float) -> Any:
    from ..core.topic import TopicData

    who, obj, where = rng.choice(_PEOPLE), rng.choice(_OBJECTS), rng.choice(_PLACES)
    face = f'<face_{rng.randint(1, 4)}>'
    start = t0 + i * SEGMENT_S
    return TopicData(segment_id=i + 1, start=start, end=start + SEGMENT_S - 1, face_ids=[face],
                     semantic=[f'{face} ({who}) put {obj} on {where} (segment {i})'],
                     visual=f'{face} near {where}, holding {obj}', audio=f'"{who} here, {obj} is on {where}"',
                     response='', producer='bench-synthetic')


def fill_real(m: Any, segments: int, t0: float) -> float:
    """Consolidate ``segments`` synthetic Topics into the consolidation runtime ``m``; return seconds.

    Real embeddings, extractive merges (the model's time is not what a fill measures).
    """
    from ..core.consolidation.summarizer import ExtractiveSummarizer

    rng = random.Random(segments)
    model_summarizer = m.summarizer
    m.summarizer = ExtractiveSummarizer()
    t = time.perf_counter()
    try:
        for i in range(segments):
            m.enqueue(_topic(rng, i, t0))
        m.process_all()
    finally:
        m.summarizer = model_summarizer
    return time.perf_counter() - t


def fill_simulated(m: Any, segments: int, entries: int, t0: float, persist: bool = False) -> tuple[float, int]:
    """S_g over ``segments`` leaves and ``entries`` synthetic rows in the consolidation runtime ``m``: (seconds, nodes).

    Merges are extractive; ``persist`` also writes S_g's live nodes to the store (a node started on it reads them).
    """
    from tqdm import tqdm

    from ..core.consolidation.summarizer import ExtractiveSummarizer
    from ..core.memory.global_state import MergeTree, SgNode
    from .bench_memory import _bulk_store

    t = time.perf_counter()
    rng = random.Random(1)
    mcfg = m.memory.cfg
    tree, summ, nid = MergeTree(mcfg.k), ExtractiveSummarizer(), 1
    for i in tqdm(range(segments), desc='S_g over 6 months', leave=False, mininterval=2.0):
        who, obj, where = rng.choice(_PEOPLE), rng.choice(_OBJECTS), rng.choice(_PLACES)
        start = t0 + i * SEGMENT_S
        tree.add_leaf(SgNode(nid, 0, start, start + SEGMENT_S - 1, i + 1, i + 1,
                             f'saw <face_{i % 4 + 1}> near {where}; heard "{who}: {obj} is on {where}"'))
        nid += 1
        while (plan := tree.next_merge()) is not None:
            text = summ.merge([c.text for c in plan.children], mcfg.node_max_tokens).text
            tree.apply(plan, tree.merged(plan, nid, text))
            nid += 1
    _bulk_store(m, entries, np.random.default_rng(0))
    if persist:
        for n in tree.nodes():
            n.id = m.store.add_sg_node(n.level, n.start, n.end, n.first_segment, n.last_segment, n.text,
                                       face_ids=n.face_ids, producer='bench-simulated')
    with m.memory.lock:
        m.memory.tree = tree
        with m.store.transaction():
            m.store.bump('sg.version')
    return time.perf_counter() - t, len(tree.nodes())


def _speech_chunks(text: str) -> list[bytes]:
    """espeak-ng speech of ``text`` + 1.5 s of silence, as 20 ms S16LE chunks at 16 kHz."""
    from .bagwriter import tts

    x = np.concatenate([np.zeros(8000, np.float32), tts(text, 'en-us', 150, 50), np.zeros(24000, np.float32)])
    pcm = (np.clip(x, -1, 1) * 32767).astype('<i2').tobytes()
    step = 320 * 2
    return [pcm[i:i + step] for i in range(0, len(pcm), step)]


def _ask_spoken(agent: Any, chunks: list[bytes]) -> tuple[float, Any]:
    """Push a spoken question; return (wall ms of the push that closed it -> Action, the Action)."""
    for c in chunks:
        t0 = time.perf_counter()
        ev = agent.push_audio(agent.now + 0.02, c)
        acts = [a for a in ev.actions if a.source == 0]
        if acts:
            return (time.perf_counter() - t0) * 1000.0, acts[-1]
    # the VAD did not close the speech within the trailing silence: close it as the end of input does
    t0 = time.perf_counter()
    ev = agent.flush()
    acts = [a for a in ev.actions if a.source == 0]
    return (time.perf_counter() - t0) * 1000.0, (acts[-1] if acts else None)


def _plot(out: pathlib.Path, lat: dict[str, dict[str, float]], seg_s: list[float]) -> list[str]:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    made = []
    names = list(lat)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    x = np.arange(len(names))
    ax.bar(x - 0.2, [lat[n]['warm'] / 1000 for n in names], 0.4, label='warm (p50)')
    ax.bar(x + 0.2, [lat[n]['cold'] / 1000 for n in names], 0.4, label='cold (first question)')
    ax.set_xticks(x, names)
    ax.set_xlabel('memory horizon')
    ax.set_ylabel('seconds')
    ax.set_title('Answer latency: end of question -> Action')
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis='y')
    fig.tight_layout()
    fig.savefig(out / 'system_answer_latency.png', dpi=100)
    plt.close(fig)
    made.append(str(out / 'system_answer_latency.png'))
    if seg_s:
        fig, ax = plt.subplots(figsize=(6, 3.2))
        ax.plot(range(1, len(seg_s) + 1), [s / SEGMENT_S for s in seg_s], marker='o', label='per segment')
        ax.axhline(sum(seg_s) / (SEGMENT_S * len(seg_s)), linestyle='--', label='sleep_rtf')
        ax.axhline(0.72, color='grey', linestyle=':', label='paper 0.72')
        ax.set_xlabel('segment')
        ax.set_ylabel('consolidation time / input time')
        ax.set_title('Sleep-time real-time factor (30 s segments)')
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / 'system_sleep_rtf.png', dpi=100)
        plt.close(fig)
        made.append(str(out / 'system_sleep_rtf.png'))
    return made


def _configs(quick: bool) -> Any:
    """The facade's configs: defaults, or the --quick smoke-test variant (torch pass, short replies, small S_g)."""
    from ..core.agent import AgentConfigs
    from ..core.consolidation.runtime import ConsolidationConfigs
    from ..core.memory.config import MemoryConfig
    from ..core.reflex.config import BackboneConfig, ExportConfig
    from ..core.reflex.runtime import ReflexConfigs

    if not quick:
        return AgentConfigs()
    return AgentConfigs(consolidation=ConsolidationConfigs(memory=MemoryConfig(state_max_tokens=1024)),
                        reflex=ReflexConfigs(export=ExportConfig(backend='torch'),
                                             backbone=BackboneConfig(max_new_tokens=16, memory_max_new_tokens=32)))


def _horizon(agent: Any, name: str, segments: int, entries: int, questions: list, report: Report) -> dict[str, float]:
    """Fill one memory horizon, ask the spoken questions, report; return warm and cold answer latency (ms)."""
    from ..core.memory.store import KIND_EPISODIC, KIND_SEMANTIC

    t0 = 1.7e9
    if name == '6mo':
        took, nodes = fill_simulated(agent.memory, segments, entries, t0)
    else:
        took, nodes = fill_real(agent.memory, segments, t0), len(agent.memory.tree.nodes())
    agent.now = max(agent.now, t0 + segments * SEGMENT_S)
    agent._state_changed()
    v = agent.memory.global_state()
    stored = agent.memory.entries.count(KIND_SEMANTIC) + agent.memory.entries.count(KIND_EPISODIC)
    report.figure(f'memory.{name}', {'segments': segments, 'sg_nodes': nodes, 'sg_tokens': v.script_tokens,
                                     'entries': stored, 'fill_s': round(took, 1)}, '',
                  f'S_g {nodes} nodes, {v.script_tokens} tokens')
    ms, stages, sources = [], [], []
    for chunks in questions:
        took_ms, act = _ask_spoken(agent, chunks)
        if act is None:
            report.note(f'{name}: a question produced no Action')
            continue
        ms.append(took_ms)
        stages.append(act.latency_ms)
        sources.append(act.response_source or ('silent' if not act.response else 'unknown'))
    if not ms:
        raise RuntimeError(f'{name}: no question was answered')
    warm = float(np.median(ms[1:])) if len(ms) > 1 else float(ms[0])
    split = {k: round(float(np.median([s.get(k, 0.0) for s in stages[1:] or stages])), 1)
             for k in ('asr', 'reflex', 'retrieval', 'generation')}
    report.figure(f'answer_latency_ms.{name}', round(warm, 1), 'ms', f'warm p50 of {len(ms) - 1}; cold {ms[0]:.0f} ms')
    report.figure(f'answer_stages_ms.{name}', split, 'ms', 'warm p50 per stage')
    report.figure(f'answer_latency_by_source_ms.{name}', by_source(ms[1:] or ms, sources[1:] or sources), 'ms',
                  'warm p50 and count per Action.response_source (silent: no reply)')
    return {'warm': warm, 'cold': float(ms[0])}


def by_source(ms: list[float], sources: list[str]) -> dict[str, dict[str, float]]:
    """Latency p50 and count per response source (a template is fast, a generated reply is not: one p50 hides it)."""
    out: dict[str, dict[str, float]] = {}
    for src in sorted(set(sources)):
        got = [m for m, s in zip(ms, sources) if s == src]
        out[src] = {'p50': round(float(np.median(got)), 1), 'n': len(got)}
    return out


def _segments(start: float, n: int, first_id: int, seed: int) -> list[Any]:
    """``n`` synthetic 30 s segments from ``start`` (about 75 words each, one face, visual hints)."""
    from ..core.reflex.types import SegmentInput

    rng = random.Random(seed)
    return [SegmentInput(segment_id=first_id + i, start=start + i * SEGMENT_S, end=start + (i + 1) * SEGMENT_S,
                         transcript=_utterance(rng, i), face_ids=[f'<face_{i % 2 + 1}>'],
                         visual_tags=['person', 'table'], speech_end=start + (i + 1) * SEGMENT_S - 1)
            for i in range(n)]


def _sleep_batch(first: Any, n: int, report: Report) -> None:
    """A backlog of ``n`` segments drained by the reflex runtime one at a time, then ``sleep_batch`` at a time."""
    rt = first.reflex
    batch = rt.cfg.reflex.sleep_batch
    per: dict[str, float] = {}
    for name, size, first_id in (('single', 1, 20_000), ('batched', batch, 30_000)):
        segs = _segments(first.now + 60, n, first_id, seed=11)     # the same words both times
        for seg in segs:
            rt.sleep.put(seg, '')
        rt.cfg.reflex.sleep_batch = size
        t, done = time.perf_counter(), 0
        try:
            while (step := rt.memory_step()) is not None:
                done += len(step.topics)
        finally:
            rt.cfg.reflex.sleep_batch = batch
        per[name] = (time.perf_counter() - t) / max(1, done)
        for seg in segs:        # consolidation is not measured here: the Topics are let go
            rt.acknowledged(seg.segment_id, seg.start)
    report.figure('memory_pass_s', {k: round(v, 2) for k, v in per.items()}, 's',
                  f'per segment, a backlog of {n} x 30 s drained by ReflexRuntime.memory_step; batched: '
                  f'sleep_batch {batch}')
    report.figure('memory_batch_speedup', round(per['single'] / per['batched'], 2), 'x', 'single / batched')


def _sleep_rtf(first: Any, n_sleep: int, report: Report) -> list[float]:
    """Sleep time: memory pass + consolidation (model merges/profiles) of 30 s segments; seconds per segment."""
    seg_s = []
    for seg in _segments(first.now + 60, n_sleep, 10_000, seed=7):
        first.now = seg.end
        t = time.perf_counter()
        first.consolidate(seg, '')
        seg_s.append(time.perf_counter() - t)
    st = first.memory.stats
    report.figure('sleep_rtf', round(sum(seg_s) / (SEGMENT_S * n_sleep), 3), 'x',
                  f'{n_sleep} x 30 s segments; {st.merges} S_g merges, {st.profile_updates} profile updates; '
                  'paper 0.72')
    report.figure('sleep_segment_s_p50', round(float(np.median(seg_s)), 2), 's')
    return seg_s


def _ratios(lat: dict[str, dict[str, float]], report: Report) -> None:
    report.figure('answer_latency_cold_ms', {n: round(v['cold'], 1) for n, v in lat.items()}, 'ms')
    report.figure('answer_latency_ratio_2h_1min', round(lat['2h']['warm'] / lat['1min']['warm'], 3), 'x')
    report.figure('answer_latency_ratio_6mo_1min', round(lat['6mo']['warm'] / lat['1min']['warm'], 3), 'x',
                  'target <= 1.2')
    report.figure('answer_latency_cold_ratio_6mo_1min', round(lat['6mo']['cold'] / lat['1min']['cold'], 3), 'x')


def run(args: argparse.Namespace, report: Report) -> None:
    """Measure answer latency by memory horizon and the sleep-time real-time factor."""
    from ..core.agent import LightOmni

    quick = bool(getattr(args, 'quick', False))
    entries = int(2e4 if quick and args.system_entries == 1e6 else args.system_entries)
    n_q = args.system_questions or (2 if quick else 6)
    n_sleep = args.system_sleep_segments or (1 if quick else 9)
    horizons = [(n, s // SEGMENT_S) for n, s in HORIZONS]
    if quick:   # smoke test: a day instead of 6 months, 1024-token S_g, short replies, torch (not comparable)
        horizons[2] = ('6mo', 86400 // SEGMENT_S)
    out = pathlib.Path(args.json_path).resolve().parent if getattr(args, 'json_path', None) else \
        pathlib.Path('bench_out').resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix='lightomni_bench_system_'))
    try:
        t = time.perf_counter()
        first = LightOmni(work / 'mem_1min', _configs(quick), sleep_work=False)
        d = first.engine.describe()
        report.figure('model_load_s', round(time.perf_counter() - t, 1), 's',
                      f'{d["backbone"]["name"]} ({d["backbone"]["kind"]}, {d["backbone"]["decoder_params_m"]} M, '
                      f'{d["backbone"]["device"]}), reflex pass on {first.engine.backend}, heads '
                      f'{"trained" if d["heads_trained"] else "UNTRAINED"}')
        report.note('memory: 1min and 2h consolidated through the consolidation core with real embeddings '
                    '(extractive merges while filling); 6mo SIMULATED: S_g by the merge tree over '
                    f'{horizons[2][1]} segments of 30 s (extractive merges) + {entries} synthetic store rows with '
                    'random unit vectors' + (' (--quick: one day of S_g, 1024-token S_g budget, 16/32-token '
                                             'replies, torch reflex pass: not comparable)' if quick else ''))
        questions = [_speech_chunks(q) for q in (QUESTIONS * 2)[:n_q]]
        lat: dict[str, dict[str, float]] = {}
        for name, segments in horizons:
            agent = first if name == '1min' else LightOmni(work / f'mem_{name}', _configs(quick), engine=first.engine,
                                                           embedder=first.embedder, sleep_work=False)
            lat[name] = _horizon(agent, name, segments, entries, questions, report)
            if agent is not first:
                agent.close()
        first.reattach()     # the shared engine last served the 6-month facade (closed now)
        _ratios(lat, report)
        seg_s = _sleep_rtf(first, n_sleep, report)
        _sleep_batch(first, args.system_backlog or (2 if quick else 8), report)
        first.close()
        for path in _plot(out, lat, seg_s):
            report.note(f'plot: {path}')
        rows = [f'{n:>5}: warm {v["warm"]:8.0f} ms  cold {v["cold"]:8.0f} ms' for n, v in lat.items()]
        print('\n  system summary (answer latency, end of question -> Action)\n  ' + '\n  '.join(rows) +
              f'\n  ratio 6mo/1min {lat["6mo"]["warm"] / lat["1min"]["warm"]:.2f} (target <= 1.2); '
              f'sleep_rtf {sum(seg_s) / (SEGMENT_S * n_sleep):.2f} (paper 0.72)\n', flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
