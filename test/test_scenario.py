# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The scenario format: valid files parse, every kind of mistake gets an error naming the line and the item."""

from __future__ import annotations

import pathlib
import shutil
import textwrap

import pytest

from lightomni_ros.eval import bagwriter, scenario
from lightomni_ros.eval.scenario import ScenarioError

REPO = pathlib.Path(__file__).resolve().parents[1]
SAMPLE = REPO / 'sample' / 'scenario.yaml'


def parse(text: str, base: pathlib.Path | None = None, check_files: bool = False) -> scenario.Scenario:
    """Validate YAML text (dedented)."""
    return scenario.loads(textwrap.dedent(text), base_dir=base, check_files=check_files, where='s.yaml')


def test_valid_scenario_parses(tmp_path: pathlib.Path) -> None:
    """Every item kind and probe kind round-trips into the dataclasses with defaults applied."""
    (tmp_path / 'a.jpg').write_bytes(b'x')
    (tmp_path / 'clip.mpg').write_bytes(b'x')
    sc = parse("""
        name: demo
        camera: {transport: raw, fps: 4}
        timeline:
          - id: hi
            say: Hello there
            image: a.jpg
            person: ann
          - id: clip
            video: clip.mpg
            transcript: bin blue
          - idle: 2.5
          - id: note
            text: Remember that the keys are in the drawer.
        probes:
          - id: q
            ask: Where are the keys?
            after: note
            expect: [drawer]
            memory: semantic
          - id: t
            type: who am I
            at: 30
            expect_any: [ann]
          - id: same
            identity: {item: hi, different_from: clip}
          - id: rem
            proactive: true
            after: hi
            window: [50, 70]
            due: 60
            expect: [keys]
        """, tmp_path, check_files=True)
    assert sc.name == 'demo' and sc.camera.transport == 'raw' and sc.camera.fps == 4.0
    assert [it.kind for it in sc.items] == ['say', 'video', 'idle', 'text']
    assert sc.items[0].image == tmp_path / 'a.jpg' and sc.items[0].transcript == 'Hello there'
    assert sc.items[2].id == 'item2' and sc.items[2].seconds == 2.5 and sc.items[2].gap == 0.0
    assert [p.kind for p in sc.probes] == ['question', 'question', 'identity', 'proactive']
    assert sc.probes[0].after == 'note' and sc.probes[0].timeout == 15.0 and sc.probes[1].at == 30.0
    assert sc.probes[1].typed == 'who am I' and not sc.probes[1].ask
    assert sc.probes[3].window == (50.0, 70.0) and sc.probes[3].due == 60.0
    assert sc.start_ns == 1767603600 * 10**9   # 2026-01-05T09:00:00Z


