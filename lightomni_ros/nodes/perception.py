# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The perception lifecycle node: camera, microphone and typed text -> Segment messages (paper Algorithm 1).

Subscription callbacks only validate cheap fields and queue work. Three worker threads do the rest:
audio (resampling, VAD, segment boundaries; its queue holds minutes, so audio is never dropped), frames (keyframe
filters, image features, faces; a bounded queue whose overflow drops frames, counted), and output (ASR of each speech
span, segment audio, publication in segment order). Models load in ``on_configure``; the face gallery comes from the
``list_profiles`` service when it answers and stays current from the latched ``faces/gallery`` topic.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.qos import HistoryPolicy, QoSProfile
from sensor_msgs.msg import CompressedImage, Image, RegionOfInterest
from std_msgs.msg import String

from lightomni_ros.msg import (AudioStamped, FaceGallery, FaceIdentity, FaceObservation, Keyframe, Segment,
                               WordTiming)
from lightomni_ros.srv import ListProfiles

from ..core.config import ConfigError
from ..core.models import ModelResolver, ModelsConfig, cache_dir
from ..core.perception.asr import AsrConfig, Transcriber
from ..core.perception.audio import AudioConfig, AudioFormatError
from ..core.perception.faces import FacePipeline, FacesConfig, make_backend
from ..core.perception.frames import (FramesConfig, ImageEncoder, ImageFormatError, KeyframeFilter, KeyframeSampler,
                                      decode_compressed, decode_image, encode_jpeg)
from ..core.perception.pipeline import AudioPath, PerceptionConfig
from ..core.perception.segmenter import (FaceSeen, KeyframeData, PerceptionState, SegmentData, Segmenter,
                                         SegmenterConfig, write_wav)
from ..core.perception.vad import SileroVad, StreamingVad, VadConfig
from ..core.timing import StageTimer
from .common import LATCHED_QOS, RELIABLE_QOS, SENSOR_QOS, Diagnostics, declare_config, from_time, run_node, to_time

CONFIG_SECTIONS = {
    '': PerceptionConfig,
    'models.': ModelsConfig,
    'audio.': AudioConfig,
    'vad.': VadConfig,
    'asr.': AsrConfig,
    'frames.': FramesConfig,
    'faces.': FacesConfig,
    'segments.': SegmenterConfig,
}
_STOP = object()
STREAM_JUMP_BACK_S = 10.0   # sensor stamps this far behind sensor time mean a new time base (a bag restarted)
#: SensorDataQoS (best effort, volatile) with a deeper history for audio: at 50 chunks/s the default depth of 5 is
#: 100 ms, shorter than a GIL-holding model call on another thread; audio must never be dropped.
AUDIO_QOS = QoSProfile(depth=200, reliability=SENSOR_QOS.reliability, durability=SENSOR_QOS.durability,
                       history=HistoryPolicy.KEEP_LAST)


def _bytes(data: Any) -> bytes:
    return data.tobytes() if hasattr(data, 'tobytes') else bytes(data)


