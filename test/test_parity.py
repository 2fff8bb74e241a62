# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""One code path: the same bag through the launched node graph and through ``replay --offline`` gives the same results.

The scenario speaks (an introduction over a photo, so perception's VAD, ASR and faces all work), types a note and
asks two questions, with idle stretches long enough for the graph's sleep-time work. Compared: the segments
(transcripts, typed text, face ids, the speaker), the decisions (speak, search; and, for every decision both sides
made on the same version of S_g, the response, its source and the memories used), and the memories stored (semantic
facts, episodic events, named profiles). Timing is what may differ: the offline run is at time scale 0.
"""

from __future__ import annotations

import json
import pathlib
import re
import sqlite3
import sys
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from lightomni_ros.core.reflex.people import speaking_face
from lightomni_ros.eval import bagwriter, replay, scenario, scoring
from lightomni_ros.eval.offline import run_offline
from lightomni_ros.eval.perception_media import media_dir

MEDIA = media_dir()
# the scenario names a photo of the development media; without them the test is skipped (not collected broken)
_PHOTO = str((MEDIA or pathlib.Path('media-not-found')) / 'faces/public_figures/barack_obama_1.jpg')
SCENARIO = {
    'name': 'parity',
    'start_time': '2026-01-05T09:00:00Z',
    'camera': {'transport': 'compressed', 'fps': 5, 'max_width': 640},
    'timeline': [
        {'id': 'intro', 'say': "Hi robot, I'm Barack. I love playing basketball on weekends.", 'voice': 'en-us+m3',
         'image': _PHOTO, 'person': 'barack', 'gap': 2},
        {'id': 'rest1', 'idle': 20},
        {'id': 'note', 'text': 'Remember that the spare key is under the red flowerpot.', 'gap': 2},
        {'id': 'rest2', 'idle': 20},
    ],
    'probes': [
        {'id': 'key', 'type': 'Where is the spare key?', 'after': 'rest2', 'wait': 20,
         'expect_any': ['flowerpot', 'red']},
        {'id': 'sport', 'type': 'What sport does Barack like?', 'after': 'rest2', 'wait': 20,
         'expect_any': ['basketball']},
    ],
}


def _ns(x: Any) -> Any:
    """outputs.json's plain dicts as attribute records, like the messages of the graph's output bag."""
    if isinstance(x, dict):
        return SimpleNamespace(**{k: _ns(v) for k, v in x.items()})
    return [_ns(v) for v in x] if isinstance(x, list) else x


def _norm(text: str) -> str:
    return ' '.join(re.sub(r'[^\w\s]', ' ', text.lower()).split())


def _segments(outputs: dict) -> list[tuple]:
    out = []
    for s in outputs['segments']:
        faces = [(f.face_id, f.stamp.sec + f.stamp.nanosec * 1e-9) for f in s.faces]
        speech = s.start.sec + s.start.nanosec * 1e-9 + (s.words[0].start if s.words else 0.0)
        speaker = speaking_face(faces, speech) if s.transcript else ''
        out.append((s.typed_text, _norm(s.transcript), sorted({f for f, _ in faces if f}), speaker))
    return out


def _memory(folder: pathlib.Path, skip: set[int] = frozenset()) -> dict[str, list]:
    """What is stored, without the entries of the segments in ``skip``."""
    db = sqlite3.connect(folder / 'memory.db')
    try:
        rows = {'semantic': 'SELECT content, pinned, source_segment FROM semantic',
                'episodic': 'SELECT visual, audio, source_segment FROM episodic'}
        out = {k: sorted((r[0], r[1]) for r in db.execute(q) if r[2] not in skip) for k, q in rows.items()}
        out['profiles'] = sorted((r[0], r[1]) for r in db.execute('SELECT face_id, name FROM profiles'))
        return out
    finally:
        db.close()


def _after_input(segments: list, offset_ns: int, end_ns: int) -> set[int]:
    """Segments the graph closed after the bag ended (time-outs while the replay drained): the offline run has none."""
    return {s.segment_id for s in segments if (s.end.sec * 10**9 + s.end.nanosec) - offset_ns > end_ns}


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.skipif(MEDIA is None, reason='development media not found: set LIGHTOMNI_MEDIA (docs/CONTRIBUTING.md)')
def test_graph_and_offline_replay_agree(spawn, tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'parity.yaml'
    path.write_text(yaml.safe_dump(SCENARIO, sort_keys=False))
    bag = tmp_path / 'bag'
    bagwriter.write_bag(scenario.load(path), bag)

    child = spawn.start([str(pathlib.Path(sys.executable).parent / 'lightomni'), 'replay', str(bag), '-o', 'graph',
                         '--linger', '0', '--drain', '--drain-timeout', '600'], name='replay', cwd=tmp_path)
    assert child.proc.wait(1200) in (0, 1), child.output
    result = json.loads((tmp_path / 'graph' / replay.RESULT).read_text())
    assert result['drain']['drained'] and not result['graph_failed'], result
    rec = scoring.load_outputs(tmp_path / 'graph' / replay.OUTPUT_BAG, result['namespace'])
    graph = {name: [m for _, m in rec.get(name)] for name in ('segments', 'actions')}
    # perception publishes a segment again until the reflex node acknowledges it: the bag may hold copies
    graph['segments'] = list({(s.segment_id, s.start.sec, s.start.nanosec): s for s in graph['segments']}.values())

    # the same clock as the graph's restamped inputs: prompts carry clock times
    offline = run_offline(bag, tmp_path / 'offline', time_scale=0.0,
                          offset_ns=result['timing']['restamp_offset_ns'])
    assert offline['mode'] == 'offline'
    saved = json.loads((tmp_path / 'offline' / 'outputs.json').read_text())
    offline_outputs = {name: [_ns(r['msg']) for r in saved.get(name, [])] for name in ('segments', 'actions')}
    timing = offline['timing']
    late = _after_input(graph['segments'], result['timing']['restamp_offset_ns'],
                        timing['bag_start_ns'] + int(timing['duration_s'] * 1e9))
    graph = {name: [m for m in msgs if m.segment_id not in late] for name, msgs in graph.items()}

    # segments: what perception heard and saw, in the same order, with the same ids of the same faces
    assert _segments(graph) == _segments(offline_outputs) and len(graph['segments']) >= 4
    # the speech was heard (most of its content words: tiny.en on espeak's voice misses a word now and then)
    heard = {w for s in _segments(graph) for w in s[1].split()}
    assert any(s[0] for s in _segments(graph)) and len(heard & {'barack', 'love', 'basketball', 'weekends'}) >= 3, heard

    # decisions, segment by segment (reminder Actions have no segment)
    g_acts = [a for a in graph['actions'] if a.source == 0]
    o_acts = [a for a in offline_outputs['actions'] if a.source == 0]
    assert [(a.speak, a.search) for a in g_acts] == [(a.speak, a.search) for a in o_acts]
    same_state = [(g, o) for g, o in zip(g_acts, o_acts) if g.sg_version == o.sg_version]
    for g, o in same_state:
        mine = (g.response, g.response_source, list(g.memory_ids))
        assert mine == (o.response, o.response_source, list(o.memory_ids)), (g, o)
    questions = [i for i, a in enumerate(g_acts) if a.speak and a.search]
    assert any(g_acts[i].sg_version == o_acts[i].sg_version for i in questions), \
        'no question was answered on the same memory in both runs: the graph had not stored the earlier segments'

    # long-term memory at the end
    assert _memory(tmp_path / 'graph' / 'state' / 'memory', late) == _memory(tmp_path / 'offline' / 'state' / 'memory')
