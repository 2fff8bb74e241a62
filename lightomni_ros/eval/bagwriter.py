# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Scenario -> rosbag2: the node graph's input topics, rendered from media files and TTS, plus the ground truth.

Topics (names as the launch file's defaults, so a replay needs no remapping):

- ``/camera/image_raw/compressed`` (sensor_msgs/CompressedImage, JPEG) or ``/camera/image_raw`` (sensor_msgs/Image,
  rgb8): video frames at their source rate, still images at ``camera.fps`` while their item plays;
- ``/audio`` (lightomni_ros/AudioStamped, 16 kHz mono S16LE): a continuous microphone stream in ``audio.chunk_ms``
  chunks over the whole timeline (silence between items, so voice-activity detection sees speech end);
- ``/text_input`` (std_msgs/String): typed instructions and typed questions.

Messages are serialized by rclpy (``serialize_message``) and written by ``rosbags`` with the type definitions and
hashes of our msg/ files. The ground truth (item and probe times, transcripts, identities) is written beside the
storage file as ``lightomni_groundtruth.json`` inside the bag folder.
"""

from __future__ import annotations

import array
import dataclasses
import heapq
import json
import logging
import pathlib
import shutil
import subprocess
import tempfile
from typing import Any, Iterator

import numpy as np

from . import rostypes
from .scenario import Item, Probe, Scenario, ScenarioError

log = logging.getLogger('lightomni.eval.bag')
SAMPLE_RATE = 16000
GROUNDTRUTH = 'lightomni_groundtruth.json'
GT_FORMAT = 'lightomni-groundtruth/1'
TOPICS = {
    'camera_compressed': ('/camera/image_raw/compressed', 'sensor_msgs/msg/CompressedImage'),
    'camera_raw': ('/camera/image_raw', 'sensor_msgs/msg/Image'),
    'audio': ('/audio', 'lightomni_ros/msg/AudioStamped'),
    'text': ('/text_input', 'std_msgs/msg/String'),
}


class MediaError(RuntimeError):
    """A media file or the TTS engine failed; the message names the item."""


# --- media ----------------------------------------------------------------------------------------------------------
def resample(x: np.ndarray, sr: int) -> np.ndarray:
    """Mono float32 at ``sr`` -> 16 kHz (polyphase, anti-aliased)."""
    if sr == SAMPLE_RATE:
        return x.astype(np.float32)
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(SAMPLE_RATE, int(sr))
    return resample_poly(x, SAMPLE_RATE // g, int(sr) // g).astype(np.float32)


def read_audio(path: pathlib.Path) -> np.ndarray:
    """An audio file (wav, flac, ogg, ...; else anything PyAV decodes) -> mono float32 at 16 kHz."""
    import soundfile as sf

    try:
        data, sr = sf.read(str(path), dtype='float32', always_2d=True)
        return resample(data.mean(axis=1), sr)
    except (RuntimeError, sf.LibsndfileError):
        audio = _av_audio(path)
        if audio is None:
            raise MediaError(f'{path}: no audio stream could be decoded') from None
        return audio


def _av_audio(path: pathlib.Path) -> np.ndarray | None:
    """The first audio stream of a container, decoded and resampled to 16 kHz mono by PyAV (None when absent)."""
    import av

    with av.open(str(path)) as container:
        if not container.streams.audio:
            return None
        resampler = av.AudioResampler(format='flt', layout='mono', rate=SAMPLE_RATE)
        parts = []
        for frame in container.decode(audio=0):
            for out in resampler.resample(frame):
                parts.append(out.to_ndarray().reshape(-1))
        for out in resampler.resample(None):
            parts.append(out.to_ndarray().reshape(-1))
    return np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)


def _fit(img: np.ndarray, max_width: int) -> np.ndarray:
    import cv2

    h, w = img.shape[:2]
    if w <= max_width:
        return img
    return cv2.resize(img, (max_width, max(1, round(h * max_width / w))), interpolation=cv2.INTER_AREA)


def read_image(path: pathlib.Path, max_width: int) -> np.ndarray:
    """An image file -> RGB uint8, scaled to at most ``max_width``."""
    import cv2

    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if bgr is None:
        raise MediaError(f'{path}: not a readable image')
    return _fit(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), max_width)


def read_video(path: pathlib.Path, max_width: int) -> tuple[float, list[np.ndarray], np.ndarray]:
    """A video file -> (fps, RGB frames, its audio track as 16 kHz mono float32; empty when silent)."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise MediaError(f'{path}: not a readable video')
    fps = cap.get(cv2.CAP_PROP_FPS) or 25.0
    frames = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        frames.append(_fit(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), max_width))
    cap.release()
    if not frames:
        raise MediaError(f'{path}: no video frames decoded')
    audio = _av_audio(path)
    return float(fps), frames, audio if audio is not None else np.zeros(0, np.float32)


