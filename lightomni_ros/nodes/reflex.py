# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The reflex lifecycle node: Segment -> one reflex pass -> retrieval -> response -> Action; Topics in sleep time.

A thin driver of :class:`~lightomni_ros.core.reflex.runtime.ReflexRuntime`, which owns the only copy of the backbone
and its adapters. A worker thread answers segments in order (a due reminder is spoken at once, from a template,
without waiting behind them); a second one runs the runtime's sleep-time work whenever no segment waits, yielding the
model between calls when a segment arrives (the pre-emption delay is measured). The Summarize service serves the
consolidation node's S_g merges and profile updates with the same model.
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node

from lightomni_ros.msg import Ack, Action, GlobalState, Reminder, Segment, Topic
from lightomni_ros.msg import SpeechChunk as SpeechChunkMsg
from lightomni_ros.srv import Forget, ListProfiles, QueryMemory, Summarize

from ..core.config import ConfigError, section_classes
from ..core.reflex.people import PersonSeen
from ..core.reflex.retrieval import MemoryQuery
from ..core.reflex.runtime import ReflexConfigs, ReflexRuntime, SleepOutcome
from ..core.reflex.types import Decision, Retrieved, SpeechChunk
from ..core.timing import StageTimer
from ..core.topic import segment_key
from .common import (LATCHED_QOS, RELIABLE_QOS, Diagnostics, Interfaces, QuietSubscriptions, call_service,
                     declare_at_start, declare_configs, lower_thread_priority, report_failure)
from .messages import (ack_msg, action_msg, fill_summary_response, from_time, is_set, memory_item, person_seen,
                       profile_memory_item, reminder_msg, segment_from_msg, speech_chunk_msg, state_nodes,
                       summary_request_from, to_time, topic_msg)
from .process import run_node

CONFIG_SECTIONS = section_classes(ReflexConfigs)
#: seconds after which a global_state publisher would have been discovered if one existed
_DISCOVERY_S = 3.0


class ServiceMemory:
    """The consolidation node's QueryMemory and ListProfiles services behind the core's MemoryClient protocol."""

    def __init__(self, node: Node, timeout_s: float, interfaces: Interfaces) -> None:
        group = ReentrantCallbackGroup()
        self.client = interfaces.add(node.create_client(QueryMemory, 'query_memory', callback_group=group))
        self.profiles_client = interfaces.add(node.create_client(ListProfiles, 'list_profiles', callback_group=group))
        self.forget_client = interfaces.add(node.create_client(Forget, 'forget', callback_group=group))
        self.timeout_s = timeout_s

    def query(self, q: MemoryQuery) -> Retrieved:
        """Call the service; a missing or slow service gives an empty result with the reason."""
        req = QueryMemory.Request(query_vector=[float(x) for x in np.asarray(q.vector).ravel()], query_text=q.text,
                                  k_semantic=int(q.k_semantic), k_episodic=int(q.k_episodic),
                                  face_ids=list(q.face_ids), embedder=q.embedder, window_start=to_time(q.window_start),
                                  window_end=to_time(q.window_end), chronological=q.chronological)
        resp, error = call_service(self.client, req, self.timeout_s)
        if resp is None:
            return Retrieved(error=error)
        return Retrieved(semantic=[memory_item(e) for e in resp.semantic],
                         episodic=[memory_item(e) for e in resp.episodic],
                         profiles=[profile_memory_item(p) for p in resp.profiles], latency_ms=resp.latency_ms)

    def people(self) -> list[PersonSeen] | None:
        """Every profile (brief) with the span its person was seen in; None when list_profiles does not answer."""
        resp, _ = call_service(self.profiles_client, ListProfiles.Request(brief=True), self.timeout_s)
        return None if resp is None else [person_seen(p) for p in resp.profiles]

    def forget_face(self, face_id: str) -> str:
        """The Forget service, scope face; '' when done, else why not."""
        req = Forget.Request(scope=Forget.Request.SCOPE_FACE, face_id=face_id)
        resp, error = call_service(self.forget_client, req, max(self.timeout_s, 10.0))
        return '' if resp is not None else error


