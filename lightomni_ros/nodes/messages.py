# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Messages <-> the core's typed records: every conversion the nodes make, once, in both directions.

The nodes carry the core's records between processes; nothing here decides anything. A round trip through a message
gives the same record back (times to the nanosecond), which is what lets the offline facade and the node graph agree.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import KeyValue
from sensor_msgs.msg import CompressedImage, RegionOfInterest

from lightomni_ros.msg import (Ack, Action, FaceIdentity, FaceObservation, GlobalState, Keyframe, MemoryEntry,
                               Profile, Reminder, Segment, SpeakerTurn, StageLatency, Topic, VoiceIdentity, WordTiming)
from lightomni_ros.msg import SpeechChunk as SpeechChunkMsg
from lightomni_ros.srv import Summarize

from ..core.memory import profiles as prof
from ..core.memory.store import EpisodicEntry, ReminderRow, SemanticEntry
from ..core.memory.voices import VoiceRecord
from ..core.perception.faces import IdentityEvent
from ..core.perception.runtime import GalleryEntry
from ..core.perception.voices import VoiceEvent, VoiceGalleryEntry
from ..core.reflex.people import PersonSeen
from ..core.reflex.retrieval import entry_item, profile_item
from ..core.reflex.types import Decision, MemoryItem, SpeechChunk, StateNode
from ..core.segment import FaceSeen, KeyframeData, SegmentData, SpeakerTurn as TurnData, WordData
from ..core.summary import MERGE, PROFILE, SummaryRequest, SummaryResult
from ..core.topic import ReminderIntent, TopicData


def to_time(t: float) -> Time:
    """Seconds (epoch or sensor time) -> builtin_interfaces/Time (negative or non-finite times clamp to 0)."""
    t = float(t) if math.isfinite(t) else 0.0
    t = max(0.0, t)
    sec = int(math.floor(t))
    return Time(sec=sec, nanosec=min(999_999_999, int(round((t - sec) * 1e9))))


def from_time(m: Time) -> float:
    """builtin_interfaces/Time -> seconds."""
    return m.sec + m.nanosec * 1e-9


def ack_msg(segment_id: int, start: float, status: int, message: str, stamp: Time) -> Ack:
    """An acknowledgement of the segment ``(segment_id, start)`` (msg/Ack.msg)."""
    msg = Ack(segment_id=max(0, int(segment_id)), start=to_time(start), status=status, message=message[:500])
    msg.header.stamp = stamp
    return msg


def is_set(m: Time) -> bool:
    """Whether a Time field holds a time (all zero means "none")."""
    return bool(m.sec or m.nanosec)


# -- segments ----------------------------------------------------------------------------------------------------------
def face_msg(f: FaceSeen) -> FaceObservation:
    """A face sighting -> FaceObservation."""
    x0, y0, x1, y1 = (max(0, int(round(v))) for v in f.box)
    return FaceObservation(face_id=f.face_id, track_id=max(0, int(f.track_id)),
                           box=RegionOfInterest(x_offset=x0, y_offset=y0, width=max(0, x1 - x0),
                                                height=max(0, y1 - y0)),
                           score=float(f.score), match_distance=float(f.match_distance), stamp=to_time(f.stamp))


def face_from_msg(m: FaceObservation) -> FaceSeen:
    """Convert a FaceObservation to a face sighting."""
    b = m.box
    return FaceSeen(m.face_id, int(m.track_id), (float(b.x_offset), float(b.y_offset),
                                                 float(b.x_offset + b.width), float(b.y_offset + b.height)),
                    float(m.score), float(m.match_distance), from_time(m.stamp))


def segment_msg(seg: SegmentData, frame_id: str, stamp: Time) -> Segment:
    """A closed segment -> Segment (keyframes as JPEG CompressedImage)."""
    msg = Segment(segment_id=seg.segment_id, start=to_time(seg.start), end=to_time(seg.end), trigger=seg.trigger,
                  transcript=seg.transcript, language=seg.language, typed_text=seg.typed_text,
                  visual_tags=list(seg.visual_tags), audio_uri=seg.audio_uri,
                  speech_duration=float(seg.speech_duration))
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    if seg.speech_end:
        msg.speech_end = to_time(seg.speech_end)
    msg.words = [WordTiming(word=w.word, start=float(w.start), end=float(w.end), probability=float(w.probability))
                 for w in seg.words]
    msg.turns = [SpeakerTurn(start=float(t.start), end=float(t.end), voice_id=t.voice_id, face_id=t.face_id,
                             text=t.text) for t in seg.turns]
    kfs = []
    for k in seg.keyframes:
        km = Keyframe(feature=np.asarray(k.feature, np.float32).tolist(), sharpness=float(k.sharpness))
        km.image.header.stamp = to_time(k.stamp)
        km.image.header.frame_id = frame_id
        km.image.format = 'jpeg'
        km.image.data = k.jpeg
        kfs.append(km)
    msg.keyframes = kfs
    msg.faces = [face_msg(f) for f in seg.faces]
    return msg


