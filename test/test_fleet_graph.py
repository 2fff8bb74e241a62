# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Two robots, one Milvus standalone server, real nodes across processes (issue: fleet memory on Milvus).

Robot A and robot B each run their own consolidation node (own namespace, own memory folder, memory.backend milvus)
against one Milvus standalone server this test starts. A person seen by A's perception node is recognised by B's
perception node with the same face id; a fact told to A is used by B's reflex node in its answer; forgetting the
person through B removes them from A's answers and gallery; the server killed during a stream of Topics into A and
restarted gets every consolidated memory once.
"""

from __future__ import annotations

import os
import pathlib
import time

import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from harness import wait_for
from test_perception_node import MEDIA, params_file

from lightomni_ros.launch_runner.lifecycle import LifecycleClient
from lightomni_ros.msg import Action, FaceGallery, FaceIdentity, Segment, Topic
from lightomni_ros.nodes.common import LATCHED_QOS, RELIABLE_QOS
from lightomni_ros.srv import Forget, ListProfiles, QueryMemory, Remember

pytest.importorskip('pymilvus', reason='requirements/fleet.txt is not installed (FLEET=0)')
pytest.importorskip('milvus', reason='requirements/fleet.txt is not installed (FLEET=0)')
pytestmark = [pytest.mark.skipif(MEDIA is None, reason='development media not found (LIGHTOMNI_MEDIA)'),
              pytest.mark.timeout(900)]

A, B = f'/fleet_a_{os.getpid()}', f'/fleet_b_{os.getpid()}'
PHOTO = 'faces/public_figures/barack_obama_1.jpg'
CLIP = 'speech/ljspeech/LJ001-0002.wav'
T0 = 1_780_000_000


def consolidation(spawn, tmp: pathlib.Path, ns: str, robot: str, uri: str):
    params = tmp / f'consolidation_{robot}.yaml'
    params.write_text(f"""/**:
  ros__parameters:
    memory:
      memory_dir: "{tmp / robot}"
      backend: "milvus"
      milvus_uri: "{uri}"
      fleet_id: "hotel"
      robot_id: "{robot}"
      milvus_timeout_s: 3.0
      sync_period_s: 0.5
    consolidation:
      timezone: "UTC"
      reminder_period_s: 0.5
""")
    return spawn.python('-m', 'lightomni_ros.nodes.consolidation', '--ros-args', '-r', f'__ns:={ns}',
                        '--params-file', str(params), name=f'consolidation_{robot}')


def perception(spawn, tmp: pathlib.Path, ns: str, robot: str):
    folder = tmp / f'perception_{robot}'
    folder.mkdir()
    return spawn.python('-m', 'lightomni_ros.nodes.perception', '--ros-args', '-r', f'__ns:={ns}',
                        '--params-file', str(params_file(folder)), name=f'perception_{robot}')


def bring_up(domain_id: int, nodes: list[tuple[str, object]], timeout: float = 180.0) -> None:
    with LifecycleClient(domain_id) as lc:
        for fqn, child in nodes:
            ok, why = lc.change_state(fqn, 'configure', timeout=timeout)
            assert ok, f'{fqn} configure: {why}\n{child.output[-3000:]}'
            ok, why = lc.change_state(fqn, 'activate', timeout=60)
            assert ok, f'{fqn} activate: {why}\n{child.output[-3000:]}'


def feed(spawn, ns: str):
    return spawn.python('-m', 'lightomni_ros.eval.perception_media', 'feed', '--namespace', ns, CLIP, '--still',
                        PHOTO, '--gap-s', '2.0', '--fps', '10', name='feeder')


def test_two_robots_share_memory_through_one_milvus(spawn, ros, domain_id, tmp_path):
    from lightomni_ros.tools.milvus_server import MilvusServer

    server = MilvusServer(tmp_path / 'milvus').start()
    try:
        _fleet(spawn, ros, domain_id, tmp_path, server)
    finally:
        server.stop()


def _fleet(spawn, ros, domain_id, tmp_path, server):
    cons_a = consolidation(spawn, tmp_path, A, 'a', server.uri)
    cons_b = consolidation(spawn, tmp_path, B, 'b', server.uri)
    perc_a, perc_b = perception(spawn, tmp_path, A, 'a'), perception(spawn, tmp_path, B, 'b')
    bring_up(domain_id, [(f'{A}/consolidation', cons_a), (f'{B}/consolidation', cons_b),
                         (f'{A}/perception', perc_a), (f'{B}/perception', perc_b)])

    # -- a person seen by A is recognised by B with the same face id ---------------------------------------------
    new_a = ros.collect(FaceIdentity, f'{A}/faces/identity', RELIABLE_QOS)
    new_b = ros.collect(FaceIdentity, f'{B}/faces/identity', RELIABLE_QOS)
    segs_b = ros.collect(Segment, f'{B}/segments', RELIABLE_QOS)
    gallery_b = ros.collect(FaceGallery, f'{B}/faces/gallery', LATCHED_QOS)
    feed(spawn, A)
    first = wait_for(lambda: [i for i in new_a if i.op == FaceIdentity.OP_NEW], 90,
                     what=f'A creates an identity\n{perc_a.output[-2000:]}')[0]
    face = first.face_id
    wait_for(lambda: any(face in [i.face_id for i in g.identities] for g in gallery_b), 60,
             what=f'{face} in B\'s gallery (through Milvus)\n{cons_b.output[-2000:]}')
    profiles = ros.call(ListProfiles, f'{B}/list_profiles', ListProfiles.Request()).profiles
    assert [p.face_id for p in profiles] == [face]
    feeder = feed(spawn, B)
    seg = wait_for(lambda: [s for s in segs_b if s.trigger == Segment.TRIGGER_END_OF_SPEECH], 90,
                   what=f'a segment from B\'s perception\n{perc_b.output[-2000:]}')[0]
    assert {f.face_id for f in seg.faces} == {face}, seg.faces
    wait_for(lambda: feeder.proc.poll() is not None, 30, what='the feeder to finish')
    assert not [i for i in new_b if i.op == FaceIdentity.OP_NEW], 'B made a new id for a person A knows'
    for child in (perc_a, perc_b):
        child.stop()         # free the CPU for the reflex node

    # -- a fact told to A is used by B's reflex node in its answer -------------------------------------------------
    told = ros.call(Remember, f'{A}/remember', Remember.Request(content='The guest in room 12 is allergic to peanuts.'))
    assert told.success
    reflex_b = spawn.python('-m', 'lightomni_ros.nodes.reflex', '--ros-args', '-r', f'__ns:={B}', '-r',
                            '__node:=reflex', '-p', 'export.backend:=torch', '-p', 'backbone.max_new_tokens:=6',
                            '-p', 'backbone.memory_max_new_tokens:=8', '-p', 'backbone.threads:=1', name='reflex_b')
    bring_up(domain_id, [(f'{B}/reflex', reflex_b)])
    actions = ros.collect(Action, f'{B}/actions', RELIABLE_QOS)
    pub = ros.node.create_publisher(Segment, f'{B}/segments', RELIABLE_QOS)
    wait_for(lambda: pub.get_subscription_count() > 0, 30, what='B\'s reflex subscribed')
    ref = f'semantic:{told.entry_id}'

    def in_b_memory():
        r = ros.call(QueryMemory, f'{B}/query_memory', QueryMemory.Request(query_text='who is allergic to peanuts?'))
        return any(e.id == told.entry_id and e.robot_id == 'a' for e in r.semantic)
    wait_for(in_b_memory, 30, interval=0.5, what='A\'s fact in B\'s QueryMemory')
    seg = Segment(segment_id=7, trigger=Segment.TRIGGER_END_OF_SPEECH,
                  transcript='Which guest is allergic to peanuts? Do you remember the room number?')
    seg.start = seg.end = seg.speech_end = ros.node.get_clock().now().to_msg()
    pub.publish(seg)
    act = wait_for(lambda: [a for a in actions if a.segment_id == 7], 180,
                   what=f'B\'s answer\n{reflex_b.output[-3000:]}')[0]
    assert act.search and ref in list(act.memory_ids), (act.memory_ids, act.response)
    reflex_b.stop()

    # -- forgetting the person through B removes them from A -------------------------------------------------------
    ros.call(Remember, f'{A}/remember', Remember.Request(content=f'{face} left a coat in the cloakroom',
                                                         face_ids=[face]))
    gallery_a = ros.collect(FaceGallery, f'{A}/faces/gallery', LATCHED_QOS)
    forgotten_a = ros.collect(FaceIdentity, f'{A}/faces/forgotten', RELIABLE_QOS)

    def a_mentions():
        r = ros.call(QueryMemory, f'{A}/query_memory', QueryMemory.Request(query_text='who left a coat?',
                                                                           face_ids=[face], robot_ids=['*']))
        return [e.content for e in list(r.semantic) + list(r.episodic) if face in e.content] + \
            [p.face_id for p in r.profiles]
    wait_for(a_mentions, 20, what='A knows the person before the forget')
    res = ros.call(Forget, f'{B}/forget', Forget.Request(scope=Forget.Request.SCOPE_FACE, face_id=face))
    assert res.success and res.removed_profiles == 1, res.message
    wait_for(lambda: not a_mentions(), 30, interval=0.5, what='the person gone from A\'s answers')
    wait_for(lambda: [f for f in forgotten_a if f.face_id == face], 30, what='A announces the forget to its perception')
    wait_for(lambda: gallery_a and face not in [i.face_id for i in gallery_a[-1].identities], 30,
             what='A\'s gallery without the person')
    assert not ros.call(ListProfiles, f'{A}/list_profiles', ListProfiles.Request()).profiles

    # -- the server killed during a stream of Topics into A, then restarted: every memory arrives once -------------
    topics = ros.node.create_publisher(Topic, f'{A}/topics', RELIABLE_QOS)
    wait_for(lambda: topics.get_subscription_count(), 20, what='A subscribed to topics')
    diags = ros.collect(DiagnosticArray, '/diagnostics')

    def backlog_warned():
        return [st for d in diags for st in d.status if 'Milvus unreachable' in st.message and
                any(kv.key == 'outbox_backlog' and int(kv.value) > 0 for kv in st.values)]
    n = 24
    for i in range(1, n + 1):
        if i == 9:
            server.kill()
        if i == 17:
            warned = wait_for(backlog_warned, 60, interval=0.5, what='a diagnostics WARN with the outbox backlog')
            assert warned[-1].level == DiagnosticStatus.WARN and 'outbox backlog' in warned[-1].message
            server.start()
        topics.publish(Topic(segment_id=100 + i, start=Time(sec=T0 + 30 * i), end=Time(sec=T0 + 30 * i + 25),
                             visual='the lobby', audio=f'delivery number {i} arrived at gate {i % 5}',
                             response='noted', producer='replay'))
        time.sleep(0.1)      # the replay's own pacing (input timing, not a wait for a state: that is below)
    from pymilvus import MilvusClient
    client = MilvusClient(server.uri, timeout=10)

    def stored_once():
        try:
            rows = client.query('lightomni_hotel_episodic', filter='robot == "a" and source_segment > 100',
                                output_fields=['source_segment'], consistency_level='Strong', limit=1000)
        except Exception:  # noqa: BLE001 - the restarted server is still loading the collection
            return None
        segs = sorted(r['source_segment'] for r in rows)
        return segs if segs == list(range(101, 101 + n)) else None
    wait_for(stored_once, 120, interval=1.0, what=f'all {n} events in Milvus once\n{cons_a.output[-2000:]}')
    r = ros.call(QueryMemory, f'{B}/query_memory', QueryMemory.Request(query_text='delivery number 12 at the gate',
                                                                       robot_ids=['a'], k_episodic=3))
    assert any('delivery number 12 ' in e.content for e in r.episodic), [e.content for e in r.episodic]
