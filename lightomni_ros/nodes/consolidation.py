# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The consolidation lifecycle node: single owner and writer of long-term memory.

A thin driver of :class:`~lightomni_ros.core.consolidation.runtime.ConsolidationRuntime`. on_configure opens the
memory with the process's text embedder; on_activate creates the Topic and face-identity subscriptions, the latched
GlobalState and FaceGallery publishers, the services, the reminder timer, diagnostics and the consolidation worker
(which resumes the pending queue); on_deactivate stops the worker and flushes; on_cleanup closes the memory.
Names: docs/GRAPH.md. Parameters: docs/CONFIG.md.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.client import Client
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node

from lightomni_ros.msg import (Ack, FaceGallery, FaceIdentity, GlobalState, GlobalStateNode, Reminder, Topic,
                               VoiceGallery, VoiceIdentity)
from lightomni_ros.srv import (ExportMemory, Forget, GetGlobalState, ImportMemory, ListProfiles, QueryMemory,
                               Remember, Summarize)

from ..core.config import ConfigError, section_classes
from ..core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime, RequestError
from ..core.consolidation.summarizer import ExtractiveSummarizer, RequestSummarizer
from ..core.memory.store import KIND_EPISODIC, KIND_SEMANTIC
from ..core.summary import SummaryRequest, SummaryResult
from .common import (CANCELLED, LATCHED_QOS, RELIABLE_QOS, Diagnostics, Interfaces, QuietSubscriptions, call_service,
                     declare_at_start, declare_configs, report_failure)
from .messages import (ack_msg, entry_msg, fired_msg, from_time, profile_msg, summarize_request, summary_result_from,
                       to_time, topic_from_msg, voice_entry_of, voice_event_from, voice_identity_msg)
from .process import run_node

CONFIG_SECTIONS = section_classes(ConsolidationConfigs)


def service_summarizer(node: Node, name: str, timeout_s: float, on_fallback: Callable[[str], None],
                       cancel: threading.Event | None = None) -> tuple[RequestSummarizer, Client]:
    """Summaries from the model owner's Summarize service ``name`` (extractive while it is unreachable or fails).

    A call in flight is given up as soon as ``cancel`` is set (the node is stopping), not after ``timeout_s``.
    """
    client = node.create_client(Summarize, name, callback_group=MutuallyExclusiveCallbackGroup())

    def send(req: SummaryRequest) -> SummaryResult | None:
        resp, error = call_service(client, summarize_request(req), timeout_s, cancel)
        if resp is None:
            # no model owner at all is normal, not worth a WARN each time; neither is a call given up on a stop
            if 'not available' not in error and not error.startswith(CANCELLED):
                on_fallback(error)
            return None
        return summary_result_from(resp)
    return RequestSummarizer(send, on_fallback), client


