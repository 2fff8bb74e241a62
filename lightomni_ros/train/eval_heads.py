# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni eval heads``: the trained reflex heads on the held-out split, through the node's own engine.

Every held-out segment goes through :meth:`ReflexEngine.reflex_pass` exactly as the reflex node runs it (system
prefix with S_g, the segment's user turn, soft prompts, reaction adapter, heads), with the weights in ``models_dir``.
Printed (and written with ``--json PATH``):

- speech- and search-trigger precision / recall / F1 at the node's thresholds (and, for reference, the keyword rule
  the node uses while its heads are untrained);
- retrieval Recall@1/4/12 of the fused query normalize(z_ret + e(transcript)) versus the text embedding e(transcript)
  alone, on clean and on noisy queries, ranking the memory that existed at that moment;
- the similarity-matrix signal-to-noise ratio over 256 noisy queries (mean cosine similarity to the gold entry /
  mean similarity to the other queries' gold entries), the paper's robustness measure, and a plot of both matrices.
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib
import time
from typing import Any, Sequence

import numpy as np

log = logging.getLogger('lightomni.train')

KS = (1, 4, 12)
_QUESTION = ('?', 'what', 'who', 'where', 'when', 'why', 'how', 'do you', 'can you', 'could you', 'tell me',
             'remind me', 'remember')


def addresses_robot(text: str) -> bool:
    """The keyword rule the node once answered by (any question word speaks); kept as a reference figure."""
    t = text.lower().strip()
    return bool(t) and any(q in t for q in _QUESTION)


# -- metrics (pure functions, tested on hand-made cases) -----------------------------------------------------------
def prf(pred: Sequence[bool], gold: Sequence[bool]) -> dict[str, float]:
    """Precision, recall and F1 of binary predictions (0 where undefined)."""
    p = np.asarray(pred, bool)
    g = np.asarray(gold, bool)
    tp = int((p & g).sum())
    prec = tp / int(p.sum()) if p.sum() else 0.0
    rec = tp / int(g.sum()) if g.sum() else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {'precision': prec, 'recall': rec, 'f1': f1, 'support': int(g.sum())}


def best_threshold(scores: Sequence[float], gold: Sequence[bool]) -> tuple[float, float]:
    """The threshold (0.05 steps) with the highest F1 of ``scores >= t``; returns (threshold, F1)."""
    s = np.asarray(scores, float)
    grid = np.round(np.arange(0.05, 0.96, 0.05), 2)
    f1s = [prf(s >= t, gold)['f1'] for t in grid]
    i = int(np.argmax(f1s))
    return float(grid[i]), float(f1s[i])


def calibrate(split_dir: str | pathlib.Path, engine, limit: int = 0, progress: bool = True) -> dict[str, Any]:
    """Speech/search thresholds that maximise F1 on a split the heads were trained on (never the held-out one)."""
    from tqdm import tqdm

    from .synth import load_split
    from .pairs import segment_of

    exs = load_split(split_dir)['examples']
    exs = exs[:limit] if limit else exs
    p = []
    for i, ex in enumerate(tqdm(exs, desc='calibration', disable=not progress)):
        engine.set_global_state(i + 1, ex.get('sg', ''))
        out = engine.reflex_pass(segment_of(ex, i + 1))
        p.append((out.p_speech, out.p_search))
    p_arr = np.asarray(p)
    out: dict[str, Any] = {'examples': len(exs)}
    for col, trig in enumerate(('speech', 'search')):
        t, f1 = best_threshold(p_arr[:, col], [e[trig] for e in exs])
        out[trig] = {'threshold': t, 'f1_on_calibration_split': f1}
    return out


def recall_at_k(queries: np.ndarray, candidates: Sequence[np.ndarray], gold: Sequence[int],
                ks: Sequence[int] = KS) -> dict[int, float]:
    """Fraction of queries whose gold candidate ranks in the top k (by dot product; ties count against the gold)."""
    hits = {k: 0 for k in ks}
    for q, cand, g in zip(queries, candidates, gold):
        s = np.asarray(cand) @ np.asarray(q)
        rank = int((s > s[g]).sum() + (s[np.arange(len(s)) != g] == s[g]).sum())
        for k in ks:
            hits[k] += rank < k
    n = max(1, len(gold))
    return {k: hits[k] / n for k in ks}


def similarity_snr(queries: np.ndarray, gold_vecs: np.ndarray,
                   gold_ids: Sequence[Any]) -> tuple[float, np.ndarray, list[Any]]:
    """SNR of the query x gold-entry similarity matrix: mean similarity to the own gold / mean to the others.

    Columns are the distinct gold entries (a query's "others" exclude its own gold even when two queries share it).
    Returns the ratio, the matrix [queries, distinct golds] and the column ids.
    """
    cols: list[Any] = []
    vecs = []
    for gid, v in zip(gold_ids, gold_vecs):
        if gid not in cols:
            cols.append(gid)
            vecs.append(v)
    m = np.asarray(queries) @ np.asarray(vecs).T
    own = np.array([cols.index(g) for g in gold_ids])
    sig = m[np.arange(len(own)), own]
    mask = np.ones_like(m, bool)
    mask[np.arange(len(own)), own] = False
    noise = m[mask]
    return float(sig.mean() / noise.mean()) if noise.size and noise.mean() != 0 else float('nan'), m, cols


def _norm(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1)


# -- the run ------------------------------------------------------------------------------------------------------
def default_models_dir(pack: str = '') -> pathlib.Path:
    """The shipped weights folder (``models/`` of the checkout, or the installed package share; a pack's own set)."""
    from .shipped import shipped_models_dir
    return shipped_models_dir(pack)


def evaluate(split_dir: str | pathlib.Path, models_dir: str | pathlib.Path, limit: int = 0, threads: int = 0,
             snr_queries: int = 256, speech_threshold: float = 0.5, search_threshold: float = 0.5,
             engine=None, progress: bool = True) -> dict[str, Any]:
    """Run the held-out split through the engine; return every figure (and the similarity matrices under ``_``)."""
    from tqdm import tqdm

    from ..core.reflex.config import BackboneConfig
    from ..core.reflex.engine import EngineConfigs, ReflexEngine
    from .synth import load_split
    from .pairs import segment_of

    split = load_split(split_dir)
    exs = split['examples'][:limit] if limit else split['examples']
    if engine is None:
        engine = ReflexEngine(EngineConfigs(backbone=BackboneConfig(device='cpu', threads=threads),
                                            models_dir=str(models_dir)))
    mems = {m['id']: m for m in split['memories']}
    t0 = time.time()
    p_act, fused, text = [], [], []
    for i, ex in enumerate(tqdm(exs, desc='held-out', disable=not progress)):
        seg = segment_of(ex, i + 1)
        engine.set_global_state(i + 1, ex.get('sg', ''))
        out = engine.reflex_pass(seg)
        p_act.append((out.p_speech, out.p_search))
        fused.append(np.asarray(out.query, np.float32))
        text.append(engine.embedder.embed([seg.utterance])[0] if seg.utterance else np.zeros_like(fused[-1]))
    secs = time.time() - t0
    p = np.asarray(p_act)
    res: dict[str, Any] = {
        'examples': len(exs), 'heads': engine.heads.source, 'heads_trained': engine.heads.trained,
        'adapters': engine.adapters.describe(), 'seconds_per_example': secs / max(1, len(exs)),
        'speech': prf(p[:, 0] >= speech_threshold, [e['speech'] for e in exs]),
        'search': prf(p[:, 1] >= search_threshold, [e['search'] for e in exs]),
        'rule_speech': prf([addresses_robot(segment_of(e).utterance) for e in exs], [e['speech'] for e in exs]),
    }
    res['speech_f1'] = res['speech']['f1']
    res['search_f1'] = res['search']['f1']
    res['by_group'] = error_groups(exs, p, (speech_threshold, search_threshold))
    res['_predictions'] = [{'id': e['id'], 'kind': e['kind'], 'noise': e['noise'], 'transcript': e['transcript'],
                            'speech': e['speech'], 'search': e['search'], 'p_speech': float(p[i, 0]),
                            'p_search': float(p[i, 1])} for i, e in enumerate(exs)]
    # retrieval over the memory that existed when each question was asked
    gi = [i for i, e in enumerate(exs) if e['gold'] and segment_of(e).utterance]
    ids = sorted({m for i in gi for m in exs[i]['memory_ids']} | {exs[i]['gold'] for i in gi})
    vec = dict(zip(ids, engine.embedder.embed([mems[m]['text'] for m in ids]))) if ids else {}
    recall: dict[str, dict[str, float]] = {f'recall_at_{k}': {} for k in KS}
    queries: dict[str, int] = {}
    for noisy in (False, True):
        sel = [i for i in gi if bool(exs[i]['noise']) == noisy]
        cands = [np.stack([vec[m] for m in exs[i]['memory_ids']]) for i in sel]
        gold = [exs[i]['memory_ids'].index(exs[i]['gold']) for i in sel]
        for name, qs in (('fused', fused), ('text', text)):
            r = recall_at_k(np.stack([qs[i] for i in sel]) if sel else np.zeros((0, 1)), cands, gold)
            for k in KS:
                recall[f'recall_at_{k}'][f'{name}_{"noisy" if noisy else "clean"}'] = r[k]
        queries['noisy' if noisy else 'clean'] = len(sel)
    res.update(recall)
    res['retrieval_queries'] = queries
    res['candidates_mean'] = float(np.mean([len(exs[i]['memory_ids']) for i in gi])) if gi else 0.0
    noisy = [i for i in gi if exs[i]['noise']][:snr_queries]
    res['snr_queries'] = len(noisy)
    snr, mats = {}, {}
    if noisy:
        gids = [exs[i]['gold'] for i in noisy]
        gv = np.stack([vec[g] for g in gids])
        for name, qs in (('fused', fused), ('text', text)):
            snr[name], mats[name], _ = similarity_snr(_norm(np.stack([qs[i] for i in noisy])), gv, gids)
    res['snr'] = snr
    # the ratio's two terms: a near-zero mean similarity to the other entries makes the ratio large
    res['snr_terms'] = {name: {'gold': float(np.mean([m[i, j] for i, j in enumerate(_own(noisy, exs))])),
                               'others': float((m.sum() - sum(m[i, j] for i, j in enumerate(_own(noisy, exs))))
                                               / max(1, m.size - len(noisy)))}
                        for name, m in mats.items()}
    res['_matrices'] = mats
    return res


def error_groups(exs: Sequence[dict[str, Any]], p: np.ndarray,
                 thresholds: Sequence[float]) -> dict[str, dict[str, Any]]:
    """Per (example kind, noise) group: size and how often each trigger's decision is wrong (where errors sit)."""
    groups: dict[str, list[int]] = {}
    for i, e in enumerate(exs):
        groups.setdefault(f'{e["kind"]}/{e["noise"] or "clean"}', []).append(i)
    out = {}
    for name in sorted(groups):
        rows = groups[name]
        g: dict[str, Any] = {'n': len(rows)}
        for col, trig in enumerate(('speech', 'search')):
            wrong = sum(int(p[i, col] >= thresholds[col]) != int(exs[i][trig]) for i in rows)
            g[trig] = {'label': int(round(np.mean([exs[i][trig] for i in rows]))), 'wrong': wrong}
        out[name] = g
    return out


def _own(rows: Sequence[int], exs: Sequence[dict[str, Any]]) -> list[int]:
    """Column of each row's gold entry in the matrix of :func:`similarity_snr` (distinct golds in first-seen order)."""
    cols: list[Any] = []
    for i in rows:
        if exs[i]['gold'] not in cols:
            cols.append(exs[i]['gold'])
    return [cols.index(exs[i]['gold']) for i in rows]


def plot_matrices(mats: dict[str, np.ndarray], snr: dict[str, float], path: str | pathlib.Path) -> pathlib.Path:
    """Both similarity matrices side by side (queries x distinct gold entries)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(mats), figsize=(6 * len(mats), 5))
    axes = np.atleast_1d(axes)
    vmin = min(float(m.min()) for m in mats.values())
    vmax = max(float(m.max()) for m in mats.values())
    for ax, (name, m) in zip(axes, mats.items()):
        im = ax.imshow(m, aspect='auto', cmap='viridis', vmin=vmin, vmax=vmax, interpolation='nearest')
        ax.set_title(f'{"fused query" if name == "fused" else "text embedding only"}: SNR {snr[name]:.3f}')
        ax.set_xlabel('gold memory entry')
        ax.set_ylabel('noisy query')
    fig.colorbar(im, ax=list(axes), shrink=0.8, label='cosine similarity')
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def print_report(res: dict[str, Any]) -> None:
    """The figures as a table."""
    print(f'held-out examples: {res["examples"]}   heads: {res["heads"]}   '
          f'({res["seconds_per_example"] * 1000:.0f} ms per reflex pass)')
    for trig in ('speech', 'search', 'rule_speech'):
        m = res[trig]
        label = 'speech (keyword rule, reference)' if trig == 'rule_speech' else f'{trig} trigger'
        print(f'  {label:<34} precision {m["precision"]:.3f}  recall {m["recall"]:.3f}  F1 {m["f1"]:.3f}  '
              f'(positives {m["support"]})')
    q = res['retrieval_queries']
    print(f'  retrieval over the memory at that moment (mean {res["candidates_mean"]:.0f} entries; '
          f'{q["clean"]} clean, {q["noisy"]} noisy queries):')
    for cond in ('clean', 'noisy'):
        for name in ('fused', 'text'):
            vals = '  '.join(f'R@{k} {res[f"recall_at_{k}"][f"{name}_{cond}"]:.3f}' for k in KS)
            print(f'    {cond:<6} {"fused query" if name == "fused" else "text only":<12} {vals}')
    if res['snr']:
        print(f'  similarity-matrix SNR over {res["snr_queries"]} noisy queries: fused {res["snr"]["fused"]:.3f}  '
              f'text only {res["snr"]["text"]:.3f}  (ratio {res["snr"]["fused"] / res["snr"]["text"]:.3f})')
        for name, t in res.get('snr_terms', {}).items():
            print(f'    {name:<6} mean similarity to the gold entry {t["gold"]:.3f}, to the others {t["others"]:.3f}')
    bad = [(k, g) for k, g in res.get('by_group', {}).items() if g['speech']['wrong'] or g['search']['wrong']]
    if bad:
        print('  wrong decisions by example kind / noise (label in brackets):')
        for k, g in bad:
            print(f'    {k:<26} n {g["n"]:>4}   speech [{g["speech"]["label"]}] {g["speech"]["wrong"]:>3}   '
                  f'search [{g["search"]["label"]}] {g["search"]["wrong"]:>3}')


def register_area(areas: argparse._SubParsersAction) -> None:
    """Add ``lightomni eval heads``."""
    h = areas.add_parser('heads', help='reflex triggers and fused-query retrieval on the held-out split',
                         description=__doc__.splitlines()[0])
    h.add_argument('--models-dir', default=None, help='weights to evaluate (default: the shipped models/ folder)')
    h.add_argument('--data', default=None, help='held-out split folder (default: regenerate it in the cache)')
    h.add_argument('--json', dest='json_path', default=None, help='write the figures to this JSON file')
    h.add_argument('--plot', default=None, help='PNG of the similarity matrices (default: next to --json, or '
                                                'heads_similarity.png)')
    h.add_argument('--predictions', default=None, metavar='JSONL',
                   help='write every example\'s p_speech/p_search, labels, kind and noise (for error analysis)')
    h.add_argument('--limit', type=int, default=0, help='evaluate only the first N held-out examples')
    h.add_argument('--threads', type=int, default=0, help='torch CPU threads (0: torch default)')
    h.add_argument('--speech-threshold', type=float, default=None,
                   help='p_speech threshold (default: latent.speech_threshold)')
    h.add_argument('--search-threshold', type=float, default=None,
                   help='p_search threshold (default: latent.search_threshold)')
    h.add_argument('--calibrate', type=int, default=0, metavar='N',
                   help='first choose both thresholds for the best F1 on N examples of the training split, then '
                        'evaluate the held-out split with them (0: no calibration)')
    h.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate, print, write JSON and the plot."""
    from .synth import default_data_dir, ensure_splits
    from .train import default_synth_configs

    data = args.data
    if data is None:
        tr, ho = default_synth_configs()
        data = ensure_splits(default_data_dir(), tr, ho)['heldout']
    models_dir = args.models_dir or str(default_models_dir())
    from ..core.reflex.config import BackboneConfig, LatentConfig
    from ..core.reflex.engine import EngineConfigs, ReflexEngine

    engine = ReflexEngine(EngineConfigs(backbone=BackboneConfig(device='cpu', threads=args.threads),
                                        models_dir=str(models_dir)))
    lat = LatentConfig()
    ts = {'speech': args.speech_threshold if args.speech_threshold is not None else lat.speech_threshold,
          'search': args.search_threshold if args.search_threshold is not None else lat.search_threshold}
    cal = None
    if args.calibrate:
        cal = calibrate(pathlib.Path(data).parent / 'train', engine, args.calibrate)
        ts = {k: cal[k]['threshold'] for k in ts}
        print(f'calibrated on {cal["examples"]} training examples: speech threshold {ts["speech"]:.2f}, '
              f'search threshold {ts["search"]:.2f}')
    res = evaluate(data, models_dir, args.limit, args.threads, speech_threshold=ts['speech'],
                   search_threshold=ts['search'], engine=engine)
    res['thresholds'] = ts
    if cal is not None:
        res['calibration'] = cal
    print_report(res)
    mats = res.pop('_matrices')
    preds = res.pop('_predictions')
    if args.predictions:
        pathlib.Path(args.predictions).write_text(''.join(json.dumps(r) + '\n' for r in preds))
        print(f'  predictions: {args.predictions}')
    plot = args.plot or (str(pathlib.Path(args.json_path).with_suffix('.png')) if args.json_path
                         else 'heads_similarity.png')
    if mats:
        print(f'  plot: {plot_matrices(mats, res["snr"], plot)}')
    if args.json_path:
        pathlib.Path(args.json_path).write_text(json.dumps(res, indent=1, default=float) + '\n')
        print(f'  json: {args.json_path}')
    return 0


__all__ = ['prf', 'recall_at_k', 'similarity_snr', 'evaluate', 'plot_matrices', 'register_area', 'run']
