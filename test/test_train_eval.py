# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Evaluation metrics on hand-made cases, the plot, the shipped weights' checksums, the CLI verbs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lightomni_ros.cli import build_parser
from lightomni_ros.train import eval_answers as A
from lightomni_ros.train import eval_heads as E
from lightomni_ros.train import shipped


def test_precision_recall_f1():
    m = E.prf([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    assert m['precision'] == pytest.approx(2 / 3) and m['recall'] == pytest.approx(2 / 3)
    assert m['f1'] == pytest.approx(2 / 3) and m['support'] == 3
    assert E.prf([0, 0], [1, 0]) == {'precision': 0.0, 'recall': 0.0, 'f1': 0.0, 'support': 1}
    assert E.prf([1, 0], [1, 0])['f1'] == 1.0


def test_recall_at_k():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    cands = [np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]),      # gold 0 ranks first
             np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]),      # gold 2 ranks first
             np.array([[0.9, 0.0], [1.0, 0.0], [0.8, 0.0], [0.1, 0.0]])]  # gold 3 ranks fourth
    r = E.recall_at_k(q, cands, [0, 2, 3], ks=(1, 2, 4))
    assert r == {1: pytest.approx(2 / 3), 2: pytest.approx(2 / 3), 4: pytest.approx(1.0)}
    # a tie with another entry counts against the gold
    assert E.recall_at_k(q[:1], [np.array([[1.0, 0.0], [1.0, 0.0]])], [1], ks=(1,))[1] == 0.0


def test_similarity_snr():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    g = np.array([[0.8, 0.2], [0.1, 0.9], [0.8, 0.2]])
    snr, m, cols = E.similarity_snr(q, g, ['a', 'b', 'a'])
    assert cols == ['a', 'b'] and m.shape == (3, 2)
    signal = np.mean([0.8, 0.9, 0.8])
    noise = np.mean([0.1, 0.2, 0.1])
    assert snr == pytest.approx(signal / noise)


def test_error_groups():
    exs = [{'kind': 'ask', 'noise': '', 'speech': 1, 'search': 1},
           {'kind': 'ask', 'noise': 'asr', 'speech': 1, 'search': 1},
           {'kind': 'ask', 'noise': '', 'speech': 1, 'search': 1},
           {'kind': 'chat', 'noise': '', 'speech': 0, 'search': 0}]
    p = np.array([[0.9, 0.2], [0.9, 0.8], [0.4, 0.7], [0.1, 0.6]])
    g = E.error_groups(exs, p, (0.5, 0.5))
    assert list(g) == ['ask/asr', 'ask/clean', 'chat/clean']
    assert g['ask/clean'] == {'n': 2, 'speech': {'label': 1, 'wrong': 1}, 'search': {'label': 1, 'wrong': 1}}
    assert g['ask/asr']['search']['wrong'] == 0 and g['chat/clean']['search'] == {'label': 0, 'wrong': 1}


def test_plot(tmp_path):
    mats = {'fused': np.eye(5), 'text': np.full((5, 5), 0.3)}
    path = E.plot_matrices(mats, {'fused': 2.0, 'text': 1.0}, tmp_path / 'sim.png')
    assert path.stat().st_size > 1000


def _topic(semantic, remembered=(), producer='memory-adapter'):
    from lightomni_ros.core.topic import TopicData

    return TopicData(segment_id=1, start=0, end=1, semantic=list(semantic), remembered=list(remembered),
                     producer=producer)


def _rec(**kw):
    base = {'id': 'x', 'kind': 'state', 'source': 'person', 'noise': '', 'query': '', 'speech': 0, 'face_ids': [],
            'names': {}, 'facts': [], 'answer': None}
    return base | kw


