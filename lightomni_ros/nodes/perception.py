# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The perception lifecycle node: camera, microphone and typed text -> Segment messages (paper Algorithm 1).

A thin driver of :class:`~lightomni_ros.core.perception.runtime.PerceptionRuntime`. Subscription callbacks only
validate cheap fields and queue work. Three worker threads do the rest: audio (the runtime's VAD and segment
boundaries; its queue holds minutes, so audio is never dropped), frames (decoding, then the runtime's keyframe
filters, features and faces; a bounded queue whose overflow drops frames, counted), and output (the runtime's ASR of
each speech span and its speaker turns, then publication in segment order and of new voices on ``voices/identity``).
Models load in ``on_configure``; the face gallery comes from the ``list_profiles`` service when it answers and stays
current from the latched ``faces/gallery`` topic, the voice registry from the latched ``voices/gallery``.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from typing import Any, Callable

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.qos import HistoryPolicy, QoSProfile
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import String

from lightomni_ros.msg import (Ack, AudioStamped, FaceGallery, FaceIdentity, FaceObservation, Segment, VoiceGallery,
                               VoiceIdentity)
from lightomni_ros.srv import ListProfiles

from ..core.config import ConfigError, section_classes
from ..core.perception.audio import AudioFormatError
from ..core.perception.frames import ImageFormatError, decode_compressed, decode_image
from ..core.perception.pipeline import SpeechPaused
from ..core.perception.runtime import PendingSegment, PerceptionConfigs, PerceptionRuntime
from ..core.segment import SegmentData
from ..core.topic import segment_key
from .common import (LATCHED_QOS, RELIABLE_QOS, SENSOR_QOS, Diagnostics, Interfaces, QuietSubscriptions, call_service,
                     declare_at_start, declare_configs, report_failure)
from .messages import face_msg, from_time, gallery_entry, identity_msg, segment_msg, voice_entry, voice_msg
from .process import run_node

CONFIG_SECTIONS = section_classes(PerceptionConfigs)
_STOP = object()
STREAM_JUMP_BACK_S = 10.0   # sensor stamps this far behind sensor time mean a new time base (a bag restarted)
#: SensorDataQoS (best effort, volatile) with a deeper history for audio: at 50 chunks/s the default depth of 5 is
#: 100 ms, shorter than a GIL-holding model call on another thread; audio must never be dropped.
AUDIO_QOS = QoSProfile(depth=200, reliability=SENSOR_QOS.reliability, durability=SENSOR_QOS.durability,
                       history=HistoryPolicy.KEEP_LAST)


def _bytes(data: Any) -> bytes:
    return data.tobytes() if hasattr(data, 'tobytes') else bytes(data)


