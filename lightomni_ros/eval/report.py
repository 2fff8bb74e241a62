# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The Markdown report of a scored replay, with plots (answer latency, global-state size, sleep-time queue depth)."""

from __future__ import annotations

import logging
import pathlib
from typing import Any

log = logging.getLogger('lightomni.eval.report')


def _plot(path: pathlib.Path, series: dict[str, tuple[list[float], list[float]]], title: str, ylabel: str,
          marks: list[float] | None = None) -> bool:
    """One line/marker plot; returns False (and writes nothing) when there is no data."""
    if not any(xs for xs, _ in series.values()):
        return False
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.2))
    for label, (xs, ys) in series.items():
        if xs:
            ax.plot(xs, ys, marker='o', markersize=3, linewidth=1, label=label)
    for m in marks or []:
        ax.axvline(m, color='grey', linewidth=0.5, linestyle=':')
    ax.set_xlabel('scenario time (s)')
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plots(out: pathlib.Path, score: dict[str, Any]) -> dict[str, str]:
    """Write the plots that have data; return name -> file name."""
    made = {}
    lat = score['latencies']
    if _plot(out / 'answer_latency.png', {'answer latency': ([x['t'] for x in lat], [x['latency_s'] for x in lat])},
             'Answer latency (end of question speech -> Action)', 'seconds'):
        made['answer latency'] = 'answer_latency.png'
    gs = score['global_state']
    if _plot(out / 'global_state.png', {'nodes': ([g['t'] for g in gs], [g['nodes'] for g in gs]),
                                        'script tokens / 100': ([g['t'] for g in gs], [g['tokens'] / 100 for g in gs])},
             'Global state size', 'count'):
        made['global state size'] = 'global_state.png'
    series: dict[str, tuple[list[float], list[float]]] = {}
    for q in score['queue_depth']:
        xs, ys = series.setdefault(f'{q["node"]}: {q["key"]}', ([], []))
        xs.append(q['t'])
        ys.append(q['value'])
    if _plot(out / 'queue_depth.png', series, 'Sleep-time queue depth', 'items'):
        made['sleep-time queue depth'] = 'queue_depth.png'
    return made


def _cell(text: Any) -> str:
    return str(text).replace('|', '\\|').replace('\n', ' ')


def sources_line(sources: dict[str, int]) -> str:
    """Where the answers to the questions came from, as "3 of 8 generated (extractive 4, template 1)"."""
    total = sum(sources.values())
    rest = ', '.join(f'{k} {n}' for k, n in sorted(sources.items()) if k != 'generated')
    return f'{sources.get("generated", 0)} of {total} generated' + (f' ({rest})' if rest else '')


def write_report(out: pathlib.Path, gt: dict[str, Any], result: dict[str, Any], outputs: Any, tb: Any,
                 ) -> pathlib.Path:
    """Write ``report.md`` (and plots) into ``out``; return its path."""
    sc = result['score']
    s = sc['summary']
    made = plots(out, sc)
    t = result.get('timing', {})
    lat = s['answer_latency_s']
    lines = [f'# Replay report: {gt.get("scenario", "")}', '',
             f'Bag `{result["bag"]}` replayed at {t.get("rate", 1):g}x into namespace `{result["namespace"]}`; '
             f'outputs in `{result["output_bag"]}`.', '',
             '| figure | value |', '|---|---|',
             f'| probes passed | {s["passed"]}/{s["total"]} |',
             f'| answer latency p50 / max (s) | {lat["p50"]} / {lat["max"]} (n={lat["n"]}) |',
             f'| answers by source | {sources_line(s.get("answer_sources", {}))} |',
             f'| transcript WER | {s["wer"]} |',
             f'| identity consistency | {s["identity_consistency"]} |',
             f'| reminder timing error, mean abs (s) | {s["reminder_timing_error_s"]["mean_abs"]} |',
             f'| segments (re-sent copies) / actions / spoken | {s["segments"]} ({s.get("segments_resent", 0)}) / '
             f'{s["actions"]} / {s["spoken"]} |',
             f'| publish lag p50 / max (ms) | {t.get("publish_lag_ms", {}).get("p50")} / '
             f'{t.get("publish_lag_ms", {}).get("max")} |', '',
             '## Probes', '', '| probe | kind | result | detail |', '|---|---|---|---|']
    for p in sc['probes']:
        lines.append(f'| {p["id"]} | {p["kind"]} | {"PASS" if p["passed"] else "**FAIL**"} | {_cell(p["detail"])} |')
    lines += ['', '## What the robot said', '']
    lines += [f'- {x["t"]:.1f} s ({x["source"]}{", " + x["response_source"] if x.get("response_source") else ""}): '
              f'{x["text"]}' for x in sc['spoken']] or ['(nothing)']
    mem = sc.get('memory') or {}
    if mem:
        lines += ['', '## Memory built', '',
                  f'{mem["episodes"]} episodes, {len(mem["semantic"])} facts, {len(mem["remembered"])} remembered '
                  f'items, {len(mem["reminders"])} reminders; global state: {mem["global_state_nodes"]} nodes.', '']
        lines += [f'- remembered: {x}' for x in mem['remembered']] + [f'- fact: {x}' for x in mem['semantic']]
        lines += [f'- reminder: {x}' for x in mem['reminders']]
    if sc['wer']['items']:
        lines += ['', '## Transcripts', '', '| item | WER | reference | heard |', '|---|---|---|---|']
        lines += [f'| {w["item"]} | {w["wer"]} | {_cell(w["reference"])} | {_cell(w["hypothesis"])} |'
                  for w in sc['wer']['items']]
    if sc['identity']['pairs']:
        lines += ['', '## Identities', '', '| item | face |', '|---|---|']
        lines += [f'| {k} | {v or "(none)"} |' for k, v in sc['identity']['faces'].items()]
    if made:
        lines += ['', '## Plots', '']
        lines += [f'![{name}]({fname})' for name, fname in made.items()]
    probs = result.get('problems') or []
    if probs:
        lines += ['', '## Bag problems', '']
        lines += [f'- {p["kind"]}{" [" + p["topic"] + "]" if p["topic"] else ""}: {_cell(p["text"])}' for p in probs]
    if gt.get('attribution'):
        lines += ['', '## Media attribution', '', gt['attribution']]
    path = out / 'report.md'
    path.write_text('\n'.join(lines) + '\n')
    log.info('report written to %s', path)
    return path
