# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench perception``: word error rates (streaming through the node vs offline), stage RTFs, CPU.

Offline: faster-whisper transcribes each whole clip of ../shared/media (JFK, LJ Speech, GRID). Streaming: the
perception node runs in its own process; another process feeds the same clips as a robot delivers them (20 ms audio
chunks at the file's own rate and channels, a 30 fps 640x480 camera) in real time for at least the chosen duration;
each clip's hypothesis is the transcripts of the segments whose speech falls inside the clip. The node's
/diagnostics give per-stage times, counters and the keyframe rate; psutil gives its CPU use.
JSON keys: ``wer_streaming``, ``wer_offline``, ``rtf`` (per stage), ``audio_dropped``, ``keyframe_hz``,
``cpu_percent``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Sequence

from ..env import launched_here, prepare as prepare_env
from .bench import Report
from .perception_media import SPEECH, load_audio, media_dir, wer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Area flags."""
    parser.add_argument('--perception-seconds', type=float, default=60.0,
                        help='perception: minimum seconds of camera + audio fed to the node')
    parser.add_argument('--perception-fps', type=float, default=30.0,
                        help='perception: camera rate of the 640x480 stream (0: no camera)')
    parser.add_argument('--perception-set', action='append', default=[], metavar='KEY=YAML',
                        help='perception: override a node parameter for the run (e.g. faces.enabled=false)')


def offline_wer(clips: list[str]) -> tuple[float, dict[str, str], float]:
    """WER of faster-whisper on each whole file (same model and options as the node), hypotheses, and ASR RTF."""
    from ..core.perception.asr import AsrConfig, Transcriber
    from ..core.perception.audio import Resampler

    media = media_dir()
    tr = Transcriber(AsrConfig(threads=1))
    hyps, pairs = {}, []
    t_asr = t_audio = 0.0
    try:
        for rel in clips:
            x, sr = load_audio(media / rel)
            y = Resampler(sr).process(x.mean(axis=1), flush=True)
            t0 = time.perf_counter()
            hyps[rel] = tr.transcribe(y).text
            t_asr += time.perf_counter() - t0
            t_audio += len(y) / 16000
            pairs.append((SPEECH[rel], hyps[rel]))
    finally:
        tr.close()
    return wer(pairs), hyps, t_asr / max(t_audio, 1e-9)


def _env(domain: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({'ROS_DOMAIN_ID': str(domain), 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                'PYTHONUNBUFFERED': '1'})
    prepare_env(env)
    return launched_here(env)


def _stop(proc: subprocess.Popen) -> None:
    import signal

    for sig, wait in ((signal.SIGINT, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
            proc.wait(wait)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue


def node_params(tmp: str, overrides: Sequence[str] = ()) -> str:
    """config/perception.yaml with a private state file and audio folder and ``KEY=YAML`` overrides; its path."""
    import yaml

    from .perception_media import REPO

    data = yaml.safe_load((REPO / 'config' / 'perception.yaml').read_text())
    params = data['/**']['ros__parameters']
    params['state_file'] = os.path.join(tmp, 'state.json')
    params['segments']['audio_dir'] = os.path.join(tmp, 'audio')
    params['gallery_timeout_s'] = 0.5
    for item in overrides:
        key, _, value = item.partition('=')
        *parents, leaf = key.split('.')
        node_p = params
        for p in parents:
            node_p = node_p[p]
        node_p[leaf] = yaml.safe_load(value)
    path = os.path.join(tmp, 'perception.yaml')
    with open(path, 'w') as f:
        yaml.safe_dump(data, f)
    return path


class Listener:
    """A bench node on its own context that records Segment messages and the perception node's diagnostics."""

    def __init__(self, domain: int) -> None:
        from diagnostic_msgs.msg import DiagnosticArray

        from ..msg import Segment
        from ..nodes.common import RELIABLE_QOS, BackgroundNode

        self.spinner = BackgroundNode('bench_perception', domain_id=domain, threads=1)
        self.node = self.spinner.node
        self.segs: list = []
        self.diags: list = []
        self.node.create_subscription(Segment, '/lightomni/segments', self.segs.append, RELIABLE_QOS)
        self.node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: self.diags.extend(
            s for s in m.status if s.name.endswith('perception')), 10)

    def close(self) -> None:
        """Stop spinning and shut the context down."""
        self.spinner.close()


