# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Smoke test of ``lightomni bench system --quick --json``: it runs end to end and writes the issue's keys."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.timeout(1200)   # loads the models, asks 6 spoken questions, fills a 2-hour store: minutes on 2 cores
def test_bench_system_quick_writes_keys_and_plots(tmp_path):
    out = tmp_path / 'system.json'
    env = dict(os.environ, HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1')
    proc = subprocess.run([sys.executable, '-m', 'lightomni_ros.cli', 'bench', 'system', '--quick', '--json',
                           str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=1150)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    fig = json.loads(out.read_text())
    for key in ('answer_latency_ratio_6mo_1min', 'sleep_rtf', 'answer_latency_ratio_2h_1min', 'memory_batch_speedup'):
        assert isinstance(fig[key], float) and fig[key] > 0, (key, fig.get(key))
    assert set(fig['answer_latency_ms']) == {'1min', '2h', '6mo'}
    assert set(fig['memory_pass_s']) == {'single', 'batched'} and all(v > 0 for v in fig['memory_pass_s'].values())
    assert all(v > 0 for v in fig['answer_latency_ms'].values())
    # latency per Action.response_source: each warm question counted once, under the source its Action names
    by_src = fig['answer_latency_by_source_ms']
    assert set(by_src) == {'1min', '2h', '6mo'}
    for horizon in by_src.values():
        assert sum(v['n'] for v in horizon.values()) >= 1 and all(v['p50'] > 0 for v in horizon.values())
    # the memory really grew with the horizon (S_g and store), and the summary table was printed
    mem = fig['memory']
    assert mem['1min']['entries'] < mem['2h']['entries'] < mem['6mo']['entries']
    assert mem['1min']['sg_nodes'] <= mem['2h']['sg_nodes']
    assert 'ratio 6mo/1min' in proc.stdout
    assert (tmp_path / 'system_answer_latency.png').stat().st_size > 1000
    assert (tmp_path / 'system_sleep_rtf.png').stat().st_size > 1000
