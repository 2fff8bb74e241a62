# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The perception node across processes: real clips streamed by another process -> Segments; bad input -> WARNs."""

from __future__ import annotations

import array
import os
import pathlib

import numpy as np
import pytest
import soundfile as sf
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from harness import REPO, process_alive, wait_for
from sensor_msgs.msg import Image
from std_msgs.msg import String

from lightomni_ros.core.perception.frames import decode_compressed
from lightomni_ros.eval.perception_media import SPEECH, load_image, media_dir, word_errors
from lightomni_ros.launch_runner.lifecycle import LifecycleClient
from lightomni_ros.msg import AudioStamped, FaceGallery, FaceIdentity, Segment
from lightomni_ros.nodes.common import LATCHED_QOS, RELIABLE_QOS

MEDIA = media_dir()
pytestmark = [
    pytest.mark.skipif(MEDIA is None, reason='development media not found: set LIGHTOMNI_MEDIA or put shared/media '
                                             'beside the checkout (see docs/CONTRIBUTING.md)'),
    pytest.mark.timeout(240),
]
# A namespace of our own: two test runs on one machine may share a ROS domain (ids are drawn from 1-100).
NS = f'/lightomni_{os.getpid()}'
NODE = f'{NS}/perception'


def params_file(tmp: pathlib.Path, **overrides: object) -> pathlib.Path:
    """config/perception.yaml with test-local state, audio folder and the given dotted overrides."""
    data = yaml.safe_load((REPO / 'config' / 'perception.yaml').read_text())
    params = data['/**']['ros__parameters']
    params['state_file'] = str(tmp / 'state.json')
    params['segments']['audio_dir'] = str(tmp / 'audio')
    params['gallery_timeout_s'] = 0.5
    for key, value in overrides.items():
        node = params
        *parents, leaf = key.split('.')
        for p in parents:
            node = node[p]
        node[leaf] = value
    path = tmp / 'perception.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


def start_node(spawn, domain_id: int, tmp: pathlib.Path, **overrides: object):
    """Spawn the node, configure and activate it."""
    child = spawn.python('-m', 'lightomni_ros.nodes.perception', '--ros-args', '-r', f'__ns:={NS}',
                         '--params-file', str(params_file(tmp, **overrides)), name='perception')
    with LifecycleClient(domain_id) as lc:
        ok, why = lc.change_state(NODE, 'configure', timeout=120)
        assert ok, f'configure failed: {why}\n{child.output[-3000:]}'
        ok, why = lc.change_state(NODE, 'activate', timeout=30)
        assert ok, f'activate failed: {why}\n{child.output[-3000:]}'
    return child


def feed(spawn, *args: str):
    """Stream clips from another process (real time); return the child."""
    return spawn.python('-m', 'lightomni_ros.eval.perception_media', 'feed', '--namespace', NS, *args, name='feeder')