class PerceptionNode(LifecycleNode):
    """Lifecycle node ``perception``: VAD, ASR, faces and keyframes -> segments."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('perception', **kwargs)
        self.cfg: dict[str, Any] = {}
        try:
            self.cfg = {p: declare_config(self, cls, p) for p, cls in CONFIG_SECTIONS.items()}
        except ConfigError as e:
            # Parameters are declared before they are checked; on_configure reports the error and fails.
            self.get_logger().error(f'invalid parameter: {e}')
        self.timer = StageTimer()
        self._io: list = []
        self._workers: list[threading.Thread] = []
        self._active = False
        self._clock_lock = threading.Lock()
        self._first_frame_stamp: float | None = None     # camera discovery delay, for the benchmark's rates
        self._stream_ref: tuple[float, float] | None = None     # (latest sensor stamp, monotonic at arrival)
        self.diag: Diagnostics | None = None
        self._pending_counts: dict[str, float] = {}
        self._cb_sensors = ReentrantCallbackGroup()
        self._cb_gallery = MutuallyExclusiveCallbackGroup()
        self._cb_client = ReentrantCallbackGroup()
        self._camera_frame = 'camera'

    # --- lifecycle -------------------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read parameters, load models, restore counters and the face gallery, start workers."""
        try:
            self.cfg = {p: declare_config(self, cls, p) for p, cls in CONFIG_SECTIONS.items()}
        except ConfigError as e:
            self.get_logger().error(f'invalid parameter: {e}')
            return TransitionCallbackReturn.FAILURE
        c = self.cfg
        resolver = ModelResolver(c['models.'].models_dir or None)
        try:
            t0 = time.perf_counter()
            self.vad_model = SileroVad(resolver.resolve('vad').path, c['vad.'].threads)
            self.asr = Transcriber(c['asr.'], resolver)
            self.faces = None
            state_path = c[''].state_file or str(cache_dir() / 'perception_state.json')
            self.state = PerceptionState(state_path)
            if c['faces.'].enabled:
                self.faces = FacePipeline(make_backend(c['faces.'], resolver), c['faces.'], self.state.next_face_index)
            self.encoder = ImageEncoder(resolver, c['frames.'].threads) if c['frames.'].encoder else None
            self.get_logger().info(f'models loaded in {time.perf_counter() - t0:.1f} s: ASR {self.asr.name}, '
                                   f'faces {self.faces.backend.name if self.faces else "off"}')
        except Exception as e:  # noqa: BLE001 - any model failure must fail the transition, not kill the node
            self.get_logger().error(f'model loading failed: {type(e).__name__}: {e}')
            return TransitionCallbackReturn.FAILURE
        self.audio_path = AudioPath(c['audio.'], StreamingVad(self.vad_model, c['vad.']))
        self.segmenter = Segmenter(c['segments.'], self.state.next_segment_id, c['frames.'].max_keyframes)
        self.sampler = KeyframeSampler(c['frames.'].keyframe_hz)
        self.kf_filter = KeyframeFilter(c['frames.'], self.encoder)
        self.audio_dir = c['segments.'].audio_dir or str(cache_dir() / 'segments')
        # ~50 chunks/s is the finest common chunking (20 ms): size the queue so `audio_queue_s` of it fits.
        self.audio_q: queue.Queue = queue.Queue(maxsize=int(c[''].audio_queue_s * 50))
        self.frame_q: queue.Queue = queue.Queue(maxsize=c[''].frame_queue)
        self.out_q: queue.Queue = queue.Queue()
        self.counts: dict[str, float] = {}
        self._gallery_subs = [
            self.create_subscription(FaceGallery, 'faces/gallery', self._on_gallery, LATCHED_QOS,
                                     callback_group=self._cb_gallery),
            self.create_subscription(FaceIdentity, 'faces/forgotten', self._on_forgotten, RELIABLE_QOS,
                                     callback_group=self._cb_gallery),
        ]
        self._load_profiles(c[''].gallery_timeout_s)
        self._running = True
        self._workers = [threading.Thread(target=f, name=n, daemon=True) for f, n in (
            (self._audio_worker, 'perception-audio'), (self._frame_worker, 'perception-frames'),
            (self._output_worker, 'perception-output'))]
        for w in self._workers:
            w.start()
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Create publishers, sensor subscriptions, diagnostics and the time-out tick."""
        c = self.cfg
        self.pub_segments = self.create_publisher(Segment, 'segments', RELIABLE_QOS)
        self.pub_identity = self.create_publisher(FaceIdentity, 'faces/identity', RELIABLE_QOS)
        self.pub_detections = (self.create_publisher(FaceObservation, 'faces/detections', RELIABLE_QOS)
                               if c[''].publish_detections else None)
        if c['frames.'].image_transport == 'compressed':
            cam = self.create_subscription(CompressedImage, 'camera/image_raw/compressed', self._on_compressed,
                                           SENSOR_QOS, callback_group=self._cb_sensors)
        else:
            cam = self.create_subscription(Image, 'camera/image_raw', self._on_image, SENSOR_QOS,
                                           callback_group=self._cb_sensors)
        self._io = [
            cam,
            self.create_subscription(AudioStamped, 'audio', self._on_audio, AUDIO_QOS,
                                     callback_group=self._cb_sensors),
            self.create_subscription(String, 'text_input', self._on_text, RELIABLE_QOS,
                                     callback_group=self._cb_sensors),
        ]
        self.diag = Diagnostics(self, 'perception', self.timer, period_s=c[''].diagnostics_period_s,
                                warn_ms={'vad': 30.0, 'asr': 3000.0, 'faces': 800.0, 'frames': 300.0},
                                error_ms={'asr': 10000.0}, warn_hold_s=c[''].warn_hold_s)
        self.diag.set('asr_model', self.asr.name)
        self.diag.set('face_backend', self.faces.backend.name if self.faces else 'off')
        self.diag.set('image_encoder', self.encoder.path.name if self.encoder else 'off')
        self._diag_tmr = self.create_timer(c[''].diagnostics_period_s, self._refresh_diag)
        self._tick = self.create_timer(0.25, self._on_tick)
        self._active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop inputs and outputs (workers stay, models stay loaded)."""
        self._active = False
        for sub in self._io:
            self.destroy_subscription(sub)
        self._io = []
        for tmr in (self._tick, self._diag_tmr):
            self.destroy_timer(tmr)
        if self.diag is not None:
            self.diag.destroy()
            self.diag = None
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop workers and release models."""
        self._stop_workers()
        for sub in getattr(self, '_gallery_subs', []):
            self.destroy_subscription(sub)
        self._gallery_subs = []
        self.vad_model = self.asr = self.faces = self.encoder = None
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop workers."""
        self._active = False
        self._stop_workers()
        return TransitionCallbackReturn.SUCCESS

    def _stop_workers(self) -> None:
        if not self._workers:
            return
        self._running = False
        for q in (self.audio_q, self.frame_q, self.out_q):
            try:
                q.put_nowait(_STOP)
            except queue.Full:
                pass
        for w in self._workers:
            w.join(timeout=5.0)
        self._workers = []

    # --- bookkeeping -----------------------------------------------------------------------------------------------
    def _count(self, key: str, n: float = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def _warn(self, key: str, text: str) -> None:
        self._count(f'rejected.{key}')
        if self.diag is not None:
            self.diag.warn(key, text)
        else:
            self.get_logger().warning(f'{key}: {text}', throttle_duration_sec=5.0)

    def _refresh_diag(self) -> None:
        if self.diag is None:
            return
        for k, v in list(self.counts.items()):
            self.diag.counters[k] = v
        self.diag.set('audio_queue', self.audio_q.qsize())
        self.diag.set('frame_queue', self.frame_q.qsize())
        self.diag.set('output_queue', self.out_q.qsize())
        self.diag.set('output_pending', self.out_q.unfinished_tasks)   # queued + the segment in ASR
        self.diag.set('audio_seconds', f'{self.audio_path.seconds:.1f}')
        if self._first_frame_stamp is not None:
            self.diag.set('frames_first_stamp', f'{self._first_frame_stamp:.3f}')
        if self.audio_path.stream.first_stamp is not None:
            self.diag.set('audio_first_stamp', f'{self.audio_path.stream.first_stamp:.3f}')
        for k, v in self.audio_path.stream.counters.items():
            self.diag.counters[f'audio_stream.{k}'] = v
        if self.faces is not None:
            self.diag.set('identities', len(self.faces.registry.identities))

    def _saw_stamp(self, t: float) -> None:
        with self._clock_lock:
            # Later stamps move sensor time on; slightly older ones (topics out of order) do not; a big jump back does.
            if self._stream_ref is None or t >= self._stream_ref[0] or \
                    t < self._stream_ref[0] + (time.monotonic() - self._stream_ref[1]) - STREAM_JUMP_BACK_S:
                self._stream_ref = (t, time.monotonic())

    def stream_now(self) -> float | None:
        """Sensor time now: the latest input stamp plus the wall time since it arrived."""
        with self._clock_lock:
            if self._stream_ref is None:
                return None
            t, m = self._stream_ref
            return t + (time.monotonic() - m)

    # --- callbacks (cheap: validate the stamp, queue the work) -----------------------------------------------------
    def _on_audio(self, msg: AudioStamped) -> None:
        if not self._active:
            return
        self._count('audio_chunks')
        stamp = from_time(msg.header.stamp)
        # Noted on arrival, not after the VAD: typed text arriving meanwhile gets sensor time, not wall time.
        self._saw_stamp(stamp)
        try:
            self.audio_q.put_nowait((stamp, _bytes(msg.data), msg.info.sample_format,
                                     msg.info.channels, msg.info.sample_rate, msg.info.coding_format))
        except queue.Full:
            self._count('audio_dropped')
            self._warn('audio_queue', 'audio queue full: the audio worker cannot keep up')

    def _queue_frame(self, stamp: float, kind: str, msg: Any) -> None:
        if not self._active:
            return
        self._count('frames_received')
        if self._first_frame_stamp is None:
            self._first_frame_stamp = stamp
        if not self.sampler.due(stamp):
            return
        self._camera_frame = msg.header.frame_id or self._camera_frame
        try:
            self.frame_q.put_nowait((stamp, kind, msg))
            self.sampler.take(stamp)
            self._count('frames_sampled')
        except queue.Full:
            self._count('frames_dropped')

    def _on_image(self, msg: Image) -> None:
        self._queue_frame(from_time(msg.header.stamp), 'raw', msg)

    def _on_compressed(self, msg: CompressedImage) -> None:
        self._queue_frame(from_time(msg.header.stamp), 'compressed', msg)

    def _on_text(self, msg: String) -> None:
        if not self._active:
            return
        self._count('text_received')   # reliable input: `replay --drain` compares it with what it sent
        text = msg.data.strip()
        if not text:
            self._warn('text_empty', 'empty typed text ignored')
            return
        now = self.stream_now()
        if now is None:
            now = self.get_clock().now().nanoseconds * 1e-9
        self.out_q.put(('segment', self.segmenter.typed(now, text), None))

    def _on_tick(self) -> None:
        now = self.stream_now()
        if now is None:
            return
        seg = self.segmenter.tick(now)
        if seg is not None:
            self.out_q.put(('segment', seg, None))

    def _on_gallery(self, msg: FaceGallery) -> None:
        if self.faces is None:
            return
        entries = [(i.face_id, np.asarray(i.embedding, np.float32), i.observations, i.embedding_backend)
                   for i in msg.identities]
        dropped = self.faces.registry.sync(entries, msg.version)
        for fid in dropped:
            self.faces.forget(fid)
            self.segmenter.forget_face(fid)
        self._count('gallery_updates')
        self.get_logger().info(f'face gallery v{msg.version}: {len(entries)} identities'
                               + (f', dropped {dropped}' if dropped else ''))

    def _on_forgotten(self, msg: FaceIdentity) -> None:
        if self.faces is None or msg.op != FaceIdentity.OP_FORGET:
            return
        known = self.faces.forget(msg.face_id)
        self.segmenter.forget_face(msg.face_id)
        self._count('identities_forgotten')
        self.get_logger().info(f'forgot {msg.face_id}' + ('' if known else ' (was not in the gallery)'))

    def _load_profiles(self, timeout: float) -> None:
        if self.faces is None or timeout <= 0:
            return
        client = self.create_client(ListProfiles, 'list_profiles', callback_group=self._cb_client)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                self.get_logger().info('list_profiles not available: starting with the latched gallery only')
                return
            done = threading.Event()
            future = client.call_async(ListProfiles.Request(brief=False))
            future.add_done_callback(lambda _: done.set())
            if not done.wait(timeout) or future.result() is None:
                self.get_logger().warning('list_profiles did not answer in time')
                return
            res = future.result()
            entries = [(p.face_id, np.asarray(p.embedding, np.float32), p.observations, p.embedding_backend)
                       for p in res.profiles]
            self.faces.registry.sync(entries)
            self.asr.learn_names(p.name for p in res.profiles if p.name)
            self.get_logger().info(f'{len(entries)} profiles loaded from list_profiles')
        finally:
            self.destroy_client(client)

    # --- workers ---------------------------------------------------------------------------------------------------
    def _audio_worker(self) -> None:
        while self._running:
            item = self.audio_q.get()
            if item is _STOP:
                break
            try:
                with self.timer.stage('vad') as st:
                    events = self.audio_path.push(*item)
                self._count('vad_ms_total', st['ms'])
            except AudioFormatError as e:
                self._warn(e.key, str(e))
                continue
            except Exception as e:  # noqa: BLE001 - one bad chunk must not stop the audio path
                self._warn('audio_error', f'{type(e).__name__}: {e}')
                continue
            for ev in events:
                if ev[0] == 'start':
                    self.segmenter.speech_started(ev[1])
                    self._count('speech_starts')
                elif ev[0] == 'end':
                    _, t0, t1, audio = ev
                    seg = self.segmenter.speech_ended(t0, t1)
                    self.out_q.put(('segment', seg, audio))
                else:
                    self.segmenter.speech_discarded()
                    self._count('speech_discarded')

    def _frame_worker(self) -> None:
        while self._running:
            item = self.frame_q.get()
            if item is _STOP:
                break
            stamp, kind, msg = item
            try:
                self._process_frame(stamp, kind, msg)
            except ImageFormatError as e:
                self._warn(e.key, str(e))
            except Exception as e:  # noqa: BLE001 - one bad frame must not stop the frame path
                self._warn('frame_error', f'{type(e).__name__}: {e}')

    def _process_frame(self, stamp: float, kind: str, msg: Any) -> None:
        fc = self.cfg['frames.']
        with self.timer.stage('frames') as st:
            if kind == 'raw':
                rgb = decode_image(msg.encoding, msg.width, msg.height, msg.step, msg.data, fc.max_pixels)
            else:
                rgb = decode_compressed(msg.format, msg.data, fc.max_pixels)
            self._saw_stamp(stamp)
            res = self.kf_filter.process(rgb, stamp)
        self._count('frames_ms_total', st['ms'])
        self._count('keyframes_processed')
        if not res.kept:
            self._count(f'keyframes_{res.reason}')
        else:
            with self.timer.stage('jpeg'):
                jpeg = encode_jpeg(rgb, fc.jpeg_quality, fc.jpeg_max_side)
            self.segmenter.add_keyframe(KeyframeData(stamp, jpeg, res.feature, res.sharpness, res.hints,
                                                     rgb.shape[1], rgb.shape[0]))
            self._count('keyframes_kept')
        if self.faces is None or res.reason == 'blur':
            return
        with self.timer.stage('faces') as st:
            tracks, events = self.faces.process(rgb)
        self._count('faces_ms_total', st['ms'])
        seen = [FaceSeen(t.face_id, t.track_id, t.box, t.score, t.match_distance, stamp) for t in tracks]
        self.segmenter.add_faces(seen)
        if self.pub_detections is not None and self._active:
            for f in seen:
                self.pub_detections.publish(self._face_msg(f))
        for ev in events:
            self._publish_identity(ev)
        if any(ev.op == 'new' for ev in events):
            self.state.save(self.segmenter.next_id, self.faces.registry.next_index)

    def _output_worker(self) -> None:
        while self._running:
            item = self.out_q.get()
            if item is _STOP:
                break
            _, seg, audio = item
            try:
                self._finish_segment(seg, audio)
            except Exception as e:  # noqa: BLE001 - keep publishing later segments
                self._warn('segment_error', f'segment {seg.segment_id}: {type(e).__name__}: {e}')
            finally:
                self.out_q.task_done()   # output_pending counts it until here

    def _finish_segment(self, seg: SegmentData, audio: np.ndarray | None) -> None:
        sc = self.cfg['segments.']
        if audio is not None and len(audio):
            with self.timer.stage('asr') as st:
                tr = self.asr.transcribe(audio)
            self.asr.learn_from(tr.text)
            self._count('asr_ms_total', st['ms'])
            self._count('asr_audio_s_total', tr.duration)
            seg.set_transcript(tr.text, tr.words, tr.language, seg.speech_start - seg.start)
        if sc.audio_store != 'none':
            clip = audio
            if sc.audio_store == 'segment':
                clip = self.audio_path.buffer.slice(self.audio_path.stream.index_of(seg.start),
                                                    self.audio_path.stream.index_of(seg.end))
            if clip is not None and len(clip):
                seg.audio_uri = write_wav(f'{self.audio_dir}/segment_{seg.segment_id:08d}.wav', clip)
        msg = self._segment_msg(seg)
        if self._active:
            self.pub_segments.publish(msg)
            self._count('segments')
            self._count(f'segments_trigger_{seg.trigger}')
        self.state.save(self.segmenter.next_id,
                        self.faces.registry.next_index if self.faces else self.state.next_face_index)

    # --- messages --------------------------------------------------------------------------------------------------
    def _face_msg(self, f: FaceSeen) -> FaceObservation:
        x0, y0, x1, y1 = (max(0, int(round(v))) for v in f.box)
        return FaceObservation(face_id=f.face_id, track_id=f.track_id,
                               box=RegionOfInterest(x_offset=x0, y_offset=y0, width=max(0, x1 - x0),
                                                    height=max(0, y1 - y0)),
                               score=float(f.score), match_distance=float(f.match_distance), stamp=to_time(f.stamp))

    def _publish_identity(self, ev: Any) -> None:
        msg = FaceIdentity(op=FaceIdentity.OP_NEW if ev.op == 'new' else FaceIdentity.OP_UPDATE, face_id=ev.face_id,
                           embedding=ev.embedding.astype(np.float32).tolist(), embedding_backend=ev.backend,
                           observations=int(ev.observations))
        msg.header.stamp = self.get_clock().now().to_msg()
        if ev.avatar is not None:
            msg.avatar.format = 'jpeg'
            msg.avatar.data = encode_jpeg(ev.avatar, 85)
        self._count(f'identities_{ev.op}')
        if self._active:
            self.pub_identity.publish(msg)

    def _segment_msg(self, seg: SegmentData) -> Segment:
        msg = Segment(segment_id=seg.segment_id, start=to_time(seg.start), end=to_time(seg.end), trigger=seg.trigger,
                      transcript=seg.transcript, language=seg.language, typed_text=seg.typed_text,
                      visual_tags=list(seg.visual_tags), audio_uri=seg.audio_uri,
                      speech_duration=float(seg.speech_duration))
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self._camera_frame
        if seg.speech_end:
            msg.speech_end = to_time(seg.speech_end)
        msg.words = [WordTiming(word=w.word, start=float(w.start), end=float(w.end), probability=float(w.probability))
                     for w in seg.words]
        kfs = []
        for k in seg.keyframes:
            km = Keyframe(feature=k.feature.astype(np.float32).tolist(), sharpness=float(k.sharpness))
            km.image.header.stamp = to_time(k.stamp)
            km.image.header.frame_id = self._camera_frame
            km.image.format = 'jpeg'
            km.image.data = k.jpeg
            kfs.append(km)
        msg.keyframes = kfs
        msg.faces = [self._face_msg(f) for f in seg.faces]
        return msg


def main(args: list[str] | None = None) -> int:
    """Run the perception node."""
    return run_node(PerceptionNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
