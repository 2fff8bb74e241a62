# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Nothing lost, nothing leaked: the durable sleep queue, exactly-once Topics, tombstones, retention, hostile archives.

Real SQLite, FAISS and the all-MiniLM-L6-v2 embedder; the reflex runtime runs on a small fake engine (only its
memory pass, whose failure and pre-emption are the logic under test).
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import tarfile
import time

import numpy as np
import pytest

from lightomni_ros.core.consolidation.config import ConsolidationConfig
from lightomni_ros.core.consolidation.consolidator import DUPLICATE, FORGOTTEN, STORED
from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime, RequestError
from lightomni_ros.core.embedding import EmbeddingConfig, text_embedder
from lightomni_ros.core.memory.config import MemoryConfig
from lightomni_ros.core.memory.privacy import PrivacyConfig, RetentionConfig
from lightomni_ros.core.memory.store import KIND_EPISODIC, KIND_SEMANTIC
from lightomni_ros.core.reflex.config import ReflexConfig
from lightomni_ros.core.reflex.runtime import ReflexConfigs, ReflexRuntime
from lightomni_ros.core.reflex.sleep import Preemption
from lightomni_ros.core.reflex.sleep_queue import SleepQueue
from lightomni_ros.core.reflex.types import SegmentInput
from lightomni_ros.core.segment import END_OF_SPEECH, FaceSeen, SegmentData
from lightomni_ros.core.topic import TopicData
from lightomni_ros.eval.hostile import hostile_archives

T0 = 1_780_000_000.0


@pytest.fixture(scope='module')
def embedder():
    return text_embedder(EmbeddingConfig(backend='minilm'))


def memory(tmp_path, embedder, clock=None, **privacy):
    audio = tmp_path / 'audio'
    audio.mkdir(parents=True, exist_ok=True)
    cfgs = ConsolidationConfigs(memory=MemoryConfig(memory_dir=str(tmp_path / 'mem'), k=3),
                                consolidation=ConsolidationConfig(timezone='UTC'),
                                privacy=PrivacyConfig(audio_dir=str(audio), **privacy))
    return ConsolidationRuntime(cfgs, embedder=embedder, **({'clock': clock} if clock else {}))


def topic(i, **kw):
    base = dict(segment_id=i, start=T0 + 30 * i, end=T0 + 30 * i + 25, visual='a kitchen',
                audio=f'the plan for day {i} is ready', response='noted')
    return TopicData(**(base | kw))


def rows(rt):
    """Every row of every memory table: what "the store is untouched" compares."""
    db = rt.store.db
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    return {t: [tuple(r) for r in db.execute(f'SELECT * FROM {t}')] for t in tables}


def seg_in(i, text='hello there', faces=()):
    return SegmentInput(segment_id=i, start=T0 + i, end=T0 + i + 1, transcript=text, face_ids=list(faces))


# -- the durable sleep queue ---------------------------------------------------------------------------------------
def test_sleep_queue_survives_a_restart_keeps_order_and_recognises_duplicates(tmp_path):
    path = tmp_path / 'q.db'
    q = SleepQueue(path, high_water=3)
    frame = np.zeros((8, 8, 3), np.uint8)
    frame[2:5, 2:5] = 200
    for i in (1, 2, 3):
        s = seg_in(i)
        s.frames = [frame] if i == 1 else []
        assert q.put(s, f'reply {i}')
    assert not q.put(seg_in(2), 'again')         # delivered twice: kept once
    assert q.over_high_water() and q.backlog() == 3
    q.close()                                    # a crash would leave the same committed rows
    q = SleepQueue(path, high_water=3)
    first = q.next_interaction()
    assert first.segment.segment_id == 1 and first.response == 'reply 1' and len(first.segment.frames) == 1
    assert abs(int(first.segment.frames[0][3, 3].mean()) - 200) < 10
    q.preempted(first.item_id)
    assert q.next_interaction().preemptions == 1        # stays first in line
    for i in (1, 2):
        item = q.next_interaction()
        q.written(item.item_id, topic(i, start=T0 + i))
    # stop-and-wait: topic 2 is not sent before topic 1 is acknowledged
    out = q.next_topic(now=100.0, resend_s=5.0)
    assert out.topic.segment_id == 1 and out.sends == 0
    q.sent(out.item_id, 100.0)
    assert q.next_topic(now=102.0, resend_s=5.0) is None
    assert q.next_topic(now=106.0, resend_s=5.0).topic.segment_id == 1      # no ack in time: sent again
    assert q.acknowledged(1, T0 + 1.0000000001)        # the start's float round trip through a message
    assert q.next_topic(now=106.0, resend_s=5.0).topic.segment_id == 2
    assert q.counts() == {'answered': 1, 'written': 1, 'done': 1}
    assert q.seen(1, T0 + 1) and q.seen(3, T0 + 3)
    q.close()


