# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The consolidation lifecycle node: single owner and writer of long-term memory.

on_configure opens the store, loads (or rebuilds) the vector indexes and the text embedder; on_activate creates the
Topic and face-identity subscriptions, the latched GlobalState and FaceGallery publishers, the services, the reminder
timer, diagnostics and the consolidation worker (which resumes the pending queue); on_deactivate stops the worker and
flushes; on_cleanup releases the store and the embedder. Names: docs/GRAPH.md. Parameters: docs/CONFIG.md.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

from diagnostic_msgs.msg import KeyValue
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleState, Node, TransitionCallbackReturn
from sensor_msgs.msg import CompressedImage

from lightomni_ros.msg import (FaceGallery, FaceIdentity, GlobalState, GlobalStateNode, MemoryEntry, Profile,
                               Reminder, Topic)
from lightomni_ros.srv import (ExportMemory, Forget, GetGlobalState, ImportMemory, ListProfiles, QueryMemory,
                               Remember, Summarize)

from ..core.config import ConfigError
from ..core.consolidation.config import ConsolidationConfig
from ..core.consolidation.consolidator import Consolidator, ForgetResult, RequestError
from ..core.consolidation.summarizer import ExtractiveSummarizer, ProfileUpdate, Summary
from ..core.consolidation.topic import ReminderIntent, TopicData
from ..core.memory import profiles as prof
from ..core.memory.config import MemoryConfig
from ..core.memory.embedder import load_embedder
from ..core.memory.store import KIND_EPISODIC, KIND_SEMANTIC, EpisodicEntry, SemanticEntry
from ..core.models import ModelsConfig
from .common import LATCHED_QOS, RELIABLE_QOS, Diagnostics, declare_config, from_time, run_node, to_time

CONFIG_SECTIONS = {'memory.': MemoryConfig, 'consolidation.': ConsolidationConfig, 'models.': ModelsConfig}


class ServiceSummarizer:
    """Summaries from the reflex node's ``summarize`` service; extractive ones while it is unreachable or fails."""

    def __init__(self, node: Node, name: str, timeout_s: float, on_fallback: Callable[[str], None]) -> None:
        self.node = node
        self.client = node.create_client(Summarize, name, callback_group=MutuallyExclusiveCallbackGroup())
        self.timeout_s = timeout_s
        self.fallback = ExtractiveSummarizer()
        self.on_fallback = on_fallback

    def _call(self, req: Summarize.Request) -> Summarize.Response | None:
        if not self.client.service_is_ready():
            return None
        done = threading.Event()
        future = self.client.call_async(req)
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(self.timeout_s):
            self.client.remove_pending_request(future)
            self.on_fallback(f'summarize timed out after {self.timeout_s:g} s')
            return None
        resp = future.result()
        if resp is None or not resp.success or not resp.summary.strip():
            self.on_fallback(f'summarize failed: {getattr(resp, "message", "no response")}')
            return None
        return resp

    def merge(self, texts: Sequence[str], max_tokens: int) -> Summary:
        """S_g merge through the service (MODE_MERGE)."""
        resp = self._call(Summarize.Request(mode=Summarize.Request.MODE_MERGE, texts=list(texts),
                                            max_tokens=max_tokens))
        if resp is None:
            return self.fallback.merge(texts, max_tokens)
        return Summary(resp.summary.strip(), resp.producer or 'memory-adapter')

    def profile(self, face_id: str, texts: Sequence[str], profile: prof.Profile, max_tokens: int) -> ProfileUpdate:
        """Profile update through the service (MODE_PROFILE)."""
        req = Summarize.Request(mode=Summarize.Request.MODE_PROFILE, texts=list(texts), face_id=face_id,
                                profile=profile_msg(profile, brief=True), max_tokens=max_tokens)
        resp = self._call(req)
        if resp is None:
            return self.fallback.profile(face_id, texts, profile, max_tokens)
        return ProfileUpdate(summary=resp.summary.strip(), attributes={kv.key: kv.value for kv in resp.attributes},
                             name=resp.name.strip(), producer=resp.producer or 'memory-adapter')


def profile_msg(p: prof.Profile, brief: bool = False) -> Profile:
    """Core profile -> message (``brief`` leaves out avatar and embedding)."""
    m = Profile(face_id=p.face_id, name=p.name, embedding_backend=p.embedding_backend,
                observations=max(0, int(p.observations)), first_seen=to_time(p.first_seen),
                last_seen=to_time(p.last_seen))
    m.attributes = [KeyValue(key=k, value=v) for k, v in sorted(p.attributes.items())]
    if not brief:
        if p.avatar:
            m.avatar = CompressedImage(format=p.avatar_format or 'jpeg', data=p.avatar)
        if p.embedding is not None:
            m.embedding = [float(x) for x in p.embedding]
    return m