def tts(text: str, voice: str, speed: int, pitch: int) -> np.ndarray:
    """Speak ``text`` with espeak-ng -> mono float32 at 16 kHz."""
    import soundfile as sf

    exe = shutil.which('espeak-ng')
    if exe is None:
        raise MediaError('espeak-ng is not installed (scripts/setup_env.sh installs it: apt-get install espeak-ng)')
    with tempfile.TemporaryDirectory(prefix='lightomni_tts_') as tmp:
        wav = pathlib.Path(tmp) / 'say.wav'
        proc = subprocess.run([exe, '-v', voice, '-s', str(speed), '-p', str(pitch), '-w', str(wav), '--', text],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0 or not wav.is_file():
            raise MediaError(f'espeak-ng failed for voice {voice!r}: {proc.stderr.strip() or proc.returncode}')
        data, sr = sf.read(str(wav), dtype='float32', always_2d=True)
    return resample(data.mean(axis=1), sr)


def speech_bounds(x: np.ndarray, rel: float = 0.05, floor: float = 0.003) -> tuple[float, float]:
    """Start and end (seconds) of the audible part: first/last 10 ms window above ``rel`` of the peak RMS."""
    win = SAMPLE_RATE // 100
    n = len(x) // win
    if n == 0:
        return 0.0, 0.0
    rms = np.sqrt(np.mean(x[:n * win].reshape(n, win).astype(np.float64) ** 2, axis=1))
    loud = np.flatnonzero(rms > max(floor, rel * float(rms.max())))
    if loud.size == 0:
        return 0.0, 0.0
    return loud[0] * win / SAMPLE_RATE, (loud[-1] + 1) * win / SAMPLE_RATE


# --- layout ---------------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Placed:
    """An item (or a probe's question) placed on the timeline; times in seconds since the scenario start."""

    id: str
    kind: str
    start: float
    end: float
    audio: np.ndarray | None = None
    speech: tuple[float, float] | None = None      # absolute start/end of the audible part
    frames: list[tuple[float, np.ndarray]] = dataclasses.field(default_factory=list)   # (t, RGB) or shared stills
    still: np.ndarray | None = None                # a still shown from start to still_until at camera.fps
    still_until: float = 0.0
    text: str = ''                                 # typed text published at `start`
    item: Item | None = None
    probe: Probe | None = None
    source: str = ''


class Renderer:
    """Renders a scenario's media and lays out the timeline (pure computation; no ROS)."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self._images: dict[pathlib.Path, np.ndarray] = {}

    def image(self, path: pathlib.Path) -> np.ndarray:
        """Decoded (and cached) still image."""
        if path not in self._images:
            self._images[path] = read_image(path, self.sc.camera.max_width)
        return self._images[path]

    def _speech(self, text: str, voice: str) -> np.ndarray:
        t = self.sc.tts
        return tts(text, voice or t.voice, t.speed, t.pitch)

    def render_item(self, it: Item, start: float) -> Placed:
        """Decode/synthesise one item and place it at ``start``."""
        where = f'timeline[{it.index}] (id {it.id!r}, line {it.line})'
        try:
            p = Placed(it.id, it.kind, start, start, item=it, source=str(it.path or it.image or ''))
            if it.kind == 'say':
                p.audio = self._speech(it.text, it.voice)
            elif it.kind == 'audio':
                p.audio = read_audio(it.path)
            elif it.kind == 'video':
                fps, frames, p.audio = read_video(it.path, self.sc.camera.max_width)
                p.frames = [(start + i / fps, f) for i, f in enumerate(frames)]
                p.end = start + len(frames) / fps
            elif it.kind == 'idle':
                p.end = start + it.seconds
            elif it.kind == 'text':
                p.text = it.text
        except (MediaError, OSError, ValueError) as exc:
            raise MediaError(f'{where}: {exc}') from exc
        if p.audio is not None and len(p.audio):
            p.end = max(p.end, start + len(p.audio) / SAMPLE_RATE)
            s0, s1 = speech_bounds(p.audio)
            p.speech = (start + s0, start + s1) if s1 > s0 else None
        if it.image is not None:
            p.still = self.image(it.image)
        return p

    def render_question(self, pr: Probe, start: float) -> Placed:
        """Place a probe's question (spoken by TTS or typed) at ``start``."""
        p = Placed(pr.id, 'question', start, start, probe=pr)
        if pr.ask:
            try:
                p.audio = self._speech(pr.ask, pr.voice)
            except MediaError as exc:
                raise MediaError(f'probes[{pr.index}] (id {pr.id!r}, line {pr.line}): {exc}') from exc
            p.end = start + len(p.audio) / SAMPLE_RATE
            s0, s1 = speech_bounds(p.audio)
            p.speech = (start + s0, start + s1)
        else:
            p.text = pr.typed
        if pr.image is not None:
            p.still = self.image(pr.image)
        return p

    def layout(self) -> tuple[list[Placed], float]:
        """Every item and question placed in time; returns them and the total duration (seconds)."""
        sc = self.sc
        after: dict[str, list[Probe]] = {}
        for pr in sc.probes:
            if pr.kind == 'question' and pr.after:
                after.setdefault(pr.after, []).append(pr)
        placed: list[Placed] = []
        t = 0.0
        for it in sc.items:
            p = self.render_item(it, t)
            placed.append(p)
            p.still_until = p.end + it.gap
            t = p.end + it.gap
            for i, pr in enumerate(after.get(it.id, [])):
                # the first question replaces the anchor's gap with its own delay
                q = self.render_question(pr, (p.end if i == 0 else t) + pr.delay)
                q.still_until = q.end + pr.wait
                placed.append(q)
                t = q.end + pr.wait
        end = t
        speech = [(q.speech or (q.start, q.end), q) for q in placed if q.kind not in ('idle', 'text')]
        for pr in sc.probes:
            if pr.kind == 'question' and pr.at is not None:
                q = self.render_question(pr, pr.at)
                q.still_until = q.end + pr.wait
                for (s0, s1), other in speech:
                    if q.start < s1 and s0 < q.end and q.audio is not None:
                        raise ScenarioError(f'probes[{pr.index}] (id {pr.id!r}, line {pr.line}): the question at '
                                            f'{pr.at:g} s ({q.start:.1f}-{q.end:.1f} s) overlaps {other.id!r} '
                                            f'({s0:.1f}-{s1:.1f} s); move it or use after:')
                placed.append(q)
                end = max(end, q.end + pr.wait)
        for pr in sc.probes:
            if pr.kind == 'proactive':
                end = max(end, self.anchor(placed, pr) + pr.window[1] + 2.0)
        placed.sort(key=lambda q: q.start)
        return placed, end

    @staticmethod
    def anchor(placed: list[Placed], pr: Probe) -> float:
        """Reference time of a proactive probe: end of its anchor item's speech (or the item's end); 0 without."""
        if not pr.after:
            return 0.0
        p = next(q for q in placed if q.item is not None and q.id == pr.after)
        return p.speech[1] if p.speech else p.end


# --- ground truth ---------------------------------------------------------------------------------------------------
def ground_truth(sc: Scenario, placed: list[Placed], duration: float, storage: str) -> dict[str, Any]:
    """The JSON ground truth of a rendered scenario (times in seconds since the scenario start)."""
    def rnd(x: float | None) -> float | None:
        return None if x is None else round(float(x), 3)

    camera = TOPICS['camera_compressed' if sc.camera.transport == 'compressed' else 'camera_raw']
    items = []
    for p in placed:
        if p.item is None:
            continue
        it = p.item
        items.append({'id': it.id, 'kind': it.kind, 'line': it.line, 'start': rnd(p.start), 'end': rnd(p.end),
                      'speech_start': rnd(p.speech[0]) if p.speech else None,
                      'speech_end': rnd(p.speech[1]) if p.speech else None,
                      'visible_until': rnd(p.still_until if p.still is not None else p.end),
                      'transcript': it.transcript, 'text': it.text if it.kind == 'text' else '',
                      'person': it.person, 'image': str(it.image) if it.image else '',
                      'source': str(it.path) if it.path else '', 'shows_face': it.image is not None
                      or it.kind == 'video'})
    by_id = {p.id: p for p in placed}
    probes = []
    for pr in sc.probes:
        row: dict[str, Any] = {'id': pr.id, 'kind': pr.kind, 'line': pr.line}
        if pr.kind == 'question':
            q = by_id[pr.id]
            row.update({'question': pr.ask or pr.typed, 'spoken': bool(pr.ask), 'start': rnd(q.start),
                        'end': rnd(q.end), 'speech_end': rnd(q.speech[1] if q.speech else q.start),
                        'expect': pr.expect, 'expect_any': pr.expect_any,
                        'expect_at_least': pr.expect_at_least, 'memory': pr.memory,
                        'timeout': pr.timeout, 'after': pr.after, 'person': pr.person})
        elif pr.kind == 'identity':
            row.update({'item': pr.item, 'same_as': pr.same_as, 'different_from': pr.different_from})
        else:
            ref = Renderer.anchor(placed, pr)
            row.update({'after': pr.after, 'anchor': rnd(ref), 'window': [rnd(ref + pr.window[0]),
                                                                          rnd(ref + pr.window[1])],
                        'due': rnd(ref + pr.due) if pr.due is not None else None,
                        'expect': pr.expect, 'expect_any': pr.expect_any})
        probes.append(row)
    return {'format': GT_FORMAT, 'scenario': sc.name, 'description': sc.description,
            'scenario_path': str(sc.path) if sc.path else '', 'start_ns': sc.start_ns, 'duration': rnd(duration),
            'storage': storage, 'sample_rate': SAMPLE_RATE,
            'topics': {'camera': camera[0], 'camera_type': camera[1], 'audio': TOPICS['audio'][0],
                       'text': TOPICS['text'][0]},
            'camera': dataclasses.asdict(sc.camera), 'audio': dataclasses.asdict(sc.audio),
            'items': items, 'probes': probes,
            'persons': {it['id']: it['person'] for it in items if it['person']},
            'attribution': sc.attribution}


# --- messages -------------------------------------------------------------------------------------------------------
def _stamp(msg: Any, ns: int) -> None:
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(ns), 1_000_000_000)