class FakeEngine:
    """The parts of ReflexEngine the sleep-time logic uses: a memory pass that can fail or be pre-empted."""

    def __init__(self, fail=False, preempt=0, warm_fail=False):
        self.fail, self.preempt, self.warm_fail = fail, preempt, warm_fail
        self.sg_version = self.next_sg_version = 0
        self.warmups = 0
        self.preemption = Preemption()
        self.memory = None
        self.embedder = None
        self.backbone = type('B', (), {'kind': 'text'})()

    def memory_pass(self, seg, response, stop=None):
        if self.preempt:
            self.preempt -= 1
            return None
        if self.fail:
            raise RuntimeError('CUDA error: out of memory')
        return TopicData(segment_id=seg.segment_id, start=seg.start, end=seg.end, audio=seg.utterance,
                         producer='memory-adapter')

    def warm_prefixes(self, sleep=True):
        from lightomni_ros.core.reflex.types import PrefixWarmup

        self.warmups += 1
        self.sg_version = self.next_sg_version
        if self.warm_fail:
            raise RuntimeError('position ids out of range')
        return PrefixWarmup()

    def memory_passes(self, items, stop=None):
        topics = [self.memory_pass(seg, response, stop) for seg, response in items]
        return None if any(t is None for t in topics) else topics


def reflex(tmp_path, engine, **kw):
    return ReflexRuntime(ReflexConfigs(reflex=ReflexConfig(sleep_queue_path=str(tmp_path / 'sleep.db'), **kw)),
                         engine=engine)


def test_a_failed_memory_pass_still_gives_a_topic_and_preemption_keeps_the_place(tmp_path):
    rt = reflex(tmp_path, FakeEngine(fail=True, preempt=1))
    rt.sleep.put(seg_in(5, 'remember that the keys are in the drawer'), '')
    assert rt.memory_step().kind == 'preempted'
    step = rt.memory_step()
    assert step.kind == 'topic' and step.topic.producer == 'fallback-parser'
    assert 'memory pass failed: RuntimeError' in step.error and step.topic.remembered == ['The keys are in the drawer.']
    assert rt.next_topic(now=0.0).topic.segment_id == 5


def test_a_failing_prefix_warm_up_does_not_starve_the_memory_passes(tmp_path):
    """A warm-up that fails is reported once per S_g version; the queued interactions get their passes meanwhile."""
    eng = FakeEngine(warm_fail=True)
    eng.next_sg_version = 3
    rt = reflex(tmp_path, eng)
    for i in (1, 2):
        rt.sleep.put(seg_in(i), '')
    step = rt.sleep_step()
    assert step.kind == 'failed' and 'prefix warm-up: RuntimeError' in step.error
    step = rt.sleep_step()
    assert step.kind == 'topic' and step.segment_ids == [1, 2] and eng.warmups == 1
    assert rt.sleep_step() is None and eng.warmups == 1        # idle: the same S_g is not warmed again
    eng.next_sg_version = 4                                    # a new S_g is worth another try
    assert rt.sleep_step().kind == 'failed' and eng.warmups == 2


def test_memory_under_back_pressure_goes_before_warm_ups(tmp_path):
    eng = FakeEngine()
    rt = reflex(tmp_path, eng, sleep_queue=2, sleep_batch=1)
    for i in (1, 2):
        rt.sleep.put(seg_in(i), '')
    assert rt.sleep.over_high_water() and rt.sleep_runs_to_end()
    assert rt.sleep_step().kind == 'topic' and eng.warmups == 0


def test_a_pass_answers_must_wait_for_is_announced(tmp_path):
    """The node runs a pass that will not yield at its own priority: sleep_runs_to_end says which one that is."""
    rt = reflex(tmp_path, FakeEngine(preempt=2), sleep_max_preemptions=2)
    rt.sleep.put(seg_in(1), '')
    assert not rt.sleep_runs_to_end()
    assert rt.memory_step().kind == 'preempted' and not rt.sleep_runs_to_end()
    assert rt.memory_step().kind == 'preempted' and rt.sleep_runs_to_end()
    assert rt.memory_step().kind == 'topic' and not rt.sleep_runs_to_end()


