# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Multi-process: consolidation node + reflex node (real SmolLM2); Segment in -> Action out, Topics reach memory."""

from __future__ import annotations

import time

import pytest
from builtin_interfaces.msg import Time

from harness import wait_for
from lightomni_ros.launch_runner.lifecycle import LifecycleClient
from lightomni_ros.msg import Action, FaceObservation, Reminder, Segment, SpeechChunk, Topic
from lightomni_ros.nodes.common import RELIABLE_QOS
from lightomni_ros.srv import QueryMemory, Summarize

NS = '/lightomni'
pytestmark = pytest.mark.timeout(240)


def _now(ros) -> Time:
    return ros.node.get_clock().now().to_msg()


def test_segment_to_action_and_topics(ros, spawn, tmp_path, domain_id):
    ros_args = ['--ros-args', '-r', f'__ns:={NS}', '--log-level', 'info']
    cons = spawn.python('-m', 'lightomni_ros.nodes.consolidation', *ros_args, '-r', '__node:=consolidation',
                        '-p', f'memory.memory_dir:={tmp_path / "mem"}', name='consolidation')
    reflex = spawn.python('-m', 'lightomni_ros.nodes.reflex', *ros_args, '-r', '__node:=reflex',
                          '-p', 'export.backend:=torch', '-p', 'backbone.max_new_tokens:=6',
                          '-p', 'backbone.memory_max_new_tokens:=8', '-p', 'sleep_idle_s:=0.1',
                          '-p', 'backbone.threads:=1', '-p', f'sleep_queue_path:={tmp_path / "reflex_queue.db"}',
                          name='reflex')
    actions = ros.collect(Action, f'{NS}/actions', RELIABLE_QOS)
    speech = ros.collect(SpeechChunk, f'{NS}/actions/speech', RELIABLE_QOS)
    topics = ros.collect(Topic, f'{NS}/topics', RELIABLE_QOS)
    requested = ros.collect(Reminder, f'{NS}/reminders/new', RELIABLE_QOS)
    pub = ros.node.create_publisher(Segment, f'{NS}/segments', RELIABLE_QOS)
    due = ros.node.create_publisher(Reminder, f'{NS}/reminders/due', RELIABLE_QOS)
    with LifecycleClient(domain_id) as lc:
        for fqn, child in ((f'{NS}/consolidation', cons), (f'{NS}/reflex', reflex)):
            ok, why = lc.change_state(fqn, 'configure', timeout=150)
            assert ok, f'{fqn} configure: {why}\n{child.output[-3000:]}'
            ok, why = lc.change_state(fqn, 'activate', timeout=30)
            assert ok, f'{fqn} activate: {why}\n{child.output[-3000:]}'
    wait_for(lambda: pub.get_subscription_count() > 0, 20, what='reflex subscribed to segments')
    # the consolidation node's latched S_g arrived during activation and its prefixes were built before "active"
    wait_for(lambda: 'prefixes built at activation' in reflex.output, 20,
             what=f'the S_g prefixes built at activation\n{reflex.output[-3000:]}')

    seg = Segment(segment_id=41, trigger=Segment.TRIGGER_END_OF_SPEECH,
                  # addressed to the robot: the reaction head stays quiet for speech that is not
                  transcript='Robot, remember that my sister Lena lives in Porto. Robot, what is her name?',
                  faces=[FaceObservation(face_id='<face_1>')], visual_tags=['living room'])
    seg.start = seg.end = seg.speech_end = _now(ros)
    pub.publish(seg)
    wait_for(lambda: any(a.segment_id == 41 for a in actions), 120,
             what=f'an Action for segment 41\n{reflex.output[-3000:]}')
    a = next(a for a in actions if a.segment_id == 41)
    assert a.source == Action.SOURCE_SEGMENT and a.speak and a.search and a.response.strip()
    assert 0.0 <= a.p_speech <= 1.0 and 0.0 <= a.p_search <= 1.0
    # the model ran (the generation stage below); what is said is its reply, or "I don't know." when the grounding
    # check refuses a claim the (still empty) memory does not hold
    assert a.backend.startswith('torch') and (a.response_source in ('generated', 'extractive')
                                              or (a.response_source, a.response) == ('template', "I don't know."))
    stages = {s.stage: s.ms for s in a.latency}
    assert {'reflex', 'retrieval', 'generation', 'eos_to_action'} <= set(stages), stages
    # the reply in pieces for text-to-speech: published before the Action, the same words in total
    pieces = wait_for(lambda: [c for c in speech if c.segment_id == 41] if any(
        c.segment_id == 41 and c.final for c in speech) else None, 30, what='the final SpeechChunk of segment 41')
    assert [c.index for c in pieces] == list(range(len(pieces))) and pieces[-1].final
    assert ' '.join(c.text for c in pieces if c.text) == a.response
    stamp = (pieces[0].header.stamp.sec, pieces[0].header.stamp.nanosec)
    assert stamp <= (a.header.stamp.sec, a.header.stamp.nanosec) and 'first_chunk' in stages

    # sleep time: the memory pass writes a Topic that the consolidation node stores
    wait_for(lambda: any(t.segment_id == 41 for t in topics), 120, what=f'Topic 41\n{reflex.output[-3000:]}')
    t = next(t for t in topics if t.segment_id == 41)
    assert t.producer in ('memory-adapter', 'fallback-parser')
    assert 'sister Lena lives in Porto' in ' '.join(t.remembered + t.semantic)

    def stored():
        r = ros.call(QueryMemory, f'{NS}/query_memory', QueryMemory.Request(query_text='Where does Lena live?'))
        return r.success and any(e.source_segment == 41 for e in list(r.semantic) + list(r.episodic))
    wait_for(stored, 30, interval=0.5, what='the Topic stored by the consolidation node')

    # proactive reminder -> speech
    due.publish(Reminder(id=5, text='take the medicine', status=Reminder.STATUS_FIRED))
    wait_for(lambda: any(a.source == Action.SOURCE_REMINDER for a in actions), 30, what='reminder action')
    r = next(a for a in actions if a.source == Action.SOURCE_REMINDER)
    assert r.speak and 'take the medicine' in r.response and r.response_source == 'template'
    said = wait_for(lambda: [c for c in speech if c.segment_id == 0 and c.final], 30, what='the reminder spoken')
    assert said[0].text == r.response and said[0].index == 0
    # a time intent is sent to the consolidation node when it is answered, not only in the later Topic
    seg.segment_id, seg.transcript = 42, 'Please remind me to feed the cat in ten minutes.'
    seg.start = seg.end = seg.speech_end = _now(ros)
    pub.publish(seg)
    got = wait_for(lambda: [m for m in requested if m.source_segment == 42], 60, what='reminders/new for segment 42')
    assert got[0].text == 'feed the cat' and abs(got[0].due.sec - (seg.end.sec + 600)) <= 1

    # the Summarize service the consolidation node uses for merges
    resp = ros.call(Summarize, f'{NS}/summarize',
                    Summarize.Request(mode=Summarize.Request.MODE_MERGE, texts=['Ana came home.', 'Ana slept.'],
                                      max_tokens=6), timeout=60)
    # the model's summary, or none and why: the consolidation node then writes the extractive one
    assert resp.success and ((resp.summary and resp.producer == 'memory-adapter') or resp.message)
    assert reflex.proc.poll() is None and cons.proc.poll() is None
    t0 = time.monotonic()
    assert reflex.stop() == 0 and cons.stop() == 0, reflex.output[-2000:]
    assert time.monotonic() - t0 < 30