class ReflexNode(QuietSubscriptions, LifecycleNode):
    """Lifecycle node ``reflex``: the GPU node answering segments and writing Topics in sleep time."""

    def __init__(self, node_name: str = 'reflex', **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self.cfg: ReflexConfigs | None = declare_at_start(self, ReflexConfigs)
        self.rt: ReflexRuntime | None = None
        self.timer = StageTimer()
        self.diag: Diagnostics | None = None
        self._io = Interfaces(self)
        self._work: collections.deque[Segment] = collections.deque()
        self._queued: set[tuple[int, float] | None] = set()     # segments in _work or being answered
        self._background: concurrent.futures.ThreadPoolExecutor | None = None
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_input = 0.0
        self._pub_topic: Any = None
        self._send_lock = threading.Lock()
        self._state_seen = threading.Event()     # an S_g arrived since activation
        self._state_topic = ''

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read parameters, load the runtime (backbone, adapters, heads, embedder), choose the reflex-pass backend."""
        try:
            self.cfg = declare_configs(self, ReflexConfigs)
        except ConfigError as e:
            report_failure(self, 'reflex', f'invalid parameter: {e}')
            return TransitionCallbackReturn.FAILURE
        try:
            t0 = time.perf_counter()
            self.rt = ReflexRuntime(self.cfg)
        except Exception as e:  # noqa: BLE001 - any load failure is a failed transition with its reason
            report_failure(self, 'reflex', f'configure failed: {type(e).__name__}: {e}')
            self.rt = None
            return TransitionCallbackReturn.FAILURE
        d = self.rt.describe()
        self.get_logger().info(
            f'backbone {d["backbone"]["name"]} ({d["backbone"]["kind"]}, {d["backbone"]["decoder_params_m"]} M '
            f'decoder params, {d["backbone"]["device"]}); heads {d["heads"]}; adapters {d["adapters"]}; '
            f'embedder {d["embedder"]}; reflex pass on {self.rt.engine.backend} ({time.perf_counter() - t0:.1f} s)')
        if not self.rt.engine.heads.trained:
            self.get_logger().warning('reflex heads are UNTRAINED: p_speech/p_search are not meaningful yet '
                                      '(questions are answered by rule)')
        return super().on_configure(state)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Create publishers, subscriptions, the summarize service, the memory client and the workers."""
        io, cfg = self._io, self.cfg.reflex
        sub_group = MutuallyExclusiveCallbackGroup()
        self._pub_action = io.add(self.create_publisher(Action, 'actions', RELIABLE_QOS))
        self._pub_speech = io.add(self.create_publisher(SpeechChunkMsg, 'actions/speech', RELIABLE_QOS))
        self._pub_topic = io.add(self.create_publisher(Topic, 'topics', RELIABLE_QOS))
        self._pub_reminder = io.add(self.create_publisher(Reminder, 'reminders/new', RELIABLE_QOS))
        self._pub_seg_ack = io.add(self.create_publisher(Ack, 'segments/ack', RELIABLE_QOS))
        self._pub_rem_ack = io.add(self.create_publisher(Ack, 'reminders/ack', RELIABLE_QOS))
        self.rt.engine.memory = ServiceMemory(self, cfg.query_timeout_s, io)
        io.add(self.create_subscription(Segment, 'segments', self._on_segment, RELIABLE_QOS, callback_group=sub_group))
        self._state_seen.clear()
        state_sub = io.add(self.create_subscription(GlobalState, 'global_state', self._on_state, LATCHED_QOS,
                                                    callback_group=sub_group))
        self._state_topic = state_sub.topic_name
        # its own group: a GlobalState callback waiting for the model must not hold a due reminder back
        io.add(self.create_subscription(Reminder, 'reminders/due', self._on_reminder, RELIABLE_QOS,
                                        callback_group=MutuallyExclusiveCallbackGroup()))
        io.add(self.create_subscription(Ack, 'topics/ack', self._on_topic_ack, RELIABLE_QOS,
                                        callback_group=MutuallyExclusiveCallbackGroup()))
        io.add(self.create_service(Summarize, 'summarize', self._summarize, callback_group=ReentrantCallbackGroup()))
        self.diag = Diagnostics(self, 'reflex', self.timer, period_s=cfg.diagnostics_period_s,
                                warn_ms={'reflex': cfg.warn_reflex_ms}, error_ms={'reflex': cfg.error_reflex_ms})
        self._describe_diag()
        self._stop.clear()
        self.rt.resume()
        self._warm_at_activation()
        # pre-emptible sleep-time work (memory passes, warm-ups, summaries) runs on one worker thread at the sleep
        # priority; a pass that answers must wait for runs on the sleep loop's own thread, at the node's priority
        self._background = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix='reflex-background', initializer=self._lower_priority)
        self._threads = [threading.Thread(target=self._user_loop, name='reflex-user', daemon=True),
                         threading.Thread(target=self._sleep_loop, name='reflex-sleep', daemon=True)]
        for t in self._threads:
            t.start()
        return super().on_activate(state)

    def _warm_at_activation(self) -> None:
        """Build the first S_g's prefixes before the node reports active (``activate_warm_s``).

        The latched S_g comes from the consolidation node; with none publishing it (a graph without one), or none in
        time, the node activates as before and builds them in sleep time. A segment arriving meanwhile stops the build
        (it is answered as soon as the workers start, and its pass completes the prefix).
        """
        wait = self.cfg.reflex.activate_warm_s
        if wait <= 0:
            return
        t0 = time.monotonic()
        while not self._state_seen.wait(0.1):
            waited = time.monotonic() - t0
            # a latched message arrives within discovery once a publisher is matched: none after a few seconds
            # means no memory node in this graph, or one not active yet
            if waited > wait or (waited > _DISCOVERY_S and not self.count_publishers(self._state_topic)):
                self._activation_note(f'no S_g within {waited:.1f} s: prefixes are built in sleep time')
                return
        step = self.rt.warm_prefixes(at_start=True)
        if step is not None:
            self._after_sleep_step(step)
        what = {None: 'already built', 'prefix_warmup': 'built', 'preempted': 'stopped by a segment',
                'failed': 'failed'}[step.kind if step is not None else None]
        self._activation_note(f'S_g v{self.rt.engine.sg_version} prefixes {what} at activation '
                              f'({time.monotonic() - t0:.1f} s with the wait for S_g)')

    def _activation_note(self, text: str) -> None:
        self.get_logger().info(text)
        self.diag.set('prefixes_at_activation', text)

    def _describe_diag(self) -> None:
        d = self.rt.describe()
        self.diag.set('backend', self.rt.engine.backend)
        self.diag.set('backend_choice', d['backend_choice'])
        self.diag.set('backbone', f'{d["backbone"]["name"]} ({d["backbone"]["kind"]}, '
                                  f'{d["backbone"]["decoder_params_m"]} M, {d["backbone"]["device"]})')
        if d['backbone']['test_model']:
            self.diag.warn('backbone', 'TEST backbone (randomly initialised): responses are noise')
        self.diag.set('heads', 'trained' if d['heads_trained'] else 'UNTRAINED (random; questions answered by rule)')
        self.diag.set('embedder', self.rt.embedder_id)
        for name, where in d['adapters'].items():
            self.diag.set(f'adapter.{name}', where)

    def _teardown(self) -> None:
        if self.rt is not None:
            self.rt.halt()    # a model call in progress ends at its next token
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        for t in self._threads:
            t.join(timeout=30.0)
        self._threads = []
        if self._background is not None:
            self._background.shutdown(wait=False, cancel_futures=True)
            self._background = None
        with self._send_lock:
            self._pub_topic = None
        self._io.destroy()
        if self.diag is not None:
            self.diag.destroy()
            self.diag = None

    def _close_runtime(self) -> None:
        if self.rt is not None:
            self.rt.close()
            self.rt = None

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop the workers and remove the interfaces."""
        self._teardown()
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Release the model and close the sleep queue."""
        self._teardown()
        self._close_runtime()
        return super().on_cleanup(state)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop everything (safe in any state, and twice)."""
        self._teardown()
        self._close_runtime()
        return super().on_shutdown(state)

    # -- inputs ----------------------------------------------------------------------------------------------------
    def _on_segment(self, msg: Segment) -> None:
        key = _queue_key(msg)
        with self._wake:
            self._last_input = time.monotonic()
            if key is not None and key in self._queued:
                # perception re-sends a segment until it is acknowledged, i.e. answered: a copy of one still
                # waiting here adds nothing (one that comes after the answer is acknowledged again)
                if self.diag is not None:
                    self.diag.count('segments.copy_while_queued')
                return
            if self.rt is not None:
                self.rt.engine.preemption.request()   # sleep-time work yields at its next model-call boundary
            self._queued.add(key)
            self._work.append(msg)
            self._wake.notify_all()

    def _on_reminder(self, msg: Reminder) -> None:
        # Spoken from a template, so it needs no model call: said on time, not after the segments queued before it.
        try:
            if msg.id and self.rt.sleep.reminder_spoken_before(msg.id):
                self.diag.count('reminders.duplicate')      # delivered again: confirmed, not said twice
            else:
                d = self.rt.reminder(msg.id, msg.text, self._speech_sink(Time()))
                self._publish_action(d, Action.SOURCE_REMINDER, Time())
                if msg.id:
                    self.rt.sleep.reminder_spoken(msg.id)
                self.diag.count('reminders')
            if msg.id:
                self._pub_rem_ack.publish(ack_msg(msg.id, 0.0, Ack.STORED, 'spoken', self.get_clock().now().to_msg()))
        except Exception as e:  # noqa: BLE001 - a bad reminder message must not stop the node
            self.diag.warn('reminder', f'reminder {msg.id} not spoken: {type(e).__name__}: {e}')

    def _on_state(self, msg: GlobalState) -> None:
        if self.rt is not None:
            self.rt.set_global_state(msg.version, msg.script, timezone=msg.timezone, nodes=state_nodes(msg))
            self._state_seen.set()
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
                msg = self._work.popleft()
            try:
                self._answer_segment(msg)
            except Exception as e:  # noqa: BLE001 - one bad segment must not stop the node
                self.diag.warn('segment', f'segment failed: {type(e).__name__}: {e}')
            finally:
                self.rt.engine.preemption.release_one()
                with self._wake:
                    self._queued.discard(_queue_key(msg))

    def _answer_segment(self, msg: Segment) -> None:
        seg = segment_from_msg(msg)
        age = self.get_clock().now().nanoseconds * 1e-9 - from_time(msg.header.stamp) if is_set(msg.header.stamp) \
            else None
        answered = self.rt.answer(seg, age, self._speech_sink(msg.speech_end))
        if answered is None:       # a re-sent copy: answered the first time; acknowledge it again
            self.diag.count('segments.duplicate')
            self._ack_segment(msg, Ack.DUPLICATE, 'duplicate')
            return
        sin, d = answered
        self._ack_segment(msg, Ack.STORED, 'stored')
        if not sin.utterance and not sin.face_ids and not sin.frames and not sin.visual_tags:
            self.diag.count('segments.empty')
        self._publish_action(d, Action.SOURCE_SEGMENT, msg.speech_end)
        # A time intent is stored when it is answered, not after the sleep-time memory pass (which may wait minutes
        # behind a busy conversation); the Topic carries it again and the consolidation node stores it once.
        for r in d.reminders:
            self._pub_reminder.publish(reminder_msg(r, sin.segment_id))
            self.diag.count('reminders.requested')
        self._queue_diag()
        self.diag.count('segments')

    def _speech_sink(self, speech_end: Time) -> Callable[[SpeechChunk], None]:
        """Publish each piece of a reply as it is ready; time the first against the end of the speech it answers."""
        def publish(chunk: SpeechChunk) -> None:
            now = self.get_clock().now()
            self._pub_speech.publish(speech_chunk_msg(chunk, now.to_msg()))
            if chunk.index == 0 and is_set(speech_end):
                self.timer.add('eos_to_first_chunk', (now.nanoseconds * 1e-9 - from_time(speech_end)) * 1000.0)
        return publish

    def _ack_segment(self, msg: Segment, status: int, text: str) -> None:
        self._pub_seg_ack.publish(ack_msg(msg.segment_id, from_time(msg.start), status, text,
                                          self.get_clock().now().to_msg()))

    def _on_topic_ack(self, msg: Ack) -> None:
        if self.rt is None:
            return
        if self.rt.acknowledged(msg.segment_id, from_time(msg.start)):
            self.diag.count(f'topics.ack.{msg.status}')
            if msg.status == Ack.REFUSED:
                self.diag.warn('topic_refused', f'segment {msg.segment_id}: {msg.message}')
        self._send_topic()

    def _send_topic(self) -> None:
        """Send the oldest unacknowledged Topic when it is due (stop-and-wait keeps consolidation's order)."""
        with self._send_lock:
            rt, pub = self.rt, self._pub_topic
            out = rt.next_topic() if rt is not None and pub is not None else None
            if out is None or not pub.get_subscription_count():
                return      # nothing due, or nobody to store it: it waits (the backlog WARN says so)
            pub.publish(topic_msg(out.topic, self.get_clock().now().to_msg()))
            rt.topic_sent(out)
        if out.sends:
            self.diag.count('topics.resent')

    def _publish_action(self, d: Decision, source: int, speech_end: Time) -> None:
        now = self.get_clock().now()
        lat = dict(d.latency_ms)
        if is_set(speech_end):
            lat['eos_to_action'] = (now.nanoseconds * 1e-9 - from_time(speech_end)) * 1000.0
        for stage, ms in lat.items():
            self.timer.add(stage, ms)
        self._pub_action.publish(action_msg(d, source, speech_end, now.to_msg(), lat))
        for note in d.notes:
            if note.startswith('retrieval:'):
                self.diag.warn('retrieval', note[len('retrieval: '):])
        self.diag.set('last_action_notes', '; '.join(d.notes) or '-')
        self._cache_diag()

    def _cache_diag(self) -> None:
        eng = self.rt.engine
        for k, v in eng.cache_stats().items():
            self.diag.set(f'cache.{k}', v)
        self._queue_diag()
        delays = list(eng.preemption.delays_ms)
        if delays:
            self.diag.set('preemption_wait.p50_ms', f'{np.percentile(delays, 50):.1f}')
            self.diag.set('preemption_wait.max_ms', f'{max(delays):.1f}')

    def _queue_diag(self) -> None:
        counts = self.rt.sleep.counts()
        backlog = counts['answered'] + counts['written']
        self.diag.set('sleep_queue', backlog)
        self.diag.set('sleep_pending', backlog)      # 0: every answered segment is stored (`replay --drain`)
        self.diag.set('sleep_queue.waiting_for_pass', counts['answered'])
        self.diag.set('sleep_queue.waiting_for_ack', counts['written'])
        if backlog >= self.cfg.reflex.sleep_queue:
            self.diag.warn('sleep_queue', f'backlog of {backlog} interactions ({counts["answered"]} waiting for their '
                                          f'memory pass, {counts["written"]} for consolidation): memory passes no '
                                          'longer yield to answers until it shrinks; nothing is dropped')

    def _lower_priority(self) -> None:
        problem = lower_thread_priority(self.cfg.reflex.sleep_nice)
        if problem and self.diag is not None:
            self.diag.warn('sleep_nice', f'sleep-time work keeps the node\'s priority: {problem}')

    def _sleep_loop(self) -> None:
        rt = self.rt
        last_diag = 0.0
        while not self._stop.is_set():
            self._send_topic()
            if time.monotonic() - last_diag > self.cfg.reflex.diagnostics_period_s:
                last_diag = time.monotonic()
                self._queue_diag()
            idle = time.monotonic() - self._last_input
            pressed = rt.sleep.over_high_water()     # back-pressure: memory passes go before answers
            if not pressed and (self._work or rt.engine.preemption.pending() or idle < self.cfg.reflex.sleep_idle_s):
                self._stop.wait(0.05)
                continue
            step = rt.sleep_step() if rt.sleep_runs_to_end() else self._in_background(rt.sleep_step)
            if step is None:
                self._stop.wait(0.05)
                continue
            self._after_sleep_step(step)

    def _in_background(self, work: Callable[[], SleepOutcome | None]) -> SleepOutcome | None:
        pool = self._background
        return None if pool is None else pool.submit(work).result()

    def _after_sleep_step(self, step: SleepOutcome) -> None:
        if step.kind == 'prefix_warmup':
            self.timer.add('prefix_warmup', step.ms)
        elif step.kind == 'preempted':
            self.diag.count('sleep.preempted')
        elif step.kind == 'failed':
            self.diag.warn('memory_pass' if step.segment_ids else 'prefix_warmup', step.error)
        else:
            self.timer.add('memory_pass', step.ms / len(step.topics))
            self.diag.count('sleep.batched_passes' if len(step.topics) > 1 else 'sleep.single_passes')
            self._send_topic()
            for topic in step.topics:
                self.diag.count(f'topics.{topic.producer}')
                if topic.dropped:       # facts nothing in the segment said: counted, never stored
                    self.diag.count('sleep.facts_not_heard', len(topic.dropped))
                if topic.unseen_visual:     # a description of what was seen that the segment did not show
                    self.diag.count('sleep.visual_not_seen')
                if topic.repaired:          # no JSON: the fields the model completed were read one by one
                    self.diag.count('sleep.replies_repaired')
                if topic.reading:           # a beam reading kept on a second look (sleep.reread)
                    self.diag.count('sleep.second_readings')
                if topic.read_alone:        # statements no fact told of, read alone (sleep.untold)
                    self.diag.count('sleep.statements_read_alone', topic.read_alone)
                if topic.placed:            # where a thing was put, read by rule (placement.with_placements)
                    self.diag.count('sleep.placements_by_rule', topic.placed)
                if topic.timed:             # when an event is, read by rule (schedule.with_schedule)
                    self.diag.count('sleep.event_times_by_rule', topic.timed)
            if step.error:
                self.diag.warn('memory_pass', f'{step.error} (topic from the fallback parser)')
        self._queue_diag()

    # -- service ---------------------------------------------------------------------------------------------------
    def _summarize(self, req: Summarize.Request, resp: Summarize.Response) -> Summarize.Response:
        if self.rt is None:
            resp.success, resp.message = False, 'reflex node not configured'
            return resp
        try:
            t0 = time.perf_counter()
            pool = self._background
            if pool is None:
                resp.success, resp.message = False, 'reflex node not active'
                return resp
            res = pool.submit(self.rt.summarize, summary_request_from(req)).result()
            self.timer.add('summarize', (time.perf_counter() - t0) * 1000.0)
            return fill_summary_response(res, resp)
        except Exception as e:  # noqa: BLE001 - the caller gets the reason and falls back
            resp.success, resp.message = False, f'{type(e).__name__}: {e}'
        return resp


def _queue_key(msg: Segment) -> tuple[int, float] | None:
    """The segment's cross-node key; None for one that cannot be keyed (answering it reports the problem)."""
    try:
        return segment_key(msg.segment_id, from_time(msg.start))
    except ValueError:
        return None


def main(args: Sequence[str] | None = None) -> int:
    """Entry point of ``reflex_node``."""
    return run_node(ReflexNode, args)


if __name__ == '__main__':
    raise SystemExit(main())


__all__ = ['ReflexNode', 'ServiceMemory', 'CONFIG_SECTIONS', 'main']
