# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The offline ``LightOmni`` facade: the whole method in one process, without ROS (paper Eq. 1, DESIGN.md).

One object drives the same cores the three nodes wrap, with the same config dataclasses (defaults unless given):

    perception core (audio -> VAD -> segments, ASR, keyframes, faces)
      -> reflex core (reflex pass, retrieval against the memory core directly, response)  -> Action
      -> sleep-time memory pass (memory adapter)                                           -> Topic
      -> consolidation core (store, S_g, profiles, reminders)                              -> S_g for the next pass

Inputs carry sensor stamps (seconds); the facade's clock is the latest stamp seen, so a bag or scenario replays as
fast as the CPU allows while reminders, time-outs and memory times follow the recorded timeline. Model calls are
timed on the wall clock: every :class:`AgentAction` says when it would have been published had the inputs arrived
in real time (``t``: the input stamp that closed the segment plus the measured compute, queued behind earlier user
work). Sleep-time work runs in the idle time it would get on the robot: a Topic reaches memory ``sleep_idle_s`` after
the answer plus its measured memory-pass time (user passes pre-empt it on the robot, so they are not delayed here).
"""

from __future__ import annotations

import logging
import pathlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .consolidation.config import ConsolidationConfig
from .consolidation.consolidator import Consolidator, RequestError
from .consolidation.summarizer import ProfileUpdate, Summary
from .consolidation.topic import ReminderIntent, TopicData
from .memory import profiles as prof
from .memory.config import MemoryConfig
from .models import ModelResolver, ModelsConfig
from .reflex.config import (AdapterConfig, BackboneConfig, CacheConfig, ExportConfig, LatentConfig, PruningConfig,
                            ReflexConfig, ResponseConfig)
from .reflex.engine import EngineConfigs, ReflexEngine
from .reflex.people import PersonSeen, speaking_face
from .reflex.types import Decision, MemoryItem, Retrieved, SegmentInput, TopicOut

log = logging.getLogger('lightomni.agent')

SOURCE_SEGMENT, SOURCE_REMINDER = 0, 1


@dataclass
class AgentConfigs:
    """Every config the three nodes read, under the nodes' section names (defaults = the dataclass defaults)."""

    models: ModelsConfig = field(default_factory=ModelsConfig)
    # perception node
    perception: Any = None
    audio: Any = None
    vad: Any = None
    asr: Any = None
    frames: Any = None
    faces: Any = None
    segments: Any = None
    # reflex node
    reflex: ReflexConfig = field(default_factory=ReflexConfig)
    backbone: BackboneConfig = field(default_factory=BackboneConfig)
    adapters: AdapterConfig = field(default_factory=AdapterConfig)
    latent: LatentConfig = field(default_factory=LatentConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    pruning: PruningConfig = field(default_factory=PruningConfig)
    export: ExportConfig = field(default_factory=ExportConfig)
    response: ResponseConfig = field(default_factory=ResponseConfig)
    # consolidation node
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)

    def __post_init__(self) -> None:
        from .perception.asr import AsrConfig
        from .perception.audio import AudioConfig
        from .perception.faces import FacesConfig
        from .perception.frames import FramesConfig
        from .perception.pipeline import PerceptionConfig
        from .perception.segmenter import SegmenterConfig
        from .perception.vad import VadConfig

        for name, cls in (('perception', PerceptionConfig), ('audio', AudioConfig), ('vad', VadConfig),
                          ('asr', AsrConfig), ('frames', FramesConfig), ('faces', FacesConfig),
                          ('segments', SegmenterConfig)):
            if getattr(self, name) is None:
                setattr(self, name, cls())


@dataclass
class AgentAction:
    """What the reflex node would publish as an Action (mirrors msg/Action.msg), plus its offline timing."""

    segment_id: int
    source: int                         # SOURCE_SEGMENT or SOURCE_REMINDER
    p_speech: float
    p_search: float
    speak: bool
    search: bool
    response: str
    memory_ids: list[str]
    backend: str
    speech_end: float                   # sensor time of the end of the question's speech (0 when none)
    t: float                            # sensor time at which the Action would have been published
    compute_ms: float                   # wall time of the work that produced it (ASR + reflex/retrieval/response)
    latency_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    response_source: str = ''           # "generated", "extractive", "template" or "" (silent)


