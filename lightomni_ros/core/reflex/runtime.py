# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The reflex subsystem as one runtime object: what the reflex node and the offline facade both drive.

It loads the backbone, adapters, heads and the process's text embedder from one :class:`ReflexConfigs` bundle (the
reflex node's parameters), chooses the reflex-pass backend, and offers the per-message steps:

- :meth:`ReflexRuntime.answer`: a closed segment -> the decision (reflex pass, retrieval, response) with the configured
  thresholds; the interaction is queued durably for sleep time (a segment delivered twice is answered once; a
  "forget me" request is carried out and confirmed instead, and never queued);
- :meth:`ReflexRuntime.reminder`: a due reminder -> a template decision (no model call);
- :meth:`ReflexRuntime.sleep_step`: one unit of sleep-time work (warm the new S_g's prefixes, else one memory pass);
- :meth:`ReflexRuntime.next_topic` / :meth:`ReflexRuntime.acknowledged`: Topics go to consolidation in order and are
  sent again until it acknowledges them (:mod:`.sleep_queue`);
- :meth:`ReflexRuntime.summarize`: an S_g merge or profile update for consolidation.

Drivers keep only their own concerns: the node its threads, QoS and messages; the facade its sensor clock.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..config import check_bundle, section
from ..embedding import EmbeddingConfig, TextEmbedder, embedder_id, text_embedder
from ..models import ModelsConfig
from ..segment import SegmentData
from ..summary import SummaryRequest, SummaryResult
from ..topic import TopicData
from .config import (AdapterConfig, BackboneConfig, CacheConfig, ExportConfig, LatentConfig, PruningConfig,
                     ReflexConfig, ResponseConfig)
from .engine import EngineConfigs, ReflexEngine
from .inputs import segment_input
from .privacy import forget_decision, forget_request
from .retrieval import MemoryClient
from .sleep import fallback_topic
from .sleep_queue import OutgoingTopic, SleepQueue
from .streaming import ChunkSink, say_whole
from .types import Decision, SegmentInput, StateNode

log = logging.getLogger('lightomni.reflex')


@dataclass
class ReflexConfigs:
    """Every section the reflex node reads (its ROS parameters, by prefix)."""

    reflex: ReflexConfig = section(ReflexConfig, '')
    models: ModelsConfig = section(ModelsConfig, 'models.')
    embedding: EmbeddingConfig = section(EmbeddingConfig, 'embedding.')
    backbone: BackboneConfig = section(BackboneConfig, 'backbone.')
    adapters: AdapterConfig = section(AdapterConfig, 'adapters.')
    latent: LatentConfig = section(LatentConfig, 'latent.')
    cache: CacheConfig = section(CacheConfig, 'cache.')
    pruning: PruningConfig = section(PruningConfig, 'pruning.')
    export: ExportConfig = section(ExportConfig, 'export.')
    response: ResponseConfig = section(ResponseConfig, 'response.')

    def engine_configs(self) -> EngineConfigs:
        """The engine's view of these sections."""
        return EngineConfigs(backbone=self.backbone, adapters=self.adapters, latent=self.latent, cache=self.cache,
                             pruning=self.pruning, export=self.export, models_dir=self.models.models_dir,
                             response=self.response, embedding=self.embedding)


@dataclass(kw_only=True)
class SleepOutcome:
    """What one unit of sleep-time work did."""

    kind: str                   # "prefix_warmup", "topic", "preempted" or "failed"
    ms: float                   # wall time it took
    segment_ids: list[int] = field(default_factory=list)     # the interactions of the (batched) memory pass
    topics: list[TopicData] = field(default_factory=list)    # their Topics, in the same order ("topic")
    error: str = ''             # why it failed ("failed") or why the fallback parser wrote a topic ("topic")

    @property
    def topic(self) -> TopicData | None:
        """The first (oldest) interaction's Topic."""
        return self.topics[0] if self.topics else None


class ReflexRuntime:
    """The reflex engine with the reflex node's settings: answers, reminders, sleep-time work and summaries."""

    def __init__(self, cfg: ReflexConfigs | None = None, *, memory: MemoryClient | None = None,
                 engine: ReflexEngine | None = None, embedder: TextEmbedder | None = None) -> None:
        self.cfg = cfg or ReflexConfigs()
        check_bundle(self.cfg)
        self.backend_note = 'torch (configured)'
        if engine is None:
            # the backbone's own thread setting applies in this process, not the embedder's
            embedder = embedder or text_embedder(self.cfg.embedding, self.cfg.models.models_dir, set_threads=False)
            self.engine = ReflexEngine(self.cfg.engine_configs(), embedder=embedder)
            self._choose_backend()
        else:
            self.engine = engine     # shared by tests and benchmarks that load the model once
        if memory is not None:
            self.engine.memory = memory
        self.sleep = SleepQueue(self.cfg.reflex.sleep_queue_path, self.cfg.reflex.sleep_queue)
        self._warm_failed: int | None = None     # S_g version whose warm-up failed: not retried for that version

    def _choose_backend(self) -> None:
        """Pick the reflex-pass execution path (ONNX Runtime / TensorRT when configured and faster)."""
        if self.cfg.export.backend == 'torch':
            return
        from . import export

        choice = export.choose(self.engine, self.cfg.export)
        self.engine.accelerated, self.engine.backend = choice.runner, choice.name
        self.backend_note = choice.note

    # -- state ---------------------------------------------------------------------------------------------------
    def set_global_state(self, version: int, script: str, *, timezone: str = '',
                         nodes: Sequence[StateNode] = ()) -> None:
        """Adopt a new S_g, the zone spoken times are read in and S_g's nodes (never blocks on the model)."""
        self.engine.set_global_state(version, script, timezone=timezone, nodes=nodes)

    @property
    def embedder_id(self) -> str:
        """``name/dim`` of the process's text embedder."""
        return embedder_id(self.engine.embedder)

    # -- per message ---------------------------------------------------------------------------------------------
    def segment_input(self, seg: SegmentData) -> SegmentInput:
        """The reflex core's view of a closed segment (keyframes decoded only for a backbone that sees them)."""
        return segment_input(seg, self.engine.backbone.kind == 'omni')

    def decide(self, seg: SegmentInput, on_chunk: ChunkSink | None = None) -> Decision:
        """Reflex pass -> retrieval -> response with the configured thresholds and retrieval sizes.

        ``on_chunk`` receives the spoken response piece by piece (the first sentence as soon as it is ready).
        """
        lat, r = self.cfg.latent, self.cfg.reflex
        return self.engine.decide(seg, lat.speech_threshold, lat.search_threshold, r.k_semantic, r.k_episodic,
                                  lat.always_answer_questions, on_chunk)

    def answer(self, seg: SegmentData, age_s: float | None = None,
               on_chunk: ChunkSink | None = None) -> tuple[SegmentInput, Decision] | None:
        """Decide on a closed segment and queue the interaction (segment and what was said) durably for sleep time.

        None when the segment was queued before (delivered twice: it is answered once). A segment that reaches the
        driver ``age_s`` seconds after it was first published, more than ``late_segment_s`` (a re-sent copy after a
        restart), is queued without an answer; a "forget me" request is carried out, confirmed, and not queued.
        Whatever is said also goes to ``on_chunk`` in pieces (:mod:`.streaming`).
        """
        sin = self.segment_input(seg)
        if self.sleep.seen(sin.segment_id, sin.start):
            return None
        req = forget_request(sin)
        if req is not None:
            error = self.engine.memory.forget_face(req.face_id) if req.face_id else None
            return sin, say_whole(forget_decision(sin, req, error or None), on_chunk)
        late = age_s is not None and age_s > self.cfg.reflex.late_segment_s
        d = silent(sin, f'late: arrived {age_s:.0f} s after it was sent; stored, not answered') if late \
            else self.decide(sin, on_chunk)
        self.sleep.put(sin, d.response if d.speak else '')
        return sin, d

    @staticmethod
    def reminder(reminder_id: int, text: str, on_chunk: ChunkSink | None = None) -> Decision:
        """A due reminder, spoken verbatim from a template: a safety-relevant message must not depend on generation."""
        d = Decision(segment_id=0, p_speech=1.0, p_search=0.0, speak=True, search=False,
                     response=f'Reminder: {text.strip()}.', memory_ids=[f'reminder:{reminder_id}'] if reminder_id
                     else [], latency_ms={}, backend='template', query=np.zeros(0, np.float32),
                     notes=['reminder'], response_source='template')
        return say_whole(d, on_chunk)

    # -- sleep time ----------------------------------------------------------------------------------------------
    def warm_prefixes(self, at_start: bool = False) -> SleepOutcome | None:
        """Build the current S_g's reflex and response prefixes, so the next question does not pay for them.

        ``at_start``: before the first segment (node activation, facade start), on all the backbone's threads.
        """
        if self._warm_failed is not None and self._warm_failed == self.engine.next_sg_version:
            return None     # failed once for this S_g: retrying each step would starve the memory passes
        t0 = time.perf_counter()
        try:
            warm = self.engine.warm_prefixes(sleep=not at_start)
        except Exception as e:  # noqa: BLE001 - reported; the next question would build it instead
            self._warm_failed = self.engine.sg_version
            return SleepOutcome(kind='failed', ms=_ms(t0), error=f'prefix warm-up: {type(e).__name__}: {e}')
        self._warm_failed = None
        if warm.preempted:
            return SleepOutcome(kind='preempted', ms=_ms(t0))
        return SleepOutcome(kind='prefix_warmup', ms=_ms(t0)) if warm.built or warm.prefilled_tokens else None

    def memory_step(self, stop: Callable[[], bool] | None = None) -> SleepOutcome | None:
        """One memory pass on the oldest queued interactions (None when none waits).

        Up to ``sleep_batch`` waiting interactions are decoded together (a backlog drains faster). ``stop`` (default:
        a user pass is waiting) interrupts the pass; the interactions stay first in line. A pass interrupted
        ``sleep_max_preemptions`` times, or any pass while the queue is over its bound (back-pressure), runs to its
        end (only a halt stops it), or a busy conversation would starve memory; the first runs on the oldest
        interaction alone, so an answer waits for one memory pass at most, not for a batch. A pass that fails still
        gives Topics, by rules from the segments (``fallback-parser``, with the reason): nothing is dropped.
        """
        eng = self.engine
        items = self.sleep.next_interactions(self.cfg.reflex.sleep_batch)
        if not items:
            return None
        pressed = self.sleep.over_high_water()
        stubborn = pressed or self._preempted_enough(items)
        if stubborn and not pressed:
            # answers wait for a pass that runs to its end: one interaction, so they wait one pass, not a batch
            items = items[:1]
        ids = [it.segment.segment_id for it in items]
        t0 = time.perf_counter()
        stop = eng.preemption.halted if stubborn else (stop or eng.preemption.pending)
        try:
            topics = eng.memory_passes([(it.segment, it.response) for it in items], stop=stop)
        except Exception as e:  # noqa: BLE001 - reported; the rule-based Topics keep the interactions
            if eng.preemption.halted():
                return SleepOutcome(kind='preempted', ms=_ms(t0), segment_ids=ids)
            topics = [fallback_topic(it.segment, it.response, f'memory pass failed: {type(e).__name__}: {e}')
                      for it in items]
        if topics is None:
            for it in items:
                self.sleep.preempted(it.item_id)
            return SleepOutcome(kind='preempted', ms=_ms(t0), segment_ids=ids)
        for it, topic in zip(items, topics):
            self.sleep.written(it.item_id, topic)
        problems = '; '.join(f'segment {i}: {t.problem}' for i, t in zip(ids, topics) if t.problem)
        return SleepOutcome(kind='topic', ms=_ms(t0), segment_ids=ids, topics=topics, error=problems)

    def _preempted_enough(self, items: list) -> bool:
        return any(it.preemptions >= self.cfg.reflex.sleep_max_preemptions for it in items)

    def sleep_runs_to_end(self) -> bool:
        """Whether the next memory pass runs to its end (pre-empted too often, or memory over its bound).

        Answers wait for such a pass, so it must not run at a lowered thread priority (priority inversion).
        """
        return self.sleep.over_high_water() or \
            self._preempted_enough(self.sleep.next_interactions(self.cfg.reflex.sleep_batch))

    @property
    def sleep_pending(self) -> int:
        """Interactions whose Topic consolidation has not acknowledged yet (0: sleep time is drained)."""
        return self.sleep.backlog()

    def next_topic(self, now: float | None = None) -> OutgoingTopic | None:
        """The oldest Topic consolidation has not acknowledged, when it is due to be sent (again)."""
        return self.sleep.next_topic(time.monotonic() if now is None else now, self.cfg.reflex.topic_resend_s)

    def topic_sent(self, out: OutgoingTopic, now: float | None = None) -> None:
        """Note that ``out`` was sent (its re-send clock starts)."""
        self.sleep.sent(out.item_id, time.monotonic() if now is None else now)

    def acknowledged(self, segment_id: int, start: float) -> bool:
        """Consolidation acknowledged the Topic of this segment (stored, duplicate or refused)."""
        return self.sleep.acknowledged(segment_id, start)

    def sleep_step(self, stop: Callable[[], bool] | None = None) -> SleepOutcome | None:
        """One unit of sleep-time work: the new S_g's prefixes first, else one memory pass; None when idle.

        Memory comes first when it is behind: over the queue's bound (back-pressure) no warm-up runs, and a warm-up
        that failed is not retried until S_g changes (a warm-up is for answer latency; the passes keep memory).
        """
        warm = None if self.sleep.over_high_water() else self.warm_prefixes()
        return warm or self.memory_step(stop)

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        """An S_g merge or profile update (the Summarize service); a user pass pre-empts it."""
        eng = self.engine
        return eng.summarize(req, self.cfg.reflex.summary_max_tokens, stop=eng.preemption.pending)

    # -- lifecycle -----------------------------------------------------------------------------------------------
    def halt(self) -> None:
        """End any model call at its next token (deactivation, shutdown)."""
        self.engine.preemption.halt()

    def resume(self) -> None:
        """Allow model calls again."""
        self.engine.preemption.resume()

    def close(self) -> None:
        """Close the sleep queue's file."""
        self.sleep.close()

    def describe(self) -> dict[str, Any]:
        """The engine's description plus the backend choice."""
        return self.engine.describe() | {'backend_choice': self.backend_note}


def silent(seg: SegmentInput, note: str) -> Decision:
    """A decision not to speak, with the reason (no model call)."""
    return Decision(segment_id=seg.segment_id, p_speech=0.0, p_search=0.0, speak=False, search=False, response='',
                    memory_ids=[], latency_ms={}, backend='none', query=np.zeros(0, np.float32), notes=[note])


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


__all__ = ['ReflexRuntime', 'ReflexConfigs', 'SleepOutcome']
