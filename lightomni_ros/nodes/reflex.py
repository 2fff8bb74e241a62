# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The reflex lifecycle node: Segment -> one reflex pass -> retrieval -> response -> Action; Topics in sleep time.

It owns the only copy of the backbone and its adapters. A worker thread answers segments in order (a due reminder
is spoken at once, from a template, without waiting behind them); a second one runs the sleep-time memory pass on
queued interactions whenever no segment waits, yielding the model between calls when a segment arrives (the
pre-emption delay is measured). The Summarize service serves the consolidation node's S_g merges and profile
updates with the same model.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any, Sequence

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import KeyValue
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node

from lightomni_ros.msg import Action, GlobalState, Reminder, Segment, StageLatency, Topic
from lightomni_ros.srv import ListProfiles, QueryMemory, Summarize

from ..core.config import ConfigError
from ..core.models import ModelsConfig
from ..core.reflex.config import (AdapterConfig, BackboneConfig, CacheConfig, ExportConfig, LatentConfig,
                                  PruningConfig, ReflexConfig, ResponseConfig)
from ..core.reflex.engine import EngineConfigs, ReflexEngine
from ..core.reflex.people import PersonSeen, speaking_face
from ..core.reflex.sleep import SleepQueue
from ..core.reflex.types import Decision, MemoryItem, Retrieved, SegmentInput, TopicOut
from ..core.timing import StageTimer
from .common import LATCHED_QOS, RELIABLE_QOS, Diagnostics, declare_config, from_time, run_node, to_time

CONFIG_SECTIONS = {
    '': ReflexConfig,
    'models.': ModelsConfig,
    'backbone.': BackboneConfig,
    'adapters.': AdapterConfig,
    'latent.': LatentConfig,
    'cache.': CacheConfig,
    'pruning.': PruningConfig,
    'export.': ExportConfig,
    'response.': ResponseConfig,
}


def segment_input(msg: Segment, decode_frames: bool) -> SegmentInput:
    """Segment message -> core type (keyframes decoded only for a backbone that sees them)."""
    frames, times = [], []
    if decode_frames:
        import cv2

        for kf in msg.keyframes:
            img = cv2.imdecode(np.frombuffer(bytes(kf.image.data), np.uint8), cv2.IMREAD_COLOR)
            if img is not None:
                frames.append(img[:, :, ::-1])
                times.append(from_time(kf.image.header.stamp))
    faces = list(dict.fromkeys(f.face_id for f in msg.faces if f.face_id))
    start = from_time(msg.start)
    speech_start = start + msg.words[0].start if msg.words else from_time(msg.speech_end) - msg.speech_duration
    speaker = speaking_face([(f.face_id, from_time(f.stamp)) for f in msg.faces], speech_start) \
        if msg.transcript else ''
    return SegmentInput(int(msg.segment_id), start, from_time(msg.end), msg.transcript,
                        msg.typed_text, faces, list(msg.visual_tags), frames, times, msg.audio_uri,
                        from_time(msg.speech_end), msg.trigger == Segment.TRIGGER_PROACTIVE, speaker)


def _entry_text(e: Any) -> str:
    return e.content or ' '.join(x for x in (e.visual, e.audio, e.response) if x)


def _profile_text(p: Any) -> str:
    attrs = '; '.join(f'{kv.key}: {kv.value}' for kv in p.attributes if kv.value)
    return f'{p.face_id}' + (f' is {p.name}' if p.name else '') + (f' ({attrs})' if attrs else '')


