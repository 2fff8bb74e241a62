# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench hearing``: long, overlapped, multi-speaker speech through the perception node at 1x.

The conversations of :mod:`lightomni_ros.eval.conversations` (overlaps at several ratios and minutes-long mixes of
the single-speaker media, ``dev`` and ``heldout`` splits) and the real AMI meeting clip are written as WAV files and
fed to the perception node in its own process in real time (20 ms chunks); each conversation's streaming transcript
is the words of the published segments that fall inside it. The offline reference is the same ASR model on each
whole file. JSON keys: ``conversations.wer_streaming``, ``conversations.wer_offline``,
``conversations.content_recall_ratio`` (also ``.by_ratio``, ``.by_split``: of the content words the offline decode
finds that were said, those streaming keeps; ``.offline_agreement`` counts the offline decode's misheard words too),
``meeting.content_recall_ratio`` (no transcript: every content word of the offline decode),
``meeting.offline_self_recall`` (the reference against itself decoded with other fallback seeds),
``collapsed_segments``, ``voice.purity``, ``voice.coverage``, ``voice.same_across_recordings``, ``meeting.voice.*``,
``audio_dropped``, ``rtf``, ``asr_models.*`` (WER and real-time factor of each PyPI model, offline).
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import tempfile
import time
from typing import Any

from .bench import Report
from .bench_perception import asr_ms, diag_values
from .conversations import RATIOS, Conversation, build, meeting, write
from .hearing_scores import (collapsed, dominant_voice, frame_pairs, kept, purity_coverage, text_between)
from .perception_media import media_dir, wer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Area flags."""
    parser.add_argument('--hearing-set', action='append', default=[], metavar='KEY=YAML',
                        help='hearing: override a perception parameter for the run (e.g. asr.model=base)')
    parser.add_argument('--hearing-splits', default='dev,heldout', help='hearing: which mixed splits to stream')
    parser.add_argument('--hearing-models', default='tiny.en,base',
                        help='hearing: ASR models compared offline (empty: none)')


def offline(convs: list[Conversation], model: str = '', threads: int = 2,
            seed: int = 0) -> tuple[dict[str, Any], float]:
    """Whole-file decode of each conversation: {name: (text, [(time from its start, word)])} and the ASR RTF."""
    from ..core.perception.asr import AsrConfig, Transcriber

    tr = Transcriber(AsrConfig(model=model, threads=threads, context=False, seed=seed))
    out, t_asr, t_audio = {}, 0.0, 0.0
    try:
        for c in convs:
            t0 = time.perf_counter()
            r = tr.transcribe(c.audio)
            t_asr += time.perf_counter() - t0
            t_audio += c.seconds
            out[c.name] = (r.text, [((w.start + w.end) / 2, w.word) for w in r.words])
    finally:
        tr.close()
    return out, t_asr / max(t_audio, 1e-9)


def stream(convs: list[Conversation], report: Report, overrides: list[str]) -> dict[str, Any]:
    """Feed every conversation through the perception node at 1x; segments (core records) and clip windows."""
    from ..nodes.messages import segment_from_msg
    from .bench_perception import streaming_run  # noqa: I100 - rclpy is imported only when the node runs

    res = streaming_run([c.path for c in convs], 0.0, report, overrides, fps=0.0,
                        feed_args=['--gap-s', '2.0'], settle_s=60.0)
    res['records'] = [segment_from_msg(m) for m in res['segments']]
    res['windows'] = {ln['clip']: (ln['start'], ln['end']) for ln in res['lines'] if 'clip' in ln}
    return res


def _voices(convs: list[Conversation], res: dict[str, Any]) -> collections.Counter:
    """(conversation|speaker, voice) frame counts of every conversation."""
    turns = [(t.voice_id, s.start + t.start, s.start + t.end) for s in res['records'] for t in s.turns]
    pairs: collections.Counter = collections.Counter()
    for c in convs:
        t0, t1 = res['windows'][c.path]
        truth = [(p.speaker, t0 + p.start, t0 + p.end) for p in c.placed]
        pairs.update({(f'{c.name}|{r}', h): n for (r, h), n in
                      frame_pairs(truth, turns, t0, t1, skip=frozenset({'grid'})).items()})
    return pairs


def score(convs: list[Conversation], res: dict[str, Any], off: dict[str, Any], report: Report) -> None:
    """Word, content and collapse figures of the mixed set and the meeting."""
    recs = res['records']
    groups = collections.defaultdict(lambda: {'ws': [], 'wo': [], 'k': [0, 0], 'ka': [0, 0], 'ks': [0, 0],
                                              'ko': [0, 0]})
    bad = checked = 0
    for c in convs:
        t0, t1 = res['windows'][c.path]
        hyp = text_between(recs, t0, t1)
        text, words = off[c.name]
        mine = [r for r in recs if r.speech_end > t0 and r.speech_start < t1]
        a, b = collapsed(mine, [(t0 + t, w) for t, w in words])
        bad, checked = bad + a, checked + b
        keys = ['meeting'] if c.kind == 'meeting' else \
            ['conversations', f'split.{c.name.split("/")[0]}'] + ([f'ratio.{c.ratio:g}'] if c.ratio is not None else
                                                                  [f'long.{c.name.split("/")[0]}'])
        for key in keys:
            g = groups[key]
            g['ws'].append((c.reference, hyp))
            g['wo'].append((c.reference, text))
            # the meeting has no transcript: there every word of the offline decode counts
            known = None if c.kind == 'meeting' else c.reference
            for k, (h, r, w) in (('k', (hyp, text, known)), ('ka', (hyp, text, None)), ('ks', (hyp, c.reference, None)),
                                 ('ko', (text, c.reference, None))):
                g[k] = [x + y for x, y in zip(g[k], kept(h, r, w))]
        if hyp.strip() != text.strip():
            report.note(f'{c.name}: streaming {hyp!r} / offline {text!r}')
    for key, g in sorted(groups.items()):
        base = key if key in ('conversations', 'meeting') else f'conversations.by_{key.split(".")[0]}.' \
            f'{key.split(".", 1)[1]}'
        if key != 'meeting':
            report.figure(f'{base}.wer_streaming', round(wer(g['ws']), 4))
            report.figure(f'{base}.wer_offline', round(wer(g['wo']), 4))
            for k, who in (('ks', 'streaming'), ('ko', 'offline')):
                report.figure(f'{base}.known_recall_{who}', round(g[k][0] / max(g[k][1], 1), 4), '',
                              'content words of the known transcript that the decode holds')
        if key != 'meeting':
            report.figure(f'{base}.offline_agreement', round(g['ka'][0] / max(g['ka'][1], 1), 4), '',
                          f'{g["ka"][0]} of {g["ka"][1]} content words of the offline decode, misheard ones included')
        report.figure(f'{base}.content_recall_ratio', round(g['k'][0] / max(g['k'][1], 1), 4), '',
                      f'{g["k"][0]} of {g["k"][1]} content words of the offline decode'
                      + ('' if key == 'meeting' else ' that were said'))
    report.figure('collapsed_segments', bad, '', f'of {checked} segments with 10 s of speech or more')


def score_voices(mixed: list[Conversation], meet: Conversation | None, res: dict[str, Any], report: Report) -> None:
    """Purity and coverage of the voice ids against the known speakers; the same voice across recordings."""
    pairs = _voices(mixed, res)
    merged = collections.Counter()
    for (r, h), n in pairs.items():
        merged[(r.split('|')[1], h)] += n
    p, c = purity_coverage(merged)
    report.figure('voice.purity', round(p, 4), '', 'mixed set, frames with one known speaker (LJ Speech, JFK)')
    report.figure('voice.coverage', round(c, 4))
    agree = total = 0
    for spk in ('lj', 'jfk'):
        doms = {cv.name: dominant_voice(pairs, f'{cv.name}|{spk}') for cv in mixed}
        doms = {k: v for k, v in doms.items() if v}
        main = collections.Counter(doms.values()).most_common(1)[0][0] if doms else ''
        agree, total = agree + sum(v == main for v in doms.values()), total + len(doms)
        report.note(f'{spk}: {sum(v == main for v in doms.values())} of {len(doms)} recordings carry its main voice '
                    f'{main}' + ''.join(f'; {k}: {v}' for k, v in doms.items() if v != main))
    report.figure('voice.same_across_recordings', round(agree / max(total, 1), 4), '',
                  'recordings whose speaker (LJ Speech, JFK) carries that speaker\'s main voice id')
    if meet is not None:
        mp, mc = purity_coverage(collections.Counter({(r.split('|')[1], h): n for (r, h), n in
                                                      _voices([meet], res).items()}))
        report.figure('meeting.voice.purity', round(mp, 4), '', 'AMI clip against its manual speaker turns')
        report.figure('meeting.voice.coverage', round(mc, 4))


def score_node(res: dict[str, Any], audio_s: float, report: Report) -> None:
    """Audio dropped, real-time factors and what was discarded (from the node's diagnostics)."""
    vals, num = diag_values(res)
    done = next((ln for ln in res['lines'] if ln.get('done')), {})
    published, received = int(done.get('audio_chunks', 0)), int(num('audio_chunks'))
    report.figure('audio_dropped', max(0, published - received) + int(num('audio_dropped')), 'chunks',
                  f'of {published} published')
    seconds = num('audio_seconds') or audio_s
    report.figure('rtf', round((num('vad_ms_total') + asr_ms(num)) / 1000 / max(seconds, 1e-9), 4), 'x',
                  f'VAD + cuts + ASR (ahead too) + voices per audio second ({seconds:.0f} s, 2 shared cores)')
    for key in ('vad', 'asr', 'asr_ahead', 'voice'):
        report.figure(f'rtf_stage.{key}', round(num(f'{key}_ms_total') / 1000 / max(seconds, 1e-9), 4), 'x')
    report.figure('rtf_cpu', round(res['cpu_s'] / max(seconds, 1e-9), 4), 'x',
                  'CPU seconds of the node process per audio second, until its queues were empty (all threads)')
    report.figure('cpu_percent', round(res['cpu'], 1), '%', 'node process (100 = one core)')
    for key in sorted(vals):
        if key.startswith(('asr_dropped', 'asr_fallbacks', 'asr_context', 'asr_spans_too_short', 'asr_ahead_used',
                           'asr_ahead_wasted', 'vad_cuts', 'vad_discarded', 'speech_ends_', 'voices_', 'voice_turns')):
            report.figure(f'discards.{key}', num(key))


def compare_models(convs: list[Conversation], models: list[str], report: Report) -> None:
    """WER and RTF (2 threads) of each PyPI ASR model on the mixed conversations, whole files."""
    for m in models:
        off, rtf = offline(convs, m)
        pairs = [(c.reference, off[c.name][0]) for c in convs]
        key = m.replace('.', '_')
        report.figure(f'asr_models.{key}.wer', round(wer(pairs), 4), '', 'offline, whole files, mixed set')
        report.figure(f'asr_models.{key}.rtf', round(rtf, 4), 'x', '2 threads, shared machine')


def reference_noise(meet: Conversation, off: dict[str, Any], model: str, report: Report) -> None:
    """How far the meeting's offline reference is from itself: the same decode with other fallback seeds.

    Far-field overlapped speech makes Whisper fall back to sampling; when it does, the reference words depend on the
    draw, and a recall against them cannot be read more finely than this.
    """
    ratios = []
    for seed in (1, 2):
        alt, _ = offline([meet], model, seed=seed)
        a, b = kept(alt[meet.name][0], off[meet.name][0])
        ratios.append(a / max(b, 1))
    report.figure('meeting.offline_self_recall', round(min(ratios), 4), '',
                  'content words of the reference that offline decodes with fallback seeds 1 and 2 keep (lowest)')


def run(args: argparse.Namespace, report: Report) -> None:
    """Build the sets, compare the models, stream, score."""
    media = media_dir()
    if media is None:
        report.note('no media folder (set LIGHTOMNI_MEDIA or put shared/media beside the checkout): skipped')
        return
    splits = [s for s in args.hearing_splits.split(',') if s]
    mixed = [c for s in splits for c in build(media, s, quick=args.quick)]
    meet = meeting(media)
    write(mixed, pathlib.Path(tempfile.mkdtemp(prefix='lightomni_hearing_')))
    convs = mixed + ([meet] if meet is not None else [])
    report.note(f'{len(mixed)} mixed conversations ({sum(c.seconds for c in mixed):.0f} s; splits {splits}; '
                f'overlap ratios {list(RATIOS)}) + the AMI meeting clip; figures by split under by_split')
    models = [m for m in args.hearing_models.split(',') if m]
    if models:
        compare_models(mixed, models, report)
    model = next((kv.split('=', 1)[1] for kv in args.hearing_set if kv.startswith('asr.model=')), '')
    off, _ = offline(convs, model)
    if meet is not None and not args.quick:     # a smoke run has no figure to read that finely
        reference_noise(meet, off, model, report)
    res = stream(convs, report, args.hearing_set)
    score(convs, res, off, report)
    score_voices(mixed, meet, res, report)
    score_node(res, sum(c.seconds for c in convs), report)
    report.note(f'{len(res["records"])} segments; node log and audio in {res["tmp"]}')