def test_a_pass_that_runs_to_its_end_takes_one_interaction(tmp_path):
    """Answers wait for such a pass: it decodes one pre-empted interaction at a time; new ones batch up again."""
    rt = reflex(tmp_path, FakeEngine(preempt=1), sleep_max_preemptions=1, sleep_batch=4)
    for i in (1, 2, 3):
        rt.sleep.put(seg_in(i), '')
    assert rt.memory_step().kind == 'preempted' and rt.sleep_runs_to_end()
    for i in (1, 2, 3):
        assert rt.memory_step().segment_ids == [i]
    for i in (4, 5):
        rt.sleep.put(seg_in(i), '')
    assert not rt.sleep_runs_to_end() and rt.memory_step().segment_ids == [4, 5]


def test_answer_once_late_segments_and_forget_requests(tmp_path, embedder):
    mem = memory(tmp_path, embedder)
    from lightomni_ros.core.agent import RuntimeMemory

    eng = FakeEngine()
    eng.memory = RuntimeMemory(mem)
    rt = reflex(tmp_path, eng, late_segment_s=30.0)
    from lightomni_ros.core.reflex.runtime import silent
    rt.decide = lambda sin, on_chunk=None: silent(sin, 'fake')
    mem.apply_identity('<face_3>', np.ones(128, np.float32) / 11.3, 'dlib', 3)
    mem.remember('<face_3> likes jazz', ['<face_3>'])
    seg = SegmentData(7, T0, T0 + 2, END_OF_SPEECH, transcript='hi')
    assert rt.answer(seg, age_s=0.1) is not None and rt.answer(seg, age_s=0.2) is None   # answered once
    late = rt.answer(SegmentData(8, T0 + 3, T0 + 4, END_OF_SPEECH, transcript='what time is it?'), age_s=45.0)
    assert not late[1].speak and late[1].notes[0].startswith('late')
    ask = SegmentData(9, T0 + 5, T0 + 6, END_OF_SPEECH, transcript='Please forget me.',
                      faces=[FaceSeen('<face_3>', 1, (0, 0, 1, 1), 0.9, 0.2, T0 + 5)])
    sin, d = rt.answer(ask, age_s=0.1)
    assert d.speak and d.response_source == 'template' and 'forgotten you' in d.response
    assert mem.profiles(['<face_3>']) == [] and not rt.sleep.seen(9, T0 + 5)      # done, and never queued
    nobody = SegmentData(10, T0 + 7, T0 + 8, END_OF_SPEECH, typed_text='forget what I told you')
    assert 'recognise' in rt.answer(nobody)[1].response
    from lightomni_ros.core.reflex.privacy import forget_request
    for text, wanted in (("Don't forget what I told you about the meeting.", False), ('Forget about me.', True),
                         ('Please forget everything I told you', True), ('I forget where the keys are', False),
                         ('Never forget me!', False), ('forget that I was here', True)):
        assert (forget_request(seg_in(1, text, ['<face_2>'])) is not None) == wanted, text
    mem.close()


# -- consolidation: once per segment, forgets applied on arrival, raw audio ----------------------------------------
def test_a_topic_is_queued_once_and_later_forgets_apply_on_arrival(tmp_path, embedder):
    now = [T0 + 1000]
    mem = memory(tmp_path, embedder, clock=lambda: now[0])
    assert mem.enqueue(topic(1)).status == STORED
    assert mem.enqueue(topic(1, start=T0 + 30 + 1e-7)).status == DUPLICATE      # a re-sent copy
    mem.process_all()
    assert mem.enqueue(topic(1)).status == DUPLICATE                            # also once consolidated
    mem.apply_identity('<face_4>', np.ones(128, np.float32) / 11.3, 'dlib', 3)
    mem.enqueue(topic(2, face_ids=['<face_4>'], audio='My name is Zelda. I like tea.'))
    mem.process_all()
    mem.forget_face('<face_4>')
    mem.forget_range(T0 + 200, T0 + 300)
    clip = tmp_path / 'audio' / 'segment_3.wav'
    clip.write_bytes(b'RIFF')
    # recorded before the forgets (still in the reflex node's queue), arriving after them
    r = mem.enqueue(topic(3, face_ids=['<face_4>'], audio='Zelda says the oven is hot. The door is red.',
                          semantic=['Zelda likes tea'], raw_refs=[clip.as_uri()]))
    assert r.status == STORED and r.files_deleted == 1 and not clip.exists()
    assert mem.enqueue(topic(8)).status == FORGOTTEN                            # inside the forgotten range
    mem.process_all()
    text = json.dumps(rows(mem), default=str)
    assert 'Zelda' not in text and '<face_4>' not in text and 'door is red' in text
    mem.close()