def entry_msg(e: SemanticEntry | EpisodicEntry, score: float, tz: Any) -> MemoryEntry:
    """Core entry -> MemoryEntry."""
    m = MemoryEntry(id=e.id, start=to_time(e.start), end=to_time(e.end), content=e.render(tz),
                    source_segment=max(0, int(e.source_segment)), face_ids=list(e.face_ids), score=float(score))
    if isinstance(e, SemanticEntry):
        m.kind, m.pinned = MemoryEntry.KIND_SEMANTIC, e.pinned
    else:
        m.kind = MemoryEntry.KIND_EPISODIC
        m.visual, m.audio, m.response, m.raw_refs = e.visual, e.audio, e.response, list(e.raw_refs)
    return m


def topic_data(msg: Topic) -> TopicData:
    """Topic message -> core TopicData (validated)."""
    t = TopicData(segment_id=int(msg.segment_id), start=from_time(msg.start), end=from_time(msg.end),
                  face_ids=list(msg.face_ids), semantic=list(msg.semantic), remembered=list(msg.remembered),
                  visual=msg.visual, audio=msg.audio, response=msg.response, raw_refs=list(msg.raw_refs),
                  reminders=[ReminderIntent(text=r.text, due=from_time(r.due), face_id=r.face_id)
                             for r in msg.reminders],
                  producer=msg.producer)
    t.check()
    return t


