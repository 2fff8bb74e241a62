# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni bench faults``: SIGKILL the nodes during a conversation, fuzz every input, import hostile archives.

Three phases on the real graph (``launch/lightomni.launch.py`` with ``respawn:=true``, each node its own process,
real DDS, real models, state in a fresh folder):

1. **Kills.** Typed lines (notes, "remind me to ... in N seconds") go in at a steady pace while Remember and Forget
   are called; at random moments a node is SIGKILLed (perception, reflex, consolidation in turn, ``--kills`` times);
   the launch runner respawns it and brings it back to active. Afterwards every segment perception published, and
   every line it took in before a kill, must be stored exactly once (``segments_lost``, ``stored_twice``), every
   acknowledged Remember must be in memory and every acknowledged Forget must have removed its entry
   (``acks_lost``), and every reminder must be spoken exactly once (``reminders_missed``, ``reminders_twice``).
2. **Fuzzing** (hypothesis): every subscribed topic gets messages with extreme and malformed fields, plus raw
   truncated or random CDR bytes on the wire; every service gets hostile requests. ``node_crashes`` counts node
   processes that died; ``memory_changed_by_fuzz`` counts rows stored before the fuzzing that were changed or removed
   by it (new rows from fuzz input that was well-formed are counted apart, as ``fuzz_rows_added``).
3. **Hostile archives** (ImportMemory through the service): each must be refused with the store untouched.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import random
import signal
import tempfile
import threading
import time
from typing import Any

from .bench import Report

