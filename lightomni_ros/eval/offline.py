# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni replay --offline``: a scenario or bag through the :class:`~lightomni_ros.core.agent.LightOmni` facade.

No ROS graph: the bag's camera, audio and text messages are decoded and pushed into the facade in recorded order,
as fast as the CPU allows, on the recorded sensor clock. What the graph would publish (segments, actions, topics,
global state, fired reminders, face detections, the sleep-time queue depth) is collected and scored with the same
scoring and report code as a real replay. Timing: an Action counts as published at the stamp of the input that closed
its segment plus the measured compute (ASR + reflex pass + retrieval + response), queued behind earlier user work;
see the facade's module doc for sleep time. ``result.json`` says ``"mode": "offline"``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pathlib
import time
from types import SimpleNamespace as NS
from typing import Any

log = logging.getLogger('lightomni.eval.offline')

IMAGE, COMPRESSED, AUDIO, TEXT = ('sensor_msgs/msg/Image', 'sensor_msgs/msg/CompressedImage',
                                  'lightomni_ros/msg/AudioStamped', 'std_msgs/msg/String')


def _stamp(t: float) -> NS:
    ns = int(round(t * 1e9))
    return NS(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _ns(t: float) -> int:
    return int(round(t * 1e9))


class Collector:
    """Turns facade events into message-like records for :mod:`scoring` (relative topic -> [(ns, record)])."""

    def __init__(self) -> None:
        self.by_topic: dict[str, list[tuple[int, Any]]] = {}
        self.sg_version = -1

    def add(self, topic: str, t: float, rec: Any) -> None:
        """One output record at sensor time ``t``."""
        self.by_topic.setdefault(topic, []).append((_ns(t), rec))

    def events(self, ev: Any) -> None:
        """Every record of one :class:`AgentEvents`."""
        for t, s in ev.segments:
            self.add('segments', t, NS(segment_id=s.segment_id, start=_stamp(s.start), end=_stamp(s.end),
                                       transcript=s.transcript, typed_text=s.typed_text,
                                       words=[NS(word=w.word, start=w.start, end=w.end) for w in s.words],
                                       faces=[NS(face_id=f.face_id, stamp=_stamp(f.stamp)) for f in s.faces]))
        for a in ev.actions:
            self.add('actions', a.t, NS(segment_id=a.segment_id, source=a.source, speak=a.speak, search=a.search,
                                        response=a.response, memory_ids=a.memory_ids, p_speech=a.p_speech,
                                        p_search=a.p_search, speech_end=_stamp(a.speech_end) if a.speech_end
                                        else NS(sec=0, nanosec=0), latency=a.latency_ms, compute_ms=a.compute_ms,
                                        response_source=a.response_source, sg_version=a.sg_version))
        for t, topic in ev.topics:
            self.add('topics', t, NS(segment_id=topic.segment_id, semantic=topic.semantic,
                                     remembered=topic.remembered, visual=topic.visual, audio=topic.audio,
                                     response=topic.response, producer=topic.producer,
                                     reminders=[NS(text=r.text, due=r.due) for r in topic.reminders]))
        for r in ev.reminders:
            self.add('reminders/due', r.fired_at or r.due, NS(id=r.id, text=r.text, due=r.due, delay=r.delay))
        for f in ev.detections:
            if f.face_id:
                self.add('faces/detections', f.stamp, NS(face_id=f.face_id, stamp=_stamp(f.stamp)))

    def state(self, agent: Any) -> None:
        """Global state (when its version changed) and the sleep-time queue depth."""
        v = agent.memory.global_state()
        if v.version != self.sg_version:
            self.sg_version = v.version
            self.add('global_state', agent.now, NS(version=v.version, nodes=v.nodes, script=v.script,
                                                   script_tokens=v.script_tokens))
        self.add('/diagnostics', agent.now, NS(status=[NS(hardware_id='reflex', values=[
            NS(key='sleep_queue', value=str(agent.sleep_queue)),
            NS(key='memory.queue_depth', value=str(agent.memory.pending_count()))])]))

    def jsonable(self) -> dict[str, list]:
        """Plain dicts for outputs.json."""
        def plain(x: Any) -> Any:
            if isinstance(x, NS):
                return {k: plain(v) for k, v in vars(x).items()}
            if isinstance(x, (list, tuple)):
                return [plain(v) for v in x]
            if hasattr(x, '__dataclass_fields__'):
                return {k: plain(getattr(x, k)) for k in x.__dataclass_fields__}
            if isinstance(x, dict):
                return {k: plain(v) for k, v in x.items()}
            return x if isinstance(x, (str, int, float, bool, type(None))) else str(x)
        return {k: [{'t_ns': t, 'msg': plain(m)} for t, m in v] for k, v in self.by_topic.items()
                if k != '/diagnostics'}


def _inputs(reader: Any) -> dict[str, str]:
    """Bag topic -> input kind, chosen by message type (so a robot's topic names need no remapping)."""
    kinds = {IMAGE: 'image', COMPRESSED: 'compressed', AUDIO: 'audio', TEXT: 'text'}
    out = {}
    for name, info in reader.topics.items():
        if info.msgtype in kinds and info.cls is not None:
            out[info.name] = kinds[info.msgtype]
    if 'compressed' in out.values() and 'image' in out.values():
        # one camera: the compressed stream is what our bags and most robots record; raw would double the frames
        out = {k: v for k, v in out.items() if v != 'image'}
    return out


@dataclasses.dataclass
class Played:
    """What feeding a bag into the facade did: inputs by kind, the first and last stamps, input problems."""

    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    first_ns: int | None = None
    last_ns: int | None = None
    start_ns: int = 0
    problems: list[dict[str, Any]] = dataclasses.field(default_factory=list)


def _prepare(source: str | pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The bag to play (a scenario YAML is rendered into ``out/bag`` first); refuses a used output folder."""
    from . import bagwriter, scenario
    from .result import RESULT

    if (out / RESULT).exists():
        raise FileExistsError(f'{out / RESULT} exists; choose another --output')
    out.mkdir(parents=True, exist_ok=True)
    source = pathlib.Path(source)
    if source.suffix not in ('.yaml', '.yml'):
        return source
    bag = out / 'bag'
    log.info('rendering %s into %s', source, bag)
    bagwriter.write_bag(scenario.load(source), bag, force=True)
    return bag


def _push(agent: Any, kind: str, stamp: float, msg: Any) -> Any:
    """One decoded input message into the facade, as the perception node receives it."""
    from ..core.perception.frames import decode_compressed, decode_image

    if kind == 'audio':
        return agent.push_audio(stamp, bytes(msg.data), msg.info.sample_format, msg.info.channels,
                                msg.info.sample_rate, msg.info.coding_format or 'wave')
    if kind == 'text':
        return agent.push_text(stamp, msg.data)
    max_pixels = agent.cfg.perception.frames.max_pixels
    rgb = decode_compressed(msg.format, bytes(msg.data), max_pixels) if kind == 'compressed' \
        else decode_image(msg.encoding, msg.width, msg.height, msg.step, bytes(msg.data), max_pixels)
    return agent.push_frame(stamp, rgb)


def _feed(agent: Any, bag: pathlib.Path, remap: dict[str, str] | None, col: Collector,
          offset_ns: int = 0) -> Played:
    """Every input message of the bag into the facade in recorded order, then what is due in a short linger.

    ``offset_ns`` shifts every time the facade sees (what a replay's restamping does to the graph's inputs).
    """
    from ..core.perception.frames import ImageFormatError
    from .bagreader import BagReader

    played, bad = Played(), set()
    with BagReader(bag, remap=remap) as reader:
        kinds = _inputs(reader)
        for m in reader.messages():
            kind = kinds.get(m.topic)
            msg = reader.decode(m) if kind is not None else None
            if msg is None:
                continue
            played.first_ns = m.t_ns if played.first_ns is None else played.first_ns
            played.last_ns = m.t_ns
            played.counts[kind] = played.counts.get(kind, 0) + 1
            stamp = m.t_ns * 1e-9
            if kind != 'text' and (msg.header.stamp.sec or msg.header.stamp.nanosec):
                stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            stamp += offset_ns * 1e-9
            try:
                ev = _push(agent, kind, stamp, msg)
            except (ImageFormatError, ValueError) as e:   # AudioFormatError is a ValueError too
                key = f'{m.topic}: {type(e).__name__}'
                if key not in bad:
                    reader.problem('input', f'{e} (first at t={m.t_ns}; later ones counted)', m.topic)
                bad.add(key)
                continue
            col.events(ev)
            if ev.segments or ev.topics or ev.reminders:
                col.state(agent)
        # after the bag: what is still due inside a short linger (sleep-time Topics, reminders)
        if played.last_ns is not None:
            col.events(agent.flush())
            col.state(agent)
            col.events(agent.advance((played.last_ns + offset_ns) * 1e-9 + 10.0, segments=False))
            col.state(agent)
        played.problems = [dataclasses.asdict(p) for p in reader.problems]
        played.start_ns = reader.start_ns if played.first_ns is None else played.first_ns
    return played


def run_offline(source: str | pathlib.Path, out_dir: str | pathlib.Path, *, remap: dict[str, str] | None = None,
                configs: Any = None, agent: Any = None, time_scale: float = 1.0,
                offset_ns: int = 0) -> dict[str, Any]:
    """Run a scenario (YAML, rendered to a bag first) or a bag through the facade; score; return the result.

    ``offset_ns`` shifts the input times (a graph replay's restamping offset, for comparing the two runs).
    """
    from ..core.agent import AgentConfigs, LightOmni
    from . import bagwriter, scoring
    from .result import score_into, write_result

    out = pathlib.Path(out_dir)
    bag = _prepare(source, out)
    t_start = time.perf_counter()
    own = agent is None
    if own:
        agent = LightOmni(out / 'state' / 'memory', configs or AgentConfigs(), time_scale=time_scale)
    load_s = time.perf_counter() - t_start
    col = Collector()
    t_run = time.perf_counter()
    played = _feed(agent, bag, remap, col, offset_ns)
    compute_s = time.perf_counter() - t_run
    if own:
        agent.close()
    (out / 'outputs.json').write_text(json.dumps(col.jsonable(), indent=1, default=str))
    result: dict[str, Any] = {
        'mode': 'offline', 'bag': str(bag), 'output_bag': str(out / 'outputs.json'),
        'namespace': '(none: offline LightOmni facade)',
        'timing': {'wall_start_ns': int(played.start_ns or 0), 'bag_start_ns': int(played.start_ns or 0),
                   'rate': 1.0, 'restamp_offset_ns': 0, 'published': played.counts, 'time_scale': agent.time_scale,
                   'duration_s': round(((played.last_ns or 0) - (played.first_ns or 0)) / 1e9, 3),
                   'compute_s': round(compute_s, 3), 'model_load_s': round(load_s, 3),
                   'sleep_time_s': round(agent.sleep_seconds, 3)},
        'recorded': {k: len(v) for k, v in col.by_topic.items()}, 'problems': played.problems,
        'engine': {'backbone': agent.engine.backbone.describe().get('name'), 'backend': agent.engine.backend,
                   'heads_trained': agent.engine.heads.trained}}
    gt = bagwriter.load_ground_truth(bag)
    if gt is not None:
        (out / bagwriter.GROUNDTRUTH).write_text(json.dumps(gt, indent=2))
        return score_into(out, result, gt, scoring.Outputs(col.by_topic))
    write_result(out, result)
    return result


__all__ = ['run_offline', 'Collector']