@dataclass
class AgentEvents:
    """Everything one input produced (in order of creation)."""

    segments: list[tuple[float, Any]] = field(default_factory=list)  # (sensor time published, SegmentData)
    actions: list[AgentAction] = field(default_factory=list)
    topics: list[tuple[float, TopicOut]] = field(default_factory=list)  # (sensor time it reached memory, Topic)
    reminders: list[Any] = field(default_factory=list)      # ReminderRow fired (``fired_at`` = sensor time)
    detections: list[Any] = field(default_factory=list)     # FaceSeen of every processed keyframe
    identities: list[Any] = field(default_factory=list)     # perception IdentityEvent

    def extend(self, other: 'AgentEvents') -> None:
        """Append another batch."""
        for name in ('segments', 'actions', 'topics', 'reminders', 'detections', 'identities'):
            getattr(self, name).extend(getattr(other, name))


class StoreMemory:
    """The consolidation core behind the reflex core's MemoryClient protocol (what QueryMemory does, in-process)."""

    def __init__(self, memory: Consolidator) -> None:
        self.memory = memory

    def query(self, vector: np.ndarray, text: str, k_semantic: int, k_episodic: int,
              face_ids: Sequence[str]) -> Retrieved:
        """Top entries and profiles; a malformed request gives an empty result with the reason, like the service."""
        vec = np.asarray(vector, np.float32).ravel()
        searching = bool(k_semantic or k_episodic)
        try:
            r = self.memory.query(list(vec) if len(vec) else None, text if searching else '', k_semantic,
                                  k_episodic, list(face_ids))
        except RequestError as e:
            return Retrieved(error=f'query_memory failed: {e}')
        tz = self.memory.tz
        out = Retrieved(latency_ms=r.latency_ms)
        if searching:
            out.semantic = [MemoryItem(f'semantic:{e.id}', e.render(tz), s) for e, s in r.semantic]
            out.episodic = [MemoryItem(f'episodic:{e.id}', e.render(tz), s) for e, s in r.episodic]
        out.profiles = [MemoryItem(f'profile:{p.face_id}', profile_text(p)) for p in r.profiles]
        return out

    def people(self) -> list[PersonSeen]:
        """Every profile with the span its person was seen in."""
        return [PersonSeen(p.face_id, p.name, p.first_seen, p.last_seen) for p in self.memory.profiles()]


def profile_text(p: prof.Profile) -> str:
    """A profile as the reflex core reads it (same rendering as the reflex node's)."""
    attrs = '; '.join(f'{k}: {v}' for k, v in sorted(p.attributes.items()) if v)
    return f'{p.face_id}' + (f' is {p.name}' if p.name else '') + (f' ({attrs})' if attrs else '')


class EngineSummarizer:
    """S_g merges and profile updates by the reflex engine's memory adapter (what the Summarize service serves)."""

    def __init__(self, engine: ReflexEngine) -> None:
        self.engine = engine

    def merge(self, texts: Sequence[str], max_tokens: int) -> Summary:
        """Merge k node texts into one."""
        out = self.engine.summarize('merge', list(texts), max_tokens=max_tokens)
        return Summary(out['summary'].strip(), out['producer'])

    def profile(self, face_id: str, texts: Sequence[str], profile: prof.Profile, max_tokens: int) -> ProfileUpdate:
        """Update a profile from recent scripts mentioning the face."""
        known = dict(sorted(profile.attributes.items()))
        if profile.name:
            known.setdefault('name', profile.name)
        out = self.engine.summarize('profile', list(texts), face_id, known, max_tokens)
        return ProfileUpdate(summary=out['summary'].strip(), attributes=dict(out['attributes']),
                             name=out['name'].strip(), producer=out['producer'])


def topic_data(t: TopicOut) -> TopicData:
    """Reflex-core Topic -> consolidation-core Topic (what the Topic message carries between the nodes)."""
    return TopicData(segment_id=t.segment_id, start=t.start, end=t.end, face_ids=list(t.face_ids),
                     semantic=list(t.semantic), remembered=list(t.remembered), visual=t.visual, audio=t.audio,
                     response=t.response, raw_refs=list(t.raw_refs),
                     reminders=[ReminderIntent(text=r['text'], due=float(r['due']), face_id=r.get('face_id', ''))
                                for r in t.reminders], producer=t.producer)


