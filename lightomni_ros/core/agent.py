# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The offline ``LightOmni`` facade: the whole method in one process, without ROS (paper Eq. 1, DESIGN.md).

A thin synchronous driver of the same three runtimes the nodes drive, built from the same config bundles:

    PerceptionRuntime (audio -> VAD -> segments, ASR, keyframes, faces)
      -> ReflexRuntime (reflex pass, retrieval against the consolidation runtime directly, response)  -> Action
      -> ReflexRuntime.sleep_step (memory pass)                                                       -> Topic
      -> ConsolidationRuntime (store, S_g, profiles, reminders)                                      -> S_g

What the nodes do with messages, the facade does with direct calls; what the nodes do with threads and the wall
clock, the facade does on the sensor clock: inputs carry sensor stamps (seconds) and the facade's clock is the latest
stamp seen, so a bag or scenario replays as fast as the CPU allows while reminders, time-outs and memory times follow
the recorded timeline. Model calls are timed on the wall clock: every :class:`AgentAction` says when it would have
been published had the inputs arrived in real time (``t``: the input stamp that closed the segment plus the measured
compute, queued behind earlier user work). Sleep-time work runs in the idle time it would get on the robot: a Topic
reaches memory ``sleep_idle_s`` after the answer plus its measured memory-pass time (user passes pre-empt it on the
robot, so they are not delayed here).
"""

from __future__ import annotations

import dataclasses
import logging
import pathlib
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime, RequestError
from .consolidation.summarizer import RequestSummarizer
from .embedding import TextEmbedder, text_embedder
from .memory.store import ReminderRow
from .perception.faces import IdentityEvent
from .perception.runtime import GalleryEntry, PendingSegment, PerceptionConfigs, PerceptionRuntime
from .perception.voices import VoiceEvent, VoiceGalleryEntry
from .reflex.engine import ReflexEngine
from .reflex.people import PersonSeen
from .reflex.retrieval import MemoryQuery, entry_item, profile_item
from .reflex.runtime import ReflexConfigs, ReflexRuntime
from .reflex.types import Decision, Retrieved, SegmentInput, StateNode
from .segment import TYPED_TEXT, FaceSeen, SegmentData
from .topic import TopicData

log = logging.getLogger('lightomni.agent')

SOURCE_SEGMENT, SOURCE_REMINDER = 0, 1


@dataclass
class AgentConfigs:
    """The three nodes' config bundles (defaults = the dataclass defaults, as the nodes' parameters)."""

    perception: PerceptionConfigs = field(default_factory=PerceptionConfigs)
    reflex: ReflexConfigs = field(default_factory=ReflexConfigs)
    consolidation: ConsolidationConfigs = field(default_factory=ConsolidationConfigs)


@dataclass(kw_only=True)
class AgentAction(Decision):
    """What the reflex node would publish as an Action (its decision), plus its source and offline timing."""

    source: int                         # SOURCE_SEGMENT or SOURCE_REMINDER
    speech_end: float                   # sensor time of the end of the question's speech (0 when none)
    t: float                            # sensor time at which the Action would have been published
    compute_ms: float                   # wall time of the work that produced it (ASR + reflex/retrieval/response)

    @classmethod
    def of(cls, d: Decision, source: int, speech_end: float, t: float, compute_ms: float) -> 'AgentAction':
        """The Action a decision becomes (as the node publishes it: the response only when the robot speaks)."""
        fields = {f.name: getattr(d, f.name) for f in dataclasses.fields(Decision)}
        fields.update(response=d.response if d.speak else '', response_source=d.response_source if d.speak else '',
                      memory_ids=list(d.memory_ids), latency_ms=dict(d.latency_ms), notes=list(d.notes),
                      chunks=list(d.chunks), shown_ids=list(d.shown_ids))
        return cls(**fields, source=source, speech_end=speech_end, t=t, compute_ms=compute_ms)


@dataclass
class AgentEvents:
    """Everything one input produced (in order of creation)."""

    segments: list[tuple[float, SegmentData]] = field(default_factory=list)  # (sensor time published, segment)
    actions: list[AgentAction] = field(default_factory=list)
    topics: list[tuple[float, TopicData]] = field(default_factory=list)  # (sensor time it reached memory, Topic)
    reminders: list[ReminderRow] = field(default_factory=list)   # fired (``fired_at`` = sensor time)
    detections: list[FaceSeen] = field(default_factory=list)     # faces of every processed keyframe
    identities: list[IdentityEvent] = field(default_factory=list)

    def extend(self, other: 'AgentEvents') -> None:
        """Append another batch."""
        for name in ('segments', 'actions', 'topics', 'reminders', 'detections', 'identities'):
            getattr(self, name).extend(getattr(other, name))


class RuntimeMemory:
    """The consolidation runtime behind the reflex core's MemoryClient protocol (QueryMemory, in-process)."""

    def __init__(self, memory: ConsolidationRuntime) -> None:
        self.memory = memory

    def query(self, q: MemoryQuery) -> Retrieved:
        """Top entries and profiles; a malformed request gives an empty result with the reason, like the service."""
        try:
            r = self.memory.query(list(np.asarray(q.vector, np.float32).ravel()) or None, q.text, q.k_semantic,
                                  q.k_episodic, list(q.face_ids), q.embedder, window_start=q.window_start,
                                  window_end=q.window_end, chronological=q.chronological)
        except RequestError as e:
            return Retrieved(error=f'query_memory failed: {e}')
        tz = self.memory.memory.tz
        return Retrieved(semantic=[entry_item('semantic', e.id, e.render(tz), s) for e, s in r.semantic],
                         episodic=[entry_item('episodic', e.id, e.render(tz), s) for e, s in r.episodic],
                         profiles=[profile_item(p.face_id, p.name, p.attributes) for p in r.profiles],
                         latency_ms=r.latency_ms)

    def people(self) -> list[PersonSeen]:
        """Every profile with the span its person was seen in."""
        return [PersonSeen(p.face_id, p.name, p.first_seen, p.last_seen) for p in self.memory.profiles()]

    def forget_face(self, face_id: str) -> str:
        """Forget a person (as the Forget service does); '' when done, else why not."""
        try:
            self.memory.forget_face(face_id)
        except RequestError as e:
            return str(e)
        return ''


