# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench live``: the launched graph keeps up with a long live conversation at 1 day and 6 months of memory.

A scenario is generated (seeded) from the shared development media and espeak-ng lines: several people introduce
themselves and say where they put things (each shown by a photo while speaking), overheard speech (recordings and a
meeting with nobody in view), GRID video clips, many spoken questions about what was said, and quiet stretches of
35 s. It is rendered into a bag once (``lightomni bag``) and replayed at 1x (``lightomni replay``, ``--drain``) into
``launch/lightomni.launch.py`` on top of a memory pre-filled like ``bench system``'s: ``1day`` consolidates 480
synthetic interactions (one every 2 minutes over 16 waking hours) with real embeddings, ``6mo`` is SIMULATED (S_g by
the merge tree over 6 months of 30 s segments, extractive merges, plus ``--live-entries`` synthetic rows with random
unit vectors).

Figures (per horizon unless noted), all on the wall clock of the replay:

- ``first_word_ms.{1day,6mo}.{p50,p95,p99}``: end of a question's speech (ground truth) -> the first SpeechChunk of
  the Action answering it (``actions/speech``); ``action_ms`` the same to the full Action. The Action answering a
  question is that of a segment holding its speech (:func:`answering_segment`); a question the robot stayed quiet
  on is not answered (``answered`` counts those that were) and has no latency;
- ``stored_within_60s_frac``, ``segments_lost``: every Segment perception published -> consolidation's STORED or
  DUPLICATE acknowledgement of its Topic (``topics/ack``), within 60 s of the segment's end; lost = never (after the
  drain);
- ``consolidation_lag_s.{p50,p95,max}``: segment end -> that acknowledgement;
- ``backlog_returns_to_zero``: the reflex node's sleep backlog (``sleep_pending`` on /diagnostics) reaches 0 in every
  quiet stretch of the scenario and after the replay; ``backlog_max``; plot ``live_backlog.png``;
- ``questions_during_sleep_work_frac``: share of questions whose speech ended while that backlog was not 0 (the
  sleep-time worker had work: a memory pass or a prefix warm-up ran or was due); ``preemption_wait_ms`` of their
  answers (p50/max);
- ``first_word_breakdown_ms.<part>.{p50,p95}``: where the first word's time went (perception, the reflex node's
  stages from ``Action.latency``, and ``reflex_queue``, the rest of the reflex node's time).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import shutil
import tempfile
from typing import Any, Container

import numpy as np

from .bench import Report

MEDIA = pathlib.Path('/work/shared/media')
QUIET_S = 35.0
PEOPLE = (('Barack', 'faces/public_figures/barack_obama_{}.jpg', (1, 2, 3, 4), 'en-us'),
          ('Joe', 'faces/public_figures/joe_biden_{}.jpg', (1, 2), 'en-gb'),
          ('Maria', '', (), 'en-us+f3'),
          ('Kofi', '', (), 'en-us+m3'))
THINGS = ('keys', 'umbrella', 'passport', 'charger', 'glasses', 'wallet', 'scarf', 'hammer', 'ticket', 'book')
PLACES = ('drawer', 'garage', 'attic', 'kitchen', 'cellar', 'garden', 'car', 'closet', 'shelf', 'basket')
JOBS = ('teacher', 'nurse', 'carpenter', 'pilot', 'chef', 'engineer')
OVERHEARD = ('speech/jfk.flac', 'speech/ljspeech/LJ001-0001.wav', 'speech/ljspeech/LJ001-0002.wav',
             'speech/ljspeech/LJ001-0004.wav', 'speech/ljspeech/LJ001-0008.wav',
             'conversations/ami_EN2002a_0-30s/EN2002a_0-30s.wav')
CLIPS = ('video/grid/bbaf2n.mpg', 'video/grid/brbk7n.mpg', 'video/grid/lbax4n.mpg', 'video/grid/lbbc2a.mpg',
         'video/grid/lrwp9a.mpg')