class _Encoder:
    """Builds and serializes the input messages."""

    def __init__(self, sc: Scenario) -> None:
        from lightomni_ros.msg import AudioStamped
        from sensor_msgs.msg import CompressedImage, Image
        from std_msgs.msg import String

        self.sc = sc
        self.classes = (AudioStamped, CompressedImage, Image, String)
        self._jpeg: dict[int, bytes] = {}

    def frame(self, t_ns: int, rgb: np.ndarray) -> bytes:
        from rclpy.serialization import serialize_message

        _, CompressedImage, Image, _ = self.classes
        cam = self.sc.camera
        if cam.transport == 'compressed':
            key = id(rgb)
            if key not in self._jpeg:   # stills repeat: encode each image once
                import cv2

                ok, buf = cv2.imencode('.jpg', cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
                                       [cv2.IMWRITE_JPEG_QUALITY, cam.jpeg_quality])
                self._jpeg[key] = buf.tobytes()
            msg = CompressedImage(format='jpeg')
            msg.data = self._jpeg[key]
        else:
            msg = Image(height=rgb.shape[0], width=rgb.shape[1], encoding='rgb8', is_bigendian=0,
                        step=rgb.shape[1] * 3)
            msg.data = np.ascontiguousarray(rgb).tobytes()
        msg.header.frame_id = cam.frame_id
        _stamp(msg, t_ns)
        return serialize_message(msg)

    def audio(self, t_ns: int, pcm: bytes) -> bytes:
        from rclpy.serialization import serialize_message

        AudioStamped = self.classes[0]
        msg = AudioStamped()
        msg.header.frame_id = self.sc.audio.frame_id
        _stamp(msg, t_ns)
        msg.info.channels, msg.info.sample_rate, msg.info.sample_format = 1, SAMPLE_RATE, 'S16LE'
        msg.info.bitrate, msg.info.coding_format = 0, 'wave'
        msg.data = array.array('B', pcm)
        return serialize_message(msg)

    def text(self, text: str) -> bytes:
        from rclpy.serialization import serialize_message

        return serialize_message(self.classes[3](data=text))