class LightOmni:
    """Perception -> reflex -> sleep-time memory pass -> consolidation, in one process (never imports rclpy).

    ``memory_dir`` overrides ``configs.consolidation.memory.memory_dir``; ``perception=False`` skips loading the
    perception models (feed :meth:`answer` / :meth:`ask` directly). ``engine`` and ``embedder`` let tests and
    benchmarks share loaded models. ``time_scale`` multiplies measured compute before it is added to the sensor clock
    (1: as fast as this machine; 0.25: a 4x faster one; 0: instantaneous, to judge answers and memory alone).
    """

    def __init__(self, memory_dir: str | pathlib.Path | None = None, configs: AgentConfigs | None = None, *,
                 perception: bool = True, engine: ReflexEngine | None = None, embedder: TextEmbedder | None = None,
                 sleep_work: bool = True, time_scale: float = 1.0) -> None:
        c = configs or AgentConfigs()
        if memory_dir is not None:
            c.consolidation.memory = replace(c.consolidation.memory, memory_dir=str(memory_dir))
        self.cfg = c
        self.now = 0.0
        self.sleep_work = sleep_work
        # measured compute -> sensor time: 1 = this machine's speed, 0 = instantaneous (answer quality only)
        self.time_scale = float(time_scale)
        t0 = time.perf_counter()
        # one process holds both nodes' work: one embedder, with the backbone's thread setting
        self.embedder = embedder or (engine.embedder if engine is not None else
                                     text_embedder(c.reflex.embedding, c.reflex.models.models_dir, set_threads=False))
        self.memory = ConsolidationRuntime(c.consolidation, embedder=self.embedder, clock=lambda: self.now)
        if c.reflex.reflex.sleep_queue_path:   # one process: the reflex state lives beside this memory
            c.reflex.reflex = replace(c.reflex.reflex, sleep_queue_path=str(self.memory.dir / 'reflex_sleep_queue.db'))
        self.reflex = ReflexRuntime(c.reflex, memory=RuntimeMemory(self.memory), engine=engine,
                                    embedder=self.embedder)
        self.engine = self.reflex.engine
        self.memory.summarizer = RequestSummarizer(self.reflex.summarize)
        self.memory.on_state_change = self._state_changed
        self._deliver_written()      # Topics a crashed run wrote but never handed over
        self._state_changed()
        if c.reflex.reflex.activate_warm_s > 0:    # as the node does at activation: before the first segment
            step = self.reflex.warm_prefixes(at_start=True)
            if step is not None and step.kind == 'failed':
                log.warning('at start: %s', step.error)
        self._busy_until = 0.0          # sensor time until which user-facing work is busy
        self._sleep_ready: list[tuple[float, TopicData]] = []   # Topics written in sleep time, due in memory at t
        self._sleep_free_at = 0.0
        self._id = 0
        self._reminders_checked = float('-inf')
        self._synced = float('-inf')
        self.sleep_seconds = 0.0        # wall time spent in sleep-time memory passes
        self.perception: PerceptionRuntime | None = None
        if perception:
            state_dir = pathlib.Path(c.consolidation.memory.memory_dir).expanduser()
            self.perception = PerceptionRuntime(c.perception, state_path=state_dir / 'perception_state.json',
                                                audio_dir=c.perception.segments.audio_dir or state_dir / 'segments')
            self.perception.load_profiles(self._gallery(), self.memory.gallery_version())
            self._sync_voices()
        log.info('LightOmni ready in %.1f s: backbone %s, memory %s', time.perf_counter() - t0,
                 self.engine.backbone.describe().get('name'), self.memory.memory.dir)

    def _gallery(self) -> list[GalleryEntry]:
        """The stored face identities, as the consolidation node publishes them."""
        return [GalleryEntry(face_id=p.face_id, embedding=p.embedding, observations=p.observations,
                             backend=p.embedding_backend, name=p.name)
                for p in self.memory.profiles() if p.embedding is not None]

    # -- state ------------------------------------------------------------------------------------------------------
    def reattach(self) -> None:
        """Point a shared engine back at this facade's memory and S_g.

        Facades that share one loaded engine (benchmarks, tests) each point it at their own memory when made; an
        earlier one used again after a later one must take it back, or its passes read the other's memory.
        """
        self.engine.memory = RuntimeMemory(self.memory)
        self._state_changed()

    def _state_changed(self) -> None:
        v = self.memory.global_state()
        self.reflex.set_global_state(v.version, v.script, timezone=v.timezone, nodes=[
            StateNode(level=n.level, start=n.start, end=n.end, text=n.text) for n in v.nodes])

    def advance(self, now: float, segments: bool = True) -> AgentEvents:
        """Move the sensor clock to ``now``: deliver sleep-time Topics and due reminders, close timed-out segments.

        ``segments=False`` (after the end of the input) closes no segment by time-out.
        """
        ev = AgentEvents()
        if now > self.now:
            self.now = now
        ev.topics.extend(self._deliver_topics(self.now))
        # checked at the consolidation node's reminder period, not on every 20 ms audio chunk
        if self.now - self._reminders_checked >= self.cfg.consolidation.consolidation.reminder_period_s:
            self._reminders_checked = self.now
            for r in self.memory.fire_due(self.now):
                ev.reminders.append(r)
                ev.actions.append(AgentAction.of(self.reflex.reminder(r.id, r.text), SOURCE_REMINDER, 0.0,
                                                 self.now, 0.0))
        # the fleet exchange, as the consolidation node's worker runs it (nothing to do with the embedded backend)
        if self.now - self._synced >= self.cfg.consolidation.memory.sync_period_s:
            self._synced = self.now
            fleet = self.memory.sync()
            if self.perception is not None and (fleet.forgotten or fleet.profiles_changed or fleet.conflicts):
                for face_id, _ in fleet.forgotten:      # what faces/forgotten and faces/gallery carry in the graph
                    self.perception.forget(face_id)
                self.perception.sync_gallery(self._gallery(), self.memory.gallery_version())
        if self.perception is not None and segments:
            seg = self.perception.tick(self.now)
            if seg is not None:
                ev.extend(self._handle(PendingSegment(segment=seg)))
        return ev

    def _hand_over(self, topic: TopicData) -> None:
        """What the two nodes do over topics and topics/ack: consolidation queues the Topic, reflex notes the ack."""
        try:
            self.memory.enqueue(topic)
        except ValueError as e:
            log.warning('topic of segment %d refused: %s', topic.segment_id, e)
        self.reflex.acknowledged(topic.segment_id, topic.start)

    def _deliver_written(self) -> None:
        while (out := self.reflex.sleep.next_topic(float('inf'), 0.0)) is not None:
            self._hand_over(out.topic)
        self.memory.process_all()

    def _deliver_topics(self, now: float) -> list[tuple[float, TopicData]]:
        keep, done = [], []
        for t, topic in self._sleep_ready:
            if t <= now:
                self._hand_over(topic)
                self.memory.process_all()
                done.append((t, topic))
            else:
                keep.append((t, topic))
        self._sleep_ready = keep
        if done:
            self._warm()       # the reflex node builds the new S_g's prefixes in sleep time too
            if self.perception is not None:
                self._sync_voices()     # names learned from introductions
        return done

    @property
    def sleep_queue(self) -> int:
        """Interactions whose sleep-time Topic has not reached memory yet."""
        return len(self._sleep_ready) + len(self.reflex.sleep)

    # -- inputs -----------------------------------------------------------------------------------------------------
    def push_audio(self, stamp: float, data: bytes, sample_format: str = 'S16LE', channels: int = 1,
                   sample_rate: int = 16000, coding_format: str = 'wave') -> AgentEvents:
        """One microphone chunk (as AudioStamped carries it)."""
        ev = self.advance(stamp)
        for pending in self._need_perception().push_audio(stamp, data, sample_format, channels, sample_rate,
                                                          coding_format):
            ev.extend(self._handle(pending))
        return ev

    def push_frame(self, stamp: float, rgb: np.ndarray) -> AgentEvents:
        """One camera frame (HxWx3 uint8 RGB); sampled to keyframes like the perception node."""
        ev = self.advance(stamp)
        p = self._need_perception()
        if not p.frame_due(stamp):
            return ev
        p.take_frame(stamp)
        res = p.process_frame(stamp, rgb)
        ev.detections.extend(res.faces)
        ev.identities.extend(res.identities)
        for idn in res.identities:      # what the consolidation node does with FaceIdentity
            avatar = res.avatars.get(idn.face_id, b'')
            try:
                self.memory.apply_identity(idn.face_id, idn.embedding, idn.backend, int(idn.observations), avatar,
                                           'jpeg' if avatar else '')
            except RequestError as e:
                log.warning('identity %s not stored: %s', idn.face_id, e)
        return ev

    def push_text(self, stamp: float, text: str) -> AgentEvents:
        """A typed instruction or question (closes the open segment, like the text topic)."""
        ev = self.advance(stamp)
        text = text.strip()
        if not text:
            return ev
        if self.perception is not None:
            seg = self.perception.typed(self.now, text)
        else:
            seg = SegmentData(self._next_id(), self.now, self.now, TYPED_TEXT, typed_text=text)
        ev.extend(self._handle(PendingSegment(segment=seg)))
        return ev

    def flush(self) -> AgentEvents:
        """End of input: close open speech, deliver pending sleep-time work (memory becomes complete)."""
        ev = AgentEvents()
        if self.perception is not None:
            for pending in self.perception.flush_audio():
                ev.extend(self._handle(pending))
        if self._sleep_ready:
            ev.extend(self.advance(max(t for t, _ in self._sleep_ready), segments=False))
        return ev

    def ask(self, text: str, at: float | None = None) -> AgentAction:
        """Typed question -> the Action answering it (a convenience for tests and notebooks)."""
        ev = self.push_text(self.now if at is None else at, text)
        return [a for a in ev.actions if a.source == SOURCE_SEGMENT][-1]

    def answer(self, seg: SegmentInput) -> AgentAction:
        """Reflex pass -> retrieval -> response for an already built segment; queues it for sleep time."""
        t0 = time.perf_counter()
        d = self.reflex.decide(seg)
        self.reflex.sleep.put(seg, d.response if d.speak else '')
        return self._action(seg, d, (time.perf_counter() - t0) * 1000.0, seg.end)

    def consolidate(self, seg: SegmentInput, response: str = '') -> TopicData | None:
        """Sleep-time work for one interaction, now: memory pass -> Topic -> consolidation (S_g, profiles...)."""
        self.reflex.sleep.put(seg, response)
        step = self.reflex.memory_step()
        if step is None or not step.topics:
            return None
        for topic in step.topics:
            self._hand_over(topic)
        self.memory.process_all()
        return step.topics[-1]

    def sleep(self) -> int:
        """Run every queued sleep-time Topic into memory now (ignoring when it would be ready); return how many."""
        n = len(self._sleep_ready)
        for _, topic in self._sleep_ready:
            self._hand_over(topic)
        self._sleep_ready = []
        self.memory.process_all()
        return n

    # -- the pipeline -----------------------------------------------------------------------------------------------
    def _next_id(self) -> int:
        self._id += 1
        return self._id

    def _need_perception(self) -> PerceptionRuntime:
        if self.perception is None:
            raise RuntimeError('this LightOmni was built with perception=False')
        return self.perception

    def _handle(self, pending: PendingSegment) -> AgentEvents:
        """A closed segment -> (ASR) -> Action; the interaction is queued for sleep time (as the two nodes do)."""
        ev = AgentEvents()
        t0 = time.perf_counter()
        seg = self.perception.finish(pending) if self.perception is not None else pending.segment
        asr_ms = (time.perf_counter() - t0) * 1000.0
        if self.perception is not None:
            self._voices(self.perception.take_voice_events())
        ev.segments.append((max(self.now, self._busy_until) + self.time_scale * asr_ms / 1000.0, seg))
        t1 = time.perf_counter()
        answered = self.reflex.answer(seg)
        if answered is None:          # delivered twice: answered the first time
            return ev
        sin, d = answered
        act = self._action(sin, d, asr_ms + (time.perf_counter() - t1) * 1000.0, self.now)
        if pending.audio is not None:
            act.latency_ms['asr'] = asr_ms
        ev.actions.append(act)
        return ev

    def _voices(self, events: list[VoiceEvent]) -> None:
        """What the consolidation node does with VoiceIdentity, and perception with the voice gallery it publishes."""
        for ev in events:
            try:
                self.memory.apply_voice(ev.op, ev.voice_id, ev.embedding, ev.backend, ev.observations, ev.face_id)
            except RequestError as e:
                log.warning('voice %s not stored: %s', ev.voice_id, e)
        if events:
            self._sync_voices()

    def _sync_voices(self) -> None:
        self.perception.sync_voices([VoiceGalleryEntry(voice_id=v.voice_id, embedding=v.embedding,
                                                       observations=v.observations, backend=v.embedding_backend,
                                                       face_id=v.face_id, name=v.name)
                                     for v in self.memory.voices() if v.embedding is not None],
                                    self.memory.voice_gallery_version())

    def _action(self, seg: SegmentInput, d: Decision, compute_ms: float, ready: float) -> AgentAction:
        start = max(ready, self._busy_until)
        t = start + self.time_scale * compute_ms / 1000.0
        self._busy_until = t
        act = AgentAction.of(d, SOURCE_SEGMENT, seg.speech_end, t, compute_ms)
        # as the reflex node does: a time intent is stored when it is answered (reminders/new)
        for r in d.reminders:
            self.memory.add_reminder(r.text, r.due, r.face_id, seg.segment_id)
        if self.sleep_work:
            self._sleep(t)
        else:
            self.reflex.sleep.discard_answered()     # nothing is consolidated: not kept for sleep time
        return act

    def _sleep(self, answered_at: float) -> None:
        """The reflex node's sleep-time work on the queued interaction, timed into the idle time after the answer."""
        while True:
            step = self.reflex.memory_step()
            if step is None:
                return
            self.sleep_seconds += step.ms / 1000.0
            if not step.topics:
                log.warning('sleep-time work: %s', step.error or step.kind)
                continue
            start = max(answered_at + self.cfg.reflex.reflex.sleep_idle_s, self._sleep_free_at)
            self._sleep_free_at = start + self.time_scale * step.ms / 1000.0
            self._sleep_ready.extend((self._sleep_free_at, topic) for topic in step.topics)

    def _warm(self) -> None:
        step = self.reflex.warm_prefixes()
        if step is not None and step.kind == 'failed':
            log.warning('sleep-time work: %s', step.error)
        elif step is not None:
            self._sleep_free_at = max(self._sleep_free_at, self.now) + self.time_scale * step.ms / 1000.0

    def close(self) -> None:
        """Flush memory indexes and close the store and the sleep queue."""
        self.memory.close()
        self.reflex.close()
        if self.perception is not None:
            self.perception.save_state()


__all__ = ['LightOmni', 'AgentConfigs', 'AgentAction', 'AgentEvents', 'RuntimeMemory', 'SOURCE_SEGMENT',
           'SOURCE_REMINDER']