def test_clip_stream_gives_segments_and_typed_text_closes_one(spawn, ros, domain_id: int) -> None:
    segs = ros.collect(Segment, f'{NS}/segments', RELIABLE_QOS)
    idents = ros.collect(FaceIdentity, f'{NS}/faces/identity', RELIABLE_QOS)
    diags = ros.collect(DiagnosticArray, '/diagnostics', 50)
    node = start_node(spawn, domain_id, spawn.tmp)
    clip = 'video/grid/lrwp9a.mpg'
    feeder = feed(spawn, clip, '--gap-s', '1.0')
    wait_for(lambda: feeder.proc.poll() is not None, 60, what='the feeder to finish')
    assert feeder.proc.returncode == 0, feeder.output
    speech = wait_for(lambda: [s for s in segs if s.trigger == Segment.TRIGGER_END_OF_SPEECH], 30,
                      what='an end-of-speech segment')
    assert len(speech) == 1, [(s.trigger, s.transcript) for s in segs]
    seg = speech[0]
    # its speech was heard ahead while the VAD waited out the silence after it, and that decode was the one used
    wait_for(lambda: counter(diags, 'asr_ahead_used') == 1, 10, what='the decode ahead counted as used')
    errors, n = word_errors(SPEECH[clip], seg.transcript)
    assert errors <= 1, seg.transcript
    dur = (seg.end.sec - seg.start.sec) + (seg.end.nanosec - seg.start.nanosec) * 1e-9
    assert seg.words and all(0 <= w.start <= w.end <= dur + 0.05 for w in seg.words)
    assert seg.language == 'en' and 1.0 < seg.speech_duration < 3.2
    assert (seg.speech_end.sec, seg.speech_end.nanosec) == (seg.end.sec, seg.end.nanosec)
    assert seg.keyframes and decode_compressed('jpeg', bytes(seg.keyframes[0].image.data)).shape[2] == 3
    assert len(seg.keyframes[0].feature) == 1280 and seg.keyframes[0].sharpness > 0
    # The talker got one identity, reported once to the consolidation node with embedding and avatar.
    ids = {f.face_id for f in seg.faces if f.face_id}
    assert len(ids) == 1, seg.faces
    news = [i for i in idents if i.op == FaceIdentity.OP_NEW]
    assert [i.face_id for i in news] == list(ids) and len(news[0].embedding) == 128 and len(news[0].avatar.data)
    wav = pathlib.Path(seg.audio_uri.removeprefix('file://'))
    info = sf.info(str(wav))
    assert info.samplerate == 16000 and info.channels == 1 and abs(info.duration - seg.speech_duration) < 0.05

    pub = ros.node.create_publisher(String, f'{NS}/text_input', RELIABLE_QOS)
    pub.publish(String(data='what did he just say?'))
    typed = wait_for(lambda: [s for s in segs if s.trigger == Segment.TRIGGER_TYPED_TEXT], 10, what='typed segment')
    assert typed[0].typed_text == 'what did he just say?' and typed[0].segment_id > seg.segment_id
    assert process_alive(node.proc.pid)


def counter(diags: list, key: str) -> float:
    """The latest value of a perception diagnostics counter (0 before it is reported)."""
    for arr in reversed(diags):
        for st in arr.status:
            for kv in st.values:
                if st.name.endswith('perception') and kv.key == key:
                    return float(kv.value)
    return 0.0


def _audio(fmt: str, ch: int, rate: int, data: bytes, coding: str = 'wave', t: float = 0.0) -> AudioStamped:
    m = AudioStamped()
    m.header.stamp.sec = int(1000 + t)
    m.header.stamp.nanosec = int(round((t % 1) * 1e9)) % 1_000_000_000
    m.info.sample_format, m.info.channels, m.info.sample_rate, m.info.coding_format = fmt, ch, rate, coding
    m.data = array.array('B', data)
    return m


def _image(enc: str, w: int, h: int, step: int, data: bytes, t: float) -> Image:
    m = Image(encoding=enc, width=w, height=h, step=step)
    m.header.stamp.sec = int(2000 + 10 * t)      # ten seconds apart: every frame is due for sampling
    m.data = data
    return m