def _events(sc: Scenario, placed: list[Placed], duration: float, enc: _Encoder,
            ) -> tuple[int, Iterator[tuple[int, str, bytes]]]:
    """(count, time-ordered (t_ns, key, cdr) events) for the whole bag."""
    n_samples = int(round(duration * SAMPLE_RATE))
    mix = np.zeros(n_samples, np.float32)
    for p in placed:
        if p.audio is not None and len(p.audio):
            i0 = int(round(p.start * SAMPLE_RATE))
            seg = p.audio[:max(0, n_samples - i0)]
            mix[i0:i0 + len(seg)] += seg
    if sc.audio.noise_dbfs is not None:
        rng = np.random.default_rng(0)
        mix += rng.normal(0.0, 10 ** (sc.audio.noise_dbfs / 20), n_samples).astype(np.float32)
    pcm = (np.clip(mix, -1.0, 1.0) * 32767).astype('<i2').tobytes()
    chunk = SAMPLE_RATE * sc.audio.chunk_ms // 1000
    n_chunks = (n_samples + chunk - 1) // chunk
    t0 = sc.start_ns
    cam_key = 'camera_compressed' if sc.camera.transport == 'compressed' else 'camera_raw'

    def audio_events() -> Iterator[tuple[int, str, bytes]]:
        for k in range(n_chunks):
            t = t0 + k * chunk * 1_000_000_000 // SAMPLE_RATE
            yield t, 'audio', enc.audio(t, pcm[2 * k * chunk:2 * (k + 1) * chunk])

    frames: list[tuple[float, np.ndarray]] = []
    period = 1.0 / sc.camera.fps
    for p in placed:
        frames += p.frames
        if p.still is not None:
            n = int(max(0.0, p.still_until - p.start) / period)
            frames += [(p.start + i * period, p.still) for i in range(max(1, n))]
    frames.sort(key=lambda f: f[0])

    def frame_events() -> Iterator[tuple[int, str, bytes]]:
        for t, img in frames:
            if t < duration:
                ns = t0 + int(round(t * 1e9))
                yield ns, cam_key, enc.frame(ns, img)

    texts = sorted((p.start, p.text) for p in placed if p.text)

    def text_events() -> Iterator[tuple[int, str, bytes]]:
        for t, text in texts:
            yield t0 + int(round(t * 1e9)), 'text', enc.text(text)

    count = n_chunks + sum(1 for t, _ in frames if t < duration) + len(texts)
    return count, heapq.merge(audio_events(), frame_events(), text_events(), key=lambda e: e[0])


