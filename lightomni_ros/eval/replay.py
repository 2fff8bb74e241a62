# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni replay``: play a rosbag2 into the node graph, record everything it outputs, score and report.

- The graph is started from launch/lightomni.launch.py through :mod:`lightomni_ros.launch_runner` (``--no-launch``:
  use a graph that is already running, e.g. under ``ros2 launch`` on a robot).
- Messages are published as raw CDR bytes at their recorded timing (``--rate`` for faster), each topic with the
  reliability/durability its publishers offered when recording (like ``ros2 bag play``). Header stamps are shifted
  to the replay's wall clock (``--no-restamp`` keeps them), so the graph sees a live robot: segment times,
  reminders ("in one minute") and latencies all run on one clock.
- Every output topic of the graph (segments, actions, topics, global_state, reminders/*, faces/*, /diagnostics) is
  recorded, as received (raw bytes, receive time), into an MCAP bag under the output folder.
- ``result.json`` holds the timing of the run (publish lag, counts, the bag's problems); with a ground truth
  (bags written by ``lightomni bag``) the probes are scored (:mod:`.scoring`) and report.md + plots are written
  (:mod:`.report`). ``--score-only DIR`` re-scores a finished run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import pathlib
import struct
import tempfile
import threading
import time
from typing import Any

from . import rostypes
from .bagreader import BagReader, parse_remaps
from .names import output_name
from .result import RESULT, score_into, write_result

log = logging.getLogger('lightomni.eval.replay')

#: outputs recorded (relative to the graph's namespace unless absolute): name -> (type, QoS kind)
OUTPUTS = {
    'segments': ('lightomni_ros/msg/Segment', 'reliable'),
    'actions': ('lightomni_ros/msg/Action', 'reliable'),
    'actions/speech': ('lightomni_ros/msg/SpeechChunk', 'reliable'),
    'topics': ('lightomni_ros/msg/Topic', 'reliable'),
    'topics/ack': ('lightomni_ros/msg/Ack', 'reliable'),
    'global_state': ('lightomni_ros/msg/GlobalState', 'latched'),
    'reminders/new': ('lightomni_ros/msg/Reminder', 'reliable'),
    'reminders/due': ('lightomni_ros/msg/Reminder', 'reliable'),
    'faces/identity': ('lightomni_ros/msg/FaceIdentity', 'reliable'),
    'faces/detections': ('lightomni_ros/msg/FaceObservation', 'reliable'),
    'faces/gallery': ('lightomni_ros/msg/FaceGallery', 'latched'),
    '/diagnostics': ('diagnostic_msgs/msg/DiagnosticArray', 'reliable'),
}
#: bag topics not replayed unless --all-topics (they belong to the recording robot's own processes)
SKIPPED_BY_DEFAULT = ('/rosout', '/parameter_events', '/tf_static')
OUTPUT_BAG = 'outputs'


def restamp(data: bytes, offset_ns: int) -> bytes:
    """Shift the std_msgs/Header stamp at the start of a CDR message by ``offset_ns``."""
    little = data[1] & 1
    fmt = '<iI' if little else '>iI'
    sec, nsec = struct.unpack_from(fmt, data, 4)
    total = sec * 1_000_000_000 + nsec + offset_ns
    if total < 0:
        return data
    s, n = divmod(total, 1_000_000_000)
    return data[:4] + struct.pack(fmt, s, n) + data[12:]


@dataclasses.dataclass
class ReplayOptions:
    """Options of one replay (the CLI flags)."""

    rate: float = 1.0
    remap: dict[str, str] = dataclasses.field(default_factory=dict)
    topics: list[str] | None = None          # bag topics to play (default: all known but SKIPPED_BY_DEFAULT)
    all_topics: bool = False
    namespace: str = '/lightomni'
    restamp: bool = True
    wait_subscribers: float = 60.0           # seconds to wait for the graph to subscribe to the inputs
    linger: float = 10.0                     # seconds to keep recording after the last message
    lead: float = 0.5                        # seconds between the start signal and the first message
    check: bool = True                       # decode each message before publishing (skip what does not decode)
    decompress: bool = True                  # offer <camera>/compressed also as raw Image on <camera> (used if taken)
    wait_graph: float = 300.0                # launched graph: seconds to wait for every lifecycle node to be active
    fresh_state: bool = True                 # launched graph: memory and perception state in the run folder
    drain: bool = False                      # after the linger: wait until the graph has consolidated everything
    drain_timeout: float = 900.0             # upper bound of that wait (seconds; reported when it is reached)


class Recorder:
    """Subscribes (raw) to the graph's outputs and keeps (topic, receive wall ns, bytes)."""

    def __init__(self, node: Any, namespace: str) -> None:
        from lightomni_ros.nodes.common import LATCHED_QOS, RELIABLE_QOS

        self.messages: list[tuple[str, int, bytes]] = []
        self.types: dict[str, str] = {}
        self.qos: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._subs = []
        for rel, (msgtype, kind) in OUTPUTS.items():
            cls = rostypes.message_class(msgtype)
            if cls is None:
                log.warning('output type %s is not installed; %s is not recorded', msgtype, rel)
                continue
            topic = output_name(namespace, rel)
            qos = LATCHED_QOS if kind == 'latched' else RELIABLE_QOS
            self.types[topic] = msgtype
            self.qos[topic] = qos
            self._subs.append(node.create_subscription(cls, topic, self._cb(topic), qos, raw=True))

    def _cb(self, topic: str) -> Any:
        def cb(data: bytes) -> None:
            t = time.time_ns()
            with self._lock:
                self.messages.append((topic, t, bytes(data)))
        return cb

    def counts(self) -> dict[str, int]:
        """Messages received per topic."""
        out: dict[str, int] = {}
        with self._lock:
            for topic, _, _ in self.messages:
                out[topic] = out.get(topic, 0) + 1
        return out

    def write(self, path: pathlib.Path) -> None:
        """Write everything received into an MCAP bag at ``path``."""
        from rosbags.rosbag2 import StoragePlugin, Writer

        store = rostypes.typestore()
        with self._lock:
            msgs = sorted(self.messages, key=lambda m: m[1])
        with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
            conns = {}
            for topic, msgtype in self.types.items():
                conns[topic] = writer.add_connection(topic, msgtype, typestore=store,
                                                     offered_qos_profiles=[rostypes.qos_from_rclpy(self.qos[topic])])
            for topic, t, data in msgs:
                writer.write(conns[topic], t, data)


class Replayer:
    """One replay: a node that publishes the bag and records the outputs, on its own rclpy context."""

    def __init__(self, bag: str | pathlib.Path, opts: ReplayOptions) -> None:
        from lightomni_ros.nodes.common import BackgroundNode

        self.bag = pathlib.Path(bag)
        self.opts = opts
        self.reader = BagReader(self.bag, remap=opts.remap)
        wanted = set(opts.topics) if opts.topics else None
        self.play = {name: info for name, info in self.reader.topics.items()
                     if info.cls is not None and info.count
                     and (name in wanted if wanted is not None else
                          (opts.all_topics or name not in SKIPPED_BY_DEFAULT))}
        if wanted:
            for name in sorted(wanted - set(self.reader.topics)):
                self.reader.problem('metadata', f'--topics names {name}, which the bag does not have')
        self.spinner = BackgroundNode('lightomni_replay', enable_rosout=False, start_parameter_services=False)
        self.node = self.spinner.node
        self.pubs = {name: self.node.create_publisher(info.cls, info.name, rostypes.to_rclpy_qos(info.qos))
                     for name, info in self.play.items()}
        # A camera recorded as <topic>/compressed is also offered as sensor_msgs/Image on <topic>, decoded here, for
        # graphs configured for raw images (perception's frames.image_transport: raw) when nobody takes the JPEGs.
        self.raw_pubs: dict[str, Any] = {}
        self.decompress: set[str] = set()
        self.qos_adapted: dict[str, str] = {}
        self.sent: dict[str, int] = {}           # messages published per bag topic (set by play_bag)
        if opts.decompress:
            from sensor_msgs.msg import Image

            bag_names = {i.name for i in self.reader.topics.values()}
            for name, info in self.play.items():
                raw_name = info.name[:-len('/compressed')]
                if (info.msgtype == 'sensor_msgs/msg/CompressedImage' and info.name.endswith('/compressed')
                        and raw_name not in bag_names):
                    self.raw_pubs[name] = self.node.create_publisher(Image, raw_name,
                                                                     rostypes.to_rclpy_qos(info.qos))
        self.recorder = Recorder(self.node, opts.namespace)
        self.drain = None
        if opts.drain:
            from .drain import DrainWatch

            self.drain = DrainWatch(self.node, opts.namespace)

    def wait_for_subscribers(self, stop: threading.Event | None = None) -> dict[str, int]:
        """Wait until every played topic has a subscriber (or the timeout); return the subscriber counts."""
        def current() -> dict[str, int]:
            return {n: p.get_subscription_count() + (self.raw_pubs[n].get_subscription_count()
                                                     if n in self.raw_pubs else 0) for n, p in self.pubs.items()}

        deadline = time.monotonic() + self.opts.wait_subscribers
        while time.monotonic() < deadline and not (stop and stop.is_set()):
            counts = current()
            if counts and all(counts.values()):
                break
            for name in [n for n, c in counts.items() if not c]:
                self.pubs[name] = self._adapt(name, self.pubs[name])
                if name in self.raw_pubs:
                    self.raw_pubs[name] = self._adapt(name, self.raw_pubs[name])
            time.sleep(0.1)
        counts = current()
        for name, raw in self.raw_pubs.items():
            if not self.pubs[name].get_subscription_count() and raw.get_subscription_count():
                self.decompress.add(name)
                log.info('%s: the graph takes raw images; JPEGs are decoded and published as sensor_msgs/Image on %s',
                         self.play[name].name, raw.topic_name)
        for name, n in counts.items():
            if not n:
                self.reader.problem('graph', f'nobody subscribes to {self.play[name].name} after '
                                             f'{self.opts.wait_subscribers:g} s; its messages go nowhere', name)
        return counts

    def play_bag(self, stop: threading.Event | None = None) -> dict[str, Any]:
        """Publish every message at its recorded time (scaled by the rate); return the timing figures."""
        from tqdm import tqdm

        rate = self.opts.rate
        total = sum(i.count for i in self.play.values())
        lags: list[float] = []
        published = {n: 0 for n in self.play}
        bag_start = None
        wall_start = mono_start = 0
        offset = 0
        header = {n: i.header_first for n, i in self.play.items()}
        bar = tqdm(total=total, desc='replay', unit='msg', leave=False, disable=None)
        try:
            for m in self.reader.messages(check=self.opts.check):
                if m.info.topic not in self.pubs:
                    continue
                if stop is not None and stop.is_set():
                    self.reader.problem('graph', 'replay stopped early')
                    break
                if bag_start is None:
                    bag_start = m.t_ns
                    mono_start = time.monotonic_ns() + int(self.opts.lead * 1e9)
                    wall_start = time.time_ns() + int(self.opts.lead * 1e9)
                    offset = wall_start - bag_start
                target = mono_start + int((m.t_ns - bag_start) / rate)
                now = time.monotonic_ns()
                if target > now:
                    time.sleep((target - now) / 1e9)
                data = restamp(m.data, offset) if self.opts.restamp and header[m.info.topic] else m.data
                if m.info.topic in self.decompress:
                    self._publish_decoded(m.info.topic, data)
                else:
                    self.pubs[m.info.topic].publish(data)
                lags.append((time.monotonic_ns() - target) / 1e6)
                published[m.info.topic] += 1
                bar.update()
        finally:
            bar.close()
        lags.sort()

        def pct(q: float) -> float:
            return round(lags[min(len(lags) - 1, int(q * len(lags)))], 3) if lags else 0.0

        self.sent = published
        return {'bag_start_ns': bag_start or 0, 'wall_start_ns': wall_start, 'rate': rate,
                'restamp_offset_ns': offset if self.opts.restamp else 0,
                'published': {self.play[n].name: c for n, c in published.items()},
                'decompressed': sorted(self.raw_pubs[n].topic_name for n in self.decompress),
                'qos_adapted': dict(self.qos_adapted),
                'publish_lag_ms': {'p50': pct(0.5), 'p99': pct(0.99), 'max': pct(1.0)},
                'duration_s': round((time.time_ns() - wall_start) / 1e9, 3) if wall_start else 0.0}

    def wait_drained(self, stop: threading.Event | None = None) -> dict[str, Any]:
        """Wait (up to ``drain_timeout``) until the graph has processed and consolidated what was played."""
        for name, info in self.play.items():
            if info.msgtype == 'std_msgs/msg/String':
                subs = {i.node_name for i in self.node.get_subscriptions_info_by_topic(info.name)}
                self.drain.texts[info.name] = (self.sent.get(name, 0), subs)
        return self.drain.wait(self.opts.drain_timeout, stop)

    def _adapt(self, name: str, pub: Any) -> Any:
        """Recreate ``pub`` when discovered subscribers need more than the recorded QoS offers.

        A best-effort publisher cannot serve a reliable subscription, nor a volatile one a transient-local
        subscription; the recorded profile is raised just enough (as ``ros2 bag play --qos-profile-overrides`` would).
        """
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        if pub.get_subscription_count():
            return pub
        infos = self.node.get_subscriptions_info_by_topic(pub.topic_name)
        q = pub.qos_profile
        need_rel = any(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
        need_tl = any(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
        rel = ReliabilityPolicy.RELIABLE if need_rel else q.reliability
        dur = DurabilityPolicy.TRANSIENT_LOCAL if need_tl else q.durability
        if (rel, dur) == (q.reliability, q.durability):
            return pub
        profile = QoSProfile(depth=q.depth, history=q.history, reliability=rel, durability=dur)
        msg_type = pub.msg_type
        topic = pub.topic_name
        self.node.destroy_publisher(pub)
        self.qos_adapted[topic] = f'{rel.name.lower()}/{dur.name.lower()}'
        log.info('%s: subscribers need %s; the recorded QoS is raised to match', topic, self.qos_adapted[topic])
        return self.node.create_publisher(msg_type, topic, profile)

    def _publish_decoded(self, topic: str, data: bytes) -> None:
        """Publish CompressedImage bytes as sensor_msgs/Image (rgb8) on the raw topic; report an undecodable image."""
        import cv2
        import numpy as np
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import CompressedImage, Image

        comp = deserialize_message(data, CompressedImage)
        bgr = cv2.imdecode(np.frombuffer(bytes(comp.data), np.uint8), cv2.IMREAD_COLOR)
        if bgr is None:
            self.reader.problem('decode', f'a {comp.format!r} image does not decode; skipped', topic)
            return
        img = Image(header=comp.header, height=bgr.shape[0], width=bgr.shape[1], encoding='rgb8', is_bigendian=0,
                    step=bgr.shape[1] * 3)
        img.data = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB).tobytes()
        self.raw_pubs[topic].publish(img)

    def close(self) -> None:
        """Destroy the node and shut the context down."""
        self.spinner.close()
        self.reader.close()


class GraphLauncher:
    """The node graph from a launch file, run by the launch runner in a background thread."""

    def __init__(self, launch_file: str, arguments: dict[str, str], log_dir: pathlib.Path, *,
                 defaults: dict[str, str] | None = None, activate_timeout: float = 300.0) -> None:
        from lightomni_ros.launch_runner import runner, shim

        path = pathlib.Path(launch_file)
        if not path.exists():
            path = shim.package_share('lightomni_ros') / 'launch' / launch_file
        self._tmp = tempfile.TemporaryDirectory(prefix='lightomni_replay_launch_')
        description = runner.load_description(path)
        # our own defaults (namespace, config_dir) only go to a launch file that declares them
        declared = {a.name for a in description.entities if isinstance(a, shim.DeclareLaunchArgument)}
        args = {k: v for k, v in (defaults or {}).items() if k in declared} | arguments
        self.arguments = args
        nodes, _ = runner.plan(description, args, pathlib.Path(self._tmp.name))
        self.log_dir = log_dir
        self.runner = runner.Runner(nodes, log_dir=log_dir, out=_LogStream())
        self.activate_timeout = activate_timeout
        self.code: int | None = None
        self.stopping = False       # stopped by the replay (its end, or an interrupt), not on its own
        self.watcher: threading.Thread | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from lightomni_ros.launch_runner.runner import activate_lifecycle_nodes

        # models load in on_configure (e.g. an ONNX export): allow more than the runner's default per transition
        self.code = self.runner.run(activate=lambda nodes, stopped: activate_lifecycle_nodes(
            nodes, stopped, timeout=self.activate_timeout))

    def wait_active(self, timeout: float, stop: threading.Event) -> list[str]:
        """Wait until every autostarted lifecycle node is active; return those that are not (empty when all are)."""
        from lightomni_ros.launch_runner.lifecycle import LifecycleClient

        pending = [n.fqn for n in self.runner.nodes if n.transitions]
        deadline = time.monotonic() + timeout
        with LifecycleClient() as client:
            while pending and time.monotonic() < deadline and not stop.is_set() and not self.failed:
                pending = [fqn for fqn in pending if client.get_state(fqn, timeout=2.0) != 'active']
                if pending:
                    time.sleep(0.5)
        return pending

    def start(self) -> None:
        """Start the nodes (and their lifecycle activation) in the background."""
        self.thread.start()

    @property
    def failed(self) -> bool:
        """Whether the graph stopped on its own (a node failed or activation failed)."""
        return not self.stopping and (self.code is not None or not self.thread.is_alive())

    def watch(self, stop: threading.Event) -> None:
        """Set ``stop`` (with an ERROR log) when the graph stops on its own; until :meth:`stop` or ``stop``."""
        self.watcher = threading.Thread(target=_watch, args=(self, stop), daemon=True)
        self.watcher.start()

    def stop(self) -> int:
        """Stop the graph (and its watcher: the replay stopping it is no failure); return the runner's exit code."""
        self.stopping = True
        if self.watcher is not None:
            self.watcher.join()
        self.runner.stop()
        self.thread.join(timeout=60.0)
        self._tmp.cleanup()
        return self.code if self.code is not None else 1


#: parameters holding a node's persistent state: pointed into the run folder so each replay starts from nothing
STATE_KEYS = {'memory_dir': 'memory', 'state_file': 'perception_state.json', 'audio_dir': 'segments',
              'sleep_queue_path': 'reflex_sleep_queue.db'}


def fresh_config(src: pathlib.Path, dst: pathlib.Path, state: pathlib.Path) -> list[str]:
    """Copy the node configs of ``src`` to ``dst`` with every state path (:data:`STATE_KEYS`) under ``state``."""
    import yaml

    changed: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in STATE_KEYS and isinstance(value, str):
                    node[key] = str(state / STATE_KEYS[key])
                    changed.append(f'{where}{key}')
                else:
                    walk(value, f'{where}{key}.' if key not in ('/**', 'ros__parameters') else where)

    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.glob('*.yaml')):
        data = yaml.safe_load(f.read_text())
        walk(data, f'{f.stem}: ')
        (dst / f.name).write_text(yaml.safe_dump(data, sort_keys=False))
    return changed


class _LogStream:
    """A text stream that forwards the runner's prefixed lines to logging."""

    def write(self, text: str) -> int:
        for line in text.rstrip('\n').splitlines():
            log.info('%s', line)
        return len(text)

    def flush(self) -> None:
        """Nothing buffered."""


def run_replay(bag: str | pathlib.Path, out_dir: str | pathlib.Path, opts: ReplayOptions, *,
               launch_file: str | None = 'lightomni.launch.py', launch_args: dict[str, str] | None = None,
               score: bool = True) -> dict[str, Any]:
    """Replay ``bag`` (into a graph started from ``launch_file`` unless None), record, score; return the result."""
    from . import bagwriter

    out = pathlib.Path(out_dir)
    if (out / OUTPUT_BAG).exists():
        raise FileExistsError(f'{out / OUTPUT_BAG} exists; choose another --output')
    out.mkdir(parents=True, exist_ok=True)
    graph = None
    stop = threading.Event()
    if launch_file:   # planned first: a bad launch file or a missing executable fails before anything starts
        args = dict(launch_args or {})
        defaults = {'namespace': opts.namespace.strip('/')}
        if opts.fresh_state:
            from lightomni_ros.launch_runner import shim

            src = pathlib.Path(args.pop('config_dir')) if 'config_dir' in args else \
                shim.package_share('lightomni_ros') / 'config'
            if src.is_dir():
                changed = fresh_config(src, out / 'config', out / 'state')
                defaults['config_dir'] = str(out / 'config')
                log.info('fresh state under %s (%s)', out / 'state', ', '.join(changed) or 'no state parameters')
        graph = GraphLauncher(launch_file, args, out / 'launch_logs', defaults=defaults,
                              activate_timeout=opts.wait_graph)
    try:
        replayer = Replayer(bag, opts)
    except BaseException:
        if graph is not None:
            graph._tmp.cleanup()
        raise
    result: dict[str, Any] = {'bag': str(bag), 'output_bag': str(out / OUTPUT_BAG), 'namespace': opts.namespace,
                              'options': dataclasses.asdict(opts)}
    try:
        if graph is not None:
            graph.start()
            graph.watch(stop)
        t0 = time.monotonic()
        if graph is not None:
            pending = graph.wait_active(opts.wait_graph, stop)
            result['graph_active_s'] = round(time.monotonic() - t0, 3)
            if pending and not stop.is_set():
                replayer.reader.problem('graph', f'not active after {opts.wait_graph:g} s: {pending}; replaying anyway')
        result['subscribers'] = {replayer.play[n].name: c for n, c in replayer.wait_for_subscribers(stop).items()}
        if replayer.drain is not None and not replayer.drain.begin(opts.wait_subscribers, stop):
            replayer.reader.problem('graph', f'no diagnostics from the graph after {opts.wait_subscribers:g} s; '
                                             '--drain cannot tell when it is done')
        result['graph_ready_s'] = round(time.monotonic() - t0, 3)
        result['timing'] = replayer.play_bag(stop)
        linger_end = time.monotonic() + opts.linger
        while time.monotonic() < linger_end and not stop.is_set():
            time.sleep(0.1)
        if opts.drain:
            result['drain'] = drain = replayer.wait_drained(stop)
            if drain['drained']:
                log.info('graph drained after %.1f s', drain['waited_s'])
            elif not stop.is_set():
                replayer.reader.problem('graph', f'not drained after {opts.drain_timeout:g} s: '
                                                 + '; '.join(drain['pending']))
        result['recorded'] = replayer.recorder.counts()
    finally:
        if graph is not None:
            result['graph_exit'] = graph.stop()
            result['graph_failed'] = list(graph.runner.failed)
            result['launch_logs'] = str(graph.log_dir)
        replayer.recorder.write(out / OUTPUT_BAG)
        result['problems'] = [dataclasses.asdict(p) for p in replayer.reader.problems]
        replayer.close()
    gt = bagwriter.load_ground_truth(bag)
    if gt is not None:
        (out / bagwriter.GROUNDTRUTH).write_text(json.dumps(gt, indent=2))
    write_result(out, result)
    if score and gt is not None:
        result = score_dir(out)
    return result


def _watch(graph: GraphLauncher, stop: threading.Event) -> None:
    while not stop.is_set() and not graph.stopping:
        if graph.failed and graph.code is not None:
            log.error('the node graph stopped (%s); ending the replay', '; '.join(graph.runner.failed) or
                      f'exit {graph.code}')
            stop.set()
            return
        time.sleep(0.2)


def score_dir(out: str | pathlib.Path) -> dict[str, Any]:
    """Score a finished replay folder (result.json + outputs bag + ground truth); write report.md and plots."""
    from . import bagwriter, scoring

    out = pathlib.Path(out)
    result = json.loads((out / RESULT).read_text())
    gt = bagwriter.load_ground_truth(out)
    if gt is None:
        raise FileNotFoundError(f'{out}: no ground truth ({bagwriter.GROUNDTRUTH}); nothing to score')
    return score_into(out, result, gt, scoring.load_outputs(out / OUTPUT_BAG, result['namespace']))


# --- CLI ------------------------------------------------------------------------------------------------------------
def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``replay`` verb."""
    p = sub.add_parser('replay', help='play a rosbag2 into the node graph, record its outputs, score the probes',
                       description='Replay a bag (ours or a robot\'s; .mcap/.db3) into the graph started from the '
                                   'launch file (or a running one with --no-launch), record every output into an '
                                   'MCAP bag, and write result.json (+ report.md and plots with a ground truth).')
    p.add_argument('bag', nargs='?', help='rosbag2 folder or storage file')
    p.add_argument('-o', '--output', default=None, help='output folder (default: replay_<bag>_<time>)')
    p.add_argument('-r', '--rate', type=float, default=1.0, help='playback speed (1 = recorded timing)')
    p.add_argument('--remap', nargs='*', default=[], metavar='FROM:=TO', help='rename bag topics when publishing')
    p.add_argument('--topics', nargs='*', default=None, help='bag topics to play (default: all)')
    p.add_argument('--all-topics', action='store_true', help=f'also play {", ".join(SKIPPED_BY_DEFAULT)}')
    p.add_argument('--namespace', default='/lightomni', help='namespace of the node graph')
    p.add_argument('--no-launch', action='store_true', help='use an already running graph')
    p.add_argument('--launch-file', default='lightomni.launch.py', help='launch file (path or package name)')
    p.add_argument('--launch-arg', nargs='*', default=[], metavar='NAME:=VALUE', help='launch arguments')
    p.add_argument('--no-restamp', action='store_true', help='keep the recorded header stamps')
    p.add_argument('--no-decompress', action='store_true',
                   help='never offer a CompressedImage topic <t>/compressed as sensor_msgs/Image on <t>')
    p.add_argument('--wait', type=float, default=60.0, help='seconds to wait for the graph to subscribe')
    p.add_argument('--wait-graph', type=float, default=300.0,
                   help='launched graph: seconds to wait for its lifecycle nodes to become active (models load)')
    p.add_argument('--keep-state', action='store_true',
                   help="launched graph: use the configured memory/state folders instead of fresh ones in the run's")
    p.add_argument('--linger', type=float, default=10.0, help='seconds to keep recording after the last message')
    p.add_argument('--drain', action='store_true',
                   help='then wait until every segment is answered, the sleep-time queue is empty and consolidation '
                        'has stored every Topic (read from /diagnostics; see lightomni_ros/eval/drain.py)')
    p.add_argument('--drain-timeout', type=float, default=900.0, help='upper bound of the --drain wait (seconds)')
    p.add_argument('--score-only', metavar='DIR', default=None, help='re-score a finished replay folder')
    p.add_argument('--offline', action='store_true',
                   help='no ROS graph: run the scenario (YAML) or bag through the LightOmni facade in this process '
                        'and score it (quick iteration; see lightomni_ros/eval/offline.py for its timing)')
    p.add_argument('--time-scale', type=float, default=1.0,
                   help='offline: factor on measured compute when placing outputs in time (1: this machine; '
                        '0: instantaneous, to judge answers and memory alone)')
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Replay (or re-score); exit 0 when every probe passed (or there was nothing to score), 1 otherwise."""
    if args.score_only:
        result = score_dir(args.score_only)
        return _print_summary(result)
    if not args.bag:
        print('error: give a bag (or --score-only DIR)')
        return 2
    if args.rate <= 0:
        print('error: --rate must be positive')
        return 2
    if args.offline:
        return _run_offline(args)
    from lightomni_ros.launch_runner.shim import LaunchError

    try:
        remap = parse_remaps(args.remap)
        from lightomni_ros.launch_runner.runner import parse_launch_arguments

        launch_args = parse_launch_arguments(args.launch_arg)
    except Exception as exc:  # noqa: BLE001 - both raise on malformed items
        print(f'error: {exc}')
        return 2
    opts = ReplayOptions(rate=args.rate, remap=remap, topics=args.topics, all_topics=args.all_topics,
                         namespace=args.namespace, restamp=not args.no_restamp, wait_subscribers=args.wait,
                         linger=args.linger, decompress=not args.no_decompress, wait_graph=args.wait_graph,
                         fresh_state=not args.keep_state, drain=args.drain, drain_timeout=args.drain_timeout)
    out = args.output or f'replay_{pathlib.Path(args.bag).resolve().name}_{time.strftime("%Y%m%d-%H%M%S")}'
    try:
        result = run_replay(args.bag, out, opts, launch_file=None if args.no_launch else args.launch_file,
                            launch_args=launch_args)
    except (FileNotFoundError, FileExistsError, ValueError, LaunchError) as exc:
        print(f'error: {exc}')
        return 2
    print(f'replay of {args.bag} -> {out}')
    for p in result.get('problems', []):
        print(f'  bag problem: {p["kind"]}{" [" + p["topic"] + "]" if p["topic"] else ""}: {p["text"]}')
    t = result.get('timing', {})
    print(f'  published {sum(t.get("published", {}).values())} messages in {t.get("duration_s", 0):.1f} s '
          f'(publish lag p50 {t.get("publish_lag_ms", {}).get("p50", 0):.1f} ms); recorded: {result.get("recorded")}')
    if 'drain' in result:
        d = result['drain']
        print(f'  drained after {d["waited_s"]:.1f} s' if d['drained'] else
              f'  NOT drained after {d["waited_s"]:.1f} s: {"; ".join(d["pending"])}')
    return _print_summary(result)


def _run_offline(args: argparse.Namespace) -> int:
    from . import bagwriter, scenario
    from .offline import run_offline

    out = args.output or f'offline_{pathlib.Path(args.bag).resolve().stem}_{time.strftime("%Y%m%d-%H%M%S")}'
    try:
        if args.time_scale < 0:
            raise ValueError('--time-scale must not be negative')
        result = run_offline(args.bag, out, remap=parse_remaps(args.remap), time_scale=args.time_scale)
    except (scenario.ScenarioError, bagwriter.MediaError, FileNotFoundError, FileExistsError, ValueError) as exc:
        print(f'error: {exc}')
        return 2
    t = result['timing']
    print(f'offline run of {args.bag} -> {out}: {t["duration_s"]:.1f} s of input in {t["compute_s"]:.1f} s '
          f'(+{t["model_load_s"]:.1f} s loading); recorded: {result["recorded"]}')
    for p in result.get('problems', []):
        print(f'  bag problem: {p["kind"]}{" [" + p["topic"] + "]" if p["topic"] else ""}: {p["text"]}')
    return _print_summary(result)


def _print_summary(result: dict[str, Any]) -> int:
    sc = result.get('score')
    if not sc:
        print('  no ground truth: nothing scored')
        return 1 if result.get('graph_failed') else 0
    for line in sc.get('spoken', []):
        print(f'  [{line["t"]:7.1f} s] robot: {line["text"]}')
    for p in sc['probes']:
        print(f'  probe {p["id"]:<20} {"PASS" if p["passed"] else "FAIL"}  {p.get("detail", "")}')
    print(f'  {sc["summary"]["passed"]}/{sc["summary"]["total"]} probes passed; report: {result.get("report")}')
    return 0 if sc['summary']['passed'] == sc['summary']['total'] else 1