def test_never_storing_raw_audio_and_deleting_only_inside_the_raw_folders(tmp_path, embedder):
    mem = memory(tmp_path, embedder, store_raw_audio=False)
    clip = tmp_path / 'audio' / 'a.wav'
    clip.write_bytes(b'RIFF')
    outside = tmp_path / 'precious.wav'
    outside.write_bytes(b'keep')
    link = tmp_path / 'audio' / 'link.wav'
    link.symlink_to(outside)
    mem.enqueue(topic(1, raw_refs=[clip.as_uri(), outside.as_uri(), link.as_uri(),
                                   f'file://{tmp_path}/audio/../precious.wav']))
    mem.process_all()
    assert not clip.exists() and outside.read_bytes() == b'keep' and link.is_symlink()
    (e,) = mem.entries.all_entries(KIND_EPISODIC)
    assert e.raw_refs == []
    mem.close()


def test_retention_expires_audio_first_then_events_then_facts_and_people(tmp_path, embedder):
    day = 86400.0
    now = [T0]
    mem = ConsolidationRuntime(ConsolidationConfigs(
        memory=MemoryConfig(memory_dir=str(tmp_path / 'mem'), k=3), consolidation=ConsolidationConfig(timezone='UTC'),
        privacy=PrivacyConfig(audio_dir=str(tmp_path)),
        retention=RetentionConfig(raw_audio=2, keyframes=2, episodic=10, semantic=20, profiles=30)),
        embedder=embedder, clock=lambda: now[0])
    clip = tmp_path / 'segment_1.wav'
    clip.write_bytes(b'RIFF')
    mem.apply_identity('<face_1>', np.ones(128, np.float32) / 11.3, 'dlib', 3)
    mem.enqueue(topic(1, face_ids=['<face_1>'], semantic=['the garden gate squeaks'], raw_refs=[clip.as_uri()]))
    mem.remember('the wifi password is banana')
    mem.process_all()
    now[0] = T0 + 3 * day
    r = mem.expire()
    assert r.raw_files == 1 and not clip.exists() and r.episodic == 0
    now[0] = T0 + 11 * day
    assert mem.expire().episodic == 1 and mem.entries.count(KIND_EPISODIC) == 0
    now[0] = T0 + 21 * day
    assert mem.expire().semantic == 1
    assert [e.content for e in mem.entries.all_entries(KIND_SEMANTIC)] == ['the wifi password is banana']  # pinned
    now[0] = T0 + 31 * day
    assert mem.expire().profiles == 1 and mem.profiles() == []
    mem.close()


# -- encryption at rest ----------------------------------------------------------------------------------------------
def test_encrypted_memory_is_unreadable_without_its_key(tmp_path, embedder, monkeypatch):
    monkeypatch.delenv('LIGHTOMNI_MEMORY_KEY', raising=False)
    plain = memory(tmp_path, embedder)
    plain.remember('the safe code is 4711')
    plain.close()
    monkeypatch.setenv('LIGHTOMNI_MEMORY_KEY', 'correct horse battery staple')
    enc = memory(tmp_path, embedder)                         # the plain file is encrypted in place
    assert enc.encrypted and [e.content for e in enc.entries.all_entries(KIND_SEMANTIC)] == ['the safe code is 4711']
    enc.remember('the alarm code is 1234')
    enc.close()
    for f in (tmp_path / 'mem').iterdir():
        assert b'4711' not in f.read_bytes() and b'1234' not in f.read_bytes(), f.name
    assert not list((tmp_path / 'mem').glob('*.faiss'))       # vectors are not left on disk either
    import sqlite3
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(str(tmp_path / 'mem' / 'memory.db')).execute('SELECT * FROM semantic').fetchall()
    monkeypatch.delenv('LIGHTOMNI_MEMORY_KEY')
    with pytest.raises(Exception, match='encrypted memory needs its key'):
        memory(tmp_path, embedder)
    monkeypatch.setenv('LIGHTOMNI_MEMORY_KEY', 'wrong key')
    with pytest.raises(Exception, match='with this key'):
        memory(tmp_path, embedder)
    with pytest.raises(ValueError, match='no key'):
        monkeypatch.delenv('LIGHTOMNI_MEMORY_KEY')
        memory(tmp_path / 'other', embedder, encryption='on')


def test_a_key_file_others_can_read_is_refused(tmp_path, embedder, monkeypatch):
    monkeypatch.delenv('LIGHTOMNI_MEMORY_KEY', raising=False)
    key = tmp_path / 'key'
    key.write_text('s3cret\n')
    key.chmod(0o644)
    with pytest.raises(ValueError, match='readable by others'):
        memory(tmp_path, embedder, key_file=str(key))
    key.chmod(0o600)
    assert memory(tmp_path, embedder, key_file=str(key)).encrypted


