# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``make train`` as one call: synthesize both splits, train each adapter, record TRAINING.json and SHA256SUMS.

The reaction adapter (with its soft prompts and heads) is trained by :mod:`.train`, the memory and generation
adapters by next-token training in :mod:`.lm`; this module only orders the runs and records them.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pathlib
import time
from typing import Any

import torch

from .lm import train_lm_adapter
from .shipped import write_sums
from .synth import default_data_dir, ensure_splits, load_split
from .train import TrainConfig, default_synth_configs, streams_of, train_reaction

log = logging.getLogger('lightomni.train')


def train_adapter(cfg: TrainConfig, adapter: str, train_split: dict[str, Any]) -> dict[str, Any]:
    """Train one adapter (reaction: with soft prompts and heads) into ``cfg.out_dir``; return its report."""
    t0 = time.time()
    if adapter == 'reaction':
        summary = train_reaction(cfg, streams_of(train_split, cfg.streams))
    else:
        summary = train_lm_adapter(cfg, train_split['pairs'][adapter], adapter)
    _portable_adapter_config(pathlib.Path(cfg.out_dir) / 'adapters' / adapter / 'adapter_config.json')
    report = {k: v for k, v in summary.items() if k not in ('history', 'heads', 'adapter')}
    report.update(config=dataclasses.asdict(cfg) | {'data_dir': '', 'out_dir': '', 'work_dir': ''},
                  wall_s=round(time.time() - t0, 1), torch_threads=torch.get_num_threads(),
                  loss_every_25=[round(h['loss'], 4) for h in summary['history'][::25]])
    return report


def regenerate(cfgs: dict[str, TrainConfig], data_dir: str | pathlib.Path | None = None) -> dict[str, Any]:
    """Synthesize both splits, train every adapter of ``cfgs`` into its ``out_dir``, record it, write SHA256SUMS.

    Each adapter starts from a freshly loaded backbone. ``TRAINING.json`` keeps one section per adapter (a section
    not trained now is kept from the previous run).
    """
    t0 = time.time()
    first = next(iter(cfgs.values()))
    tr, ho = default_synth_configs()
    folders = ensure_splits(data_dir or first.data_dir or default_data_dir(), tr, ho, seed=first.seed)
    split = load_split(folders['train'])
    out = pathlib.Path(first.out_dir)
    path = out / 'TRAINING.json'
    meta = json.loads((folders['train'] / 'meta.json').read_text())
    done = {}
    for adapter, cfg in cfgs.items():
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        done[adapter] = train_adapter(cfg, adapter, split)
        # adapters may be retrained one at a time: each section names the data it learned from
        done[adapter]['data'] = {k: meta.get(k) for k in ('split', 'seed', 'generator', 'sha256', 'examples')}
        log.info('%s trained in %.0f s', adapter, done[adapter]['wall_s'])
    # read now, not before training: another adapter's run into the same folder may have finished meanwhile
    report = json.loads(path.read_text()) if path.is_file() else {}
    if 'adapters' not in report:
        report = {'adapters': {}}       # a file from before the three adapters: replaced
    report['adapters'].update(done)
    report.update(train_split=meta,
                  last_run={'adapters': list(cfgs), 'wall_s': round(time.time() - t0, 1)})
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + '\n')
    write_sums(out)
    report['heldout_dir'] = str(folders['heldout'])
    return report


def _portable_adapter_config(path: pathlib.Path) -> None:
    """Replace the machine-specific base-model path in a peft config by the model's name."""
    cfg = json.loads(path.read_text())
    base = cfg.get('base_model_name_or_path') or ''
    if base:
        cfg['base_model_name_or_path'] = pathlib.Path(base).name.split('.Q')[0]
    path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + '\n')


__all__ = ['train_adapter', 'regenerate']