def _settle(lis: Listener, lines: list[dict], settle_s: float) -> None:
    """Let the last speech reach end of speech and ASR.

    Every clip has an end-of-speech segment and the node's queues are empty with no new segment for 3 s (at most
    ``settle_s``), then one more diagnostics period.
    """
    from ..msg import Segment

    deadline = time.monotonic() + settle_s
    n_spans = sum(1 for ln in lines if 'clip' in ln)
    last_n, quiet_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        segs = lis.segs
        if len(segs) != last_n:
            last_n, quiet_since = len(segs), time.monotonic()
        vals = {kv.key: kv.value for kv in lis.diags[-1].values} if lis.diags else {}
        idle = vals.get('output_queue') == '0' and vals.get('audio_queue') == '0'
        if sum(1 for s in segs if s.trigger == Segment.TRIGGER_END_OF_SPEECH) >= n_spans and idle and \
                time.monotonic() - quiet_since > 3.0:
            break
        time.sleep(0.2)
    time.sleep(2.5)


def streaming_run(clips: list[str], seconds: float, report: Report, overrides: Sequence[str] = (),
                  fps: float = 30.0, feed_args: Sequence[str] = (), settle_s: float = 20.0) -> dict[str, Any]:
    """Run node + feeder; return segments, feeder lines, diagnostics and CPU figures."""
    import psutil

    from ..launch_runner.lifecycle import LifecycleClient

    domain = random.randint(120, 200)
    env = _env(domain)
    tmp = tempfile.mkdtemp(prefix='lightomni_bench_perception_')
    params_path = node_params(tmp, overrides)
    log = open(os.path.join(tmp, 'node.log'), 'wb')
    node = subprocess.Popen([sys.executable, '-m', 'lightomni_ros.nodes.perception', '--ros-args', '-r',
                             '__ns:=/lightomni', '--params-file', params_path], env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    lis = Listener(domain)
    feeder = None
    try:
        with LifecycleClient(domain) as lc:
            for tr in ('configure', 'activate'):
                ok, why = lc.change_state('/lightomni/perception', tr, timeout=180)
                if not ok:
                    raise RuntimeError(f'perception {tr} failed: {why}; log {tmp}/node.log')
        proc = psutil.Process(node.pid)
        feeder = subprocess.Popen([sys.executable, '-m', 'lightomni_ros.eval.perception_media', 'feed', *clips,
                                   '--size', '640x480', '--fps', str(fps), '--gap-s', '1.5',
                                   '--still', 'faces/public_figures/barack_obama_4.jpg',
                                   '--min-duration', str(seconds), *feed_args], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        cpu0, t0 = proc.cpu_times(), time.monotonic()
        lines = [json.loads(line) for line in feeder.stdout]
        feeder.wait()
        cpu1, t1 = proc.cpu_times(), time.monotonic()
        _settle(lis, lines, settle_s)
        cpu2 = proc.cpu_times()
        cpu = 100.0 * ((cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)) / (t1 - t0)
        return {'segments': list(lis.segs), 'lines': lines, 'diag': lis.diags[-1] if lis.diags else None,
                'cpu': cpu, 'wall': t1 - t0, 'tmp': tmp,
                'cpu_s': (cpu2.user - cpu0.user) + (cpu2.system - cpu0.system)}
    finally:
        if feeder is not None:
            _stop(feeder)
        _stop(node)
        log.close()
        lis.close()


def diag_values(res: dict[str, Any]) -> tuple[dict[str, str], Callable[[str], float]]:
    """The node's last diagnostics of a run as {key: value} and a reader of numbers (0 when absent)."""
    d = res['diag']
    vals = {kv.key: kv.value for kv in d.values} if d is not None else {}

    def num(key: str) -> float:
        try:
            return float(vals.get(key, 0) or 0)
        except ValueError:
            return 0.0
    return vals, num


def asr_ms(num: Callable[[str], float]) -> float:
    """The ASR's wall time in a run's diagnostics (``num`` of :func:`diag_values`), the decodes ahead included.

    A span heard ahead at a pause is decoded before its segment closes: that work, used or wasted, is the ASR's too.
    """
    return num('asr_ms_total') + num('asr_ahead_ms_total')


def _t(msg: Any) -> float:
    return msg.sec + msg.nanosec * 1e-9


def run(args: argparse.Namespace, report: Report) -> None:
    """Measure and report."""
    from ..core.perception.asr import AsrConfig
    media = media_dir()
    if media is None:
        report.note('no media folder (set LIGHTOMNI_MEDIA or put shared/media beside the checkout): skipped')
        return
    clips = list(SPEECH)
    if args.quick:
        clips = ['speech/ljspeech/LJ001-0002.wav', 'video/grid/lrwp9a.mpg']
    seconds = 10.0 if args.quick else args.perception_seconds
    w_off, hyps_off, rtf_off = offline_wer(clips)
    asr = AsrConfig()
    report.note(f'{len(clips)} clips, Whisper tiny.en int8 (faster-whisper), beam {asr.beam_size}; offline ASR RTF '
                f'{rtf_off:.3f}')
    res = streaming_run(clips, seconds, report, args.perception_set, args.perception_fps)
    if args.perception_set:
        report.note(f'parameters overridden: {args.perception_set}')
    segs = [s for s in res['segments'] if s.transcript]
    pairs, first = [], {}
    for ln in res['lines']:
        if 'clip' in ln and ln['clip'] not in first:
            first[ln['clip']] = ln
    for rel in clips:
        win = first.get(rel)
        hyp = ''
        if win is not None:
            parts = [s.transcript for s in segs
                     if win['start'] - 0.5 <= _t(s.end) - s.speech_duration and _t(s.end) <= win['end'] + 1.0]
            hyp = ' '.join(parts)
        pairs.append((SPEECH[rel], hyp))
        if hyp != hyps_off[rel]:
            report.note(f'{rel}: streaming {hyp!r} / offline {hyps_off[rel]!r}')
    w_stream = wer(pairs)
    report.figure('wer_streaming', round(w_stream, 4), '', 'through the node, real-time chunks')
    report.figure('wer_offline', round(w_off, 4), '', 'whole files, same model')
    report.note(f'streaming - offline WER: {100 * (w_stream - w_off):+.1f} points (target <= +2)')
    vals, num = diag_values(res)
    done = next((ln for ln in res['lines'] if ln.get('done')), {})
    stream_s = float(done.get('seconds', res['wall']))
    audio_s = num('audio_seconds') or stream_s
    rtf = {'vad': num('vad_ms_total') / 1000 / max(audio_s, 1e-9),
           'asr': asr_ms(num) / 1000 / max(num('asr_audio_s_total'), 1e-9),
           'frames': num('frames_ms_total') / 1000 / max(stream_s, 1e-9),
           'faces': num('faces_ms_total') / 1000 / max(stream_s, 1e-9)}
    what = {'vad': 'per audio second (incl. resampling)', 'asr': 'per second of speech transcribed',
            'frames': 'keyframe filters+encoder per stream second', 'faces': 'faces per stream second'}
    for k, v in rtf.items():
        report.figure(f'rtf.{k}', round(v, 4), 'x', what[k])
    stamp0 = next((ln['stamp0'] for ln in res['lines'] if 'stamp0' in ln), None)
    chunk_s = 0.02
    published = int(done.get('audio_chunks', 0))
    received = int(num('audio_chunks'))
    first_stamp = num('audio_first_stamp')
    before = int(round((first_stamp - stamp0) / chunk_s)) if stamp0 and first_stamp else 0
    dropped = max(0, published - received - before) + int(num('audio_dropped'))
    report.figure('audio_dropped', dropped, 'chunks', f'of {published} published (after the first one received)')
    if before:
        report.note(f'{before} audio chunks published before the subscription matched (discovery) not counted')
    # Like audio, the rate counts from the first frame the node received (frames before discovery never arrive).
    first_frame = num('frames_first_stamp')
    frame_s = stamp0 + stream_s - first_frame if stamp0 and first_frame else stream_s
    report.figure('keyframe_hz', round(num('keyframes_processed') / max(frame_s, 1e-9), 3), 'Hz',
                  f'sampled frames processed over {frame_s:.1f} s from the first frame received '
                  f'({num("keyframes_processed") / max(stream_s, 1e-9):.3f} Hz over all {stream_s:.1f} s); '
                  f'kept {int(num("keyframes_kept"))}, '
                  f'frames dropped {int(num("frames_dropped"))} of {int(num("frames_received"))} received '
                  f'({int(done.get("frames", 0))} published)')
    report.figure('cpu_percent', round(res['cpu'], 1), '%', f'node process over {res["wall"]:.0f} s '
                  f'(100 = one core; {os.cpu_count()} cores)')
    report.note(f'{len(res["segments"])} segments; {int(num("identities_new"))} identities created; '
                f'stage p50 ms: ' + ', '.join(f'{s} {vals.get(s + ".p50_ms", "-")}' for s in
                                              ('vad', 'asr', 'frames', 'faces')))