# -- hostile archives ------------------------------------------------------------------------------------------------
def test_hostile_archives_are_refused_and_the_store_is_untouched(tmp_path, embedder):
    mem = memory(tmp_path, embedder)
    clip = tmp_path / 'audio' / 'segment_1.wav'
    clip.write_bytes(b'RIFF-clip')
    mem.enqueue(topic(1, semantic=['the boat is blue'], raw_refs=[clip.as_uri()]))
    mem.process_all()
    good = tmp_path / 'backup.jsonl'
    mem.export_jsonl(str(good))
    before = rows(mem)
    cases = hostile_archives(tmp_path / 'hostile', good.read_text().splitlines())
    for name, path in cases:
        with pytest.raises(RequestError):
            mem.import_jsonl(str(path))
        assert rows(mem) == before, name
    assert not list(tmp_path.rglob('evil.wav')) and not (tmp_path / 'mem' / 'audio').exists()
    assert len(cases) >= 20
    # a real tar backup round-trips, clips included, into a fresh memory
    tar = tmp_path / 'backup.tar'
    mem.export_jsonl(str(tar))
    assert sorted(tarfile.open(tar).getnames()) == ['audio/segment_1.wav', 'memory.jsonl']
    mem.close()
    other = memory(tmp_path / 'b', embedder)
    assert other.import_jsonl(str(tar), replace=True) > 1
    (e,) = other.entries.all_entries(KIND_EPISODIC)
    (ref,) = e.raw_refs
    assert pathlib.Path(ref[len('file://'):]).read_bytes() == b'RIFF-clip'
    assert oct(os.stat(ref[len('file://'):]).st_mode & 0o777) == '0o600'
    other.close()


def test_a_raising_callback_does_not_end_the_node(domain_id):
    """The safety net of run_node: a callback that raises is logged and the executor keeps spinning."""
    import threading

    import rclpy
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor

    from lightomni_ros.nodes.process import spin_guarded

    ctx = Context()
    rclpy.init(context=ctx, domain_id=domain_id)
    node = rclpy.create_node('guarded', context=ctx)
    calls = []

    def tick():
        calls.append(1)
        if len(calls) == 1:
            raise OverflowError('Python int too large to convert to SQLite INTEGER')
    node.create_timer(0.05, tick)
    ex = MultiThreadedExecutor(num_threads=2, context=ctx)
    ex.add_node(node)
    t = threading.Thread(target=spin_guarded, args=(ex, node), daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while len(calls) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(calls) >= 5 and t.is_alive()
    rclpy.try_shutdown(context=ctx)
    t.join(10)
    assert not t.is_alive()
    node.destroy_node()


def test_a_node_whose_exit_hangs_still_leaves_and_says_where(spawn):
    """A node process whose exit hangs still ends, and its log shows where it hung.

    A thread the interpreter waits for is not waited for past EXIT_GRACE_S (exit 0, the stacks in the log); a
    clean-up that hangs is ended by SIGTERM (the launcher's escalation), again with the stacks.
    """
    from harness import REPO, wait_for

    from lightomni_ros.nodes.process import EXIT_GRACE_S

    talker = str(REPO / 'test' / 'nodes' / 'talker.py')
    child = spawn.python(talker, '--stuck', 'exit', name='stuck_exit')
    wait_for(lambda: 'talker up' in child.output, 120, what='the talker up')
    child.signal(signal.SIGINT)
    assert child.proc.wait(120 + EXIT_GRACE_S) == 0
    out = child.output
    assert 'talker stopping: SIGINT' in out and 'forcing the exit' in out and 'never_ending_thread' in out, out

    child = spawn.python(talker, '--stuck', 'stop', name='stuck_stop')
    wait_for(lambda: 'talker up' in child.output, 120, what='the talker up')
    child.signal(signal.SIGINT)
    wait_for(lambda: 'talker stopping: SIGINT' in child.output, 120, what='the stop to begin')
    child.signal(signal.SIGTERM)
    assert child.proc.wait(120) == -signal.SIGTERM
    assert 'never_returning_destroy' in child.output, child.output


def test_lower_thread_priority_changes_only_the_calling_thread():
    import os
    import threading

    from lightomni_ros.nodes.common import lower_thread_priority

    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    got = {}

    def work():
        got['problem'] = lower_thread_priority(5)
        got['nice'] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert got == {'problem': '', 'nice': min(19, mine + 5)}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine and lower_thread_priority(0) == ''