@pytest.mark.parametrize('text, needle', [
    ("""
     timeline:
       - id: a
         say: hi
         vioce: en-us
     """, "s.yaml:3: timeline[0] (id 'a'): unknown key(s) ['vioce']"),
    ("""
     timeline:
       - say: hi
       - id: b
         say: hello
         video: x.mpg
     """, "s.yaml:4: timeline[1] (id 'b'): needs exactly one of"),
    ("""
     timeline:
       - id: a
         person: x
     """, "s.yaml:3: timeline[0] (id 'a'): needs exactly one of"),
    ("""
     timeline:
       - id: a
         say: hi
       - id: a
         idle: 1
     """, "s.yaml:5: timeline[1]: id 'a' already used by timeline[0]"),
    ("""
     timeline:
       - id: a
         idle: -1
     """, "'idle' must be >= 0"),
    ("""
     timeline:
       - id: a
         say: ''
     """, "'say' must not be empty"),
    ("""
     timeline:
       - say: hi
     probes:
       - id: q
         ask: what?
         after: nowhere
         expect: [x]
     """, "s.yaml:5: probes[0] (id 'q'): refers to item 'nowhere', which is not in the timeline"),
    ("""
     timeline:
       - id: a
         say: hi
     probes:
       - id: q
         ask: what?
         after: a
         at: 3
         expect: [x]
     """, "give exactly one of 'at:' (seconds) or 'after:'"),
    ("""
     timeline:
       - id: a
         say: hi
     probes:
       - id: q
         ask: what?
         after: a
     """, "s.yaml:6: probes[0] (id 'q'): a question needs 'expect' or 'expect_any'"),
    ("""
     timeline:
       - id: a
         say: hi
     probes:
       - id: r
         proactive: true
         window: [10, 5]
         expect: [x]
     """, "'window' must be [from, to]"),
    ("""
     timeline:
       - id: a
         say: hi
       - id: b
         say: ho
     probes:
       - identity: {item: a, same_as: b}
     """, "item 'a' shows no face"),
    ("""
     timeline:
       - id: a
         say: hi
     probes:
       - id: q
         ask: what?
         type: what?
         after: a
         expect: [x]
     """, "give either 'ask:' (spoken) or 'type:' (typed), not both"),
    ("""
     camera: {transport: png}
     timeline:
       - say: hi
     """, "s.yaml:2: camera: 'transport' must be 'compressed' or 'raw'"),
    ("""
     timeline:
       - say: hi
     probes:
       - id: q
         ask: what
         at: 3
         expect: [x]
         memory: long
     """, "'memory' must be one of ['semantic', 'episodic', 'profile']"),
    ("""
     timeline:
       - say: hi
         say: ho
     """, 's.yaml: line 3: duplicate key(s)'),
    ("""
     timeline:
       - say: [unclosed
     """, 's.yaml:4: YAML syntax error'),
    ("""
     timeline:
       - id: hi
         say: hi
     probes:
       - ask: What happened?
         after: hi
         expect_any: [a, b]
         expect_at_least: 3
     """, "'expect_at_least' (3) is more than the 2 keywords of 'expect_any'"),
    ("""
     timeline: []
     """, "s.yaml:2: timeline: must be a non-empty list"),
    ("""
     start_time: yesterday
     timeline:
       - say: hi
     """, 'start_time: expected an ISO 8601 time'),
])
def test_errors_name_line_and_item(text: str, needle: str) -> None:
    """Each mistake raises ScenarioError whose message contains the file:line and the item."""
    with pytest.raises(ScenarioError) as err:
        parse(text)
    assert needle in str(err.value), str(err.value)


def test_missing_media_file_is_named(tmp_path: pathlib.Path) -> None:
    """A media path that does not exist is reported with the item and the resolved path."""
    with pytest.raises(ScenarioError, match=r"s.yaml:3: timeline\[0\] \(id 'clip'\): video file 'no.mpg' not found"):
        parse("""
            timeline:
              - id: clip
                video: no.mpg
            """, tmp_path, check_files=True)


def test_question_at_a_time_must_not_overlap_speech(tmp_path: pathlib.Path) -> None:
    """A question placed with at: on top of another item's speech is rejected at layout time."""
    sc = parse("""
        timeline:
          - id: a
            say: This sentence takes a couple of seconds to say.
        probes:
          - id: q
            ask: what did I say?
            at: 0.5
            expect: [sentence]
        """, tmp_path)
    with pytest.raises(ScenarioError, match=r"probes\[0\] \(id 'q', line 6\): the question at 0.5 s .* overlaps 'a'"):
        bagwriter.Renderer(sc).layout()


def test_layout_places_questions_after_their_anchor(tmp_path: pathlib.Path) -> None:
    """after: questions follow the anchor (delay replaces its gap), the next item waits for the answer window."""
    sc = parse("""
        timeline:
          - id: a
            say: One.
            gap: 3
          - id: b
            text: two
        probes:
          - id: q1
            type: first?
            after: a
            delay: 0.5
            wait: 4
            expect: [x]
          - id: q2
            type: second?
            after: a
            wait: 2
            expect: [x]
          - id: r
            proactive: true
            after: b
            window: [5, 20]
            expect: [x]
        """, tmp_path)
    placed, duration = bagwriter.Renderer(sc).layout()
    at = {p.id: p for p in placed}
    assert at['q1'].start == pytest.approx(at['a'].end + 0.5)
    assert at['q2'].start == pytest.approx(at['q1'].end + 4 + 1.0)
    assert at['b'].start == pytest.approx(at['q2'].end + 2)
    assert duration == pytest.approx(at['b'].start + 20 + 2.0)   # extended to cover the proactive window