class ServiceMemory:
    """The consolidation node's QueryMemory service behind the core's MemoryClient protocol."""

    def __init__(self, node: Node, name: str, timeout_s: float, profiles_name: str = 'list_profiles') -> None:
        self.group = ReentrantCallbackGroup()
        self.client = node.create_client(QueryMemory, name, callback_group=self.group)
        self.profiles_client = node.create_client(ListProfiles, profiles_name, callback_group=self.group)
        self.timeout_s = timeout_s

    def _call(self, client: Any, req: Any) -> tuple[Any, str]:
        """(response, '') or (None, why not): the service is missing, slow or reports a failure."""
        name = client.srv_name.rsplit('/', 1)[-1]
        if not client.service_is_ready():
            return None, f'{name} service not available'
        done = threading.Event()
        fut = client.call_async(req)
        fut.add_done_callback(lambda _: done.set())
        if not done.wait(self.timeout_s):
            fut.cancel()
            return None, f'{name} timed out after {self.timeout_s:g} s'
        resp = fut.result()
        if resp is None or not resp.success:
            return None, f'{name} failed: {getattr(resp, "message", "no response")}'
        return resp, ''

    def query(self, vector: np.ndarray, text: str, k_semantic: int, k_episodic: int,
              face_ids: Sequence[str]) -> Retrieved:
        """Call the service; a missing or slow service gives an empty result with the reason."""
        req = QueryMemory.Request(query_vector=[float(x) for x in np.asarray(vector).ravel()], query_text=text,
                                  k_semantic=int(k_semantic), k_episodic=int(k_episodic), face_ids=list(face_ids))
        resp, error = self._call(self.client, req)
        if resp is None:
            return Retrieved(error=error)
        return Retrieved(semantic=[MemoryItem(f'semantic:{e.id}', _entry_text(e), e.score) for e in resp.semantic],
                         episodic=[MemoryItem(f'episodic:{e.id}', _entry_text(e), e.score) for e in resp.episodic],
                         profiles=[MemoryItem(f'profile:{p.face_id}', _profile_text(p)) for p in resp.profiles],
                         latency_ms=resp.latency_ms)

    def people(self) -> list[PersonSeen] | None:
        """Every profile (brief) with the span its person was seen in; None when list_profiles does not answer."""
        resp, _ = self._call(self.profiles_client, ListProfiles.Request(brief=True))
        if resp is None:
            return None
        return [PersonSeen(p.face_id, p.name, from_time(p.first_seen), from_time(p.last_seen)) for p in resp.profiles]


