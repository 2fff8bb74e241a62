# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The offline LightOmni facade with the real models: spoken and typed input -> Actions, memory, retrieval, reminders.

Also the offline replay of a small scenario (no ROS graph), scored by the replay's scoring code.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from lightomni_ros.core.agent import SOURCE_REMINDER, SOURCE_SEGMENT, AgentConfigs, LightOmni
from lightomni_ros.core.memory.store import KIND_EPISODIC, KIND_SEMANTIC
from lightomni_ros.core.reflex.config import BackboneConfig, ExportConfig
from lightomni_ros.core.reflex.runtime import ReflexConfigs

REPO = pathlib.Path(__file__).resolve().parents[1]
T0 = 1_790_000_000.0


def _configs() -> AgentConfigs:
    # torch reflex pass (skips measuring the ONNX path at start-up) and shorter sleep-time replies keep this quick
    return AgentConfigs(reflex=ReflexConfigs(export=ExportConfig(backend='torch'),
                                             backbone=BackboneConfig(memory_max_new_tokens=48, max_new_tokens=32)))


def _speech(text: str) -> list[bytes]:
    from lightomni_ros.eval.bagwriter import tts

    x = np.concatenate([np.zeros(4000, np.float32), tts(text, 'en-us', 150, 50), np.zeros(24000, np.float32)])
    pcm = (np.clip(x, -1, 1) * 32767).astype('<i2').tobytes()
    return [pcm[i:i + 640] for i in range(0, len(pcm), 640)]


@pytest.fixture(scope='module')
def agent(tmp_path_factory):
    a = LightOmni(tmp_path_factory.mktemp('agent') / 'memory', _configs())
    yield a
    a.close()


def test_core_agent_never_imports_rclpy():
    code = 'import sys, lightomni_ros.core.agent, lightomni_ros.eval.offline; sys.exit("rclpy" in sys.modules)'
    assert subprocess.run([sys.executable, '-c', code], cwd=REPO).returncode == 0


def test_spoken_and_typed_input_build_memory_and_answer_from_it(agent):
    actions, segments = [], []
    t = T0
    for chunk in _speech('Hello, my name is Joe. Remember that my car keys are in the blue drawer.'):
        t += 0.02
        ev = agent.push_audio(t, chunk)
        actions += ev.actions
        segments += ev.segments
    assert segments, 'the VAD never closed the spoken segment'
    heard = segments[0][1].transcript.lower()
    assert 'drawer' in heard and 'keys' in heard, heard
    assert actions and actions[0].source == SOURCE_SEGMENT and actions[0].segment_id == segments[0][1].segment_id
    assert actions[0].t >= segments[0][1].end and actions[0].compute_ms > 0

    ev = agent.push_text(t + 3.0, 'I love playing basketball on weekends.')
    assert len(ev.actions) == 1 and ev.segments[0][1].typed_text.startswith('I love')
    ev = agent.push_text(t + 6.0, 'Remind me to call my daughter in one minute.')
    agent.flush()    # sleep-time Topics reach memory
    assert agent.sleep_queue == 0

    store = agent.memory.entries
    assert store.count(KIND_SEMANTIC) >= 1 and store.count(KIND_EPISODIC) >= 3     # facts; one episode per segment
    assert len(agent.memory.tree.nodes()) >= 3
    assert 'drawer' in agent.engine.sg_script               # the reflex core sees the new S_g
    pinned = [e for e in agent.memory.query(text='car keys', k_semantic=12, k_episodic=4).semantic
              if 'drawer' in e[0].content]
    assert pinned and pinned[0][0].pinned

    act = agent.ask('Where are my car keys?')
    assert act.speak and act.search and act.response.strip()
    assert f'semantic:{pinned[0][0].id}' in act.memory_ids, act.memory_ids   # the remembered fact was retrieved
    assert act.latency_ms['retrieval'] > 0

    # the reminder falls due one minute after it was asked for, on the sensor clock
    due = [r for r in agent.memory.reminders() if 'daughter' in r.text]
    assert due, [r.text for r in agent.memory.reminders()]
    ev = agent.advance(due[0].due + 0.5)
    said = [a for a in ev.actions if a.source == SOURCE_REMINDER]
    assert said and 'daughter' in said[0].response and ev.reminders


def test_offline_replay_scores_a_scenario(agent, tmp_path):
    from lightomni_ros.eval.offline import run_offline

    sc = tmp_path / 'tiny.yaml'
    sc.write_text('''
name: tiny
timeline:
  - id: note
    text: Remember that the team meeting moved to Thursday.
    gap: 2
  - id: hello
    say: Hello robot, I am Ana.
    gap: 2
probes:
  - id: meeting
    type: When is the team meeting?
    after: hello
    wait: 8
    expect: [thursday]
''')
    helper = LightOmni(tmp_path / 'memory', _configs(), engine=agent.engine, embedder=agent.embedder)
    result = run_offline(sc, tmp_path / 'run', agent=helper)
    helper.close()
    assert result['mode'] == 'offline'
    saved = json.loads((tmp_path / 'run' / 'result.json').read_text())
    assert saved['score']['summary']['total'] == 1
    assert saved['recorded']['actions'] >= 3 and saved['recorded']['segments'] >= 3
    probe = saved['score']['probes'][0]
    assert probe['answer'], probe                          # an answer was found in the question's window
    assert 0 < probe['latency_s'] < 15
    assert (tmp_path / 'run' / 'report.md').is_file()
    assert any(t['msg']['typed_text'].startswith('Remember that the team')
               for t in json.loads((tmp_path / 'run' / 'outputs.json').read_text())['segments'])
    assert os.path.isfile(tmp_path / 'run' / 'answer_latency.png')
