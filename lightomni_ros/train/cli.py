# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni train``: regenerate the shipped reflex weights, or train one adapter on (input, target) pairs.

``lightomni train`` (= ``make train``) synthesizes the data, trains the reaction adapter, soft prompts and heads with
the CPU recipe on SmolLM2-135M and writes them with their checksums into ``models/``, where the reflex node looks.
``--adapter memory|generation`` runs next-token training of that adapter on the synthesized (input, target) pairs
(``--recipe omni-smoke`` on the tiny test thinker; ``--recipe gpu7b`` is the paper's recipe on a GPU).
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
         'device': str, 'dtype': str, 'max_examples': int, 'max_tokens': int, 'hard_negatives': int,
         'checkpoint_every': int, 'work_dir': str, 'action_input': str}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``train`` verb."""
    p = sub.add_parser('train', help='train the reflex heads and adapters (regenerates models/)',
                       description=__doc__.split('\n\n')[1].replace('\n', ' '))
    p.add_argument('--adapter', choices=['reaction', 'memory', 'generation'], default='reaction',
                   help='what to train (reaction: adapter + soft prompts + heads, the shipped default)')
    p.add_argument('--recipe', default='cpu', help='cpu (default), gpu7b, omni-smoke')
    p.add_argument('--out', default=None, help='output folder laid out as a models_dir (default: models/)')
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
    import torch

    from ..core.models import cache_dir
    from .shipped import shipped_models_dir
    from .synth import ensure_splits, load_split
    from . import train as T

    # only the reaction run regenerates the shipped folder; other adapters go to the cache unless --out says so
    out = args.out or str(shipped_models_dir() if args.adapter == 'reaction' else cache_dir() / 'trained')
    cfg = T.config_from(args.recipe, out_dir=out, resume=not args.no_resume, progress=not args.no_progress,
                        data_dir=args.data, **{k: getattr(args, k) for k in FLAGS})
    if args.adapter == 'reaction' and args.refit_only:
        from .shipped import write_sums

        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        folders = ensure_splits(args.data or cache_dir() / 'train_data', *T.default_synth_configs(), seed=cfg.seed)
        split = load_split(folders['train'])
        last = max(e['stream'] for e in split['examples'])
        r = T.refit_saved(cfg, split, validate_streams=(last,))
        print(f'action head refit: {json.dumps(r)}')
        report = pathlib.Path(out) / 'TRAINING.json'
        if report.is_file():
            rep = json.loads(report.read_text())
            rep['action_refit'] = r | {'applied_by': 'lightomni train --refit-only'}
            report.write_text(json.dumps(rep, indent=1) + '\n')
        write_sums(out)
        return 0
    if args.adapter == 'reaction':
        s = T.regenerate(cfg, args.data)
        print(f'reaction adapter + heads: {s["examples"]} examples, {cfg.steps} steps of {cfg.batch} '
              f'({s["path"]} path, LoRA r={cfg.lora_rank} on layers {s["lora_layers"]})')
        print(f'  loss {s["loss_first20"]:.3f} (first 20 steps) -> {s["loss_last20"]:.3f} (last 20)')
        print(f'  caching {s["cache_s"]:.0f} s, training {s["train_s"]:.0f} s, total {s["total_s"]:.0f} s')
        print(f'  wrote {out}/reflex_heads.safetensors, {out}/adapters/reaction/, {out}/SHA256SUMS')
        print(f'  evaluate: lightomni eval heads --models-dir {out} --data {s["heldout_dir"]}')
        return 0
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    folders = ensure_splits(args.data or cache_dir() / 'train_data', *T.default_synth_configs())
    pairs = load_split(folders['train'])['pairs'][args.adapter]
    s = T.train_lm_adapter(cfg, pairs, args.adapter)
    print(f'{args.adapter} adapter: {s["pairs"]} pairs, {cfg.steps} steps; loss {s["loss_first"]:.3f} -> '
          f'{s["loss_last"]:.3f}; {s["total_s"]:.0f} s; wrote {s["adapter"]}')
    print(json.dumps({'loss': [h['loss'] for h in s['history']]}))
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    return 0