def segment_from_msg(msg: Segment) -> SegmentData:
    """Segment -> a closed segment (the speech span start is its end minus its duration)."""
    speech_end = from_time(msg.speech_end) if is_set(msg.speech_end) else 0.0
    return SegmentData(
        segment_id=int(msg.segment_id), start=from_time(msg.start), end=from_time(msg.end), trigger=int(msg.trigger),
        speech_start=speech_end - float(msg.speech_duration) if speech_end else 0.0, speech_end=speech_end,
        transcript=msg.transcript, words=[WordData(w.word, float(w.start), float(w.end), float(w.probability))
                                          for w in msg.words],
        language=msg.language, typed_text=msg.typed_text,
        keyframes=[KeyframeData(from_time(k.image.header.stamp), bytes(k.image.data),
                                np.asarray(k.feature, np.float32), float(k.sharpness)) for k in msg.keyframes],
        faces=[face_from_msg(f) for f in msg.faces], visual_tags=list(msg.visual_tags), audio_uri=msg.audio_uri,
        speech_duration=float(msg.speech_duration),
        turns=[TurnData(start=float(t.start), end=float(t.end), voice_id=t.voice_id, face_id=t.face_id, text=t.text)
               for t in msg.turns])


# -- topics and reminders -----------------------------------------------------------------------------------------
def reminder_msg(r: ReminderIntent, source_segment: int = 0) -> Reminder:
    """A time intent -> Reminder (status PENDING)."""
    return Reminder(due=to_time(r.due), text=r.text, face_id=r.face_id, source_segment=max(0, int(source_segment)),
                    status=Reminder.STATUS_PENDING)


def fired_msg(r: ReminderRow) -> Reminder:
    """A stored reminder that fell due -> Reminder (status FIRED, with its delay)."""
    return Reminder(id=r.id, due=to_time(r.due), text=r.text, face_id=r.face_id, status=Reminder.STATUS_FIRED,
                    delay=float(r.delay), source_segment=max(0, int(r.source_segment)))


def topic_msg(t: TopicData, stamp: Time) -> Topic:
    """Topic^t -> Topic."""
    msg = Topic(segment_id=t.segment_id, start=to_time(t.start), end=to_time(t.end), face_ids=t.face_ids,
                semantic=t.semantic, remembered=t.remembered, visual=t.visual, audio=t.audio, response=t.response,
                raw_refs=t.raw_refs, producer=t.producer)
    msg.header.stamp = stamp
    msg.reminders = [reminder_msg(r) for r in t.reminders]
    return msg


def topic_from_msg(msg: Topic) -> TopicData:
    """Topic -> Topic^t, validated (ValueError naming the bad field)."""
    t = TopicData(segment_id=int(msg.segment_id), start=from_time(msg.start), end=from_time(msg.end),
                  face_ids=list(msg.face_ids), semantic=list(msg.semantic), remembered=list(msg.remembered),
                  visual=msg.visual, audio=msg.audio, response=msg.response, raw_refs=list(msg.raw_refs),
                  reminders=[ReminderIntent(text=r.text, due=from_time(r.due), face_id=r.face_id)
                             for r in msg.reminders],
                  producer=msg.producer)
    t.check()
    return t


# -- actions ----------------------------------------------------------------------------------------------------------
def action_msg(d: Decision, source: int, speech_end: Time, stamp: Time, latency: dict[str, float]) -> Action:
    """A decision -> Action (the response only when the robot speaks)."""
    a = Action(segment_id=d.segment_id, source=source, p_speech=float(d.p_speech), p_search=float(d.p_search),
               speak=bool(d.speak), search=bool(d.search), response=d.response if d.speak else '',
               memory_ids=list(d.memory_ids), backend=d.backend, speech_end=speech_end,
               response_source=d.response_source if d.speak else '', sg_version=max(0, int(d.sg_version)))
    a.header.stamp = stamp
    a.latency = [StageLatency(stage=k, ms=float(v)) for k, v in latency.items()]
    return a