def test_memory_pass_scores() -> None:
    gold = [{'text': "Joe's car keys are in the blue drawer.", 'subject': 'Joe',
             'keywords': ['car keys', 'blue drawer']},
            {'text': '<face_2> works as a nurse.', 'subject': '<face_2>', 'keywords': ['nurse']}]
    runs = [A.SegmentRun(_rec(facts=gold, face_ids=['<face_1>', '<face_2>'], names={'<face_1>': 'Joe'}), False,
                         topic=_topic(["Joe's Car-Keys are in the blue drawer!", 'Ana works as a nurse.',
                                       'The sky is blue.'])),
            A.SegmentRun(_rec(source='device', face_ids=['<face_3>'], names={'<face_3>': 'Mei'}), False,
                         topic=_topic(['Mei said the bridge is closed.'])),
            A.SegmentRun(_rec(), False, topic=_topic([], producer='fallback-parser')),
            A.SegmentRun(_rec(noise='asr'), False)]                     # decided only: no memory pass
    m = A.memory_pass_metrics(runs)
    assert m['passes'] == 3 and m['valid_json'] == pytest.approx(2 / 3)
    assert m['fact_recall'] == 1.0 and m['fact_precision'] == pytest.approx(2 / 4)
    # Joe right, the nurse fact names Ana instead of <face_2>, the device's words stored about Mei
    assert m['speaker_correct'] == pytest.approx(1 / 3) and m['unseen_as_person'] == 1
    # the naming fact is judged by itself, not by another fact that holds the name as a keyword too
    named = [{'text': '<face_1> is called Tariq.', 'subject': '<face_1>', 'keywords': ['tariq']}]
    intro = A.SegmentRun(_rec(facts=named, face_ids=['<face_1>']), False,
                         topic=_topic(['Tariq is allergic to gluten.', '<face_1> is called Tariq.']))
    assert A.memory_pass_metrics([intro])['speaker_correct'] == 1.0
    intro.topic.semantic = ['Tariq is allergic to gluten.', 'Tariq is called Tariq.']
    assert A.memory_pass_metrics([intro])['speaker_correct'] == 0.0
    assert A.norm("Joe's Car-Keys!") == 'joe s car keys' and A.matches('the blue drawer', ['blue drawer'])
    assert not A.matches('bluer drawers', ['blue drawer']) and not A.matches('anything', [])
    assert A.matches('Sofia enjoys painting watercolours.', ['watercolour']) and A.has('two boxes', 'box')
    assert not A.has('keystone', 'key') and not A.has('a blue drawer', 'blue draw')
    timed = [A.SegmentRun(_rec(), False, topic=_topic([]), sleep_seconds=t) for t in (1.0, 2.0, 3.0)]
    assert A.memory_pass_metrics(timed)['sleep_s'] == {'n': 3, 'p50': 2.0, 'p95': 2.9}


def test_a_run_sets_engine_parameters_as_config_names_them() -> None:
    """``--param`` items become the engine's sections; another section, no dot or no ``:=`` is refused."""
    assert A.parse_params(['backbone.memory_json_shape:=false', 'backbone.memory_retry_beams:=2',
                           'response.grounding_check:=true']) == {
        'backbone': {'memory_json_shape': False, 'memory_retry_beams': 2}, 'response': {'grounding_check': True}}
    for bad in ('latent.speech_threshold:=0.5', 'memory_json_shape:=false', 'backbone.memory_json_shape=false'):
        with pytest.raises(ValueError, match='SECTION|backbone/response'):
            A.parse_params([bad])


def test_answer_and_decision_scores() -> None:
    def q(answerable, response, keywords=(), wrong=(), speak=True, memories=()):
        rec = _rec(kind='ask_event', source='robot', speech=1, query='Robot, when is the team meeting?',
                   answer={'kind': 'ask_event', 'answerable': answerable, 'keywords': list(keywords),
                           'wrong': list(wrong)})
        return A.SegmentRun(rec, speak, response, 'generated' if response else '', list(memories))

    mem = ['[2026-03-02 09:00:00]--[2026-03-02 09:00:04]: The team meeting is on Friday.']
    runs = [q(True, 'The team meeting is on Friday.', ['meeting', 'friday'], ['thursday'], memories=mem),
            q(True, 'It is on Friday, not Thursday.', ['meeting', 'friday'], ['thursday'], memories=mem),
            q(True, 'The meeting is on Friday in Paris.', ['meeting', 'friday'], memories=mem),
            q(True, '', ['meeting', 'friday'], speak=False),
            q(False, "I don't remember that."),
            q(False, 'The team meeting is on Monday.'),
            A.SegmentRun(_rec(source='device'), True, 'Memories (oldest first): none'),
            A.SegmentRun(_rec(source='person'), False),
            A.SegmentRun(_rec(source='none'), False)]
    a = A.answer_metrics(runs)
    assert (a['answerable'], a['unanswerable']) == (4, 2)
    assert a['accuracy'] == pytest.approx(2 / 4), 'a superseded value or a missed question is wrong'
    assert a['refusal'] == 0.5 and a['prompt_echoes'] == 1
    # claims: answers 1-3 and the invented Monday; "Thursday", "Paris" and "Monday" are in no memory
    assert a['grounded'] == a['grounded_exact'] == pytest.approx(1 / 4)
    # a word the memory holds in another inflection is grounded; word for word it is not
    inflected = [q(True, 'The team meetings were on Fridays.', ['meeting', 'friday'], memories=mem),
                 q(True, 'The team met on Friday.', ['meeting', 'friday'], memories=mem)]
    b = A.answer_metrics(inflected)
    assert (b['grounded'], b['grounded_exact']) == (0.5, 0.0), b
    assert a['noisy'] == {'questions': 0, 'accuracy': 0.0, 'confirmations': 0}
    garbled = [dataclasses.replace(r, record=r.record | {'noise': 'asr'}) for r in runs[:2]]
    garbled[1].response = 'Okay, I will remember that.'
    n = A.answer_metrics(runs + garbled)
    assert n['noisy'] == {'questions': 2, 'accuracy': 0.5, 'confirmations': 1}
    assert n['accuracy'] == a['accuracy'], 'the noisy copies are scored apart'
    timed = [dataclasses.replace(r, seconds=t) for r, t in zip(runs[:2], (1.0, 3.0))]
    assert A.answer_metrics(timed)['latency_s'] == {'generated': {'n': 2, 'p50': 2.0, 'p95': 2.9}}
    told = A.SegmentRun(_rec(kind='remember', source='robot', speech=1, response='Okay, I will remember that.'), True,
                        'Thanks, I will keep that in mind.')
    assert (a['acknowledged'], a['told']) == (0.0, 0)
    assert A.answer_metrics([told, dataclasses.replace(told, response='')])['acknowledged'] == 0.5
    d = A.decision_metrics(runs)
    assert d['false_speech'] == pytest.approx(1 / 2) and d['false_speech_device'] == 1.0
    assert d['recall'] == pytest.approx(5 / 6) and d['precision'] == pytest.approx(5 / 6)
    assert d['missed_by_kind'] == {'ask_event/clean': 1}