class LightOmni:
    """Perception -> reflex -> sleep-time memory pass -> consolidation, in one process (never imports rclpy).

    ``memory_dir`` overrides ``configs.memory.memory_dir``; ``perception=False`` skips loading the perception
    models (feed :meth:`answer` / :meth:`ask` directly). ``engine`` and ``embedder`` let tests and benchmarks
    share loaded models. ``time_scale`` multiplies measured compute before it is added to the sensor clock
    (1: as fast as this machine; 0.25: a 4x faster one; 0: instantaneous, to judge answers and memory alone).
    """

    def __init__(self, memory_dir: str | pathlib.Path | None = None, configs: AgentConfigs | None = None, *,
                 perception: bool = True, engine: ReflexEngine | None = None, embedder: Any = None,
                 sleep_work: bool = True, time_scale: float = 1.0) -> None:
        from .memory.embedder import load_embedder

        c = configs or AgentConfigs()
        if memory_dir is not None:
            c.memory = MemoryConfig(**(vars(c.memory) | {'memory_dir': str(memory_dir)}))
        for cfg in vars(c).values():
            if hasattr(cfg, 'check'):
                cfg.check()
        self.cfg = c
        self.now = 0.0
        self.sleep_work = sleep_work
        # measured compute -> sensor time: 1 = this machine's speed, 0 = instantaneous (answer quality only)
        self.time_scale = float(time_scale)
        models_dir = c.models.models_dir
        t0 = time.perf_counter()
        self.embedder = embedder or load_embedder(c.memory.embedding_backend, models_dir, c.memory.embedding_device,
                                                  c.memory.embedding_batch, c.memory.embedding_threads)
        ecfg = EngineConfigs(c.backbone, c.adapters, c.latent, c.cache, c.pruning, c.export, models_dir, c.response)
        # The memory node and the reflex node load the same text embedder; one copy serves both here.
        self.engine = engine or ReflexEngine(ecfg, embedder=self.embedder)
        if c.export.backend != 'torch' and engine is None:
            from .reflex import export

            choice = export.choose(self.engine, c.export)
            self.engine.accelerated, self.engine.backend = choice.runner, choice.name
        self.memory = Consolidator(c.memory, c.consolidation, self.embedder, EngineSummarizer(self.engine),
                                   clock=lambda: self.now)
        self.engine.memory = StoreMemory(self.memory)
        self.memory.on_state_change = self._state_changed
        self._state_changed()
        self._busy_until = 0.0          # sensor time until which user-facing work is busy
        self._sleep_ready: list[tuple[float, TopicOut]] = []   # Topics written in sleep time, due in memory at t
        self._sleep_free_at = 0.0
        self._id = 0
        self._reminders_checked = float('-inf')
        self.sleep_seconds = 0.0        # wall time spent in sleep-time memory passes
        self.perception = None
        if perception:
            self.perception = _Perception(c, pathlib.Path(c.memory.memory_dir).expanduser(),
                                          self.memory, lambda: self.now)
        log.info('LightOmni ready in %.1f s: backbone %s, memory %s', time.perf_counter() - t0,
                 self.engine.backbone.describe().get('name'), self.memory.dir)

    # -- state ------------------------------------------------------------------------------------------------------
    def _state_changed(self) -> None:
        v = self.memory.global_state()
        self.engine.set_global_state(v.version, v.script)

    def advance(self, now: float, segments: bool = True) -> AgentEvents:
        """Move the sensor clock to ``now``: deliver sleep-time Topics and due reminders, close timed-out segments.

        ``segments=False`` (after the end of the input) closes no segment by time-out.
        """
        ev = AgentEvents()
        if now > self.now:
            self.now = now
        ev.topics.extend(self._deliver_topics(self.now))
        # checked at the consolidation node's reminder period, not on every 20 ms audio chunk
        if self.now - self._reminders_checked >= self.cfg.consolidation.reminder_period_s:
            self._reminders_checked = self.now
            for r in self.memory.fire_due(self.now):
                ev.reminders.append(r)
                ev.actions.append(self._reminder_action(r))
        if self.perception is not None and segments:
            seg = self.perception.segmenter.tick(self.now)
            if seg is not None:
                ev.extend(self._handle_segment(seg, None))
        return ev

    def _deliver_topics(self, now: float) -> list[tuple[float, TopicOut]]:
        keep, done = [], []
        for t, topic in self._sleep_ready:
            if t <= now:
                self.memory.enqueue(topic_data(topic))
                self.memory.process_all()
                done.append((t, topic))
            else:
                keep.append((t, topic))
        self._sleep_ready = keep
        return done

    @property
    def sleep_queue(self) -> int:
        """Interactions whose sleep-time Topic has not reached memory yet."""
        return len(self._sleep_ready)

    # -- inputs -----------------------------------------------------------------------------------------------------
    def push_audio(self, stamp: float, data: bytes, sample_format: str = 'S16LE', channels: int = 1,
                   sample_rate: int = 16000, coding_format: str = 'wave') -> AgentEvents:
        """One microphone chunk (as AudioStamped carries it)."""
        ev = self.advance(stamp)
        for seg, audio in self._need_perception().audio(stamp, data, sample_format, channels, sample_rate,
                                                        coding_format):
            ev.extend(self._handle_segment(seg, audio))
        return ev

    def push_frame(self, stamp: float, rgb: np.ndarray) -> AgentEvents:
        """One camera frame (HxWx3 uint8 RGB); sampled to keyframes like the perception node."""
        ev = self.advance(stamp)
        faces, identities = self._need_perception().frame(stamp, rgb)
        ev.detections.extend(faces)
        ev.identities.extend(identities)
        return ev

    def push_text(self, stamp: float, text: str) -> AgentEvents:
        """A typed instruction or question (closes the open segment, like the text topic)."""
        ev = self.advance(stamp)
        text = text.strip()
        if not text:
            return ev
        if self.perception is not None:
            seg = self.perception.segmenter.typed(self.now, text)
        else:
            from .perception.segmenter import TYPED_TEXT, SegmentData

            seg = SegmentData(self._next_id(), self.now, self.now, TYPED_TEXT, typed_text=text)
        ev.extend(self._handle_segment(seg, None))
        return ev

    def flush(self) -> AgentEvents:
        """End of input: close open speech, deliver pending sleep-time work (memory becomes complete)."""
        ev = AgentEvents()
        if self.perception is not None:
            for seg, audio in self.perception.flush():
                ev.extend(self._handle_segment(seg, audio))
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
        d = self._decide(seg)
        return self._segment_action(seg, d, (time.perf_counter() - t0) * 1000.0, seg.end)

    def consolidate(self, seg: SegmentInput, response: str = '') -> TopicOut | None:
        """Sleep-time work for one interaction, now: memory pass -> Topic -> consolidation (S_g, profiles...)."""
        topic = self.engine.memory_pass(seg, response)
        if topic is not None:
            self.memory.enqueue(topic_data(topic))
            self.memory.process_all()
        return topic

    def sleep(self) -> int:
        """Run every queued sleep-time Topic into memory now (ignoring when it would be ready); return how many."""
        n = len(self._sleep_ready)
        for _, topic in self._sleep_ready:
            self.memory.enqueue(topic_data(topic))
        self._sleep_ready = []
        self.memory.process_all()
        return n

    # -- the pipeline -----------------------------------------------------------------------------------------------
    def _next_id(self) -> int:
        self._id += 1
        return self._id

    def _need_perception(self) -> '_Perception':
        if self.perception is None:
            raise RuntimeError('this LightOmni was built with perception=False')
        return self.perception

    def _decide(self, seg: SegmentInput) -> Decision:
        lat = self.cfg.latent
        return self.engine.decide(seg, lat.speech_threshold, lat.search_threshold, self.cfg.reflex.k_semantic,
                                  self.cfg.reflex.k_episodic, lat.always_answer_questions)

    def _handle_segment(self, seg: Any, audio: np.ndarray | None) -> AgentEvents:
        """A closed perception SegmentData -> (ASR) -> Action; the segment is queued for sleep time."""
        ev = AgentEvents()
        t0 = time.perf_counter()
        if audio is not None and self.perception is not None:
            self.perception.finish(seg, audio)
        asr_ms = (time.perf_counter() - t0) * 1000.0
        ev.segments.append((max(self.now, self._busy_until) + self.time_scale * asr_ms / 1000.0, seg))
        sin = segment_input(seg, self.engine.backbone.kind == 'omni')
        t1 = time.perf_counter()
        d = self._decide(sin)
        reflex_ms = (time.perf_counter() - t1) * 1000.0
        act = self._segment_action(sin, d, asr_ms + reflex_ms, self.now)
        if audio is not None:
            act.latency_ms['asr'] = asr_ms
        ev.actions.append(act)
        return ev

    def _segment_action(self, seg: SegmentInput, d: Decision, compute_ms: float, ready: float) -> AgentAction:
        start = max(ready, self._busy_until)
        t = start + self.time_scale * compute_ms / 1000.0
        self._busy_until = t
        act = AgentAction(d.segment_id, SOURCE_SEGMENT, d.p_speech, d.p_search, d.speak, d.search,
                          d.response if d.speak else '', list(d.memory_ids), d.backend, seg.speech_end, t,
                          compute_ms, dict(d.latency_ms), list(d.notes), d.response_source if d.speak else '')
        # as the reflex node does: a time intent is stored when it is answered (reminders/new)
        for r in d.reminders:
            self.memory.add_reminder(r['text'], r['due'], r['face_id'], seg.segment_id)
        if self.sleep_work:
            self._sleep_pass(seg, act.response, t)
        return act

    def _sleep_pass(self, seg: SegmentInput, response: str, answered_at: float) -> None:
        t0 = time.perf_counter()
        topic = self.engine.memory_pass(seg, response)
        took = time.perf_counter() - t0
        if topic is None:   # only a stop request interrupts it, and none is given here
            return
        start = max(answered_at + self.cfg.reflex.sleep_idle_s, self._sleep_free_at)
        self._sleep_free_at = start + self.time_scale * took
        self._sleep_ready.append((self._sleep_free_at, topic))
        self.sleep_seconds += took

    def _reminder_action(self, r: Any) -> AgentAction:
        # Spoken verbatim, like the reflex node: a reminder must not depend on free generation.
        return AgentAction(0, SOURCE_REMINDER, 1.0, 0.0, True, False, f'Reminder: {r.text.strip()}.',
                           [f'reminder:{r.id}'] if r.id else [], 'template', 0.0, self.now, 0.0,
                           notes=['reminder'], response_source='template')

    def close(self) -> None:
        """Flush memory indexes and close the store."""
        self.memory.flush()
        self.memory.close()
        if self.perception is not None:
            self.perception.save()