NS = '/lightomni'
NODES = ('perception', 'reflex', 'consolidation')
PLACES = ['drawer', 'garage', 'attic', 'kitchen', 'cellar', 'garden', 'car', 'closet', 'shelf', 'basket']
THINGS = ['keys', 'umbrella', 'passport', 'charger', 'glasses', 'wallet', 'scarf', 'hammer', 'ticket', 'book']


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Flags of this area."""
    p.add_argument('--kills', type=int, default=9, help='faults: SIGKILLs (perception, reflex, consolidation in turn)')
    p.add_argument('--fuzz-messages', type=int, default=10000, help='faults: fuzzed messages in all')
    p.add_argument('--seed', type=int, default=0, help='faults: random seed of kill moments and inputs')


def run(args: argparse.Namespace, report: Report) -> None:
    """Run the three phases and report."""
    kills = 3 if args.quick else args.kills
    fuzz_n = 600 if args.quick else args.fuzz_messages
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix='lightomni_faults_') as tmp:
        work = pathlib.Path(tmp)
        graph = _Graph(work)
        try:
            graph.start()
            probe = _Probe()
            try:
                _kills(graph, probe, kills, rng, report)
                _fuzz(graph, probe, fuzz_n, args.seed, report, work)
                _archives(graph, probe, report, work)
            finally:
                probe.close()
        finally:
            graph.stop()


# -- the graph -------------------------------------------------------------------------------------------------------
class _Graph:
    """The launched graph with respawn, state and fast settings in a work folder."""

    def __init__(self, work: pathlib.Path) -> None:
        import yaml

        from lightomni_ros.launch_runner import shim
        from .replay import GraphLauncher, fresh_config

        self.work = work
        fresh_config(shim.package_share('lightomni_ros') / 'config', work / 'config', work / 'state')
        reflex = work / 'config' / 'reflex.yaml'
        data = yaml.safe_load(reflex.read_text())
        p = data['/**']['ros__parameters']
        p['sleep_idle_s'] = 0.1
        p['backbone'].update(max_new_tokens=8, memory_max_new_tokens=8, threads=1)
        p['export']['backend'] = 'torch'
        p['topic_resend_s'] = 2.0
        reflex.write_text(yaml.safe_dump(data, sort_keys=False))
        perception = work / 'config' / 'perception.yaml'
        data = yaml.safe_load(perception.read_text())
        data['/**']['ros__parameters']['segment_resend_s'] = 2.0
        perception.write_text(yaml.safe_dump(data, sort_keys=False))
        cons = work / 'config' / 'consolidation.yaml'
        data = yaml.safe_load(cons.read_text())
        # merges and profile updates by the extractive summarizer: the CPU's model time goes to answers and passes
        data['/**']['ros__parameters']['consolidation']['summarize_service'] = 'no_summarizer'
        cons.write_text(yaml.safe_dump(data, sort_keys=False))
        self.launcher = GraphLauncher('lightomni.launch.py', {'respawn': 'true', 'respawn_delay': '1.0'},
                                      work / 'logs', defaults={'namespace': 'lightomni',
                                                               'config_dir': str(work / 'config')},
                                      activate_timeout=300.0)
        self.stop_event = threading.Event()

    @property
    def nodes(self) -> dict[str, Any]:
        return {n.label: n for n in self.launcher.runner.nodes}

    def start(self) -> None:
        self.launcher.start()
        pending = self.launcher.wait_active(600.0, self.stop_event)
        if pending:
            raise RuntimeError(f'graph not active: {pending}; logs in {self.launcher.log_dir}')

    def active(self, label: str) -> bool:
        from lightomni_ros.launch_runner.lifecycle import LifecycleClient

        with LifecycleClient() as c:
            return c.get_state(f'{NS}/{label}', timeout=2.0) == 'active'

    def wait_active(self, label: str, timeout: float = 300.0) -> float:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.nodes[label].proc.poll() is None and self.active(label):
                return time.monotonic() - t0
            time.sleep(0.5)
        raise RuntimeError(f'{label} did not come back within {timeout:g} s (logs: {self.launcher.log_dir})')

    def kill(self, label: str) -> None:
        os.killpg(self.nodes[label].proc.pid, signal.SIGKILL)

    def memory_db(self) -> pathlib.Path:
        return self.work / 'state' / 'memory' / 'memory.db'

    def stop(self) -> None:
        self.launcher.stop()


class _Probe:
    """The bench's own rclpy node: typed text in, segments/actions recorded, memory services called."""

    def __init__(self) -> None:
        from std_msgs.msg import String

        from lightomni_ros.msg import Action, Segment
        from lightomni_ros.nodes.common import RELIABLE_QOS, BackgroundNode

        self.spinner = BackgroundNode('lightomni_faults', enable_rosout=False)
        self.node = self.spinner.node
        self.text = self.node.create_publisher(String, '/text_input', RELIABLE_QOS)
        self.segments: list[Any] = []
        self.actions: list[Any] = []
        self.node.create_subscription(Segment, f'{NS}/segments', self.segments.append, RELIABLE_QOS)
        self.node.create_subscription(Action, f'{NS}/actions', self.actions.append, RELIABLE_QOS)

    def say(self, text: str) -> bool:
        """Type a line; False when perception is not there to take it."""
        from std_msgs.msg import String

        if not self.text.get_subscription_count():
            return False
        self.text.publish(String(data=text))
        return True

    def call(self, srv: Any, name: str, req: Any, timeout: float = 20.0) -> Any:
        """A service call; None when it is not there or does not answer in time."""
        client = self.node.create_client(srv, f'{NS}/{name}')
        try:
            if not client.wait_for_service(timeout_sec=2.0):
                return None
            fut = client.call_async(req)
            t0 = time.monotonic()
            while not fut.done() and time.monotonic() - t0 < timeout:
                time.sleep(0.02)
            if not fut.done():
                client.remove_pending_request(fut)
                return None
            return fut.result()
        finally:
            self.node.destroy_client(client)

    def close(self) -> None:
        """Stop the bench's node."""
        self.spinner.close()