HORIZONS = ('1day', '6mo')
DAY_INTERACTIONS = 480
SEGMENT_S = 30


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Flags of this area."""
    p.add_argument('--live-minutes', type=float, default=20.0,
                   help='live: minutes of conversation per horizon (default 20; --quick: 2)')
    p.add_argument('--live-entries', type=int, default=1_000_000,
                   help='live: synthetic entries of the simulated 6-month store (default 1e6; --quick: 2e4)')
    p.add_argument('--live-horizons', default=','.join(HORIZONS), help='live: memory horizons, comma-separated')
    p.add_argument('--live-media', default=str(MEDIA), help='live: the development media folder (MANIFEST.md)')
    p.add_argument('--live-seed', type=int, default=0, help='live: seed of the generated scenario')
    p.add_argument('--live-keep', action='store_true',
                   help='live: keep the work folder (bag, and per horizon the node logs, outputs and report)')


def scenario(minutes: float, media: pathlib.Path, seed: int = 0) -> dict[str, Any]:
    """A conversation of about ``minutes`` as a scenario (``docs/SCENARIOS.md``); every fact is asked about later."""
    rng = random.Random(seed)
    timeline: list[dict[str, Any]] = []
    probes: list[dict[str, Any]] = []
    told: list[tuple[str, str, str, str]] = []       # (item id, person, thing, place) not asked about yet
    t, n, next_quiet = 0.0, 0, 150.0
    anchors: set[str] = set()

    def photo(person: tuple) -> str:
        return str(media / person[1].format(rng.choice(person[2]))) if person[1] else ''

    def say(text: str, person: tuple, gap: float = 1.0) -> str:
        nonlocal t, n
        n += 1
        item = {'id': f's{n}', 'say': text, 'voice': person[3], 'person': person[0], 'gap': gap}
        if person[1]:
            item['image'] = photo(person)
        timeline.append(item)
        t += 0.4 * len(text.split()) + gap
        return item['id']

    for person in PEOPLE:
        job = rng.choice(JOBS)
        say(f'Hello robot, my name is {person[0]} and I work as a {job}.', person)
    while t < minutes * 60.0:
        kind = rng.random()
        person = rng.choice(PEOPLE)
        if kind < 0.4:
            thing, place = rng.choice(THINGS), rng.choice(PLACES)
            told = [f for f in told if f[1:3] != (person, thing)]      # the newest place is the answer
            told.append((say(f'I put my {thing} in the {place}.', person), person, thing, place))
        elif kind < 0.52:
            n += 1
            clip = rng.choice(OVERHEARD)      # overheard: a recording playing, nobody in view
            timeline.append({'id': f'o{n}', 'audio': str(media / clip), 'gap': 1.0})
            t += 30.0 if 'ami_' in clip else 8.0
        elif kind < 0.6:
            n += 1
            timeline.append({'id': f'v{n}', 'video': str(media / rng.choice(CLIPS)), 'gap': 1.0})
            t += 4.0
        elif told and timeline[-1]['id'] not in anchors:
            anchors.add(timeline[-1]['id'])
            item, who, thing, place = told.pop(rng.randrange(len(told)))
            probe = {'id': f'q{len(probes) + 1}', 'ask': f'Robot, where did {who[0]} put the {thing}?',
                     'after': timeline[-1]['id'], 'voice': person[3], 'person': person[0], 'expect_any': [place],
                     'timeout': 15, 'wait': 8}
            if person[1]:
                probe['image'] = photo(person)
            probes.append(probe)
            t += 12.0
        if t >= next_quiet:
            n += 1
            timeline.append({'id': f'quiet{n}', 'idle': QUIET_S})
            t += QUIET_S
            next_quiet += 300.0
    return {'name': f'live conversation ({minutes:g} min, seed {seed})', 'camera': {'fps': 5},
            'attribution': 'GRID (CC BY 4.0), LJ Speech (public domain), JFK address and White House photos (U.S. '
                           'government works), AMI Meeting Corpus (CC BY 4.0) via pyannote-audio',
            'timeline': timeline, 'probes': probes}


def prefill(memory_dir: pathlib.Path, horizon: str, entries: int) -> dict[str, Any]:
    """Fill the store a launched consolidation node will open with ``horizon`` of memory (as ``bench system``)."""
    from ..core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime
    from ..core.memory.config import MemoryConfig
    from .bench_system import fill_real, fill_simulated

    t0 = 1.7e9
    m = ConsolidationRuntime(ConsolidationConfigs(memory=MemoryConfig(memory_dir=str(memory_dir))))
    try:
        if horizon == '6mo':
            took, nodes = fill_simulated(m, 6 * 30 * 86400 // SEGMENT_S, entries, t0, persist=True)
        else:
            took, nodes = fill_real(m, DAY_INTERACTIONS, t0), len(m.tree.nodes())
        v = m.global_state()
        return {'sg_nodes': nodes, 'sg_tokens': v.script_tokens, 'fill_s': round(took, 1)}
    finally:
        m.close()


def _ns(stamp: Any) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def _pcts(values: list[float], qs: tuple[int, ...] = (50, 95, 99)) -> dict[str, float | None]:
    return {f'p{q}': round(float(np.percentile(values, q)), 1) if values else None for q in qs}


def answering_segment(start: float, end: float, seg_end: dict[int, float], began: dict[int, float],
                      spoken: Container[int], slack: float = 0.5) -> int | None:
    """The segment whose spoken Action answers a question said over [``start``, ``end``] (scenario seconds).

    The first, by its end, of the segments that hold the question (ended after it began, and what they hold
    began before it ended: ``began``) and were answered (``spoken``); None when the robot answered none of them. The
    answer to the next question is not this one's, however soon it comes.
    """
    sids = sorted((e, sid) for sid, e in seg_end.items()
                  if e >= start - slack and sid in spoken and began.get(sid, float('inf')) <= end + slack)
    return sids[0][1] if sids else None


def measure(run_dir: pathlib.Path, result: dict[str, Any]) -> dict[str, Any]:
    """The live figures of one finished replay (its outputs bag, result.json and ground truth)."""
    from . import bagwriter, scoring

    gt = bagwriter.load_ground_truth(run_dir)
    out = scoring.load_outputs(run_dir / 'outputs', result['namespace'])
    tb = scoring.TimeBase.from_result(result, gt)
    # every segment perception published -> consolidation's acknowledgement of its Topic
    ends = {(int(s.segment_id), _ns(s.start)): _ns(s.end) for _, s in out.get('segments')}
    acked: dict[tuple[int, int], int] = {}
    for t, a in out.get('topics/ack'):
        if a.status in (0, 1):     # STORED, DUPLICATE
            acked.setdefault((int(a.segment_id), _ns(a.start)), t)
    lags = [(acked[k] - end) / 1e9 for k, end in ends.items() if k in acked]
    lost = sum(1 for k in ends if k not in acked)
    # the sleep backlog over time
    backlog: list[tuple[float, int]] = []
    for t, arr in out.get('/diagnostics'):
        for st in arr.status:
            if 'reflex' in st.name:
                kv = {v.key: v.value for v in st.values}
                if 'sleep_pending' in kv:
                    backlog.append((tb.scenario_of_wall(t), int(float(kv['sleep_pending']))))
    backlog.sort()
    quiet = [(i['start'], i['end']) for i in gt['items'] if str(i.get('id', '')).startswith('quiet')]
    zero_in_quiet = [any(v == 0 for t, v in backlog if a <= t <= b) for a, b in quiet]
    ends_zero = bool(backlog) and backlog[-1][1] == 0
    # questions: end of speech -> first SpeechChunk / full Action of the Action that answered it
    chunks: dict[int, int] = {}
    for t, c in out.get('actions/speech'):
        if c.index == 0:
            chunks.setdefault(int(c.segment_id), t)
    actions = {int(a.segment_id): (t, a) for t, a in out.get('actions') if a.speak}
    # per segment (scenario time): its end; when what it holds began (its speech, or the typed text that closed
    # it); when the reflex node could first have seen it (wall time)
    seg_end_s: dict[int, float] = {}
    began: dict[int, float] = {}
    seg_seen: dict[int, int] = {}
    for t, s in out.get('segments'):
        sid = int(s.segment_id)
        seg_end_s[sid] = tb.scenario_of_stamp(s.end)
        began[sid] = (tb.scenario_of_stamp(s.speech_end) - float(s.speech_duration) if _ns(s.speech_end)
                      else seg_end_s[sid])
        seg_seen.setdefault(sid, t)
    first, full, waits, during, answered = [], [], [], 0, 0
    parts: dict[str, list[float]] = {}
    questions = [p for p in gt['probes'] if p.get('kind', 'question') == 'question' and 'speech_end' in p]
    for p in questions:
        end_wall = tb.wall_of_scenario(p['speech_end'])
        before = [v for t, v in backlog if t <= p['speech_end']]
        during += bool(before and before[-1] > 0)
        sid = answering_segment(p['start'], p['speech_end'], seg_end_s, began, actions)
        if sid is None:
            continue
        t_act, a = actions[sid]
        if t_act - end_wall > 60e9:
            continue
        answered += 1
        full.append((t_act - end_wall) / 1e6)
        if sid in chunks:
            first.append((chunks[sid] - end_wall) / 1e6)
        stages = {s.stage: s.ms for s in a.latency}
        if 'preemption_wait' in stages:
            waits.append(stages['preemption_wait'])
        if sid in chunks and sid in seg_seen:
            for k, v in _breakdown(end_wall, seg_seen[sid], chunks[sid], stages).items():
                parts.setdefault(k, []).append(v)
    within = sum(1 for x in lags if x <= 60) / max(1, len(ends))
    lag = _pcts(lags, (50, 95))
    return {'segments': len(ends), 'stored_within_60s_frac': round(within, 3), 'segments_lost': lost,
            'consolidation_lag_s': lag | {'max': round(max(lags), 1) if lags else None},
            'backlog_returns_to_zero': bool(all(zero_in_quiet) and ends_zero),
            'backlog_zero_in_quiet': f'{sum(zero_in_quiet)}/{len(zero_in_quiet)}',
            'backlog_max': max((v for _, v in backlog), default=0), 'backlog': backlog,
            'questions': len(questions), 'answered': answered,
            'first_word_ms': _pcts(first), 'action_ms': _pcts(full),
            'first_word_breakdown_ms': {k: _pcts(v, (50, 95)) for k, v in parts.items()},
            'questions_during_sleep_work_frac': round(during / max(1, len(questions)), 3),
            'preemption_wait_ms': {'p50': _pcts(waits)['p50'], 'max': round(max(waits), 1) if waits else None},
            'drained': bool(result.get('drain', {}).get('drained'))}


def _breakdown(end_wall: int, seg_seen: int, chunk: int, stages: dict[str, float]) -> dict[str, float]:
    """Where a question's first word went (ms), in parts that add up to it.

    ``perception`` (end of speech -> the Segment on the wire), the reflex node's stages from ``Action.latency``
    (``preemption_wait``, ``reflex``, ``retrieval``, and ``first_sentence``: decoding up to the first grounded
    sentence), and ``reflex_queue`` (the rest of the reflex node's time: the executor and the model busy with earlier
    segments, conversion, publishing).
    """
    before = ('preemption_wait', 'reflex', 'retrieval')
    parts = {'perception': (seg_seen - end_wall) / 1e6} | {k: stages[k] for k in before if k in stages}
    decide = stages.get('first_chunk', 0.0)      # counted from the start of decide(): the stages above included
    parts['first_sentence'] = max(0.0, decide - sum(stages.get(k, 0.0) for k in before))
    parts['reflex_queue'] = max(0.0, (chunk - seg_seen) / 1e6 - decide)
    return parts


def _plot(out: pathlib.Path, series: dict[str, list[tuple[float, int]]]) -> str:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.2))
    for name, points in series.items():
        if points:
            ax.step([t / 60 for t, _ in points], [v for _, v in points], where='post', label=name)
    ax.set_xlabel('scenario time (min)')
    ax.set_ylabel('sleep backlog (interactions)')
    ax.set_title('Reflex sleep-time backlog during the live replay')
    ax.legend()
    fig.tight_layout()
    path = out / 'live_backlog.png'
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def run(args: argparse.Namespace, report: Report) -> None:
    """Render the scenario once, replay it at 1x into the launched graph per horizon, report the figures."""
    import yaml

    from lightomni_ros.launch_runner import shim
    from . import bagwriter
    from . import scenario as scn
    from .replay import ReplayOptions, fresh_config, run_replay

    minutes = 2.0 if args.quick and args.live_minutes == 20.0 else args.live_minutes
    entries = 20_000 if args.quick and args.live_entries == 1_000_000 else args.live_entries
    horizons = [h.strip() for h in args.live_horizons.split(',') if h.strip()]
    bad = [h for h in horizons if h not in HORIZONS]
    if bad:
        raise ValueError(f'--live-horizons: unknown {bad} (known: {", ".join(HORIZONS)})')
    out = pathlib.Path(args.json_path).resolve().parent if getattr(args, 'json_path', None) else \
        pathlib.Path('bench_out').resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix='lightomni_bench_live_'))
    try:
        path = work / 'scenario.yaml'
        path.write_text(yaml.safe_dump(scenario(minutes, pathlib.Path(args.live_media), args.live_seed),
                                       sort_keys=False))
        bagwriter.write_bag(scn.load(path), work / 'bag')
        gt = bagwriter.load_ground_truth(work / 'bag')
        report.note(f'scenario: {minutes:g} min of conversation, {len(gt["items"])} items, {len(gt["probes"])} '
                    f'questions, rendered into {work / "bag"}; replayed at 1x per horizon')
        series = {}
        for h in horizons:
            run_dir = work / f'run_{h}'
            fresh_config(shim.package_share('lightomni_ros') / 'config', work / f'config_{h}', work / f'state_{h}')
            mem = prefill(work / f'state_{h}' / 'memory', h, entries)
            report.figure(f'memory.{h}', mem, '', 'simulated' if h == '6mo' else '480 interactions consolidated')
            opts = ReplayOptions(rate=1.0, fresh_state=False, drain=True, drain_timeout=1800.0, linger=5.0)
            result = run_replay(work / 'bag', run_dir, opts, launch_args={'config_dir': str(work / f'config_{h}')})
            live = measure(run_dir, result)
            series[h] = live.pop('backlog')
            summary = result.get('score', {}).get('summary', {})
            report.figure(f'live.{h}', live, '', f'probes passed {summary.get("passed")}/{summary.get("total")}')
            report.figure(f'first_word_ms.{h}', live['first_word_ms'], 'ms', 'end of speech -> first SpeechChunk')
        _summary(report, series, out)
    finally:
        if args.live_keep:
            report.note(f'work folder kept: {work} (run_<horizon>/launch_logs: the node logs)')
        else:
            shutil.rmtree(work, ignore_errors=True)


def _summary(report: Report, series: dict[str, list[tuple[float, int]]], out: pathlib.Path) -> None:
    """The issue's headline figures over every horizon, and the plot."""
    live = {h: report.figures['live'][h] for h in series}
    report.figure('stored_within_60s_frac', min(v['stored_within_60s_frac'] for v in live.values()), '',
                  'worst horizon; target >= 0.95')
    report.figure('segments_lost', sum(v['segments_lost'] for v in live.values()), '', 'target 0')
    report.figure('backlog_returns_to_zero', all(v['backlog_returns_to_zero'] for v in live.values()), '',
                  'in every quiet stretch and after the replay, every horizon')
    report.figure('first_word_ms', {h: v['first_word_ms'] for h, v in live.items()}, 'ms',
                  'targets: p50 <= 1500, p99/p50 <= 2, 6mo/1day p50 <= 1.2')
    report.note(f'plot: {_plot(out, series)}')
    print('\n  live summary\n  ' + json.dumps(live, indent=1, default=float).replace('\n', '\n  '), flush=True)