def test_bad_input_is_rejected_with_named_warnings_and_the_node_keeps_running(spawn, ros, domain_id: int) -> None:
    diags = ros.collect(DiagnosticArray, '/diagnostics', 50)
    segs = ros.collect(Segment, f'{NS}/segments', RELIABLE_QOS)
    # an empty time-out segment is published only on request: this test reads the time-out rule from one
    node = start_node(spawn, domain_id, spawn.tmp, warn_hold_s=60.0,
                      **{'segments.timeout_s': 3.0, 'segments.publish_empty': True})
    pa = ros.node.create_publisher(AudioStamped, f'{NS}/audio', 50)
    pi = ros.node.create_publisher(Image, f'{NS}/camera/image_raw', 10)
    wait_for(lambda: pa.get_subscription_count() and pi.get_subscription_count(), 10, what='node subscriptions')
    good = np.zeros(320, '<i2').tobytes()
    bad_audio = {
        'audio_coding': _audio('S16LE', 1, 16000, good, coding='mp3'),
        'audio_format': _audio('U8', 1, 16000, good),
        'audio_rate': _audio('S16LE', 1, 5, good),
        'audio_truncated': _audio('S16LE', 2, 16000, good[:-2]),
        'audio_empty': _audio('S16LE', 1, 16000, b''),
        'audio_nan': _audio('F32LE', 1, 16000, np.full(160, np.nan, '<f4').tobytes()),
    }
    bad_images = {
        'image_encoding': ('yuv422_yuy2', 4, 4, 8, b'\x00' * 32),
        'image_step': ('rgb8', 4, 4, 4, b'\x00' * 16),
        'image_data_size': ('rgb8', 64, 48, 192, b'\x00' * 1000),
        'image_empty': ('rgb8', 64, 48, 192, b''),
    }
    stamps = iter(range(1, 10_000))   # a frame is sampled once per stamp: a resent frame gets a new one

    def warned() -> set[str]:
        keys = set()
        for arr in diags:
            for st in arr.status:
                if st.name.endswith('perception') and st.level == b'\x01':
                    keys |= {k for k in list(bad_audio) + list(bad_images) if f'{k}:' in st.message}
        return keys

    def resend_unwarned() -> bool:
        # best-effort inputs: until the node has warned about each one, send it again (once per round, so the
        # bounded frame queue is not flooded)
        got = warned()
        for key in set(bad_audio) - got:
            pa.publish(bad_audio[key])
        for key in sorted(set(bad_images) - got):
            pi.publish(_image(*bad_images[key], next(stamps)))
        return got == set(bad_audio) | set(bad_images)

    wait_for(resend_unwarned, 60, interval=1.0, what=f'WARNs for every bad input (got {sorted(warned())})')

    def counted() -> tuple | None:
        # the newest perception status that carries the counter (the last array on /diagnostics may be another's)
        for arr in reversed(list(diags)):
            for st in arr.status:
                values = {kv.key: kv.value for kv in st.values}
                if st.name.endswith('perception') and 'rejected.audio_rate' in values:
                    return st, values
        return None

    last, values = wait_for(counted, 30, what='a perception status with the rejected-audio counter')
    assert float(values['rejected.audio_rate']) >= 1 and 'absurd sample_rate 5 Hz' in last.message
    assert process_alive(node.proc.pid)
    # Still working: good audio and a typed instruction go through.
    for k in range(50):
        pa.publish(_audio('S16LE', 1, 16000, good, t=10 + k * 0.02))
    pub = ros.node.create_publisher(String, f'{NS}/text_input', RELIABLE_QOS)
    pub.publish(String(data='still there?'))
    typed = wait_for(lambda: [s for s in segs if s.typed_text == 'still there?'], 10, what='a segment after bad input')
    # Nobody speaks: the next segment closes on the time-out, 3 s after the typed one.
    timeout = wait_for(lambda: [s for s in segs if s.trigger == Segment.TRIGGER_TIMEOUT
                                and s.segment_id > typed[0].segment_id], 15, what='a time-out segment')[0]
    assert abs((timeout.end.sec - timeout.start.sec) + (timeout.end.nanosec - timeout.start.nanosec) * 1e-9
               - 3.0) < 0.3 and not timeout.transcript
    n = len(diags)
    wait_for(lambda: len(diags) > n + 1, 5, what='diagnostics to keep coming')