class ConsolidationNode(QuietSubscriptions, LifecycleNode):
    """Lifecycle node owning M_p, M_s, M_e, S_g and reminders."""

    def __init__(self, node_name: str = 'consolidation', **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self.cfg: ConsolidationConfigs | None = declare_at_start(self, ConsolidationConfigs)
        self.rt: ConsolidationRuntime | None = None
        self._io = Interfaces(self)
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._active = False
        self.diag: Diagnostics | None = None
        self._pub_state: Any = None
        self._redelivered: dict[int, float] = {}     # reminder id -> monotonic time it was last delivered again

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read parameters, load the embedder, open the store and the indexes."""
        try:
            self.cfg = declare_configs(self, ConsolidationConfigs)
        except ConfigError as e:
            report_failure(self, 'memory', f'invalid parameter: {e}')
            return TransitionCallbackReturn.FAILURE
        try:
            t0 = time.perf_counter()
            self.rt = ConsolidationRuntime(self.cfg)
        except Exception as e:  # noqa: BLE001 - report any load failure as a failed transition
            report_failure(self, 'memory', f'configure failed: {type(e).__name__}: {e}')
            self.rt = None
            return TransitionCallbackReturn.FAILURE
        m = self.rt.memory
        self.get_logger().info(
            f'memory at {m.dir}: {m.entries.ntotal(KIND_SEMANTIC)} semantic, {m.entries.ntotal(KIND_EPISODIC)} '
            f'episodic vectors ({m.entries.index_kind()}), {len(m.tree.nodes())} S_g nodes, '
            f'{self.rt.pending_count()} pending topics; embedder {self.rt.embedder_id} '
            f'({time.perf_counter() - t0:.1f} s)')
        return super().on_configure(state)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Create the interfaces, publish the latched state, start the worker and fire late reminders."""
        rt, cfg, io = self.rt, self.cfg.consolidation, self._io
        svc_group = ReentrantCallbackGroup()
        sub_group = MutuallyExclusiveCallbackGroup()
        self._pub_state = io.add(self.create_publisher(GlobalState, 'global_state', LATCHED_QOS))
        self._pub_gallery = io.add(self.create_publisher(FaceGallery, 'faces/gallery', LATCHED_QOS))
        self._pub_forgotten = io.add(self.create_publisher(FaceIdentity, 'faces/forgotten', RELIABLE_QOS))
        self._pub_voices = io.add(self.create_publisher(VoiceGallery, 'voices/gallery', LATCHED_QOS))
        self._pub_voice_forgotten = io.add(self.create_publisher(VoiceIdentity, 'voices/forgotten', RELIABLE_QOS))
        self._pub_due = io.add(self.create_publisher(Reminder, 'reminders/due', RELIABLE_QOS))
        self._pub_ack = io.add(self.create_publisher(Ack, 'topics/ack', RELIABLE_QOS))
        io.add(self.create_subscription(Ack, 'reminders/ack', self._on_reminder_ack, RELIABLE_QOS,
                                        callback_group=sub_group))
        self.diag = Diagnostics(self, 'memory', rt.timer, warn_ms={'query': 10.0, 'consolidate': 2000.0},
                                error_ms={'query': 100.0})
        rt.summarizer, client = service_summarizer(self, cfg.summarize_service, cfg.summarize_timeout_s,
                                                   self._summarize_fallback, self._stop)
        io.add(client)
        rt.on_state_change = self._publish_state
        io.add(self.create_subscription(Topic, 'topics', self._on_topic, RELIABLE_QOS, callback_group=sub_group))
        io.add(self.create_subscription(Reminder, 'reminders/new', self._on_new_reminder, RELIABLE_QOS,
                                        callback_group=sub_group))
        io.add(self.create_subscription(FaceIdentity, 'faces/identity', self._on_identity, RELIABLE_QOS,
                                        callback_group=sub_group))
        io.add(self.create_subscription(VoiceIdentity, 'voices/identity', self._on_voice, RELIABLE_QOS,
                                        callback_group=sub_group))
        for srv, name, handler in ((QueryMemory, 'query_memory', self._query), (Remember, 'remember', self._remember),
                                   (Forget, 'forget', self._forget), (GetGlobalState, 'get_global_state',
                                                                      self._get_state),
                                   (ListProfiles, 'list_profiles', self._list_profiles),
                                   (ExportMemory, 'export_memory', self._export),
                                   (ImportMemory, 'import_memory', self._import)):
            io.add(self.create_service(srv, name, self._guard(handler), callback_group=svc_group))
        io.add(self.create_timer(cfg.reminder_period_s, self._tick, callback_group=sub_group))
        io.add(self.create_timer(self.cfg.privacy.retention_check_s, self._expire, callback_group=sub_group))
        self._publish_state()
        self._publish_gallery()
        self._tick()  # reminders that fell due while the node was down fire now, with their delay
        self._expire()
        self.diag.set('encrypted', 'yes (SQLCipher)' if rt.encrypted else 'no')
        self._stop.clear()
        rt.resume()
        self._active = True
        self._worker = threading.Thread(target=self._work, name='consolidation', daemon=True)
        self._worker.start()
        self._wake.set()
        self.get_logger().info('active')
        return super().on_activate(state)

    def _summarize_fallback(self, text: str) -> None:
        if self.diag is not None:
            self.diag.warn('summarize', text + '; extractive fallback')

    def _teardown(self) -> None:
        self._active = False
        self._stop.set()
        if self.rt is not None:
            self.rt.interrupt()   # a backlog of merges must not hold the stop (Ctrl-C) past the launcher's grace
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout=60.0)
            self._worker = None
        self._io.destroy()
        self._pub_state = None
        if self.diag is not None:
            self.diag.destroy()
            self.diag = None
        if self.rt is not None:
            self.rt.on_state_change = None
            self.rt.summarizer = ExtractiveSummarizer()
            self.rt.flush()

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop the worker, remove the interfaces, flush the indexes."""
        self._teardown()
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the store and release the embedder."""
        self._release()
        return super().on_cleanup(state)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop everything from any state (safe twice)."""
        if self._active:
            self._teardown()
        self._release()
        return super().on_shutdown(state)

    def _release(self) -> None:
        if self.rt is not None:
            self.rt.close()
            self.rt = None

    def destroy_node(self) -> None:
        """Flush memory before the node goes away (Ctrl-C)."""
        if self._active:
            self._teardown()
        self._release()
        super().destroy_node()

    # -- worker ----------------------------------------------------------------------------------------------------
    def _work(self) -> None:
        rt = self.rt
        period = self.cfg.memory.sync_period_s
        next_sync = 0.0
        while not self._stop.is_set():
            self._wake.wait(min(0.5, period))
            self._wake.clear()
            while not self._stop.is_set():
                if time.monotonic() >= next_sync:  # also between Topics: a backlog must not hold the fleet back
                    next_sync = time.monotonic() + period
                    self._sync()
                try:
                    if not rt.process_next():
                        break
                    # counted once its S_g was published (process_next publishes it): `replay --drain` waits for it
                    self.diag.count('topics.stored')
                except Exception as e:  # noqa: BLE001 - keep consolidating; the queue row stays for a retry
                    self.diag.warn('consolidate', f'{type(e).__name__}: {e}')
                    self._stop.wait(1.0)
                    break

    def _sync(self) -> None:
        """Exchange with the fleet's store (nothing to do with the embedded backend) and report its state."""
        try:
            report = self.rt.sync()
        except Exception as e:  # noqa: BLE001 - e.g. a fleet configuration error found late: say so, keep going
            self.diag.warn('fleet', f'{type(e).__name__}: {e}')
            return
        if not report.shared:
            return
        self.diag.set('outbox_backlog', report.backlog)
        self.diag.set('fleet_connected', report.connected)
        if not report.connected:
            self.diag.warn('fleet', f'Milvus unreachable ({report.error}); working locally, outbox backlog '
                                    f'{report.backlog}')
        for face_id in report.conflicts:
            self.diag.warn('identity', f'{face_id} was given to another person by another robot first: this '
                                       'robot\'s copy now follows the fleet')
        for face_id, _ in report.forgotten:
            self.get_logger().info(f'{face_id} was forgotten by another robot of the fleet: forgotten here too')
            self._pub_forgotten.publish(FaceIdentity(op=FaceIdentity.OP_FORGET, face_id=face_id))
        if report.forgotten or report.profiles_changed or report.conflicts:
            self._publish_gallery()

    def _on_topic(self, msg: Topic) -> None:
        start = from_time(msg.start)
        try:
            receipt = self.rt.enqueue(topic_from_msg(msg))
        except ValueError as e:
            self.diag.warn('topic', f'segment {msg.segment_id} rejected: {e}')
            self._ack(msg.segment_id, start, Ack.REFUSED, str(e))
            return
        except Exception as e:  # noqa: BLE001 - e.g. a full disk: say so, do not acknowledge (it is sent again)
            self.diag.warn('topic', f'segment {msg.segment_id} not stored: {type(e).__name__}: {e}')
            return
        status = {'stored': Ack.STORED, 'duplicate': Ack.DUPLICATE, 'forgotten': Ack.FORGOTTEN}[receipt.status]
        self._ack(msg.segment_id, start, status, receipt.status)
        self.diag.count(f'topics.{receipt.status}')
        self.get_logger().debug(f'topic of segment {msg.segment_id}: {receipt.status} ({receipt.queue_id})')
        self._wake.set()

    def _ack(self, segment_id: int, start: float, status: int, message: str) -> None:
        self._pub_ack.publish(ack_msg(segment_id, start, status, message, self.get_clock().now().to_msg()))

    def _expire(self) -> None:
        try:
            res = self.rt.expire()
        except Exception as e:  # noqa: BLE001 - reported; the next pass tries again
            if self.diag is not None:
                self.diag.warn('retention', f'{type(e).__name__}: {e}')
            return
        if res.any():
            self.get_logger().info(f'retention: {res}')
            if res.profiles:
                self._publish_gallery()

    def _on_reminder_ack(self, msg: Ack) -> None:
        try:
            if self.rt.reminder_spoken(int(msg.segment_id)):
                self._redelivered.pop(int(msg.segment_id), None)
        except Exception as e:  # noqa: BLE001 - a bad acknowledgement must not stop the node
            self.diag.warn('reminder', f'acknowledgement of reminder {msg.segment_id}: {type(e).__name__}: {e}')

    def _on_new_reminder(self, msg: Reminder) -> None:
        try:
            rid = self.rt.add_reminder(msg.text, from_time(msg.due), msg.face_id, msg.source_segment)
        except Exception as e:  # noqa: BLE001 - RequestError for bad input, anything else reported the same way
            self.diag.warn('reminder', f'"{msg.text}" not stored: {type(e).__name__}: {e}')
            return
        self.diag.count('reminders.received')
        self.get_logger().info(f'reminder {rid} stored: "{msg.text}" due at {from_time(msg.due):.1f}')

    def _on_identity(self, msg: FaceIdentity) -> None:
        if msg.op not in (FaceIdentity.OP_NEW, FaceIdentity.OP_UPDATE):
            self.diag.warn('identity', f'unexpected op {msg.op} for {msg.face_id}')
            return
        try:
            self.rt.apply_identity(msg.face_id, list(msg.embedding), msg.embedding_backend, msg.observations,
                                   bytes(msg.avatar.data), msg.avatar.format, new=msg.op == FaceIdentity.OP_NEW)
        except Exception as e:  # noqa: BLE001 - RequestError for bad input, anything else reported the same way
            self.diag.warn('identity', f'{msg.face_id}: {e}')
            return
        self._publish_gallery()

    def _on_voice(self, msg: VoiceIdentity) -> None:
        try:
            ev = voice_event_from(msg)
            self.rt.apply_voice(ev.op, ev.voice_id, list(ev.embedding), ev.backend, ev.observations, ev.face_id)
        except Exception as e:  # noqa: BLE001 - RequestError/ValueError for bad input, anything else the same way
            self.diag.warn('voice', f'{msg.voice_id}: {e}')
            return
        self._publish_gallery()

    def _tick(self) -> None:
        try:
            self._fire_reminders()
        except Exception as e:  # noqa: BLE001 - a failing check must not stop the executor
            if self.diag is not None:
                self.diag.warn('reminders', f'{type(e).__name__}: {e}')

    def _fire_reminders(self) -> None:
        rt = self.rt
        for r in rt.fire_due():
            late = f' ({r.delay:.1f} s late)' if r.delay >= 2 * self.cfg.consolidation.reminder_period_s else ''
            self.get_logger().info(f'reminder {r.id} due: "{r.text}" for {r.face_id or "(anyone)"}{late}')
            self._pub_due.publish(fired_msg(r))
        # a reminder fired while the reflex node was down (or whose confirmation was lost) is delivered again; the
        # reflex node speaks each id once
        if self.count_publishers(self._pub_due.topic_name.rsplit('/', 1)[0] + '/ack'):
            for r in rt.unspoken_reminders(max(3.0, 5 * self.cfg.consolidation.reminder_period_s)):
                if self._redelivered.get(r.id, 0.0) < time.monotonic() - 3.0:
                    self._redelivered[r.id] = time.monotonic()
                    self._pub_due.publish(fired_msg(r))
                    if self.diag is not None:
                        self.diag.count('reminders.redelivered')
        if self.diag is not None:
            self.diag.set('queue_depth', rt.pending_count())
            s = rt.stats
            for key in ('topics_consolidated', 'facts_appended', 'facts_extended', 'merges', 'profile_updates',
                        'names_learned', 'extractive_fallbacks'):
                self.diag.set(key, getattr(s, key))
            self.diag.set('producer', ','.join(f'{k}={v}' for k, v in sorted(s.last_producer.items())))
            self.diag.set('embedder', rt.embedder_id)
            self.diag.set('backend', rt.backend_name())

    # -- publishing --------------------------------------------------------------------------------------------------
    def _state_msg(self, max_tokens: int = 0) -> GlobalState:
        v = self.rt.global_state(max_tokens)
        msg = GlobalState(version=v.version, k=v.k, script=v.script, script_tokens=v.script_tokens,
                          over_budget=v.over_budget, timezone=v.timezone)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.nodes = [GlobalStateNode(id=n.id, level=n.level, start=to_time(n.start), end=to_time(n.end),
                                     first_segment=max(0, n.first_segment), last_segment=max(0, n.last_segment),
                                     text=n.text, children=list(n.children)) for n in v.nodes]
        if v.over_budget and self.diag is not None:
            self.diag.warn('global_state', f'S_g script over its budget; oldest text truncated to {v.script_tokens} '
                                           'tokens')
        return msg

    def _publish_state(self) -> None:
        if self._pub_state is not None:
            msg = self._state_msg()
            self._pub_state.publish(msg)
            if self.diag is not None:
                self.diag.set('sg_version', msg.version)

    def _publish_gallery(self) -> None:
        msg = FaceGallery(version=self.rt.gallery_version())
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.identities = [FaceIdentity(op=FaceIdentity.OP_UPDATE, face_id=p.face_id,
                                       embedding=[float(x) for x in p.embedding],
                                       embedding_backend=p.embedding_backend, observations=p.observations)
                          for p in self.rt.profiles() if p.embedding is not None]
        self._pub_gallery.publish(msg)
        voices = VoiceGallery(version=self.rt.voice_gallery_version())
        voices.header.stamp = msg.header.stamp
        voices.voices = [voice_identity_msg(voice_entry_of(v)) for v in self.rt.voices() if v.embedding is not None]
        self._pub_voices.publish(voices)

    # -- services ----------------------------------------------------------------------------------------------------
    def _guard(self, handler: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """Turn any failure into success=false with a message: a bad request never crashes the node."""
        def wrapped(req: Any, resp: Any) -> Any:
            try:
                handler(req, resp)
                resp.success = True
            except RequestError as e:
                resp.success, resp.message = False, str(e)
            except Exception as e:  # noqa: BLE001
                self.get_logger().error(f'{handler.__name__}: {type(e).__name__}: {e}')
                resp.success, resp.message = False, f'internal error: {type(e).__name__}: {e}'
            return resp
        wrapped.__name__ = handler.__name__
        return wrapped

    def _query(self, req: QueryMemory.Request, resp: QueryMemory.Response) -> None:
        r = self.rt.query(list(req.query_vector) or None, req.query_text, req.k_semantic, req.k_episodic,
                          list(req.face_ids), req.embedder, list(req.robot_ids), from_time(req.window_start),
                          from_time(req.window_end), req.chronological)
        tz = self.rt.memory.tz
        resp.semantic = [entry_msg(e, s, tz) for e, s in r.semantic]
        resp.episodic = [entry_msg(e, s, tz) for e, s in r.episodic]
        resp.profiles = [profile_msg(p) for p in r.profiles]
        resp.latency_ms = float(r.latency_ms)

    def _remember(self, req: Remember.Request, resp: Remember.Response) -> None:
        resp.entry_id = self.rt.remember(req.content, list(req.face_ids), from_time(req.start), from_time(req.end))
        resp.message = f'stored as semantic:{resp.entry_id} (pinned)'

    def _forget(self, req: Forget.Request, resp: Forget.Response) -> None:
        rt = self.rt
        if req.scope == Forget.Request.SCOPE_FACE:
            voice = req.face_id.startswith('<voice_')
            res = rt.forget_voice(req.face_id) if voice else rt.forget_face(req.face_id)
            if not voice:
                self._pub_forgotten.publish(FaceIdentity(op=FaceIdentity.OP_FORGET, face_id=req.face_id))
            for vid in res.voice_ids:
                self._pub_voice_forgotten.publish(VoiceIdentity(op=VoiceIdentity.OP_FORGET, voice_id=vid))
            self._publish_gallery()
        elif req.scope == Forget.Request.SCOPE_ENTRIES:
            res = rt.forget_entries(list(req.entry_ids))
        elif req.scope == Forget.Request.SCOPE_TIME_RANGE:
            res = rt.forget_range(from_time(req.start), from_time(req.end))
        else:
            raise RequestError(f'unknown scope {req.scope}; use SCOPE_FACE, SCOPE_ENTRIES or SCOPE_TIME_RANGE')
        for key in ('removed_entries', 'redacted_entries', 'removed_profiles', 'removed_vectors',
                    'changed_state_nodes'):
            setattr(resp, key, getattr(res, key))
        resp.message = res.message()
        self.get_logger().info(f'forget (scope {req.scope}): {resp.message}')

    def _get_state(self, req: GetGlobalState.Request, resp: GetGlobalState.Response) -> None:
        resp.state = self._state_msg(req.max_tokens)

    def _list_profiles(self, req: ListProfiles.Request, resp: ListProfiles.Response) -> None:
        resp.profiles = [profile_msg(p, brief=req.brief) for p in self.rt.profiles(list(req.face_ids))]

    def _export(self, req: ExportMemory.Request, resp: ExportMemory.Response) -> None:
        resp.records = self.rt.export_jsonl(req.path)
        resp.message = f'{resp.records} records written to {req.path}'

    def _import(self, req: ImportMemory.Request, resp: ImportMemory.Response) -> None:
        resp.records = self.rt.import_jsonl(req.path, req.replace)
        resp.message = f'{resp.records} records imported from {req.path}' + (' (replaced)' if req.replace else '')
        self._publish_gallery()


def main(args: Sequence[str] | None = None) -> int:
    """Entry point of ``consolidation_node``."""
    return run_node(ConsolidationNode, args)


if __name__ == '__main__':
    raise SystemExit(main())


__all__ = ['ConsolidationNode', 'CONFIG_SECTIONS', 'service_summarizer', 'main']
