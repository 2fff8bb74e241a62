# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The perception subsystem as one runtime object: what the perception node and the offline facade both drive.

It loads VAD, ASR, the face backend and the image encoder from one :class:`PerceptionConfigs` bundle (the perception
node's parameters) and offers the per-message steps (audio chunk, camera frame, typed text, clock tick) and the
per-segment step (:meth:`PerceptionRuntime.finish`: ASR of the speech span and the segment's audio file). The node
runs these on its worker threads and turns the records into messages; the facade calls them in sensor-time order.
Thread-safe the way the node uses it: one thread for audio, one for frames, one for finishing segments.
"""

from __future__ import annotations

import collections
import logging
import pathlib
import threading
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from ..config import check_bundle, section
from ..models import ModelResolver, ModelsConfig, cache_dir
from ..segment import FaceSeen, KeyframeData, SegmentData
from ..timing import StageTimer
from .asr import AsrConfig, Transcriber
from .audio import AudioConfig
from .faces import FacePipeline, FacesConfig, IdentityEvent, make_backend
from .frames import FramesConfig, ImageEncoder, KeyframeFilter, KeyframeSampler, encode_jpeg
from .hearing import Hearing
from .pipeline import (AudioPath, PerceptionConfig, SpeechEnded, SpeechEvent, SpeechPaused, SpeechStarted,
                       TurnSplit)
from .segmenter import PerceptionState, Segmenter, SegmenterConfig, write_wav
from .vad import SileroVad, StreamingVad, VadConfig
from .voices import TurnTracker, VoiceEncoder, VoiceEvent, VoiceGalleryEntry, VoiceRegistry, VoicesConfig

log = logging.getLogger('lightomni.perception')


@dataclass
class PerceptionConfigs:
    """Every section the perception node reads (its ROS parameters, by prefix)."""

    perception: PerceptionConfig = section(PerceptionConfig, '')
    models: ModelsConfig = section(ModelsConfig, 'models.')
    audio: AudioConfig = section(AudioConfig, 'audio.')
    vad: VadConfig = section(VadConfig, 'vad.')
    asr: AsrConfig = section(AsrConfig, 'asr.')
    frames: FramesConfig = section(FramesConfig, 'frames.')
    faces: FacesConfig = section(FacesConfig, 'faces.')
    voices: VoicesConfig = section(VoicesConfig, 'voices.')
    segments: SegmenterConfig = section(SegmenterConfig, 'segments.')


@dataclass(kw_only=True)
class PendingSegment:
    """A segment closed by perception, waiting for :meth:`PerceptionRuntime.finish` (ASR of its speech span)."""

    segment: SegmentData
    audio: np.ndarray | None = field(default=None, repr=False)     # the speech span (None: nothing to transcribe)


@dataclass(kw_only=True)
class FrameResult:
    """What one sampled camera frame produced."""

    kept: bool                      # kept as a keyframe of the open segment
    reason: str = ''                # why not ('blur', 'duplicate')
    faces: list[FaceSeen] = field(default_factory=list)
    identities: list[IdentityEvent] = field(default_factory=list)   # new identities and embedding updates
    avatars: dict[str, bytes] = field(default_factory=dict)          # face id -> JPEG avatar of a new identity


@dataclass(kw_only=True)
class GalleryEntry:
    """A known face: what perception matches against (from the stored profiles)."""

    face_id: str
    embedding: np.ndarray = field(repr=False)
    observations: int = 0
    backend: str = ''
    name: str = ''


class PerceptionRuntime:
    """VAD, ASR, faces, keyframes and the segmenter with the perception node's settings."""

    def __init__(self, cfg: PerceptionConfigs | None = None, *, state_path: str | pathlib.Path | None = None,
                 audio_dir: str | pathlib.Path | None = None) -> None:
        self.cfg = c = cfg or PerceptionConfigs()
        check_bundle(c)
        resolver = ModelResolver(c.models.models_dir or None)
        self.timer = StageTimer()
        self.counts: collections.Counter[str] = collections.Counter()
        self._counts_lock = threading.Lock()
        self.state = PerceptionState(state_path or c.perception.state_file or cache_dir() / 'perception_state.json')
        self.audio_dir = pathlib.Path(audio_dir or c.segments.audio_dir or cache_dir() / 'segments').expanduser()
        self.vad_model = SileroVad(resolver.resolve('vad').path, c.vad.threads)
        self.asr = Transcriber(c.asr, resolver)
        self.voices: VoiceRegistry | None = None
        tracker = None
        if c.voices.enabled:
            encoder = VoiceEncoder(resolver.resolve('voice').path, c.voices.device)
            self.voices = VoiceRegistry(encoder.name, c.voices.threshold, c.voices.update_every_s,
                                        c.voices.link_hits, self.state.next_voice_index)
            tracker = TurnTracker(encoder, self.voices, c.voices)
        self.hearing = Hearing(self.asr, tracker)
        self._voice_events: list[VoiceEvent] = []
        self._voice_lock = threading.Lock()
        self.faces = (FacePipeline(make_backend(c.faces, resolver), c.faces, self.state.next_face_index)
                      if c.faces.enabled else None)
        self.encoder = ImageEncoder(resolver, c.frames.threads) if c.frames.encoder else None
        split = (TurnSplit(changed=tracker.changed, probe_s=c.voices.probe_s, min_split_s=c.voices.min_split_s)
                 if tracker is not None and c.voices.split_on_change else None)
        self.audio_path = AudioPath(c.audio, StreamingVad(self.vad_model, c.vad), split)
        self.segmenter = Segmenter(c.segments, self.state.next_segment_id, c.frames.max_keyframes)
        self.sampler = KeyframeSampler(c.frames.keyframe_hz)
        self.kf_filter = KeyframeFilter(c.frames, self.encoder)

    def count(self, key: str, n: float = 1) -> None:
        """Add to a counter reported in diagnostics."""
        with self._counts_lock:
            self.counts[key] += n

    def describe(self) -> dict[str, str]:
        """Which models run (for diagnostics and logs)."""
        return {'asr_model': self.asr.name, 'face_backend': self.faces.backend.name if self.faces else 'off',
                'image_encoder': self.encoder.path.name if self.encoder else 'off',
                'voice_encoder': self.voices.backend if self.voices is not None else 'off'}

    # -- audio ---------------------------------------------------------------------------------------------------
    def push_audio(self, stamp: float, data: bytes, sample_format: str = 'S16LE', channels: int = 1,
                   sample_rate: int = 16000, coding_format: str = 'wave') -> list[PendingSegment]:
        """One microphone chunk -> segments closed at end of speech (AudioFormatError for bad input)."""
        with self.timer.stage('vad') as st:
            events = self.audio_path.push(stamp, data, sample_format, channels, sample_rate, coding_format)
        self.count('vad_ms_total', st['ms'])
        return self._speech(events)

    def paused(self) -> SpeechPaused | None:
        """Speech that may just have ended (``asr.ahead_ms`` of silence), once per pause; None when not asked for."""
        cfg = self.cfg.asr
        if not cfg.ahead_ms:
            return None
        return self.audio_path.paused(cfg.ahead_ms, cfg.ahead_max_s)     # never before the end padding is heard

    def hear_ahead(self, pause: SpeechPaused) -> None:
        """Hear ``pause``'s span ahead of its end (:meth:`finish` of that span then reuses the work)."""
        for k, v in self.hearing.ahead(pause.audio, pause.start).items():
            self.count(k, v)

    def vad_counts(self) -> dict[str, float]:
        """What the VAD discarded and where it cut long speech (for diagnostics)."""
        return {f'vad_{k}': v for k, v in self.audio_path.vad.counts.items()}

    def flush_audio(self) -> list[PendingSegment]:
        """End of input: close speech still open."""
        return self._speech(self.audio_path.flush())

    def _speech(self, events: Iterable[SpeechEvent]) -> list[PendingSegment]:
        out = []
        for ev in events:
            if isinstance(ev, SpeechStarted):
                self.segmenter.speech_started(ev.t)
                self.count('speech_starts')
            elif isinstance(ev, SpeechEnded):
                out.append(PendingSegment(segment=self.segmenter.speech_ended(ev.start, ev.end), audio=ev.audio))
                self.count(f'speech_ends_{ev.reason}')
            else:
                self.segmenter.speech_discarded()
                self.count('speech_discarded')
        return out

    # -- frames --------------------------------------------------------------------------------------------------
    def frame_due(self, stamp: float) -> bool:
        """Whether a frame at ``stamp`` is due for processing at the keyframe rate."""
        return self.sampler.due(stamp)

    def take_frame(self, stamp: float) -> None:
        """Mark a frame at ``stamp`` as taken (the next one is due a keyframe period later)."""
        self.sampler.take(stamp)

    def process_frame(self, stamp: float, rgb: np.ndarray) -> FrameResult:
        """Keyframe filters, features and faces of one sampled frame; identity events for new or updated faces."""
        fc = self.cfg.frames
        with self.timer.stage('frames') as st:
            res = self.kf_filter.process(rgb, stamp)
        self.count('frames_ms_total', st['ms'])
        self.count('keyframes_processed')
        out = FrameResult(kept=res.kept, reason=res.reason)
        if not res.kept:
            self.count(f'keyframes_{res.reason}')
        else:
            with self.timer.stage('jpeg'):
                jpeg = encode_jpeg(rgb, fc.jpeg_quality, fc.jpeg_max_side)
            self.segmenter.add_keyframe(KeyframeData(stamp, jpeg, res.feature, res.sharpness, res.hints,
                                                     rgb.shape[1], rgb.shape[0]))
            self.count('keyframes_kept')
        if self.faces is None or res.reason == 'blur':
            return out
        with self.timer.stage('faces') as st:
            tracks, events = self.faces.process(rgb)
        self.count('faces_ms_total', st['ms'])
        out.faces = [FaceSeen(t.face_id, t.track_id, t.box, t.score, t.match_distance, stamp) for t in tracks]
        self.segmenter.add_faces(out.faces)
        out.identities = list(events)
        out.avatars = {ev.face_id: encode_jpeg(ev.avatar, 85) for ev in events if ev.avatar is not None}
        for ev in events:
            self.count(f'identities_{ev.op}')
        if any(ev.op == 'new' for ev in events):
            self.save_state()
        return out

    # -- text and time -------------------------------------------------------------------------------------------
    def typed(self, now: float, text: str) -> SegmentData:
        """A typed instruction closes the open segment with it."""
        return self.segmenter.typed(now, text)

    def tick(self, now: float) -> SegmentData | None:
        """Close the open segment on time-out when due (None for an empty one, counted)."""
        before = self.segmenter.empty_skipped
        seg = self.segmenter.tick(now)
        if self.segmenter.empty_skipped > before:
            self.count('segments_empty_skipped')
        return seg

    # -- per segment ---------------------------------------------------------------------------------------------
    def finish(self, pending: PendingSegment, behind: bool = False) -> SegmentData:
        """ASR of the segment's speech span, names heard in introductions, the segment's audio file.

        ``behind``: more segments wait for this step (the ASR then decodes once, ``asr.shed_when_behind``).
        """
        seg, audio = pending.segment, pending.audio
        if audio is not None and len(audio):
            with self.timer.stage('asr') as st:
                counts, events = self.hearing.hear(seg, audio, once=behind and self.cfg.asr.shed_when_behind)
            self.asr.learn_from(seg.transcript)
            self.count('asr_ms_total', st['ms'])
            for k, v in counts.items():
                self.count(k, v)
            with self._voice_lock:
                self._voice_events += events
            for ev in events:
                self.count(f'voices_{ev.op}')
        store = self.cfg.segments.audio_store
        if store != 'none':
            clip = self.audio_path.segment_audio(seg.start, seg.end) if store == 'segment' else audio
            if clip is not None and len(clip):
                seg.audio_uri = write_wav(self.audio_dir / f'segment_{seg.segment_id:08d}.wav', clip)
        self.save_state()
        return seg

    # -- voices --------------------------------------------------------------------------------------------------
    def take_voice_events(self) -> list[VoiceEvent]:
        """New voices, embedding updates and face links since the last call (for the consolidation node)."""
        with self._voice_lock:
            out, self._voice_events = self._voice_events, []
        return out

    def sync_voices(self, entries: Iterable[VoiceGalleryEntry], version: int | None = None) -> list[str]:
        """Adopt the stored voices (names, face links); voices it no longer holds are dropped (returned)."""
        entries = list(entries)
        self.asr.learn_names(e.name for e in entries if e.name)     # names heard only, as hints too
        if self.voices is None:
            return []
        return self.voices.sync(entries, version)

    def forget_voice(self, voice_id: str) -> bool:
        """Drop a forgotten voice."""
        return self.voices.forget(voice_id) if self.voices is not None else False

    # -- identities ----------------------------------------------------------------------------------------------
    def load_profiles(self, entries: Iterable[GalleryEntry], version: int | None = None) -> list[str]:
        """Start from the stored profiles: their face embeddings to match, their names as ASR hints."""
        entries = list(entries)
        self.asr.learn_names(e.name for e in entries if e.name)
        return self.sync_gallery(entries, version)

    def sync_gallery(self, entries: Iterable[GalleryEntry], version: int | None = None) -> list[str]:
        """Adopt the stored gallery; identities it no longer holds are forgotten here too (returned)."""
        if self.faces is None:
            return []
        dropped = self.faces.registry.sync([(e.face_id, np.asarray(e.embedding, np.float32), e.observations,
                                             e.backend) for e in entries], version)
        for fid in dropped:
            self.forget(fid)
        return dropped

    def forget(self, face_id: str) -> bool:
        """Drop a forgotten person's identity, live tracks and sightings in the open segment."""
        known = self.faces.forget(face_id) if self.faces is not None else False
        self.segmenter.forget_face(face_id)
        if self.voices is not None:
            self.voices.forget_face(face_id)     # a forgotten person's voice goes with their face
        return known

    def save_state(self) -> None:
        """Persist the next segment id, face index and voice index."""
        self.state.save(self.segmenter.next_id,
                        self.faces.registry.next_index if self.faces else self.state.next_face_index,
                        self.voices.next_index if self.voices is not None else None)


__all__ = ['PerceptionRuntime', 'PerceptionConfigs', 'PendingSegment', 'FrameResult', 'GalleryEntry']