def test_gallery_identity_is_matched_then_forgotten(spawn, ros, domain_id: int) -> None:
    from lightomni_ros.core.perception.faces import FacesConfig, make_backend

    import cv2

    photo = 'faces/public_figures/barack_obama_1.jpg'
    img = load_image(MEDIA / photo)
    f = 640 / max(img.shape[:2])
    img = cv2.resize(img, (round(img.shape[1] * f), round(img.shape[0] * f)), interpolation=cv2.INTER_AREA)
    emb = make_backend(FacesConfig()).detect(load_image(MEDIA / 'faces/public_figures/barack_obama_2.jpg'))[0].embedding
    gallery = ros.node.create_publisher(FaceGallery, f'{NS}/faces/gallery', LATCHED_QOS)
    ident = FaceIdentity(op=FaceIdentity.OP_UPDATE, face_id='<face_7>', embedding=emb.tolist(),
                         embedding_backend='dlib', observations=20)
    gallery.publish(FaceGallery(version=1, identities=[ident]))
    diags = ros.collect(DiagnosticArray, '/diagnostics', 50)
    segs = ros.collect(Segment, f'{NS}/segments', RELIABLE_QOS)
    idents = ros.collect(FaceIdentity, f'{NS}/faces/identity', RELIABLE_QOS)
    start_node(spawn, domain_id, spawn.tmp)
    clip = 'speech/ljspeech/LJ001-0002.wav'
    feeder = feed(spawn, clip, '--still', photo, '--gap-s', '2.0', '--fps', '10')
    seg = wait_for(lambda: [s for s in segs if s.trigger == Segment.TRIGGER_END_OF_SPEECH], 40,
                   what='an end-of-speech segment')[0]
    assert word_errors(SPEECH[clip], seg.transcript)[0] == 0, seg.transcript
    assert {f.face_id for f in seg.faces} == {'<face_7>'}, (seg.faces, spawn.children[0].output[-3000:])
    wait_for(lambda: feeder.proc.poll() is not None, 30, what='the feeder to finish')
    assert not [i for i in idents if i.op == FaceIdentity.OP_NEW]
    # The consolidation node forgets the person: perception drops it; the face seen again becomes a new id,
    # numbered after every id it has seen (never reused).
    forgotten = ros.node.create_publisher(FaceIdentity, f'{NS}/faces/forgotten', RELIABLE_QOS)
    wait_for(lambda: forgotten.get_subscription_count(), 10, what='faces/forgotten subscriber')
    forgotten.publish(FaceIdentity(op=FaceIdentity.OP_FORGET, face_id='<face_7>'))
    wait_for(lambda: counter(diags, 'identities_forgotten') >= 1, 20, what='perception to drop <face_7>')
    feeder = feed(spawn, clip, '--still', photo, '--gap-s', '2.0', '--fps', '10')
    new = wait_for(lambda: [i for i in idents if i.op == FaceIdentity.OP_NEW], 40, what='a new identity')
    assert new[0].face_id == '<face_8>'
    later = wait_for(lambda: [s for s in segs if s.trigger == Segment.TRIGGER_END_OF_SPEECH][1:], 30,
                     what='a second end-of-speech segment')
    assert '<face_7>' not in {f.face_id for f in later[0].faces}