def speech_chunk_msg(c: SpeechChunk, stamp: Time) -> SpeechChunkMsg:
    """A piece of a spoken reply -> SpeechChunk."""
    m = SpeechChunkMsg(segment_id=max(0, int(c.segment_id)), index=int(c.index), text=c.text, final=bool(c.final))
    m.header.stamp = stamp
    return m


def state_nodes(msg: GlobalState) -> list[StateNode]:
    """S_g's nodes with their spans, as the reflex core reads them."""
    return [StateNode(level=int(n.level), start=from_time(n.start), end=from_time(n.end), text=n.text)
            for n in msg.nodes]


# -- memory -------------------------------------------------------------------------------------------------------
def profile_msg(p: prof.Profile, brief: bool = False) -> Profile:
    """A stored profile -> Profile (``brief`` leaves out avatar and embedding)."""
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
    """A stored entry -> MemoryEntry (``content`` rendered with its span, as the reflex core reads it)."""
    m = MemoryEntry(id=e.id, start=to_time(e.start), end=to_time(e.end), content=e.render(tz),
                    source_segment=max(0, int(e.source_segment)), face_ids=list(e.face_ids), score=float(score),
                    robot_id=e.robot_id)
    if isinstance(e, SemanticEntry):
        m.kind, m.pinned = MemoryEntry.KIND_SEMANTIC, e.pinned
    else:
        m.kind = MemoryEntry.KIND_EPISODIC
        m.visual, m.audio, m.response, m.raw_refs = e.visual, e.audio, e.response, list(e.raw_refs)
    return m


def memory_item(m: MemoryEntry) -> MemoryItem:
    """A MemoryEntry as the reflex core reads it."""
    return entry_item('semantic' if m.kind == MemoryEntry.KIND_SEMANTIC else 'episodic', m.id, m.content, m.score)


def profile_memory_item(p: Profile) -> MemoryItem:
    """A Profile as the reflex core reads it."""
    return profile_item(p.face_id, p.name, {kv.key: kv.value for kv in p.attributes})


def person_seen(p: Profile) -> PersonSeen:
    """A Profile as the "who did I talk to" answer reads it."""
    return PersonSeen(p.face_id, p.name, from_time(p.first_seen), from_time(p.last_seen))


def gallery_entry(face_id: str, embedding: Any, observations: int, backend: str, name: str = '') -> GalleryEntry:
    """A known face for perception's gallery."""
    return GalleryEntry(face_id=face_id, embedding=np.asarray(embedding, np.float32), observations=int(observations),
                        backend=backend, name=name)


def identity_msg(ev: IdentityEvent, avatar: bytes, stamp: Time) -> FaceIdentity:
    """A new identity or embedding update -> FaceIdentity."""
    msg = FaceIdentity(op=FaceIdentity.OP_NEW if ev.op == 'new' else FaceIdentity.OP_UPDATE, face_id=ev.face_id,
                       embedding=np.asarray(ev.embedding, np.float32).tolist(), embedding_backend=ev.backend,
                       observations=int(ev.observations))
    msg.header.stamp = stamp
    if avatar:
        msg.avatar.format = 'jpeg'
        msg.avatar.data = avatar
    return msg


_VOICE_OPS = {'new': VoiceIdentity.OP_NEW, 'update': VoiceIdentity.OP_UPDATE, 'link': VoiceIdentity.OP_LINK}


def voice_msg(ev: VoiceEvent, stamp: Time) -> VoiceIdentity:
    """A new voice, embedding update or face link -> VoiceIdentity."""
    msg = VoiceIdentity(op=_VOICE_OPS[ev.op], voice_id=ev.voice_id, face_id=ev.face_id,
                        embedding=np.asarray(ev.embedding, np.float32).tolist(), embedding_backend=ev.backend,
                        observations=float(ev.observations))
    msg.header.stamp = stamp
    return msg