def segment_input(seg: Any, decode_frames: bool) -> SegmentInput:
    """Segment -> reflex-core input (keyframes decoded only for a backbone that sees them)."""
    frames, times = [], []
    if decode_frames:
        import cv2

        for kf in getattr(seg, 'keyframes', []):
            img = cv2.imdecode(np.frombuffer(kf.jpeg, np.uint8), cv2.IMREAD_COLOR)
            if img is not None:
                frames.append(img[:, :, ::-1])
                times.append(kf.stamp)
    faces = list(dict.fromkeys(f.face_id for f in seg.faces if f.face_id))
    words = getattr(seg, 'words', [])
    speech_start = seg.start + words[0].start if words else getattr(seg, 'speech_start', 0.0)
    speaker = speaking_face([(f.face_id, f.stamp) for f in seg.faces], speech_start) if seg.transcript else ''
    return SegmentInput(int(seg.segment_id), seg.start, seg.end, seg.transcript, seg.typed_text, faces,
                        list(seg.visual_tags), frames, times, seg.audio_uri, seg.speech_end, False, speaker)


class _Perception:
    """The perception node's cores (VAD, ASR, keyframes, faces, segmenter) driven synchronously."""

    def __init__(self, c: AgentConfigs, state_dir: pathlib.Path, memory: Consolidator,
                 clock: Callable[[], float]) -> None:
        from .perception.asr import Transcriber
        from .perception.faces import FacePipeline, make_backend
        from .perception.frames import ImageEncoder, KeyframeFilter, KeyframeSampler
        from .perception.pipeline import AudioPath
        from .perception.segmenter import PerceptionState, Segmenter
        from .perception.vad import SileroVad, StreamingVad

        resolver = ModelResolver(c.models.models_dir or None)
        self.c = c
        self.memory = memory
        self.clock = clock
        state_dir.mkdir(parents=True, exist_ok=True)
        self.state = PerceptionState(c.perception.state_file or state_dir / 'perception_state.json')
        self.asr = Transcriber(c.asr, resolver)
        self.faces = None
        if c.faces.enabled:
            self.faces = FacePipeline(make_backend(c.faces, resolver), c.faces, self.state.next_face_index)
            gallery = [(p.face_id, p.embedding, p.observations, p.embedding_backend)
                       for p in memory.profiles() if p.embedding is not None]
            self.faces.registry.sync(gallery, memory.gallery_version())
        encoder = ImageEncoder(resolver, c.frames.threads) if c.frames.encoder else None
        self.audio_path = AudioPath(c.audio, StreamingVad(SileroVad(resolver.resolve('vad').path, c.vad.threads),
                                                          c.vad))
        self.segmenter = Segmenter(c.segments, self.state.next_segment_id, c.frames.max_keyframes)
        self.sampler = KeyframeSampler(c.frames.keyframe_hz)
        self.kf_filter = KeyframeFilter(c.frames, encoder)
        self.audio_dir = pathlib.Path(c.segments.audio_dir or state_dir / 'segments')

    def audio(self, stamp: float, data: bytes, fmt: str, channels: int, rate: int,
              coding: str) -> list[tuple[Any, np.ndarray]]:
        """One chunk -> segments closed at end of speech (with their speech audio)."""
        out = []
        for e in self.audio_path.push(stamp, data, fmt, channels, rate, coding):
            out += self._event(e)
        return out

    def _event(self, e: tuple) -> list[tuple[Any, np.ndarray]]:
        if e[0] == 'start':
            self.segmenter.speech_started(e[1])
        elif e[0] == 'end':
            _, t0, t1, audio = e
            return [(self.segmenter.speech_ended(t0, t1), audio)]
        else:
            self.segmenter.speech_discarded()
        return []

    def flush(self) -> list[tuple[Any, np.ndarray]]:
        """Close open speech at the end of the input."""
        out = []
        for e in self.audio_path.flush():
            out += self._event(e)
        return out

    def frame(self, stamp: float, rgb: np.ndarray) -> tuple[list[Any], list[Any]]:
        """One camera frame -> faces seen and identity events (written to memory as the node graph does)."""
        from .perception.frames import encode_jpeg
        from .perception.segmenter import FaceSeen, KeyframeData

        if not self.sampler.due(stamp):
            return [], []
        self.sampler.take(stamp)
        fc = self.c.frames
        res = self.kf_filter.process(rgb, stamp)
        if res.kept:
            self.segmenter.add_keyframe(KeyframeData(stamp, encode_jpeg(rgb, fc.jpeg_quality, fc.jpeg_max_side),
                                                     res.feature, res.sharpness, res.hints, rgb.shape[1],
                                                     rgb.shape[0]))
        if self.faces is None or res.reason == 'blur':
            return [], []
        tracks, events = self.faces.process(rgb)
        seen = [FaceSeen(t.face_id, t.track_id, t.box, t.score, t.match_distance, stamp) for t in tracks]
        self.segmenter.add_faces(seen)
        for ev in events:
            avatar = encode_jpeg(ev.avatar, 85) if ev.avatar is not None else b''
            try:
                self.memory.apply_identity(ev.face_id, ev.embedding, ev.backend, int(ev.observations), avatar,
                                           'jpeg' if avatar else '')
            except RequestError as e:
                log.warning('identity %s not stored: %s', ev.face_id, e)
        if any(ev.op == 'new' for ev in events):
            self.save()
        return seen, events

    def finish(self, seg: Any, audio: np.ndarray) -> None:
        """ASR of the speech span and the segment WAV (the perception node's output worker)."""
        from .perception.segmenter import write_wav

        if len(audio):
            tr = self.asr.transcribe(audio)
            self.asr.learn_from(tr.text)
            seg.set_transcript(tr.text, tr.words, tr.language, seg.speech_start - seg.start)
            if self.c.segments.audio_store != 'none':
                seg.audio_uri = write_wav(self.audio_dir / f'segment_{seg.segment_id:08d}.wav', audio)
        self.save()

    def save(self) -> None:
        """Persist the next segment id and face index (like the node)."""
        self.state.save(self.segmenter.next_id, self.faces.registry.next_index if self.faces else 0)


__all__ = ['LightOmni', 'AgentConfigs', 'AgentAction', 'segment_input', 'AgentEvents', 'StoreMemory',
           'EngineSummarizer', 'profile_text', 'topic_data', 'SOURCE_SEGMENT', 'SOURCE_REMINDER']