def test_compressed_camera_transport(spawn, ros, domain_id: int) -> None:
    from sensor_msgs.msg import CompressedImage

    from lightomni_ros.core.perception.frames import encode_jpeg
    from lightomni_ros.eval.perception_media import load_video

    diags = ros.collect(DiagnosticArray, '/diagnostics', 50)
    segs = ros.collect(Segment, f'{NS}/segments', RELIABLE_QOS)
    start_node(spawn, domain_id, spawn.tmp, **{'frames.image_transport': 'compressed'})
    pub = ros.node.create_publisher(CompressedImage, f'{NS}/camera/image_raw/compressed', 10)
    wait_for(lambda: pub.get_subscription_count(), 10, what='compressed camera subscription')
    frames, _ = load_video(MEDIA / 'video/grid/bbaf2n.mpg')
    jpeg = encode_jpeg(frames[10], 90)
    stamps = iter(range(3000, 100_000, 10))   # a frame is sampled once per stamp: a resent frame gets a new one

    def send(data: bytes) -> None:
        m = CompressedImage(format='jpeg', data=data)
        m.header.stamp.sec = next(stamps)
        m.header.frame_id = 'head_camera'
        pub.publish(m)

    # a truncated JPEG (sent again until the node warns: the camera is best effort), then a good one
    wait_for(lambda: send(jpeg[:len(jpeg) // 10]) or any('image_decode:' in st.message for a in diags
                                                         for st in a.status), 20, interval=1.0,
             what='a WARN for the truncated JPEG')
    # the good frame once (a resent copy ten seconds later would be a second keyframe); the camera is matched by now
    send(jpeg)
    wait_for(lambda: counter(diags, 'keyframes_kept') >= 1, 30, what='the good frame kept as a keyframe')
    text = ros.node.create_publisher(String, f'{NS}/text_input', RELIABLE_QOS)
    wait_for(lambda: text.get_subscription_count(), 10, what='text subscription')
    text.publish(String(data='what do you see?'))
    seg = wait_for(lambda: [s for s in segs if s.typed_text], 10, what='typed segment')[0]
    assert len(seg.keyframes) == 1 and seg.keyframes[0].image.header.frame_id == 'head_camera'
    assert seg.header.frame_id == 'head_camera'


def test_invalid_parameter_fails_configure_with_its_name(spawn, domain_id: int) -> None:
    child = spawn.python('-m', 'lightomni_ros.nodes.perception', '--ros-args', '-r', f'__ns:={NS}',
                         '--params-file', str(params_file(spawn.tmp, **{'vad.threshold': 2.0})), name='perception')
    with LifecycleClient(domain_id) as lc:
        ok, _ = lc.change_state(NODE, 'configure', timeout=60)
        assert not ok
        assert lc.get_state(NODE) == 'unconfigured'
    assert 'threshold: 2.0 is above the maximum' in child.output
    assert process_alive(child.proc.pid)


def test_segments_are_published_again_until_a_reflex_node_acknowledges_them(spawn, ros, domain_id: int) -> None:
    """No reflex node: published once. A reflex node that does not acknowledge: again. Acknowledged: no more.

    The node's own 1 Hz diagnostics are the clock: "not again" means not over several of its re-send rounds.
    """
    from lightomni_ros.msg import Ack
    from lightomni_ros.nodes.messages import ack_msg, from_time

    start_node(spawn, domain_id, spawn.tmp, segment_resend_s=0.5, **{'faces.enabled': False})
    segments = ros.collect(Segment, f'{NS}/segments', RELIABLE_QOS)
    diags = ros.collect(DiagnosticArray, '/diagnostics', 50)
    pub = ros.node.create_publisher(String, f'{NS}/text_input', RELIABLE_QOS)
    wait_for(lambda: pub.get_subscription_count() > 0, 20, what='perception subscribed to text_input')
    pub.publish(String(data='remember that the kettle is broken'))
    wait_for(lambda: segments, 20, what='the typed segment')
    seen = len(diags)
    wait_for(lambda: len(diags) >= seen + 4, 30, what='four more diagnostics rounds')
    # nobody publishes on segments/ack: nothing to repeat for, though the segment waits unacknowledged
    assert len(segments) == 1 and counter(diags, 'segments_resent') == 0
    acks = ros.node.create_publisher(Ack, f'{NS}/segments/ack', RELIABLE_QOS)
    wait_for(lambda: len(segments) >= 2, 20, what='the segment published again for the new reflex node')
    assert {(s.segment_id, s.typed_text) for s in segments} == {(segments[0].segment_id, segments[0].typed_text)}
    first = segments[0]
    acks.publish(ack_msg(first.segment_id, from_time(first.start), Ack.STORED, 'stored', first.header.stamp))
    wait_for(lambda: counter(diags, 'segments_unacknowledged') == 0 and len(diags) and
             any(kv.key == 'segments_unacknowledged' for st in diags[-1].status for kv in st.values), 30,
             what='the node to report nothing unacknowledged')
    n, seen = len(segments), len(diags)
    wait_for(lambda: len(diags) >= seen + 3, 30, what='three more diagnostics rounds')
    assert len(segments) == n                      # acknowledged: not sent again