def test_records_show_the_texts_of_the_memories_a_prompt_showed() -> None:
    import collections
    from types import SimpleNamespace

    from lightomni_ros.core.reflex.types import MemoryItem, Retrieved

    got = Retrieved(profiles=[MemoryItem('profile:<face_1>', '<face_1> is Ana')],
                    semantic=[MemoryItem('semantic:3', 'The keys are in the drawer.')])
    only_profiles = Retrieved(profiles=[MemoryItem('profile:<face_2>', '<face_2>')])
    mem = A.RecordingMemory(SimpleNamespace(query=lambda q: got if q.k_semantic else only_profiles))
    mem.query(SimpleNamespace(k_semantic=4, k_episodic=2))
    mem.query(SimpleNamespace(k_semantic=0, k_episodic=0))     # sleep-time work naming faces: the search stays
    engine = SimpleNamespace(recent=collections.deque([(MemoryItem('recent:7', '<face_1> said: hello'), None, 1.0)]))
    assert A._shown(['profile:<face_1>', 'semantic:3', 'recent:7'], mem, engine) == [
        '<face_1> is Ana', 'The keys are in the drawer.', '<face_1> said: hello']
    assert mem.refs == ['semantic:3'] and mem.last == ['<face_1> is Ana', 'The keys are in the drawer.']


def test_time_range_scoring():
    def w(found, spans, reply='', events=()):
        return A.WindowRun(question='q', start=100.0, end=200.0, found=found, spans=list(spans), reply=reply,
                           events=list(events))
    keys = [[['blue', 'drawer']], [['friday']], [['umbrella']]]
    windows = [w(True, [(90.0, 110.0), (150.0, 160.0)], 'Joe put the keys in the blue drawer; the meeting is Friday.',
                 keys),
               w(True, [(150.0, 160.0), (201.0, 260.0)]),   # one entry after the window
               w(False, [(150.0, 160.0)]),                  # the engine read no window
               w(True, [])]                                 # nothing returned
    t = A.time_range_metrics(windows)
    assert t['in_window'] == pytest.approx(1 / 4) and t['windows_read'] == 3
    assert t['summary_coverage'] == pytest.approx(2 / 3) and t['questions_with_events'] == 1


def test_window_questions_cover_thirds_of_the_stream():
    recs = [{'start': 1000.0, 'end': 1010.0}, {'start': 1500.0, 'end': 1900.0}]
    qs = A.window_questions(recs)
    assert [start for _, _, start in qs[:2]] == [1908.0 - 5 * 60, 1908.0 - 10 * 60]
    assert all(at == 1905.0 for _, at, _ in qs)
    assert all('in the last' in q for q, _, _ in qs[:2])
    assert qs[2][0].endswith('happened today.') and qs[2][2] == 0.0     # 1970-01-01, midnight UTC


