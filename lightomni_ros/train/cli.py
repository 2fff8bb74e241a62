# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni train``: regenerate the shipped reflex weights (all three adapters and the heads), or one adapter.

``lightomni train`` (= ``make train``) synthesizes the data once and trains, each on a freshly loaded backbone, the
reaction adapter with its soft prompts and heads, the memory adapter and the generation adapter with the CPU recipe
on SmolLM2-135M, and writes them with their checksums into ``models/``, where the reflex node looks. ``--adapter
NAME`` trains only that one (the other files stay). ``--recipe omni-smoke`` runs the tiny test thinker; ``--recipe
gpu7b`` is the paper's recipe on a GPU.
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib

log = logging.getLogger('lightomni.train')

#: command-line flag -> TrainConfig field
FLAGS = {'steps': int, 'batch': int, 'lr': float, 'head_lr': float, 'temperature': float, 'lambda_nce': float,
         'lora_rank': int, 'lora_alpha': int, 'lora_layers': str, 'threads': int, 'seed': int, 'backbone': str,
         'pack': str, 'device': str, 'dtype': str, 'max_examples': int, 'refusal_share': float, 'max_tokens': int,
         'hard_negatives': int, 'checkpoint_every': int, 'work_dir': str, 'action_input': str, 'streams': int,
         'models_dir': str}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``train`` verb."""
    p = sub.add_parser('train', help='train the reflex heads and adapters (regenerates models/)',
                       description=__doc__.split('\n\n')[1].replace('\n', ' '))
    p.add_argument('--adapter', choices=['all', 'reaction', 'memory', 'generation'], default='all',
                   help='what to train (all: the three adapters and the heads, the shipped set; reaction: adapter + '
                        'soft prompts + heads)')
    p.add_argument('--recipe', default='cpu', help='cpu (default), gpu7b, omni-smoke')
    p.add_argument('--out', default=None, help='output folder laid out as a models_dir (default: models/, or '
                   'models/<pack>/ for a --pack other than the default backbone)')
    p.add_argument('--data', default=None, help='folder for the synthesized splits (default: in the cache)')
    p.add_argument('--no-resume', action='store_true', help='ignore a checkpoint of an interrupted run')
    p.add_argument('--no-progress', action='store_true', help='no progress bar')
    p.add_argument('--refit-only', action='store_true',
                   help='only stage 2 on the reaction weights already in --out: refit the action head on frozen '
                        'soft-prompt states (reading --action-input)')
    for flag, typ in FLAGS.items():
        p.add_argument('--' + flag.replace('_', '-'), dest=flag, type=typ, default=None,
                       help=f'override the recipe\'s {flag}')
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train and report."""
    from .shipped import shipped_models_dir
    from .synth import default_data_dir
    from . import pipeline, train as T

    out = args.out or str(shipped_models_dir(args.pack or ''))
    names = list(T.ADAPTERS) if args.adapter == 'all' else [args.adapter]
    cfgs = {a: T.config_from(args.recipe, a, out_dir=out, resume=not args.no_resume, progress=not args.no_progress,
                             data_dir=args.data, **{k: getattr(args, k) for k in FLAGS}) for a in names}
    if args.refit_only:
        return _refit(cfgs.get('reaction') or T.config_from(args.recipe, 'reaction', out_dir=out), args, out)
    r = pipeline.regenerate(cfgs, args.data or default_data_dir())
    for a in names:
        s = r['adapters'][a]
        c = cfgs[a]
        print(f'{a}: {s.get("examples") or s.get("pairs")} {"examples" if a == "reaction" else "pairs"}, {c.steps} '
              f'steps of {c.batch} ({s["path"]} path, LoRA r={c.lora_rank} on layers {s["lora_layers"]}); loss '
              f'{s["loss_first20"]:.3f} (first 20 steps) -> {s["loss_last20"]:.3f} (last 20); caching '
              f'{s["cache_s"]:.0f} s, training {s["train_s"]:.0f} s, total {s["wall_s"]:.0f} s')
    print(f'  wrote {out}/ (reflex_heads.safetensors, adapters/, TRAINING.json, SHA256SUMS) in '
          f'{r["last_run"]["wall_s"]:.0f} s')
    print(f'  evaluate: lightomni eval heads --models-dir {out} --data {r["heldout_dir"]}')
    print(f'            lightomni eval answers --models-dir {out} --data {r["heldout_dir"]}')
    return 0


def _refit(cfg, args: argparse.Namespace, out: str) -> int:
    """Stage 2 only, on the reaction weights in ``out``."""
    import torch

    from .shipped import write_sums
    from .synth import default_data_dir, ensure_splits, load_split
    from . import train as T

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    folders = ensure_splits(args.data or default_data_dir(), *T.default_synth_configs(), seed=cfg.seed)
    split = T.streams_of(load_split(folders['train']), cfg.streams)
    last = max(e['stream'] for e in split['examples'])
    r = T.refit_saved(cfg, split, validate_streams=(last,))
    print(f'action head refit: {json.dumps(r)}')
    report = pathlib.Path(out) / 'TRAINING.json'
    if report.is_file():
        rep = json.loads(report.read_text())
        rep.setdefault('adapters', {}).setdefault('reaction', {})['action_refit'] = \
            r | {'applied_by': 'lightomni train --refit-only'}
        report.write_text(json.dumps(rep, indent=1) + '\n')
    write_sums(out)
    return 0
