# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Development media for perception (../shared/media): loading, ground truth, word error rate, and a stream feeder.

``python -m lightomni_ros.eval.perception_media feed ...`` publishes clips as a robot would deliver them (audio in
20 ms AudioStamped chunks at the file's own rate and channel count, camera frames at a fixed rate) from its own
process, in real time; tests and ``lightomni bench perception`` use it.
"""

from __future__ import annotations

import argparse
import array
import json
import os
import pathlib
import re
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]

#: clip (relative to the media folder) -> reference transcript (from MANIFEST.md)
SPEECH = {
    'speech/jfk.flac': 'And so my fellow Americans, ask not what your country can do for you, ask what you can do '
                       'for your country.',
    'speech/ljspeech/LJ001-0001.wav': 'Printing, in the only sense with which we are at present concerned, differs '
                                      'from most if not from all the arts and crafts represented in the Exhibition',
    'speech/ljspeech/LJ001-0002.wav': 'in being comparatively modern.',
    'speech/ljspeech/LJ001-0004.wav': 'produced the block books, which were the immediate predecessors of the true '
                                      'printed book,',
    'speech/ljspeech/LJ001-0008.wav': 'has never been surpassed.',
    'video/grid/bbaf2n.mpg': 'bin blue at f two now',
    'video/grid/brbk7n.mpg': 'bin red by k seven now',
    'video/grid/lbax4n.mpg': 'lay blue at x four now',
    'video/grid/lbbc2a.mpg': 'lay blue by c two again',
    'video/grid/lrwp9a.mpg': 'lay red with p nine again',
}
GRID = [k for k in SPEECH if k.startswith('video/grid/')]
FACES = {
    'faces/public_figures/barack_obama_1.jpg': ['obama'],
    'faces/public_figures/barack_obama_2.jpg': ['obama'],
    'faces/public_figures/barack_obama_3.jpg': ['obama'],
    'faces/public_figures/barack_obama_4.jpg': ['obama'],
    'faces/public_figures/joe_biden_1.jpg': ['biden'],
    'faces/public_figures/joe_biden_2.jpg': ['biden'],
    'faces/public_figures/group_obama_and_biden.jpg': ['obama', 'biden'],
}


def media_dir() -> pathlib.Path | None:
    """The media folder: $LIGHTOMNI_MEDIA, else <repo>/../shared/media; None when absent."""
    path = pathlib.Path(os.environ.get('LIGHTOMNI_MEDIA') or REPO.parent / 'shared' / 'media')
    return path if (path / 'MANIFEST.md').is_file() else None


def load_audio(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """Audio of a .wav/.flac (soundfile) or a video (PyAV) as float32 (samples, channels) and its rate."""
    path = str(path)
    if path.endswith(('.wav', '.flac', '.ogg')):
        import soundfile as sf

        x, sr = sf.read(path, dtype='float32', always_2d=True)
        return x, int(sr)
    import av

    with av.open(path) as c:
        stream = c.streams.audio[0]
        chunks = []
        for frame in c.decode(stream):
            a = frame.to_ndarray()
            if a.dtype == np.int16:
                a = a.astype(np.float32) / 32768.0
            elif a.dtype == np.int32:
                a = a.astype(np.float32) / 2147483648.0
            if frame.format.is_planar:
                a = a.reshape(len(frame.layout.channels), -1).T
            else:
                a = a.reshape(-1, len(frame.layout.channels))
            chunks.append(a.astype(np.float32))
        return np.concatenate(chunks), int(stream.rate)


def load_video(path: str | os.PathLike) -> tuple[list[np.ndarray], float]:
    """RGB frames of a video (PyAV) and its frame rate."""
    import av

    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        fps = float(stream.average_rate or 25)
        return [f.to_ndarray(format='rgb24') for f in c.decode(stream)], fps


def load_image(path: str | os.PathLike) -> np.ndarray:
    """An RGB image file."""
    import cv2

    return cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)


_DIGITS = 'zero one two three four five six seven eight nine'.split()


def normalize(text: str) -> list[str]:
    """Lower-case words without punctuation; digits spelled out and split from letters ("X4" -> "x four")."""
    text = text.lower().replace('-', ' ')
    text = re.sub(r'(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])', ' ', text)
    text = re.sub(r'\d', lambda m: f' {_DIGITS[int(m.group(0))]} ', text)
    text = re.sub(r"[^a-z' ]+", ' ', text)
    return text.split()


def word_errors(ref: str, hyp: str) -> tuple[int, int]:
    """(edit distance in words, reference length) after :func:`normalize`."""
    r, h = normalize(ref), normalize(hyp)
    d = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, d[0] = d[0], i
        for j, hw in enumerate(h, 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (rw != hw))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def wer(pairs: list[tuple[str, str]]) -> float:
    """Corpus word error rate of (reference, hypothesis) pairs."""
    e = n = 0
    for ref, hyp in pairs:
        a, b = word_errors(ref, hyp)
        e, n = e + a, n + b
    return e / max(n, 1)


# --- the feeder process --------------------------------------------------------------------------------------------
def _pcm(x: np.ndarray, fmt: str) -> bytes:
    if fmt == 'F32LE':
        return np.ascontiguousarray(x, '<f4').tobytes()
    return (np.clip(x, -1, 1) * 32767).astype('<i2').tobytes()


def _feed_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog='perception_media feed')
    p.add_argument('clips', nargs='+', help='media-relative paths (audio files or GRID videos) or audio file paths')
    p.add_argument('--gap-s', type=float, default=1.5, help='silence before and after each clip')
    p.add_argument('--chunk-ms', type=float, default=20.0)
    p.add_argument('--fps', type=float, default=25.0, help='camera rate (0: no camera)')
    p.add_argument('--size', default='', help='camera WxH (default: the video size; 640x480 for stills)')
    p.add_argument('--still', default='', help='media-relative image shown while an audio-only clip plays')
    p.add_argument('--format', default='S16LE', choices=['S16LE', 'F32LE'])
    p.add_argument('--namespace', default='/lightomni')
    p.add_argument('--min-duration', type=float, default=0.0, help='loop the clips until this many seconds')
    p.add_argument('--wait-subscribers', type=float, default=30.0)
    return p.parse_args(argv)


class Feeder:
    """Microphone and camera publishers on separate DDS participants, on a real-time stream clock."""

    def __init__(self, args: argparse.Namespace, still: np.ndarray) -> None:
        import rclpy
        from rclpy.context import Context
        from sensor_msgs.msg import Image

        from lightomni_ros.env import prepare
        from lightomni_ros.msg import AudioStamped
        from lightomni_ros.nodes.common import SENSOR_QOS

        prepare()     # own ament prefix and DDS profile, as every process of the graph
        self.args, self.still = args, still
        # Microphone and camera from separate DDS participants, as separate drivers on a robot would publish them
        # (one participant would also share one transport queue between 1 MB frames and small audio chunks).
        self.contexts, self.nodes = [], []
        for name in ('perception_feeder_audio', 'perception_feeder_camera'):
            ctx = Context()
            rclpy.init(context=ctx)
            self.contexts.append(ctx)
            self.nodes.append(rclpy.create_node(name, namespace=args.namespace, context=ctx))
        self.pub_a = self.nodes[0].create_publisher(AudioStamped, 'audio', SENSOR_QOS)
        self.pub_v = self.nodes[1].create_publisher(Image, 'camera/image_raw', SENSOR_QOS)
        self.size = tuple(int(v) for v in args.size.split('x')) if args.size else None
        self.clock = 0.0           # seconds since start (stream time)
        self.total = {'audio_chunks': 0, 'frames': 0}

    def wait_and_start(self) -> None:
        """Wait for subscribers, then start the stream clock."""
        deadline = time.monotonic() + self.args.wait_subscribers
        while (self.pub_a.get_subscription_count() == 0 or self.pub_v.get_subscription_count() == 0) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        self.t_wall0, self.t_stamp0 = time.monotonic(), time.time()

    def _stamp(self, header, t: float, frame_id: str) -> None:
        st = self.t_stamp0 + t
        header.stamp.sec, header.stamp.nanosec = int(st), int((st % 1) * 1e9)
        header.frame_id = frame_id

    def _audio(self, x: np.ndarray, sr: int, t: float) -> None:
        from lightomni_ros.msg import AudioStamped

        msg = AudioStamped()
        self._stamp(msg.header, t, 'mic')
        msg.info.channels, msg.info.sample_rate = x.shape[1], sr
        msg.info.sample_format, msg.info.coding_format = self.args.format, 'wave'
        msg.data = array.array('B', _pcm(x, self.args.format))
        self.pub_a.publish(msg)
        self.total['audio_chunks'] += 1

    def _frame(self, img: np.ndarray, t: float) -> None:
        import cv2
        from sensor_msgs.msg import Image

        if self.size and img.shape[1::-1] != self.size:
            img = cv2.resize(img, self.size, interpolation=cv2.INTER_LINEAR)
        msg = Image(height=img.shape[0], width=img.shape[1], encoding='rgb8', step=img.shape[1] * 3)
        self._stamp(msg.header, t, 'camera')
        msg.data = img.tobytes()
        self.pub_v.publish(msg)
        self.total['frames'] += 1

    def publish_until(self, t_end: float, audio: np.ndarray | None, sr: int, frames: list[np.ndarray] | None,
                      fps_src: float) -> None:
        """Publish audio chunks and camera frames for stream seconds [clock, t_end) in real time."""
        t_start, fps = self.clock, self.args.fps
        chunk = max(1, int(sr * self.args.chunk_ms / 1000))
        channels = audio.shape[1] if audio is not None else 1
        n_audio, t_audio = 0, t_start
        next_frame = t_start if fps > 0 else float('inf')
        while t_audio < t_end or next_frame < t_end:
            delay = self.t_wall0 + min(t_audio, next_frame) - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if t_audio <= next_frame:
                x = audio[n_audio:n_audio + chunk] if audio is not None and n_audio < len(audio) else \
                    np.zeros((chunk, channels), np.float32)
                self._audio(x, sr, t_audio)
                n_audio += len(x)
                t_audio = t_start + n_audio / sr
            else:
                k = min(len(frames) - 1, int((next_frame - t_start) * fps_src)) if frames else -1
                self._frame(frames[k % len(frames)] if frames else self.still, next_frame)
                next_frame += 1.0 / fps
        self.clock = t_end

    def close(self) -> None:
        """Destroy the publishers' nodes and contexts."""
        import rclpy

        for node, ctx in zip(self.nodes, self.contexts):
            node.destroy_node()
            rclpy.try_shutdown(context=ctx)


def _still(media: pathlib.Path, rel: str) -> np.ndarray:
    import cv2

    still = load_image(media / rel) if rel else np.full((480, 640, 3), 90, np.uint8)
    if max(still.shape[:2]) > 640:       # a camera-sized view of the photo (aspect ratio kept)
        f = 640 / max(still.shape[:2])
        still = cv2.resize(still, (round(still.shape[1] * f), round(still.shape[0] * f)), interpolation=cv2.INTER_AREA)
    return still


def feed(argv: list[str]) -> int:
    """Publish clips (audio + camera) in real time; print one JSON line per clip with its stamps."""
    args = _feed_args(argv)
    media = media_dir()
    if media is None:
        print('no media folder', file=sys.stderr)
        return 2
    fd = Feeder(args, _still(media, args.still))
    fd.wait_and_start()
    print(json.dumps({'stamp0': fd.t_stamp0, 'chunk_ms': args.chunk_ms}), flush=True)
    try:
        while True:
            for rel in args.clips:
                audio, sr = load_audio(media / rel)
                frames, fps_src = (load_video(media / rel) if rel.endswith(('.mpg', '.mp4')) else (None, 25.0))
                fd.publish_until(fd.clock + args.gap_s, audio[:0], sr, frames[:1] if frames else None, fps_src)
                t0, dur = fd.clock, len(audio) / sr
                fd.publish_until(t0 + dur, audio, sr, frames, fps_src)
                print(json.dumps({'clip': rel, 'start': fd.t_stamp0 + t0, 'end': fd.t_stamp0 + t0 + dur}), flush=True)
                fd.publish_until(fd.clock + args.gap_s, audio[:0], sr, frames[-1:] if frames else None, fps_src)
            if fd.clock >= args.min_duration:
                break
        print(json.dumps({'done': True, **fd.total, 'seconds': fd.clock}), flush=True)
        time.sleep(1.0)     # keep the publishers alive a moment so the last best-effort chunks are delivered
    except KeyboardInterrupt:
        pass
    finally:
        fd.close()
    return 0


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'feed':
        sys.exit(feed(sys.argv[2:]))
    print('usage: python -m lightomni_ros.eval.perception_media feed CLIP...', file=sys.stderr)
    sys.exit(2)