def write_bag(sc: Scenario, out: str | pathlib.Path, *, storage: str = 'mcap', force: bool = False,
              progress: bool = True) -> dict[str, Any]:
    """Render ``sc`` into the rosbag2 folder ``out``; return the ground truth (also written into the folder)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from tqdm import tqdm

    out = pathlib.Path(out)
    if storage not in ('mcap', 'sqlite3'):
        raise ValueError(f"storage must be 'mcap' or 'sqlite3', got {storage!r}")
    if out.exists():
        if not force:
            raise FileExistsError(f'{out} exists (use --force to overwrite)')
        shutil.rmtree(out)
    placed, duration = Renderer(sc).layout()
    enc = _Encoder(sc)
    count, events = _events(sc, placed, duration, enc)
    store = rostypes.typestore()
    sensor = rostypes.make_qos(False, 5)
    reliable = rostypes.make_qos(True, 50)
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    cam_key = 'camera_compressed' if sc.camera.transport == 'compressed' else 'camera_raw'
    written = {'audio': 0, cam_key: 0, 'text': 0}
    with Writer(out, version=9, storage_plugin=plugin) as writer:
        conns = {}
        for key in ('audio', cam_key, 'text'):
            topic, msgtype = TOPICS[key]
            conns[key] = writer.add_connection(topic, msgtype, typestore=store,
                                               offered_qos_profiles=[reliable if key == 'text' else sensor])
        for t_ns, key, data in tqdm(events, total=count, desc=f'bag {sc.name}', unit='msg',
                                    disable=None if progress else True, leave=False):
            writer.write(conns[key], t_ns, data)
            written[key] += 1
    gt = ground_truth(sc, placed, duration, storage)
    gt['message_counts'] = {TOPICS[k][0]: v for k, v in written.items()}
    (out / GROUNDTRUTH).write_text(json.dumps(gt, indent=2))
    log.info('wrote %s: %.1f s, %s', out, duration, ', '.join(f'{TOPICS[k][0]} x{v}' for k, v in written.items()))
    return gt


def load_ground_truth(bag: str | pathlib.Path) -> dict[str, Any] | None:
    """The ground truth written with a bag (folder, or a file inside it), None when the bag has none."""
    p = pathlib.Path(bag)
    for cand in (p / GROUNDTRUTH, p.parent / GROUNDTRUTH, p.with_suffix('.json')):
        if cand.is_file():
            data = json.loads(cand.read_text())
            if data.get('format') == GT_FORMAT:
                return data
    return None