def _read_db(path: pathlib.Path, query: str, args: tuple = ()) -> list[tuple]:
    from lightomni_ros.core.memory import crypto

    key = os.environ.get('LIGHTOMNI_MEMORY_KEY')
    for _ in range(20):
        try:
            db = crypto.connect(path, key, timeout=10.0)
            try:
                return [tuple(r) for r in db.execute(query, args).fetchall()]
            finally:
                db.close()
        except Exception:  # noqa: BLE001 - locked or being written: try again
            time.sleep(0.2)
    raise RuntimeError(f'cannot read {path}')


# -- phase 1: kills --------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class _Conversation:
    """What the kill phase typed and what was acknowledged, with the moments perception was down."""

    probe: _Probe
    rng: random.Random
    lines: list[tuple[str, bool, float]] = dataclasses.field(default_factory=list)  # (text, taken, monotonic)
    perception_kills: list[float] = dataclasses.field(default_factory=list)
    perception_down: list[tuple[float, float]] = dataclasses.field(default_factory=list)  # (killed, active)
    reminders: list[str] = dataclasses.field(default_factory=list)
    remembered: list[str] = dataclasses.field(default_factory=list)
    forgotten: list[str] = dataclasses.field(default_factory=list)
    recover: dict[str, list[float]] = dataclasses.field(default_factory=lambda: {n: [] for n in NODES})

    def type_some(self, seconds: float) -> None:
        """Type notes and reminders, call Remember (and every other time Forget), for about ``seconds``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            i = len(self.lines) + 1
            if i % 5 == 0:
                text = f'Remind me to water plant number {i} in 15 seconds.'
                self.reminders.append(f'water plant number {i}')
            else:
                text = f'Note {i}: the {THINGS[i % 10]} number {i} is in the {PLACES[(i * 7) % 10]}.'
            self.lines.append((text, self.probe.say(text), time.monotonic()))
            if i % 4 == 0:
                self._remember(i)
            time.sleep(self.rng.uniform(1.2, 2.4))

    def _remember(self, i: int) -> None:
        from lightomni_ros.srv import Forget, Remember

        fact = f'fact {i}: the code of locker {i} is {1000 + i}'
        r = self.probe.call(Remember, 'remember', Remember.Request(content=fact), timeout=5.0)
        if r is None or not r.success:
            return
        self.remembered.append(fact)
        if i % 8 == 0:
            f = self.probe.call(Forget, 'forget', Forget.Request(scope=Forget.Request.SCOPE_ENTRIES,
                                                                 entry_ids=[f'semantic:{r.entry_id}']), 5.0)
            if f is not None and f.success:
                self.forgotten.append(fact)

    def while_perception_down(self, at: float) -> bool:
        """Whether a line typed at ``at`` fell between a perception kill and its return."""
        return any(a <= at <= b for a, b in self.perception_down)


def _kills(graph: _Graph, probe: _Probe, kills: int, rng: random.Random, report: Report) -> None:
    talk = _Conversation(probe=probe, rng=rng)
    talk.type_some(4.0)
    for k in range(kills):
        label = NODES[k % 3]
        talk.type_some(rng.uniform(1.0, 5.0))        # the kill falls at a random moment of the conversation
        graph.kill(label)
        t_kill = time.monotonic()
        if label == 'perception':
            talk.perception_kills.append(t_kill)
        talk.type_some(rng.uniform(0.5, 2.0))
        graph.wait_active(label)
        talk.recover[label].append(time.monotonic() - t_kill)
        if label == 'perception':
            talk.perception_down.append((t_kill, time.monotonic()))
    talk.type_some(4.0)
    # drain: everything that went in reaches memory (or the time-out says it did not)
    deadline = time.monotonic() + 900.0
    while time.monotonic() < deadline:
        stored = _stored(graph, probe)
        if all(v >= 1 for v in stored.values()) and _reminders_done(probe, talk.reminders):
            break
        time.sleep(2.0)
    _report_kills(graph, talk, kills, report)


def _report_kills(graph: _Graph, talk: _Conversation, kills: int, report: Report) -> None:
    probe = talk.probe
    stored = _stored(graph, probe)
    took = [(t, at) for t, ok, at in talk.lines if ok and not talk.while_perception_down(at)]
    typed_down = sum(1 for _, ok, at in talk.lines if ok and talk.while_perception_down(at))
    seg_texts = {s.typed_text for s in probe.segments}
    unpublished = [(t, at) for t, at in took if t not in seg_texts]
    # typed in the last half second before perception died: still on the wire or in its callback queue, not taken
    in_flight = [t for t, at in unpublished if any(0 <= k - at < 0.5 for k in talk.perception_kills)]
    lost_in_perception = [t for t, _ in unpublished if t not in in_flight]
    lost = [k for k, v in stored.items() if v == 0]
    twice = [k for k, v in stored.items() if v > 1]
    sem = {r[0] for r in _read_db(graph.memory_db(), 'SELECT content FROM semantic')}
    acks_lost = ([f for f in talk.remembered if f not in talk.forgotten and f not in sem]
                 + [f for f in talk.forgotten if f in sem])
    spoken = [a.response for a in probe.actions if a.source == 1]
    missed = [r for r in talk.reminders if r in seg_texts_reminders(seg_texts) and sum(r in s for s in spoken) == 0]
    rem_twice = [r for r in talk.reminders if sum(f'{r}.' in s or s.endswith(r) for s in spoken) > 1]
    report.figure('kills', kills)
    report.figure('kills_by_node', {n: len(v) for n, v in talk.recover.items()})
    report.figure('recovery_s_max', {n: round(max(v), 1) for n, v in talk.recover.items() if v}, 's',
                  'kill -> node active again')
    report.figure('lines_typed', len(talk.lines))
    report.figure('lines_sent_while_perception_up', len(took))
    report.figure('lines_sent_while_perception_down', typed_down + sum(1 for _, ok, _ in talk.lines if not ok),
                  note='between a kill and its return to active: never reached a live perception node')
    report.figure('segments_published', len(stored))
    report.figure('segments_lost', len(lost) + len(lost_in_perception),
                  note=f'{len(lost_in_perception)} typed lines taken by perception but never published')
    report.figure('typed_in_flight_at_perception_kill', len(in_flight),
                  note='typed < 0.5 s before perception was killed: not counted as segments')
    report.figure('stored_twice', len(twice))
    report.figure('remember_acked', len(talk.remembered))
    report.figure('forget_acked', len(talk.forgotten))
    report.figure('acks_lost', len(acks_lost))
    report.figure('reminders_requested', len(talk.reminders))
    report.figure('reminders_missed', len(missed))
    report.figure('reminders_twice', len(rem_twice))
    if lost or lost_in_perception or twice or acks_lost or missed:
        report.note(f'lost {lost[:5]} {lost_in_perception[:3]}; twice {twice[:5]}; acks lost {acks_lost[:3]}; '
                    f'reminders missed {missed[:3]}')


def seg_texts_reminders(texts: set[str]) -> set[str]:
    """Reminder tasks of the typed lines that became segments."""
    out = set()
    for t in texts:
        if t.startswith('Remind me to '):
            out.add(t[len('Remind me to '):].split(' in 15 seconds')[0])
    return out


def _stored(graph: _Graph, probe: _Probe) -> dict[tuple[int, float], int]:
    """Published segment (id, start) -> episodic rows stored for it."""
    keys = {(int(s.segment_id), round(s.start.sec + s.start.nanosec * 1e-9, 3)) for s in list(probe.segments)}
    rows = _read_db(graph.memory_db(), 'SELECT source_segment, start FROM episodic')
    counts: dict[tuple[int, float], int] = {}
    for sid, start in rows:
        counts[(int(sid), round(start, 3))] = counts.get((int(sid), round(start, 3)), 0) + 1
    return {k: counts.get(k, 0) for k in keys}


def _reminders_done(probe: _Probe, reminders: list[str]) -> bool:
    spoken = ' '.join(a.response for a in probe.actions if a.source == 1)
    want = seg_texts_reminders({s.typed_text for s in probe.segments})
    return all(r in spoken for r in reminders if r in want)


# -- phase 2: fuzzing ------------------------------------------------------------------------------------------------
SUBSCRIBED = {   # topic -> message type (what each node subscribes to)
    '/camera/image_raw': 'sensor_msgs/msg/Image', '/audio': 'lightomni_ros/msg/AudioStamped',
    '/text_input': 'std_msgs/msg/String', f'{NS}/faces/gallery': 'lightomni_ros/msg/FaceGallery',
    f'{NS}/faces/forgotten': 'lightomni_ros/msg/FaceIdentity', f'{NS}/segments/ack': 'lightomni_ros/msg/Ack',
    f'{NS}/segments': 'lightomni_ros/msg/Segment', f'{NS}/global_state': 'lightomni_ros/msg/GlobalState',
    f'{NS}/reminders/due': 'lightomni_ros/msg/Reminder', f'{NS}/topics/ack': 'lightomni_ros/msg/Ack',
    f'{NS}/topics': 'lightomni_ros/msg/Topic', f'{NS}/reminders/new': 'lightomni_ros/msg/Reminder',
    f'{NS}/faces/identity': 'lightomni_ros/msg/FaceIdentity',
}
#: topics whose messages make the reflex node run its model: fewer of them, or the fuzzing takes hours
HEAVY = {f'{NS}/segments': 0.02, '/text_input': 0.01}


#: what stored memory says (merges retiring S_g nodes and a fact met again widening its span are consolidation
#: at work, not changes of what is remembered)
_CONTENT = {'semantic': 'id, content, pinned, source_segment', 'episodic': 'id, visual, audio, response, raw_refs',
            'profiles': 'face_id, name, attributes, avatar, embedding', 'sg_nodes': 'id, level, text, children',
            'reminders': 'id, due, text, face_id', 'semantic_faces': '*', 'episodic_faces': '*'}


def _snapshot(graph: _Graph) -> dict[str, set]:
    db = graph.memory_db()
    return {table: set(_read_db(db, f'SELECT {cols} FROM {table}')) for table, cols in _CONTENT.items()}


def _fuzz(graph: _Graph, probe: _Probe, n: int, seed: int, report: Report, work: pathlib.Path) -> None:
    from hypothesis import HealthCheck, Phase, given, seed as hseed, settings
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rclpy.serialization import serialize_message

    from . import rostypes
    from .fuzzing import message_strategy

    deadline = time.monotonic() + 120.0     # the consolidation worker finishes its queue first
    while time.monotonic() < deadline and _read_db(graph.memory_db(), 'SELECT count(*) FROM pending')[0][0]:
        time.sleep(1.0)
    before = _snapshot(graph)
    starts = {label: node.starts for label, node in graph.nodes.items()}
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    pubs = {t: probe.node.create_publisher(rostypes.message_class(m), t, qos) for t, m in SUBSCRIBED.items()}
    time.sleep(2.0)
    share = {t: max(50, int(n * HEAVY.get(t, (1 - sum(HEAVY.values())) / (len(SUBSCRIBED) - len(HEAVY)))))
             for t in SUBSCRIBED}
    share['/audio'] += max(0, n - sum(share.values()))      # rounding: at least n in all
    sent = {'messages': 0, 'raw_cdr': 0}
    per_topic = {t: 0 for t in SUBSCRIBED}
    rnd = random.Random(seed)
    for topic, count in share.items():
        cls = rostypes.message_class(SUBSCRIBED[topic])
        pub = pubs[topic]

        @hseed(seed)
        @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(message_strategy(cls))
        def send(msg: Any) -> None:
            if rnd.random() < 0.25:     # raw bytes on the wire: truncated, or random
                data = serialize_message(msg)
                data = data[:rnd.randrange(0, max(1, len(data)))] if rnd.random() < 0.7 else \
                    bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 256)))
                pub.publish(data)
                sent['raw_cdr'] += 1
            else:
                pub.publish(msg)
            sent['messages'] += 1
            per_topic[topic] += 1
            if sent['messages'] % 50 == 0:
                time.sleep(0.05)    # let the nodes keep up (a flood is another test)
        send()
    hostile = _hostile_requests(probe, work)
    generated = _generated_requests(probe, seed, 25 if n < 2000 else 60)
    time.sleep(10.0)
    crashes = sum(graph.nodes[label].starts - starts[label] for label in starts) + \
        sum(1 for node in graph.nodes.values() if node.proc.poll() is not None)
    for label in NODES:
        graph.wait_active(label, 120.0)
    after = _snapshot(graph)
    changed = sum(len(before[t] - after[t]) for t in before)
    added = sum(len(after[t] - before[t]) for t in before)
    report.figure('fuzz_messages', sent['messages'])
    report.figure('fuzz_raw_cdr', sent['raw_cdr'])
    report.figure('fuzz_topics', len(SUBSCRIBED))
    report.figure('fuzz_per_topic', dict(sorted(per_topic.items())),
                  note='the topics that make the reflex node run its model get fewer')
    report.figure('generated_requests', generated, note='hypothesis requests to query_memory, remember, '
                  'get_global_state, list_profiles')
    report.figure('hostile_requests', hostile['sent'])
    report.figure('hostile_requests_refused', hostile['refused'], note=f'of {hostile["must_refuse"]} that must be; '
                  'the others (a huge token budget, unknown face ids) are answered harmlessly')
    report.figure('node_crashes', crashes)
    if crashes:
        reasons = '; '.join(_stop_reasons(graph)) or 'no "stopping:" line (a crash)'
        report.note(f'why nodes stopped during the fuzzing (their logs): {reasons}')
    report.figure('memory_changed_by_fuzz', changed)
    report.figure('fuzz_rows_added', added, note='rows from fuzz input that was well-formed')


def _stop_reasons(graph: _Graph) -> list[str]:
    """The "stopping: ..." lines nodes log when they leave on their own (run_node: SIGINT, SIGTERM, or neither)."""
    out = []
    for label, node in graph.nodes.items():
        path = getattr(node, 'log_path', None)
        if path is not None and pathlib.Path(path).is_file():
            out += [f'{label}: {line.split("]: ", 1)[-1].strip()}'
                    for line in pathlib.Path(path).read_text(errors='replace').splitlines() if ' stopping: ' in line]
    return out


def _hostile_requests(probe: _Probe, work: pathlib.Path) -> dict[str, int]:
    """Malformed service requests: each must be answered with success=false (or time out), never crash a node."""
    from lightomni_ros.srv import (ExportMemory, Forget, GetGlobalState, ImportMemory, ListProfiles, QueryMemory,
                                   Remember, Summarize)

    nan = float('nan')
    big = 'x' * 200_000
    reqs = [
        (QueryMemory, 'query_memory', QueryMemory.Request(query_vector=[nan] * 384)),
        (QueryMemory, 'query_memory', QueryMemory.Request(query_vector=[1.0] * 7)),
        (QueryMemory, 'query_memory', QueryMemory.Request(query_vector=[0.0] * 384)),
        (QueryMemory, 'query_memory', QueryMemory.Request(query_text='a', k_semantic=4_000_000_000)),
        (QueryMemory, 'query_memory', QueryMemory.Request()),
        (QueryMemory, 'query_memory', QueryMemory.Request(query_vector=[1.0] * 384, embedder='evil/384')),
        (Remember, 'remember', Remember.Request(content='')),
        (Remember, 'remember', Remember.Request(content='x', face_ids=['../../etc'])),
        (Forget, 'forget', Forget.Request(scope=9)),
        (Forget, 'forget', Forget.Request(scope=0, face_id="<face_1>' OR 1=1")),
        (Forget, 'forget', Forget.Request(scope=1, entry_ids=['semantic:-1 OR 1=1', big])),
        (Forget, 'forget', Forget.Request(scope=1, entry_ids=[])),
    ]
    harmless = [    # answered with success: nothing to refuse, nothing to break
        (GetGlobalState, 'get_global_state', GetGlobalState.Request(max_tokens=4_000_000_000)),
        (ListProfiles, 'list_profiles', ListProfiles.Request(face_ids=[big, '\x00'])),
    ]
    reqs += [
        (ExportMemory, 'export_memory', ExportMemory.Request(path='')),
        (ExportMemory, 'export_memory', ExportMemory.Request(path='/proc/self/mem')),
        (ExportMemory, 'export_memory', ExportMemory.Request(path='/dev/null')),
        (ImportMemory, 'import_memory', ImportMemory.Request(path='/dev/zero')),
        (ImportMemory, 'import_memory', ImportMemory.Request(path='/etc/passwd')),
        (ImportMemory, 'import_memory', ImportMemory.Request(path=str(work / 'missing.jsonl'))),
        (Summarize, 'summarize', Summarize.Request(mode=7, texts=[big])),
    ]
    refused = 0
    for srv, name, req in reqs:
        r = probe.call(srv, name, req, timeout=60.0)
        refused += r is None or not r.success
    for srv, name, req in harmless:
        probe.call(srv, name, req, timeout=60.0)
    return {'sent': len(reqs) + len(harmless), 'must_refuse': len(reqs), 'refused': refused}


def _generated_requests(probe: _Probe, seed: int, per_service: int) -> int:
    """Requests drawn by hypothesis for the services whose success cannot erase anything; return how many."""
    from hypothesis import HealthCheck, Phase, given, seed as hseed, settings

    from lightomni_ros.srv import GetGlobalState, ListProfiles, QueryMemory, Remember

    from .fuzzing import message_strategy

    n = 0
    for srv, name in ((QueryMemory, 'query_memory'), (Remember, 'remember'), (GetGlobalState, 'get_global_state'),
                      (ListProfiles, 'list_profiles')):
        @hseed(seed)
        @settings(max_examples=per_service, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(message_strategy(srv.Request))
        def call(req: Any) -> None:
            nonlocal n
            probe.call(srv, name, req, timeout=30.0)
            n += 1
        call()
    return n


# -- phase 3: hostile archives ---------------------------------------------------------------------------------------
def _archives(graph: _Graph, probe: _Probe, report: Report, work: pathlib.Path) -> None:
    from lightomni_ros.srv import ExportMemory, ImportMemory

    from .hostile import hostile_archives

    good = work / 'good.jsonl'
    r = probe.call(ExportMemory, 'export_memory', ExportMemory.Request(path=str(good)), 60.0)
    if r is None or not r.success:
        raise RuntimeError(f'export failed: {r and r.message}')
    lines = good.read_text().splitlines()
    if not any('"type": "semantic"' in x for x in lines):
        lines.append(json.dumps({'type': 'semantic', 'content': 'a fact', 'start': 1.0, 'end': 1.0}))
    time.sleep(3.0)
    before = _snapshot(graph)
    cases = hostile_archives(work / 'hostile', lines)
    refused = []
    for name, path in cases:
        r = probe.call(ImportMemory, 'import_memory', ImportMemory.Request(path=str(path)), 60.0)
        if r is not None and not r.success:
            refused.append(name)
    untouched = _snapshot(graph) == before
    report.figure('hostile_archives_tried', len(cases))
    report.figure('hostile_archives_refused', len(refused) if untouched else 0,
                  note='' if untouched else 'the store changed')
    missing = sorted(set(n for n, _ in cases) - set(refused))
    if missing:
        report.note(f'accepted: {missing}')


__all__ = ['run', 'add_arguments']