class PerceptionNode(QuietSubscriptions, LifecycleNode):
    """Lifecycle node ``perception``: VAD, ASR, faces and keyframes -> segments."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('perception', **kwargs)
        self.cfg: PerceptionConfigs | None = declare_at_start(self, PerceptionConfigs)
        self.rt: PerceptionRuntime | None = None
        self.counts: dict[str, float] = {}
        self._io = Interfaces(self)
        self._gallery = Interfaces(self)
        self._workers: list[threading.Thread] = []
        self._active = False
        self._clock_lock = threading.Lock()
        self._first_frame_stamp: float | None = None     # camera discovery delay, for the benchmark's rates
        self._stream_ref: tuple[float, float] | None = None     # (latest sensor stamp, monotonic at arrival)
        self.diag: Diagnostics | None = None
        self._cb_sensors = ReentrantCallbackGroup()
        self._cb_gallery = MutuallyExclusiveCallbackGroup()
        self._cb_client = ReentrantCallbackGroup()
        self._camera_frame = 'camera'
        # published Segments not yet acknowledged by the reflex node: key -> [message, monotonic time of last send]
        self._outbox: collections.OrderedDict[tuple[int, float], list[Any]] = collections.OrderedDict()
        self._outbox_lock = threading.Lock()

    # --- lifecycle -------------------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read parameters, load the runtime's models, restore counters and the face gallery, start workers."""
        try:
            self.cfg = c = declare_configs(self, PerceptionConfigs)
        except ConfigError as e:
            report_failure(self, 'perception', f'invalid parameter: {e}')
            return TransitionCallbackReturn.FAILURE
        try:
            t0 = time.perf_counter()
            self.rt = PerceptionRuntime(c)
            d = self.rt.describe()
            self.get_logger().info(f'models loaded in {time.perf_counter() - t0:.1f} s: ASR {d["asr_model"]}, '
                                   f'faces {d["face_backend"]}')
        except Exception as e:  # noqa: BLE001 - any model failure must fail the transition, not kill the node
            report_failure(self, 'perception', f'model loading failed: {type(e).__name__}: {e}')
            return TransitionCallbackReturn.FAILURE
        # ~50 chunks/s is the finest common chunking (20 ms): size the queue so `audio_queue_s` of it fits.
        self.audio_q: queue.Queue = queue.Queue(maxsize=int(c.perception.audio_queue_s * 50))
        self.frame_q: queue.Queue = queue.Queue(maxsize=c.perception.frame_queue)
        self.out_q: queue.Queue = queue.Queue()
        self.counts = {}
        self._gallery.add(self.create_subscription(FaceGallery, 'faces/gallery', self._on_gallery, LATCHED_QOS,
                                                   callback_group=self._cb_gallery))
        self._gallery.add(self.create_subscription(FaceIdentity, 'faces/forgotten', self._on_forgotten, RELIABLE_QOS,
                                                   callback_group=self._cb_gallery))
        self._gallery.add(self.create_subscription(VoiceGallery, 'voices/gallery', self._on_voices, LATCHED_QOS,
                                                   callback_group=self._cb_gallery))
        self._gallery.add(self.create_subscription(VoiceIdentity, 'voices/forgotten', self._on_voice_forgotten,
                                                   RELIABLE_QOS, callback_group=self._cb_gallery))
        self._load_profiles(c.perception.gallery_timeout_s)
        self._running = True
        self._workers = [threading.Thread(target=f, name=n, daemon=True) for f, n in (
            (self._audio_worker, 'perception-audio'), (self._frame_worker, 'perception-frames'),
            (self._output_worker, 'perception-output'))]
        for w in self._workers:
            w.start()
        return super().on_configure(state)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Create publishers, sensor subscriptions, diagnostics and the time-out tick."""
        c = self.cfg
        io = self._io
        self.pub_segments = io.add(self.create_publisher(Segment, 'segments', RELIABLE_QOS))
        io.add(self.create_subscription(Ack, 'segments/ack', self._on_segment_ack, RELIABLE_QOS,
                                        callback_group=self._cb_gallery))
        io.add(self.create_timer(1.0, self._resend_segments, callback_group=self._cb_gallery))
        self.pub_identity = io.add(self.create_publisher(FaceIdentity, 'faces/identity', RELIABLE_QOS))
        self.pub_voice = io.add(self.create_publisher(VoiceIdentity, 'voices/identity', RELIABLE_QOS))
        self.pub_detections = (io.add(self.create_publisher(FaceObservation, 'faces/detections', RELIABLE_QOS))
                               if c.perception.publish_detections else None)
        if c.frames.image_transport == 'compressed':
            io.add(self.create_subscription(CompressedImage, 'camera/image_raw/compressed', self._on_compressed,
                                            SENSOR_QOS, callback_group=self._cb_sensors))
        else:
            io.add(self.create_subscription(Image, 'camera/image_raw', self._on_image, SENSOR_QOS,
                                            callback_group=self._cb_sensors))
        io.add(self.create_subscription(AudioStamped, 'audio', self._on_audio, AUDIO_QOS,
                                        callback_group=self._cb_sensors))
        io.add(self.create_subscription(String, 'text_input', self._on_text, RELIABLE_QOS,
                                        callback_group=self._cb_sensors))
        self.diag = Diagnostics(self, 'perception', self.rt.timer, period_s=c.perception.diagnostics_period_s,
                                warn_ms={'vad': 30.0, 'asr': 3000.0, 'faces': 800.0, 'frames': 300.0},
                                error_ms={'asr': 10000.0}, warn_hold_s=c.perception.warn_hold_s)
        for k, v in self.rt.describe().items():
            self.diag.set(k, v)
        io.add(self.create_timer(c.perception.diagnostics_period_s, self._refresh_diag))
        io.add(self.create_timer(0.25, self._on_tick))
        self._active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop inputs and outputs (workers stay, models stay loaded)."""
        self._active = False
        self._io.destroy()
        if self.diag is not None:
            self.diag.destroy()
            self.diag = None
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop workers and release models."""
        self._stop_workers()
        self._gallery.destroy()
        self.rt = None
        return super().on_cleanup(state)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop workers (safe in any state, and twice)."""
        self._active = False
        self._stop_workers()
        return super().on_shutdown(state)

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
        if self.diag is None or self.rt is None:
            return
        rt = self.rt
        for k, v in list(self.counts.items()) + list(rt.counts.items()) + list(rt.vad_counts().items()):
            self.diag.counters[k] = v
        self.diag.set('audio_queue', self.audio_q.qsize())
        self.diag.set('frame_queue', self.frame_q.qsize())
        self.diag.set('output_queue', self.out_q.qsize())
        self.diag.set('output_pending', self.out_q.unfinished_tasks)   # queued + the segment in ASR
        self.diag.set('audio_seconds', f'{rt.audio_path.seconds:.1f}')
        if self._first_frame_stamp is not None:
            self.diag.set('frames_first_stamp', f'{self._first_frame_stamp:.3f}')
        if rt.audio_path.stream.first_stamp is not None:
            self.diag.set('audio_first_stamp', f'{rt.audio_path.stream.first_stamp:.3f}')
        for k, v in rt.audio_path.stream.counters.items():
            self.diag.counters[f'audio_stream.{k}'] = v
        if rt.faces is not None:
            self.diag.set('identities', len(rt.faces.registry.identities))
        if rt.voices is not None:
            self.diag.set('voices', len(rt.voices.voices))

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
        if not self.rt.frame_due(stamp):
            return
        self._camera_frame = msg.header.frame_id or self._camera_frame
        try:
            self.frame_q.put_nowait((stamp, kind, msg))
            self.rt.take_frame(stamp)
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
        self.out_q.put(PendingSegment(segment=self.rt.typed(now, text)))

    def _on_tick(self) -> None:
        now = self.stream_now()
        if now is None:
            return
        seg = self.rt.tick(now)
        if seg is not None:
            self.out_q.put(PendingSegment(segment=seg))

    def _on_gallery(self, msg: FaceGallery) -> None:
        if self.rt is None or self.rt.faces is None:
            return
        entries = [gallery_entry(i.face_id, i.embedding, i.observations, i.embedding_backend) for i in msg.identities]
        dropped = self.rt.sync_gallery(entries, msg.version)
        self._count('gallery_updates')
        self.get_logger().info(f'face gallery v{msg.version}: {len(entries)} identities'
                               + (f', dropped {dropped}' if dropped else ''))

    def _on_voices(self, msg: VoiceGallery) -> None:
        if self.rt is None:
            return
        dropped = self.rt.sync_voices([voice_entry(v) for v in msg.voices], msg.version)
        self._count('voice_gallery_updates')
        self.get_logger().info(f'voice gallery v{msg.version}: {len(msg.voices)} voices'
                               + (f', dropped {dropped}' if dropped else ''))

    def _on_voice_forgotten(self, msg: VoiceIdentity) -> None:
        if self.rt is None or msg.op != VoiceIdentity.OP_FORGET:
            return
        self.rt.forget_voice(msg.voice_id)
        self._count('voices_forgotten')

    def _on_forgotten(self, msg: FaceIdentity) -> None:
        if self.rt is None or msg.op != FaceIdentity.OP_FORGET:
            return
        known = self.rt.forget(msg.face_id)
        self._count('identities_forgotten')
        self.get_logger().info(f'forgot {msg.face_id}' + ('' if known else ' (was not in the gallery)'))

    def _load_profiles(self, timeout: float) -> None:
        if self.rt.faces is None or timeout <= 0:
            return
        client = self.create_client(ListProfiles, 'list_profiles', callback_group=self._cb_client)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                self.get_logger().info('list_profiles not available: starting with the latched gallery only')
                return
            res, error = call_service(client, ListProfiles.Request(brief=False), timeout)
            if res is None:
                self.get_logger().warning(f'profiles not loaded: {error}')
                return
            self.rt.load_profiles(gallery_entry(p.face_id, p.embedding, p.observations, p.embedding_backend, p.name)
                                  for p in res.profiles)
            self.get_logger().info(f'{len(res.profiles)} profiles loaded from list_profiles')
        finally:
            self.destroy_client(client)

    # --- workers ---------------------------------------------------------------------------------------------------
    def _serve(self, q: queue.Queue, handle: Callable[[Any], None], what: str) -> None:
        """A worker: handle queued items in order until stopped; bad input is reported, the worker goes on."""
        while self._running:
            item = q.get()
            if item is _STOP:
                break
            try:
                handle(item)
            except (AudioFormatError, ImageFormatError) as e:
                self._warn(e.key, str(e))
            except Exception as e:  # noqa: BLE001 - one bad item must not stop its path
                self._warn(f'{what}_error', f'{type(e).__name__}: {e}')
            finally:
                q.task_done()   # output_pending counts a segment until here

    def _audio_worker(self) -> None:
        self._serve(self.audio_q, self._push_audio, 'audio')

    def _push_audio(self, item: tuple) -> None:
        for pending in self.rt.push_audio(*item):
            self.out_q.put(pending)
        # speech that paused is heard ahead by the output worker, while the VAD here waits out the silence that
        # would end it; only when no segment waits there (that would delay a segment for a guess)
        pause = self.rt.paused()
        if pause is not None and self.out_q.unfinished_tasks == 0:
            self.out_q.put(pause)

    def _frame_worker(self) -> None:
        self._serve(self.frame_q, lambda item: self._process_frame(*item), 'frame')

    def _process_frame(self, stamp: float, kind: str, msg: Any) -> None:
        max_pixels = self.cfg.frames.max_pixels
        if kind == 'raw':
            rgb = decode_image(msg.encoding, msg.width, msg.height, msg.step, msg.data, max_pixels)
        else:
            rgb = decode_compressed(msg.format, msg.data, max_pixels)
        self._saw_stamp(stamp)
        res = self.rt.process_frame(stamp, rgb)
        if self.pub_detections is not None and self._active:
            for f in res.faces:
                self.pub_detections.publish(face_msg(f))
        for ev in res.identities:
            if self._active:
                self.pub_identity.publish(identity_msg(ev, res.avatars.get(ev.face_id, b''),
                                                       self.get_clock().now().to_msg()))

    def _output_worker(self) -> None:
        self._serve(self.out_q, self._output, 'segment')

    def _output(self, item: PendingSegment | SpeechPaused) -> None:
        if isinstance(item, SpeechPaused):
            self.rt.hear_ahead(item)
        else:
            self._publish_segment(self.rt.finish(item, self.out_q.qsize() > 0))

    def _publish_segment(self, seg: SegmentData) -> None:
        if not self._active:
            return
        for ev in self.rt.take_voice_events():
            self.pub_voice.publish(voice_msg(ev, self.get_clock().now().to_msg()))
        msg = segment_msg(seg, self._camera_frame, self.get_clock().now().to_msg())
        with self._outbox_lock:
            self._outbox[segment_key(seg.segment_id, seg.start)] = [msg, time.monotonic()]
            while len(self._outbox) > self.cfg.perception.segment_outbox:
                (sid, _), _ = self._outbox.popitem(last=False)
                self._warn('segment_outbox', f'segment {sid} given up: never acknowledged by a reflex node')
        self.pub_segments.publish(msg)
        self._count('segments')
        self._count(f'segments_trigger_{seg.trigger}')

    def _on_segment_ack(self, msg: Ack) -> None:
        try:
            key = segment_key(msg.segment_id, from_time(msg.start))
        except ValueError as e:         # no segment of ours has such a key
            self._warn('segment_ack', str(e))
            return
        with self._outbox_lock:
            self._outbox.pop(key, None)

    def _resend_segments(self) -> None:
        """Publish again, in order, what the reflex node has not acknowledged (it is back after a restart)."""
        if not self._active or not self.count_publishers(self.pub_segments.topic_name + '/ack'):
            return      # no reflex node to acknowledge (yet): sending again would only repeat
        now = time.monotonic()
        with self._outbox_lock:
            due = [item for item in self._outbox.values() if now - item[1] >= self.cfg.perception.segment_resend_s]
            for item in due:
                item[1] = now
        for msg, _ in due:
            self.pub_segments.publish(msg)
            self._count('segments_resent')
        if self.diag is not None:
            self.diag.set('segments_unacknowledged', len(self._outbox))


def main(args: list[str] | None = None) -> int:
    """Run the perception node."""
    return run_node(PerceptionNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