def voice_event_from(msg: VoiceIdentity) -> VoiceEvent:
    """Convert a VoiceIdentity (new, update, link) to a voice event (ValueError for another op)."""
    ops = {v: k for k, v in _VOICE_OPS.items()}
    if msg.op not in ops:
        raise ValueError(f'unexpected op {msg.op} for {msg.voice_id}')
    return VoiceEvent(op=ops[msg.op], voice_id=msg.voice_id, embedding=np.asarray(msg.embedding, np.float32),
                      observations=float(msg.observations), backend=msg.embedding_backend, face_id=msg.face_id)


def voice_identity_msg(v: VoiceGalleryEntry) -> VoiceIdentity:
    """A stored voice -> VoiceIdentity (OP_UPDATE, as the gallery lists it)."""
    return VoiceIdentity(op=VoiceIdentity.OP_UPDATE, voice_id=v.voice_id, face_id=v.face_id, name=v.name,
                         embedding=np.asarray(v.embedding, np.float32).tolist(), embedding_backend=v.backend,
                         observations=float(v.observations))


def voice_entry_of(v: VoiceRecord) -> VoiceGalleryEntry:
    """A stored voice (memory's record) -> the gallery entry perception matches against."""
    return VoiceGalleryEntry(voice_id=v.voice_id, embedding=np.asarray(v.embedding, np.float32),
                             observations=float(v.observations), backend=v.embedding_backend, face_id=v.face_id,
                             name=v.name)


def voice_entry(msg: VoiceIdentity) -> VoiceGalleryEntry:
    """A VoiceIdentity of the gallery -> a stored voice for perception's registry."""
    return VoiceGalleryEntry(voice_id=msg.voice_id, embedding=np.asarray(msg.embedding, np.float32),
                             observations=float(msg.observations), backend=msg.embedding_backend,
                             face_id=msg.face_id, name=msg.name)


# -- summaries ------------------------------------------------------------------------------------------------------
def summarize_request(req: SummaryRequest) -> Summarize.Request:
    """A summary request -> Summarize.Request (what is known about the person in its Profile field)."""
    m = Summarize.Request(mode=Summarize.Request.MODE_MERGE if req.mode == MERGE else Summarize.Request.MODE_PROFILE,
                          texts=list(req.texts), face_id=req.face_id, max_tokens=max(0, int(req.max_tokens)))
    m.profile.face_id = req.face_id
    m.profile.name = req.known.get('name', '')
    m.profile.attributes = [KeyValue(key=k, value=v) for k, v in req.known.items() if k != 'name']
    return m


def summary_request_from(m: Summarize.Request) -> SummaryRequest:
    """Summarize.Request -> a summary request (ValueError for a mode that is neither)."""
    if m.mode not in (Summarize.Request.MODE_MERGE, Summarize.Request.MODE_PROFILE):
        raise ValueError(f'unknown mode {m.mode}')
    known = {kv.key: kv.value for kv in m.profile.attributes}
    if m.profile.name:
        known.setdefault('name', m.profile.name)
    return SummaryRequest(mode=MERGE if m.mode == Summarize.Request.MODE_MERGE else PROFILE, texts=list(m.texts),
                          face_id=m.face_id, known=known, max_tokens=int(m.max_tokens))


def fill_summary_response(res: SummaryResult, resp: Summarize.Response) -> Summarize.Response:
    """A summary result -> Summarize.Response (success; the problem, if any, as its message)."""
    resp.success = True
    resp.summary, resp.producer, resp.name = res.summary, res.producer, res.name
    resp.attributes = [KeyValue(key=k, value=v) for k, v in res.attributes.items()]
    resp.message = res.problem
    return resp


def summary_result_from(resp: Summarize.Response) -> SummaryResult:
    """Summarize.Response -> a summary result."""
    return SummaryResult(summary=resp.summary, producer=resp.producer, name=resp.name,
                         attributes={kv.key: kv.value for kv in resp.attributes}, problem=resp.message)


__all__ = ['to_time', 'from_time', 'is_set', 'face_msg', 'face_from_msg', 'segment_msg', 'segment_from_msg',
           'reminder_msg', 'fired_msg', 'topic_msg', 'topic_from_msg', 'action_msg', 'state_nodes', 'profile_msg',
           'entry_msg', 'memory_item', 'profile_memory_item', 'person_seen', 'gallery_entry', 'identity_msg',
           'summarize_request', 'summary_request_from', 'fill_summary_response', 'summary_result_from', 'voice_msg',
           'voice_event_from', 'voice_identity_msg', 'voice_entry', 'voice_entry_of', 'ack_msg']