def test_sample_scenario_is_valid_and_covers_the_capabilities(tmp_path: pathlib.Path) -> None:
    """The bundled sample validates with its media and exercises A.3: recall, identity, remember, remind, summary."""
    sc = scenario.load(SAMPLE)
    kinds = {it.kind for it in sc.items}
    assert {'say', 'video', 'audio', 'text', 'idle'} <= kinds
    probes = {p.kind for p in sc.probes}
    assert probes == {'question', 'identity', 'proactive'}
    assert any(p.memory == 'semantic' for p in sc.probes)
    assert any(p.typed for p in sc.probes) and any(p.ask for p in sc.probes)
    assert any(p.same_as for p in sc.probes) and any(p.different_from for p in sc.probes)
    assert any('summar' in p.ask.lower() and p.expect_at_least >= 3 for p in sc.probes)
    assert any(it.kind == 'text' and it.text.lower().startswith('remember that') for it in sc.items)
    assert any(it.kind == 'say' and 'remind me' in it.text.lower() for it in sc.items)
    for it in sc.items:
        for path in (it.path, it.image):
            assert path is None or path.is_relative_to(REPO / 'sample' / 'media'), path
    assert (REPO / 'sample' / 'ATTRIBUTION.md').is_file()
    # the same file elsewhere fails clearly because its media are relative to the scenario's folder
    shutil.copy(SAMPLE, tmp_path / 'scenario.yaml')
    with pytest.raises(ScenarioError, match='file .* not found'):
        scenario.load(tmp_path / 'scenario.yaml')


@pytest.mark.skipif(not pathlib.Path('/work/shared/media/MANIFEST.md').is_file(), reason='development media absent')
def test_live_benchmark_scenario_is_valid_and_asks_about_what_was_said(tmp_path: pathlib.Path) -> None:
    import yaml

    from lightomni_ros.eval import bench_live

    data = bench_live.scenario(12, bench_live.MEDIA, seed=3)
    path = tmp_path / 'live.yaml'
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    sc = scenario.load(path)
    said = [(i.person, i.text) for i in sc.items if i.kind == 'say']
    kinds = {i.kind for i in sc.items}
    assert {'say', 'audio', 'video', 'idle'} <= kinds and len({i.person for i in sc.items if i.person}) >= 3
    assert all(i.image is None for i in sc.items if i.kind == 'audio')      # overheard: nobody in view
    assert len(sc.probes) >= 10 and len({p.after for p in sc.probes}) == len(sc.probes)
    for p in sc.probes:     # every answer was said, by the person asked about, before the question
        who, thing = p.ask.split('where did ')[1].split(' put the ')
        thing = thing.rstrip('?')
        told = [t for person, t in said if person == who and f'my {thing} in the {p.expect_any[0]}.' in t]
        assert told, p.ask


def test_live_breakdown_accounts_for_the_whole_first_word() -> None:
    """`bench live` splits end of speech -> first word into parts that add up to it."""
    from lightomni_ros.eval import bench_live

    stages = {'preemption_wait': 10.0, 'reflex': 500.0, 'retrieval': 200.0, 'first_chunk': 2000.0, 'generation': 3e3}
    parts = bench_live._breakdown(end_wall=0, seg_seen=2_000_000_000, chunk=5_000_000_000, stages=stages)
    assert parts == {'perception': 2000.0, 'preemption_wait': 10.0, 'reflex': 500.0, 'retrieval': 200.0,
                     'first_sentence': 1290.0, 'reflex_queue': 1000.0}
    assert sum(parts.values()) == 5000.0


def test_live_benchmark_times_a_question_by_its_own_answer() -> None:
    """A question the robot left unanswered is not timed by the answer to the next one."""
    from lightomni_ros.eval.bench_live import answering_segment

    seg_end = {1: 12.6, 2: 31.0, 3: 42.6, 4: 45.1}
    began = {1: 10.0, 2: 29.0, 3: 40.0, 4: 44.9}     # 4: typed text, which began when it closed the segment
    assert answering_segment(10.0, 12.0, seg_end, began, {1, 2}) == 1
    assert answering_segment(10.0, 12.0, seg_end, began, {2}) is None     # segment 2 answered a later question
    # a question cut in two segments is answered on the second
    assert answering_segment(40.0, 44.5, {**seg_end, 3: 42.0, 5: 45.0}, {**began, 5: 42.3}, {5}) == 5
    assert answering_segment(44.9, 44.9, seg_end, began, {4}) == 4


def test_a_probe_can_ask_for_several_of_its_keywords() -> None:
    from lightomni_ros.eval.scoring import keywords_ok

    assert keywords_ok('Barack came, then Joe.', [], ['barack', 'joe', 'radio'], 2) == (True, '')
    ok, why = keywords_ok('Barack came.', [], ['barack', 'joe', 'radio'], 2)
    assert not ok and '2 needed' in why
    assert keywords_ok('Barack came.', [], ['barack', 'joe'])[0]