class ConsolidationNode(Node):
    """Lifecycle node owning M_p, M_s, M_e, S_g and reminders."""

    def __init__(self, node_name: str = 'consolidation', **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self.memory: Consolidator | None = None
        self._embedder: Any = None
        self._interfaces: list[tuple[str, Any]] = []
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._active = False
        self.diag: Diagnostics | None = None
        self.cfg: ConsolidationConfig | None = None
        self._pub_state: Any = None
        for prefix, cls in CONFIG_SECTIONS.items():
            declare_config(self, cls, prefix)

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read parameters, load the embedder, open the store and the indexes."""
        try:
            mcfg = declare_config(self, MemoryConfig, 'memory.')
            self.cfg = declare_config(self, ConsolidationConfig, 'consolidation.')
            models = declare_config(self, ModelsConfig, 'models.')
        except ConfigError as e:
            self.get_logger().error(f'invalid parameter: {e}')
            return TransitionCallbackReturn.FAILURE
        try:
            t0 = time.perf_counter()
            self._embedder = load_embedder(mcfg.embedding_backend, models.models_dir, mcfg.embedding_device,
                                           mcfg.embedding_batch, mcfg.embedding_threads)
            self.memory = Consolidator(mcfg, self.cfg, self._embedder)
        except Exception as e:  # noqa: BLE001 - report any load failure as a failed transition
            self.get_logger().error(f'configure failed: {type(e).__name__}: {e}')
            self._embedder = self.memory = None
            return TransitionCallbackReturn.FAILURE
        m = self.memory
        self.get_logger().info(
            f'memory at {m.dir}: {m.indexes[KIND_SEMANTIC].ntotal} semantic, {m.indexes[KIND_EPISODIC].ntotal} '
            f'episodic vectors ({m.indexes[KIND_SEMANTIC].kind}), {len(m.tree.nodes())} S_g nodes, '
            f'{m.pending_count()} pending topics; embedder {self._embedder.name} '
            f'({time.perf_counter() - t0:.1f} s)')
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Create the interfaces, publish the latched state, start the worker and fire late reminders."""
        assert self.memory is not None and self.cfg is not None
        m, cfg = self.memory, self.cfg
        svc_group = ReentrantCallbackGroup()
        sub_group = MutuallyExclusiveCallbackGroup()
        self._pub_state = self.create_publisher(GlobalState, 'global_state', LATCHED_QOS)
        self._pub_gallery = self.create_publisher(FaceGallery, 'faces/gallery', LATCHED_QOS)
        self._pub_forgotten = self.create_publisher(FaceIdentity, 'faces/forgotten', RELIABLE_QOS)
        self._pub_due = self.create_publisher(Reminder, 'reminders/due', RELIABLE_QOS)
        self.diag = Diagnostics(self, 'memory', m.timer, warn_ms={'query': 10.0, 'consolidate': 2000.0},
                                error_ms={'query': 100.0})
        self.summarizer = ServiceSummarizer(self, cfg.summarize_service, cfg.summarize_timeout_s,
                                            self._summarize_fallback)
        m.summarizer = self.summarizer
        m.on_state_change = self._state_changed
        self._interfaces = [
            ('pub', self._pub_state), ('pub', self._pub_gallery), ('pub', self._pub_forgotten), ('pub', self._pub_due),
            ('client', self.summarizer.client),
            ('sub', self.create_subscription(Topic, 'topics', self._on_topic, RELIABLE_QOS, callback_group=sub_group)),
            ('sub', self.create_subscription(Reminder, 'reminders/new', self._on_new_reminder, RELIABLE_QOS,
                                             callback_group=sub_group)),
            ('sub', self.create_subscription(FaceIdentity, 'faces/identity', self._on_identity, RELIABLE_QOS,
                                             callback_group=sub_group)),
            ('srv', self.create_service(QueryMemory, 'query_memory', self._guard(self._query),
                                        callback_group=svc_group)),
            ('srv', self.create_service(Remember, 'remember', self._guard(self._remember), callback_group=svc_group)),
            ('srv', self.create_service(Forget, 'forget', self._guard(self._forget), callback_group=svc_group)),
            ('srv', self.create_service(GetGlobalState, 'get_global_state', self._guard(self._get_state),
                                        callback_group=svc_group)),
            ('srv', self.create_service(ListProfiles, 'list_profiles', self._guard(self._list_profiles),
                                        callback_group=svc_group)),
            ('srv', self.create_service(ExportMemory, 'export_memory', self._guard(self._export),
                                        callback_group=svc_group)),
            ('srv', self.create_service(ImportMemory, 'import_memory', self._guard(self._import),
                                        callback_group=svc_group)),
            ('timer', self.create_timer(cfg.reminder_period_s, self._tick, callback_group=sub_group)),
        ]
        self._publish_state()
        self._publish_gallery()
        self._tick()  # reminders that fell due while the node was down fire now, with their delay
        self._stop.clear()
        self._active = True
        self._worker = threading.Thread(target=self._work, name='consolidation', daemon=True)
        self._worker.start()
        self._wake.set()
        self.get_logger().info('active')
        return TransitionCallbackReturn.SUCCESS

    def _summarize_fallback(self, text: str) -> None:
        if self.diag is not None:
            self.diag.warn('summarize', text + '; extractive fallback')

    def _teardown(self) -> None:
        self._active = False
        self._stop.set()
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout=60.0)
            self._worker = None
        for kind, handle in reversed(self._interfaces):
            {'pub': self.destroy_publisher, 'sub': self.destroy_subscription, 'srv': self.destroy_service,
             'client': self.destroy_client, 'timer': self.destroy_timer}[kind](handle)
        self._interfaces = []
        self._pub_state = None
        if self.diag is not None:
            self.diag.destroy()
            self.diag = None
        if self.memory is not None:
            self.memory.on_state_change = None
            self.memory.summarizer = ExtractiveSummarizer()
            self.memory.flush()

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop the worker, remove the interfaces, flush the indexes."""
        self._teardown()
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the store and release the embedder."""
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop everything from any state."""
        if self._active:
            self._teardown()
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def _release(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None
        self._embedder = None

    def destroy_node(self) -> None:
        """Flush memory before the node goes away (Ctrl-C)."""
        if self._active:
            self._teardown()
        self._release()
        super().destroy_node()

    # -- worker ----------------------------------------------------------------------------------------------------
    def _work(self) -> None:
        m = self.memory
        while not self._stop.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            while not self._stop.is_set():
                try:
                    if not m.process_next():
                        break
                    # counted once its S_g was published (process_next publishes it): `replay --drain` waits for it
                    self.diag.count('topics.stored')
                except Exception as e:  # noqa: BLE001 - keep consolidating; the queue row stays for a retry
                    self.diag.warn('consolidate', f'{type(e).__name__}: {e}')
                    self._stop.wait(1.0)
                    break

    def _on_topic(self, msg: Topic) -> None:
        try:
            qid = self.memory.enqueue(topic_data(msg))
        except ValueError as e:
            self.diag.warn('topic', f'segment {msg.segment_id} rejected: {e}')
            return
        except Exception as e:  # noqa: BLE001 - e.g. a full disk: say so and keep running
            self.diag.warn('topic', f'segment {msg.segment_id} not stored: {type(e).__name__}: {e}')
            return
        self.diag.count('topics.acknowledged')
        self.get_logger().debug(f'topic of segment {msg.segment_id} queued as {qid}')
        self._wake.set()

    def _on_new_reminder(self, msg: Reminder) -> None:
        try:
            rid = self.memory.add_reminder(msg.text, from_time(msg.due), msg.face_id, msg.source_segment)
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
            self.memory.apply_identity(msg.face_id, list(msg.embedding), msg.embedding_backend, msg.observations,
                                       bytes(msg.avatar.data), msg.avatar.format)
        except Exception as e:  # noqa: BLE001 - RequestError for bad input, anything else reported the same way
            self.diag.warn('identity', f'{msg.face_id}: {e}')
            return
        self._publish_gallery()

    def _tick(self) -> None:
        try:
            self._fire_reminders()
        except Exception as e:  # noqa: BLE001 - a failing check must not stop the executor
            if self.diag is not None:
                self.diag.warn('reminders', f'{type(e).__name__}: {e}')

    def _fire_reminders(self) -> None:
        m = self.memory
        for r in m.fire_due():
            late = f' ({r.delay:.1f} s late)' if r.delay >= 2 * self.cfg.reminder_period_s else ''
            self.get_logger().info(f'reminder {r.id} due: "{r.text}" for {r.face_id or "(anyone)"}{late}')
            self._pub_due.publish(Reminder(id=r.id, due=to_time(r.due), text=r.text, face_id=r.face_id,
                                           status=Reminder.STATUS_FIRED, delay=float(r.delay),
                                           source_segment=r.source_segment))
        if self.diag is not None:
            self.diag.set('queue_depth', m.pending_count())
            s = m.stats
            for key in ('topics_consolidated', 'facts_appended', 'facts_extended', 'merges', 'profile_updates',
                        'names_learned', 'extractive_fallbacks'):
                self.diag.set(key, getattr(s, key))
            self.diag.set('producer', ','.join(f'{k}={v}' for k, v in sorted(s.last_producer.items())))

    # -- publishing --------------------------------------------------------------------------------------------------
    def _state_changed(self) -> None:
        self._publish_state()

    def _state_msg(self, max_tokens: int = 0) -> GlobalState:
        v = self.memory.global_state(max_tokens)
        msg = GlobalState(version=v.version, k=v.k, script=v.script, script_tokens=v.script_tokens,
                          over_budget=v.over_budget)
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
        msg = FaceGallery(version=self.memory.gallery_version())
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.identities = [FaceIdentity(op=FaceIdentity.OP_UPDATE, face_id=p.face_id,
                                       embedding=[float(x) for x in p.embedding],
                                       embedding_backend=p.embedding_backend, observations=p.observations)
                          for p in self.memory.profiles() if p.embedding is not None]
        self._pub_gallery.publish(msg)

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
        r = self.memory.query(list(req.query_vector) or None, req.query_text, req.k_semantic, req.k_episodic,
                              list(req.face_ids))
        tz = self.memory.tz
        resp.semantic = [entry_msg(e, s, tz) for e, s in r.semantic]
        resp.episodic = [entry_msg(e, s, tz) for e, s in r.episodic]
        resp.profiles = [profile_msg(p) for p in r.profiles]
        resp.latency_ms = float(r.latency_ms)

    def _remember(self, req: Remember.Request, resp: Remember.Response) -> None:
        resp.entry_id = self.memory.remember(req.content, list(req.face_ids), from_time(req.start),
                                             from_time(req.end))
        resp.message = f'stored as semantic:{resp.entry_id} (pinned)'

    def _forget(self, req: Forget.Request, resp: Forget.Response) -> None:
        m = self.memory
        if req.scope == Forget.Request.SCOPE_FACE:
            res: ForgetResult = m.forget_face(req.face_id)
            self._pub_forgotten.publish(FaceIdentity(op=FaceIdentity.OP_FORGET, face_id=req.face_id))
            self._publish_gallery()
        elif req.scope == Forget.Request.SCOPE_ENTRIES:
            res = m.forget_entries(list(req.entry_ids))
        elif req.scope == Forget.Request.SCOPE_TIME_RANGE:
            res = m.forget_range(from_time(req.start), from_time(req.end))
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
        resp.profiles = [profile_msg(p, brief=req.brief) for p in self.memory.profiles(list(req.face_ids))]

    def _export(self, req: ExportMemory.Request, resp: ExportMemory.Response) -> None:
        resp.records = self.memory.export_jsonl(req.path)
        resp.message = f'{resp.records} records written to {req.path}'

    def _import(self, req: ImportMemory.Request, resp: ImportMemory.Response) -> None:
        resp.records = self.memory.import_jsonl(req.path, req.replace)
        resp.message = f'{resp.records} records imported from {req.path}' + (' (replaced)' if req.replace else '')
        self._publish_gallery()


def main(args: Sequence[str] | None = None) -> int:
    """Entry point of ``consolidation_node``."""
    return run_node(ConsolidationNode, args)


if __name__ == '__main__':
    raise SystemExit(main())


__all__ = ['ConsolidationNode', 'ServiceSummarizer', 'CONFIG_SECTIONS', 'main']