def test_verbs_registered():
    p = build_parser()
    args = p.parse_args(['eval', 'heads', '--json', 'x.json', '--limit', '3'])
    assert args.area == 'heads' and args.json_path == 'x.json' and args.limit == 3
    args = p.parse_args(['eval', 'answers', '--json', 'a.json', '--streams', '2'])
    assert args.area == 'answers' and args.json_path == 'a.json' and args.streams == 2
    args = p.parse_args(['eval', 'adapters', '--limit', '4', '--pack', 'gemma-3-270m'])
    assert args.area == 'adapters' and args.limit == 4 and args.pack == 'gemma-3-270m' and args.adapter == 'all'
    args = p.parse_args(['eval', 'adapters', '--adapter', 'memory'])
    assert args.adapter == 'memory'
    args = p.parse_args(['train', '--steps', '5', '--lora-layers', 'top:1', '--recipe', 'gpu7b'])
    assert args.steps == 5 and args.lora_layers == 'top:1' and args.recipe == 'gpu7b'


def test_shipped_weights_match_their_checksums():
    d = shipped.shipped_models_dir()
    if not (d / 'SHA256SUMS').is_file():
        pytest.skip('no trained weights shipped in this checkout')
    total = 0
    for folder in shipped.shipped_sets():     # the default set and each other backbone's own set
        sums = shipped.check_sums(folder)
        assert {'reflex_heads.safetensors', 'adapters/reaction/adapter_model.safetensors'} <= set(sums), folder
        assert all(sums.values()), (folder, sums)
        total += sum((folder / f).stat().st_size for f in sums)
    assert total < 50e6


def test_a_pack_has_its_own_set_of_trained_weights(tmp_path) -> None:
    from lightomni_ros.core.reflex.adapters import find_trained, project_models_dirs

    base = shipped.shipped_models_dir()
    assert shipped.shipped_models_dir('SmolLM2-135M-Instruct') == base
    assert shipped.shipped_models_dir('gemma-3-270m') == base / 'gemma-3-270m'
    # a backbone without its own folder reads the default set; a models_dir always comes first
    dirs = project_models_dirs(tmp_path, 'no-such-pack')
    assert dirs[0] == tmp_path and dirs[-1] == base
    (tmp_path / 'reflex_heads.safetensors').write_bytes(b'')
    assert find_trained('reflex_heads.safetensors', tmp_path, backbone='gemma-3-270m') == \
        tmp_path / 'reflex_heads.safetensors'
    (tmp_path / 'gemma-3-270m').mkdir()     # a pack folder in a models_dir is no trained set
    assert project_models_dirs(tmp_path, 'gemma-3-270m')[0] == tmp_path
    (tmp_path / 'gemma-3-270m' / 'TRAINING.json').write_text('{}')
    assert project_models_dirs(tmp_path, 'gemma-3-270m')[0] == tmp_path / 'gemma-3-270m'
    for pack in [p.name for p in shipped.shipped_sets()[1:]]:
        assert project_models_dirs(None, pack)[-1] == base / pack
        assert base not in project_models_dirs(None, pack)


def test_best_threshold_maximises_f1() -> None:
    scores = [0.9, 0.8, 0.35, 0.3, 0.2, 0.1]
    gold = [True, True, True, False, False, False]
    t, f1 = E.best_threshold(scores, gold)
    assert 0.3 < t <= 0.35 and f1 == pytest.approx(1.0)
    assert E.best_threshold([0.5] * 4, [False] * 4)[1] == 0.0       # nothing to find: F1 0
    args = build_parser().parse_args(['eval', 'heads', '--calibrate', '50', '--search-threshold', '0.4'])
    assert args.calibrate == 50 and args.search_threshold == 0.4


def test_calibrate_on_a_training_split_with_the_shipped_heads(tmp_path) -> None:
    from lightomni_ros.core.reflex.config import BackboneConfig
    from lightomni_ros.core.reflex.engine import EngineConfigs, ReflexEngine
    from lightomni_ros.train import synth

    split = synth.write(synth.generate('train', cfg=synth.SynthConfig(streams=1, segments=20)), tmp_path / 'train')
    engine = ReflexEngine(EngineConfigs(backbone=BackboneConfig(device='cpu', threads=2),
                                        models_dir=str(E.default_models_dir())))
    cal = E.calibrate(split, engine, limit=16, progress=False)
    assert cal['examples'] == 16
    for trig in ('speech', 'search'):
        assert 0.05 <= cal[trig]['threshold'] <= 0.95 and 0.0 <= cal[trig]['f1_on_calibration_split'] <= 1.0
