# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni eval adapters``: the memory and generation adapters alone on the held-out pairs (a cheaper check).

The engine's memory pass reads each held-out segment with the names the generator says memory knows (given, not
learned from earlier Topics); the engine's response reads the memories the generator's simulated retrieval picked
and the S_g of that moment. The figures are those of ``eval answers`` (``memory_pass.*``, ``answers.*``, scored by
the same functions) plus the time of each model call; the reply is scored as the adapter wrote it, before the
grounding check (``answers.guard_replaced``: how many the check would replace). Recipes and backbones are compared
with it (models/README.md); ``eval answers`` is the end-to-end figure.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
from typing import Any, Sequence

import numpy as np


class NamesMemory:
    """A memory client that knows only the names of the people of the current pair."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def query(self, q: Any) -> Any:
        """The profiles of ``q.face_ids`` that have a name."""
        from ..core.reflex.types import MemoryItem, Retrieved

        return Retrieved(profiles=[MemoryItem(f'profile:{f}', f'{f} is {self.names[f]}') for f in q.face_ids
                                   if self.names.get(f)])

    def people(self) -> None:
        """Nobody can be asked."""
        return None


def evaluate(split_dir: str | pathlib.Path, models_dir: str | pathlib.Path, limit: int = 0, threads: int = 0,
             pack: str = '', progress: bool = True, adapter: str = 'all') -> dict[str, Any]:
    """The adapters (``adapter``: all, memory or generation) on the held-out pairs; the sections and call times."""
    from tqdm import tqdm

    from ..core.reflex.config import BackboneConfig
    from ..core.reflex.engine import EngineConfigs, ReflexEngine
    from ..core.reflex.grounding import reply_problem
    from ..core.reflex.types import MemoryItem
    from .eval_answers import SegmentRun, answer_metrics, memory_pass_metrics
    from .synth import load_split
    from .pairs import segment_of

    split = load_split(split_dir)
    memory = NamesMemory()
    engine = ReflexEngine(EngineConfigs(backbone=BackboneConfig(device='cpu', threads=threads, pack=pack),
                                        models_dir=str(models_dir)), memory)
    # one adapter alone (``adapter``): a backbone trained with only that one is compared on it
    mem_pairs = [p for p in split['pairs']['memory'] if (p['transcript'] or p['typed_text'])
                 and adapter != 'generation'][:limit or None]
    gen_pairs = [p for p in split['pairs']['generation'] if p.get('answer') and adapter != 'memory'][:limit or None]
    runs_m, runs_g, t_mem, t_gen, replaced = [], [], [], [], 0
    for i, p in enumerate(tqdm(mem_pairs, desc='memory passes', disable=not progress)):
        memory.names = dict(p['names'])
        t0 = time.perf_counter()
        topic = engine.memory_pass(segment_of(p, i + 1), '')
        t_mem.append(time.perf_counter() - t0)
        runs_m.append(SegmentRun(dict(p, noise=''), False, topic=topic))
    for i, p in enumerate(tqdm(gen_pairs, desc='replies', disable=not progress)):
        memory.names = dict(p['names'])
        engine.set_global_state(i + 1, p['sg'])
        mems = [MemoryItem(m['ref'], m['text']) for m in p['memories']]
        seg = segment_of(p, 10_000 + i)
        t0 = time.perf_counter()
        reply, _ = engine.respond(seg, mems)
        t_gen.append(time.perf_counter() - t0)
        replaced += bool(reply_problem(reply, seg.utterance, mems))
        rec = dict(p, noise='', query=seg.utterance, source='robot', speech=1)
        runs_g.append(SegmentRun(rec, True, reply, 'generated', [m.text for m in mems]))
    answers = answer_metrics(runs_g)
    answers['guard_replaced'] = replaced
    return {'memory_pass': memory_pass_metrics(runs_m), 'answers': answers,
            'latency_s': {'memory_pass_p50': _p50(t_mem), 'reply_p50': _p50(t_gen)},
            'run': {'memory_pairs': len(mem_pairs), 'generation_pairs': len(gen_pairs),
                    'backbone': engine.backbone.describe().get('name'), 'adapters': engine.adapters.describe()},
            '_runs': {'memory': runs_m, 'generation': runs_g}}


def _p50(xs: Sequence[float]) -> float | None:
    return round(float(np.median(xs)), 3) if xs else None


def register_area(areas: argparse._SubParsersAction) -> None:
    """Add ``eval adapters``."""
    a = areas.add_parser('adapters', help='memory and generation adapters alone on the held-out pairs',
                         description=__doc__.splitlines()[0])
    a.add_argument('--models-dir', default=None, help='weights to evaluate (default: the shipped models/ folder)')
    a.add_argument('--data', default=None, help='held-out split folder (default: regenerate it in the cache)')
    a.add_argument('--json', dest='json_path', default=None, help='write the figures to this JSON file')
    a.add_argument('--limit', type=int, default=0, help='at most N pairs of each adapter (0: all)')
    a.add_argument('--threads', type=int, default=0, help='torch CPU threads (0: torch default)')
    a.add_argument('--pack', default='', help='text backbone pack in the models dir (e.g. gemma-3-270m)')
    a.add_argument('--adapter', choices=('all', 'memory', 'generation'), default='all',
                   help='evaluate only this adapter (e.g. a backbone trained with only the memory adapter)')
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate, print, write JSON."""
    from .eval_heads import default_models_dir
    from .synth import default_data_dir, ensure_splits
    from .train import default_synth_configs

    data = args.data or ensure_splits(default_data_dir(), *default_synth_configs())['heldout']
    res = evaluate(data, args.models_dir or str(default_models_dir(args.pack)), args.limit, args.threads, args.pack,
                   adapter=args.adapter)
    res.pop('_runs')
    m, a = res['memory_pass'], res['answers']
    print(f'held-out pairs: {res["run"]["memory_pairs"]} memory, {res["run"]["generation_pairs"]} questions; backbone '
          f'{res["run"]["backbone"]}')
    print(f'  memory pass: valid JSON {m["valid_json"]:.3f}, fact recall {m["fact_recall"]:.3f}, precision '
          f'{m["fact_precision"]:.3f}, speaker {m["speaker_correct"]:.3f}, device speech stored as a person\'s fact '
          f'{m["unseen_as_person"]}; p50 {res["latency_s"]["memory_pass_p50"]} s')
    print(f'  replies: accuracy {a["accuracy"]:.3f}, refusal {a["refusal"]:.3f}, grounded {a["grounded"]:.3f}, '
          f'prompt echoes {a["prompt_echoes"]}, the check would replace {a["guard_replaced"]}; p50 '
          f'{res["latency_s"]["reply_p50"]} s')
    if args.json_path:
        pathlib.Path(args.json_path).write_text(json.dumps(res, indent=1, default=float) + '\n')
        print(f'  json: {args.json_path}')
    return 0


__all__ = ['evaluate', 'register_area', 'run', 'NamesMemory']