class ReflexNode(LifecycleNode):
    """Lifecycle node ``reflex``: the GPU node answering segments and writing Topics in sleep time."""

    def __init__(self, node_name: str = 'reflex', **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        for prefix, cls in CONFIG_SECTIONS.items():
            declare_config(self, cls, prefix)
        self.engine: ReflexEngine | None = None
        self.cfg: ReflexConfig | None = None
        self.timer = StageTimer()
        self.diag: Diagnostics | None = None
        self._interfaces: list[tuple[str, Any]] = []
        self._work: collections.deque[tuple[str, Any]] = collections.deque()
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sleep = SleepQueue()
        self._sleep_busy = False          # a memory pass is running (popped, not yet published)
        self._sleep_lock = threading.Lock()
        self._last_input = 0.0

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read parameters, load the backbone, adapters, heads and embedder, choose the reflex-pass backend."""
        try:
            cfgs = {prefix: declare_config(self, cls, prefix) for prefix, cls in CONFIG_SECTIONS.items()}
        except ConfigError as e:
            self.get_logger().error(f'invalid parameter: {e}')
            return TransitionCallbackReturn.FAILURE
        self.cfg = cfgs['']
        ecfg = EngineConfigs(cfgs['backbone.'], cfgs['adapters.'], cfgs['latent.'], cfgs['cache.'],
                             cfgs['pruning.'], cfgs['export.'], cfgs['models.'].models_dir, cfgs['response.'])
        try:
            t0 = time.perf_counter()
            self.engine = ReflexEngine(ecfg)
            self._choose_backend(ecfg.export)
        except Exception as e:  # noqa: BLE001 - any load failure is a failed transition with its reason
            self.get_logger().error(f'configure failed: {type(e).__name__}: {e}')
            self.engine = None
            return TransitionCallbackReturn.FAILURE
        self._sleep = SleepQueue(self.cfg.sleep_queue)
        d = self.engine.describe()
        self.get_logger().info(
            f'backbone {d["backbone"]["name"]} ({d["backbone"]["kind"]}, {d["backbone"]["decoder_params_m"]} M '
            f'decoder params, {d["backbone"]["device"]}); heads {d["heads"]}; adapters {d["adapters"]}; '
            f'reflex pass on {self.engine.backend} ({time.perf_counter() - t0:.1f} s)')
        if not self.engine.heads.trained:
            self.get_logger().warning('reflex heads are UNTRAINED: p_speech/p_search are not meaningful yet '
                                      '(questions are answered by rule)')
        return TransitionCallbackReturn.SUCCESS

    def _choose_backend(self, cfg: ExportConfig) -> None:
        """Pick the reflex-pass execution path (ONNX Runtime / TensorRT when configured and faster)."""
        if cfg.backend == 'torch':
            return
        from ..core.reflex import export

        choice = export.choose(self.engine, cfg)
        self.engine.accelerated = choice.runner
        self.engine.backend = choice.name
        self._backend_note = choice.note

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Create publishers, subscriptions, the summarize service, the memory client and the workers."""
        assert self.engine is not None and self.cfg is not None
        sub_group = MutuallyExclusiveCallbackGroup()
        svc_group = ReentrantCallbackGroup()
        self._pub_action = self.create_publisher(Action, 'actions', RELIABLE_QOS)
        self._pub_topic = self.create_publisher(Topic, 'topics', RELIABLE_QOS)
        self._pub_reminder = self.create_publisher(Reminder, 'reminders/new', RELIABLE_QOS)
        memory = ServiceMemory(self, 'query_memory', self.cfg.query_timeout_s)
        self.engine.memory = memory
        self._interfaces = [
            ('pub', self._pub_action), ('pub', self._pub_topic), ('pub', self._pub_reminder), ('cli', memory.client),
            ('sub', self.create_subscription(Segment, 'segments', self._on_segment, RELIABLE_QOS,
                                             callback_group=sub_group)),
            ('sub', self.create_subscription(GlobalState, 'global_state', self._on_state, LATCHED_QOS,
                                             callback_group=sub_group)),
            # its own group: a GlobalState callback waiting for the model must not hold a due reminder back
            ('sub', self.create_subscription(Reminder, 'reminders/due', self._on_reminder, RELIABLE_QOS,
                                             callback_group=MutuallyExclusiveCallbackGroup())),
            ('srv', self.create_service(Summarize, 'summarize', self._summarize, callback_group=svc_group)),
        ]
        self.diag = Diagnostics(self, 'reflex', self.timer, period_s=self.cfg.diagnostics_period_s,
                                warn_ms={'reflex': self.cfg.warn_reflex_ms},
                                error_ms={'reflex': self.cfg.error_reflex_ms})
        self._describe_diag()
        self._stop.clear()
        self.engine.preemption.resume()
        self._threads = [threading.Thread(target=self._user_loop, name='reflex-user', daemon=True),
                         threading.Thread(target=self._sleep_loop, name='reflex-sleep', daemon=True)]
        for t in self._threads:
            t.start()
        return super().on_activate(state)

    def _describe_diag(self) -> None:
        d = self.engine.describe()
        self.diag.set('backend', self.engine.backend)
        self.diag.set('backend_choice', getattr(self, '_backend_note', 'torch (configured)'))
        self.diag.set('backbone', f'{d["backbone"]["name"]} ({d["backbone"]["kind"]}, '
                                  f'{d["backbone"]["decoder_params_m"]} M, {d["backbone"]["device"]})')
        if d['backbone']['test_model']:
            self.diag.warn('backbone', 'TEST backbone (randomly initialised): responses are noise')
        self.diag.set('heads', 'trained' if d['heads_trained'] else 'UNTRAINED (random; questions answered by rule)')
        for name, where in d['adapters'].items():
            self.diag.set(f'adapter.{name}', where)

    def _teardown(self) -> None:
        if self.engine is not None:
            self.engine.preemption.halt()   # a model call in progress ends at its next token
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        for t in self._threads:
            t.join(timeout=30.0)
        self._threads = []
        for kind, obj in self._interfaces:
            {'pub': self.destroy_publisher, 'sub': self.destroy_subscription, 'srv': self.destroy_service,
             'cli': self.destroy_client}[kind](obj)
        self._interfaces = []
        if self.diag is not None:
            self.diag.destroy()
            self.diag = None

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop the workers and remove the interfaces."""
        self._teardown()
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Release the model."""
        self._teardown()
        self.engine = None
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop everything."""
        self._teardown()
        self.engine = None
        return TransitionCallbackReturn.SUCCESS

    # -- inputs ----------------------------------------------------------------------------------------------------
    def _enqueue(self, kind: str, item: Any) -> None:
        if self.engine is not None:
            self.engine.preemption.request()   # sleep-time work yields at its next model-call boundary
        with self._wake:
            self._work.append((kind, item))
            self._last_input = time.monotonic()
            self._wake.notify_all()

    def _on_segment(self, msg: Segment) -> None:
        self._enqueue('segment', msg)

    def _on_reminder(self, msg: Reminder) -> None:
        # Spoken from a template, so it needs no model call: said on time, not after the segments queued before it.
        try:
            self._answer_reminder(msg)
        except Exception as e:  # noqa: BLE001 - a bad reminder message must not stop the node
            self.diag.warn('reminder', f'reminder {msg.id} not spoken: {type(e).__name__}: {e}')

    def _on_state(self, msg: GlobalState) -> None:
        if self.engine is not None:
            self.engine.set_global_state(msg.version, msg.script)
            if self.diag is not None:
                self.diag.set('sg_version', msg.version)
                self.diag.set('sg_tokens', msg.script_tokens)

    # -- workers ---------------------------------------------------------------------------------------------------
    def _user_loop(self) -> None:
        while not self._stop.is_set():
            with self._wake:
                while not self._work and not self._stop.is_set():
                    self._wake.wait(0.5)
                if self._stop.is_set():
                    return
                kind, msg = self._work.popleft()
            try:
                self._answer_segment(msg)
            except Exception as e:  # noqa: BLE001 - one bad segment must not stop the node
                self.diag.warn('segment', f'{kind} failed: {type(e).__name__}: {e}')
            finally:
                self.engine.preemption.release_one()

    def _answer_segment(self, msg: Segment) -> None:
        eng = self.engine
        seg = segment_input(msg, eng.backbone.kind == 'omni')
        if not seg.utterance and not seg.face_ids and not seg.frames and not seg.visual_tags:
            self.diag.count('segments.empty')
        cfg_l = eng.cfgs.latent
        d = eng.decide(seg, cfg_l.speech_threshold, cfg_l.search_threshold, self.cfg.k_semantic,
                       self.cfg.k_episodic, cfg_l.always_answer_questions)
        self._publish_action(d, Action.SOURCE_SEGMENT, msg.speech_end)
        # A time intent is stored when it is answered, not after the sleep-time memory pass (which may wait minutes
        # behind a busy conversation); the Topic carries it again and the consolidation node stores it once.
        for r in d.reminders:
            self._pub_reminder.publish(Reminder(due=to_time(r['due']), text=r['text'], face_id=r['face_id'],
                                                source_segment=seg.segment_id, status=Reminder.STATUS_PENDING))
            self.diag.count('reminders.requested')
        self._sleep.put(seg, d.response)
        self._sleep_diag()
        self.diag.count('segments')

    def _answer_reminder(self, msg: Reminder) -> None:
        # Reminders are spoken verbatim: a safety-relevant message must not depend on free generation.
        text = f'Reminder: {msg.text.strip()}.'
        d = Decision(0, 1.0, 0.0, True, False, text, [f'reminder:{msg.id}'] if msg.id else [], {}, 'template',
                     np.zeros(0, np.float32), ['reminder'], 'template')
        self._publish_action(d, Action.SOURCE_REMINDER, Time())
        self.diag.count('reminders')

    def _publish_action(self, d: Decision, source: int, speech_end: Time) -> None:
        a = Action(segment_id=d.segment_id, source=source, p_speech=float(d.p_speech), p_search=float(d.p_search),
                   speak=bool(d.speak), search=bool(d.search), response=d.response if d.speak else '',
                   memory_ids=list(d.memory_ids), backend=d.backend, speech_end=speech_end,
                   response_source=d.response_source if d.speak else '')
        now = self.get_clock().now()
        a.header.stamp = now.to_msg()
        lat = dict(d.latency_ms)
        if speech_end.sec or speech_end.nanosec:
            lat['eos_to_action'] = (now.nanoseconds * 1e-9 - from_time(speech_end)) * 1000.0
        for stage, ms in lat.items():
            self.timer.add(stage, ms)
        a.latency = [StageLatency(stage=k, ms=float(v)) for k, v in lat.items()]
        self._pub_action.publish(a)
        for note in d.notes:
            if note.startswith('retrieval:'):
                self.diag.warn('retrieval', note[len('retrieval: '):])
        self.diag.set('last_action_notes', '; '.join(d.notes) or '-')
        self._cache_diag()

    def _cache_diag(self) -> None:
        for k, v in self.engine.cache_stats().items():
            self.diag.set(f'cache.{k}', v)
        self._sleep_diag()
        delays = list(self.engine.preemption.delays_ms)
        if delays:
            self.diag.set('preemption_wait.p50_ms', f'{np.percentile(delays, 50):.1f}')
            self.diag.set('preemption_wait.max_ms', f'{max(delays):.1f}')

    def _sleep_loop(self) -> None:
        eng = self.engine
        preempted: dict[int, int] = {}   # segment id -> times its memory pass was interrupted
        while not self._stop.is_set():
            idle = time.monotonic() - self._last_input
            if self._work or eng.preemption.pending() or idle < self.cfg.sleep_idle_s:
                self._stop.wait(0.05)
                continue
            try:
                t0 = time.perf_counter()
                if eng.warm_prefixes():    # the next question must not pay for the new S_g's prefix
                    self.timer.add('prefix_warmup', (time.perf_counter() - t0) * 1000.0)
                    continue
            except Exception as e:  # noqa: BLE001 - reported; the question would build it instead
                self.diag.warn('prefix_warmup', f'{type(e).__name__}: {e}')
            if not len(self._sleep):
                self._stop.wait(0.05)
                continue
            with self._sleep_lock:   # popped and busy in one step: sleep_pending never misses this item
                item = self._sleep.pop()
                self._sleep_busy = item is not None
            if item is None:
                continue
            seg, response = item
            try:
                t0 = time.perf_counter()
                # Pre-empted too often: finish this pass (only a shutdown stops it), or busy periods starve memory.
                stubborn = preempted.get(seg.segment_id, 0) >= self.cfg.sleep_max_preemptions
                topic = eng.memory_pass(seg, response, stop=eng.preemption.halted if stubborn else
                                        eng.preemption.pending)
                if topic is None:
                    preempted[seg.segment_id] = preempted.get(seg.segment_id, 0) + 1
                    self._sleep.push_front(item)
                    self.diag.count('sleep.preempted')
                    continue
                preempted.pop(seg.segment_id, None)
                self.timer.add('memory_pass', (time.perf_counter() - t0) * 1000.0)
                self._publish_topic(topic)
            except Exception as e:  # noqa: BLE001 - a failed memory pass is reported, the node goes on
                self.diag.warn('memory_pass', f'segment {seg.segment_id}: {type(e).__name__}: {e}')
            finally:
                with self._sleep_lock:
                    self._sleep_busy = False
                self._sleep_diag()

    def _sleep_diag(self) -> None:
        # sleep_pending (queued + in a pass) is 0 once every answered segment went to memory: `replay --drain`
        with self._sleep_lock:
            queued = len(self._sleep)
            self.diag.set('sleep_queue', queued)
            self.diag.set('sleep_pending', queued + int(self._sleep_busy))
            self.diag.set('sleep_dropped', self._sleep.dropped)

    def _publish_topic(self, t: TopicOut) -> None:
        msg = Topic(segment_id=t.segment_id, start=to_time(t.start), end=to_time(t.end), face_ids=t.face_ids,
                    semantic=t.semantic, remembered=t.remembered, visual=t.visual, audio=t.audio,
                    response=t.response, raw_refs=t.raw_refs, producer=t.producer)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.reminders = [Reminder(due=to_time(r['due']), text=r['text'], face_id=r.get('face_id', ''),
                                  status=Reminder.STATUS_PENDING) for r in t.reminders]
        self._pub_topic.publish(msg)
        self.diag.count(f'topics.{t.producer}')
        if t.problem:
            self.diag.warn('memory_pass', f'segment {t.segment_id}: {t.problem} (topic from the fallback parser)')

    # -- service ---------------------------------------------------------------------------------------------------
    def _summarize(self, req: Summarize.Request, resp: Summarize.Response) -> Summarize.Response:
        eng = self.engine
        if eng is None:
            resp.success, resp.message = False, 'reflex node not configured'
            return resp
        try:
            t0 = time.perf_counter()
            mode = 'merge' if req.mode == Summarize.Request.MODE_MERGE else 'profile'
            profile = {kv.key: kv.value for kv in req.profile.attributes}
            if req.profile.name:
                profile.setdefault('name', req.profile.name)
            out = eng.summarize(mode, list(req.texts), req.face_id, profile,
                                req.max_tokens or self.cfg.summary_max_tokens, stop=eng.preemption.pending)
            self.timer.add('summarize', (time.perf_counter() - t0) * 1000.0)
            resp.success = True
            resp.summary, resp.producer, resp.name = out['summary'], out['producer'], out['name']
            resp.attributes = [KeyValue(key=k, value=v) for k, v in out['attributes'].items()]
            resp.message = out.get('problem', '')
        except Exception as e:  # noqa: BLE001 - the caller gets the reason and falls back
            resp.success, resp.message = False, f'{type(e).__name__}: {e}'
        return resp


def main(args: Sequence[str] | None = None) -> int:
    """Entry point of ``reflex_node``."""
    return run_node(ReflexNode, args)


if __name__ == '__main__':
    raise SystemExit(main())


__all__ = ['ReflexNode', 'ServiceMemory', 'CONFIG_SECTIONS', 'segment_input', 'main']
