# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Hearing conversations: VAD cuts, ASR filters, voices, the voice registry, voices in memory, who said what.

Cuts that keep every sample, the real voice encoder on real recordings, voices in memory on real SQLite with the real
embedder, who said what in Topics, and the hearing scores.
"""

from __future__ import annotations

import collections
import random

import numpy as np
import pytest

from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime
from lightomni_ros.core.embedding import EmbeddingConfig, text_embedder
from lightomni_ros.core.memory.config import MemoryConfig
from lightomni_ros.core.memory.store import SCHEMA_VERSION, Store
from lightomni_ros.core.models import ModelResolver
from lightomni_ros.core.perception.asr import Word, drop_loops, drop_repeated_clause
from lightomni_ros.core.perception.hearing import Hearing
from lightomni_ros.core.perception.vad import StreamingVad, VadConfig
from lightomni_ros.core.perception.voices import (TurnTracker, VoiceEncoder, VoiceGalleryEntry, VoiceRegistry,
                                                  VoicesConfig, similarity)
from lightomni_ros.core.reflex.sleep import fallback_topic
from lightomni_ros.core.reflex.types import UNSEEN_SPEAKER, SegmentInput
from lightomni_ros.core.segment import FaceSeen, SegmentData, SpeakerTurn
from lightomni_ros.core.topic import TopicData
from lightomni_ros.eval.conversations import mix, utterances
from lightomni_ros.eval.hearing_scores import collapsed, frame_pairs, kept, purity_coverage
from lightomni_ros.eval.perception_media import media_dir

MEDIA = media_dir()
needs_media = pytest.mark.skipif(MEDIA is None, reason='development media not found (see docs/CONTRIBUTING.md)')
W = 512


class Scripted:
    """A VAD model that returns given probabilities window by window (pure cut logic, no model)."""

    def __init__(self, probs: list[float]) -> None:
        self.probs = list(probs)

    def __call__(self, window: np.ndarray) -> float:
        return self.probs.pop(0) if self.probs else 0.0

    def reset(self) -> None:
        pass


def _spans(events):
    return [v for k, v in events if k == 'end']


def test_max_cut_lands_in_the_longest_pause_and_the_next_span_starts_there() -> None:
    # 40 s of speech with one 0.3 s pause at 25 s: the 30 s limit cuts inside that pause, nothing is lost
    n = int(40 * 16000 / W)
    probs = [0.9] * n
    pause = range(int(25 * 16000 / W), int(25.3 * 16000 / W))
    for i in pause:
        probs[i] = 0.1
    vad = StreamingVad(Scripted(probs + [0.0] * 40), VadConfig())
    ev = vad.feed(np.zeros((n + 40) * W, np.float32))
    spans = _spans(ev)
    assert [s.reason for s in spans] == ['max', 'silence']
    assert pause.start * W <= spans[0].end <= pause.stop * W
    assert spans[1].start == spans[0].end          # contiguous: no sample dropped between the two spans
    assert vad.counts['cuts_max'] == 1 and vad.counts['discarded_spans'] == 0


def test_a_short_tail_after_a_cut_is_kept_and_short_noise_is_counted() -> None:
    n30 = int(30 * 16000 / W)
    probs = [0.9] * (n30 + 3) + [0.0] * 40 + [0.9] * 3 + [0.0] * 40   # a 96 ms tail after the cut; then a blip
    vad = StreamingVad(Scripted(probs), VadConfig())
    ev = vad.feed(np.zeros(len(probs) * W, np.float32))
    spans = _spans(ev)
    assert len(spans) == 2 and spans[1].start == spans[0].end     # the tail is a span of its own, not noise
    assert [k for k, _ in ev].count('discard') == 1 and vad.counts['discarded_spans'] == 1
    assert vad.counts['discarded_ms'] > 0


def test_split_at_a_pause_on_request() -> None:
    probs = [0.9] * 100 + [0.1] * 10 + [0.9] * 100
    vad = StreamingVad(Scripted(probs), VadConfig())
    vad.feed(np.zeros(len(probs) * W, np.float32))
    (a, b), = vad.pauses()
    ev = vad.split((a + b) // 2, 'turn')
    assert ev[0][1].reason == 'turn' and ev[1] == ('start', ev[0][1].end) and vad.counts['cuts_turn'] == 1


def test_decoding_loops_are_cut_but_real_repetition_stays() -> None:
    def words(text):
        return [Word(' ' + w, i, i + 1, 0.9) for i, w in enumerate(text.split())]
    kept_words, n = drop_loops(words('no no no we agreed'), 4)
    assert n == 0 and len(kept_words) == 5
    kept_words, n = drop_loops(words('yeah ' * 12 + 'okay'), 4)
    assert n == 8 and [w.word.strip() for w in kept_words] == ['yeah'] * 4 + ['okay']
    kept_words, n = drop_loops(words('thank you ' * 9), 4)
    assert n == 10
    # a clause Whisper wrote twice: the copy and the words joining it go, a shorter repeat stays
    kept_words, n = drop_repeated_clause(words('I put my umbrella in the cellar and then I put my umbrella in the '
                                               'cellar'))
    assert n == 9 and ' '.join(w.word.strip() for w in kept_words) == 'I put my umbrella in the cellar'
    kept_words, n = drop_repeated_clause(words('we agreed we agreed on friday'))
    assert n == 0 and len(kept_words) == 6
    text = 'the keys are on the shelf and the book is on the shelf too'
    assert drop_repeated_clause(words(text)) == (words(text), 0)


class _Whisper:
    """faster-whisper's transcribe() answering from a script: (audio seconds, prompt) of each call are kept."""

    class Model:
        is_multilingual = False

    model = Model()

    def __init__(self, script: list[list[tuple[str, float, float, float]]]) -> None:
        self.script, self.calls = script, []

    def transcribe(self, audio, **kw):
        from types import SimpleNamespace as NS

        self.calls.append((len(audio) / 16000, kw['initial_prompt']))
        self.hotwords = kw['hotwords']
        segs = []
        for words in self.script[len(self.calls) - 1]:
            ws = [NS(word=' ' + w, start=a, end=b, probability=0.9) for w, a, b, _ in words]
            segs.append(NS(words=ws, start=ws[0].start, temperature=0.0, compression_ratio=words[0][3],
                           no_speech_prob=0.1, avg_logprob=-0.3))
        return iter(segs), NS(language='en')


def test_a_decoding_loop_ends_the_window_and_the_audio_after_it_is_decoded_again() -> None:
    """The words before a loop stay, its copies go, and what it swallowed is decoded again with them as prompt."""
    from lightomni_ros.core.perception.asr import AsrConfig, Transcriber

    tr = Transcriber(AsrConfig(context=False))
    loop = [('yeah', 1.0 + 0.2 * i, 1.2 + 0.2 * i, 9.0) for i in range(10)]
    tr.model = _Whisper([[[('hello', 0.0, 0.4, 1.1), ('there', 0.4, 0.9, 1.1)], loop],
                         [[('look', 0.5, 0.8, 1.2), ('at', 0.8, 0.9, 1.2), ('this', 0.9, 1.3, 1.2)]]])
    out = tr.transcribe(np.zeros(16000 * 10, np.float32))
    assert out.text == 'hello there yeah yeah yeah yeah look at this'
    assert out.counts['asr_loop_resumes'] == 1 and out.counts['asr_dropped_repeats'] == 6
    (first, _), (rest, prompt) = tr.model.calls
    assert first == 10.0 and rest == pytest.approx(10.0 - 1.8) and prompt == 'hello there yeah yeah yeah yeah'
    assert out.words[-3].start == pytest.approx(1.8 + 0.5)      # span time, not the re-decoded window's
    tr.model = _Whisper([[[('hello', 0.0, 0.4, 1.1)], loop]])
    assert Transcriber.transcribe(tr, np.zeros(16000 * 10, np.float32), once=True).text == 'hello yeah yeah yeah yeah'
    assert tr.model.hotwords is None


def test_a_clause_written_twice_is_dropped_only_from_a_decode_given_text_before_the_audio() -> None:
    from lightomni_ros.core.perception.asr import AsrConfig, Transcriber

    said = 'I put my book in the cellar and I put my book in the cellar'.split()
    script = [[[(w, 0.1 * i, 0.1 * i + 0.1, 1.1) for i, w in enumerate(said)]]]
    tr = Transcriber(AsrConfig(context=False))
    tr.model = _Whisper(script)
    assert tr.transcribe(np.zeros(16000 * 3, np.float32)).text == ' '.join(said), 'no prompt, no names: kept'
    tr.learn_names(['Ana'])
    tr.model = _Whisper(script * 2)
    out = tr.transcribe(np.zeros(16000 * 3, np.float32))
    assert out.text == 'I put my book in the cellar' and out.counts['asr_dropped_clauses'] == 1


def test_names_are_hinted_to_whisper_as_a_finished_list() -> None:
    """Bare names read as a sentence to continue; a list ending with a full stop does not."""
    from lightomni_ros.core.perception.asr import AsrConfig, Transcriber

    tr = Transcriber(AsrConfig(context=False))
    tr.learn_names(['Barack', 'Joe'])
    tr.model = _Whisper([[[('hello', 0.0, 0.4, 1.1)]]])
    tr.transcribe(np.zeros(16000 * 2, np.float32))
    assert tr.model.hotwords == 'Barack, Joe.'
    tr.cfg.name_hints = 0
    tr.model = _Whisper([[[('hello', 0.0, 0.4, 1.1)]]])
    tr.transcribe(np.zeros(16000 * 2, np.float32))
    assert tr.model.hotwords is None


@needs_media
def test_the_temperature_fallback_is_seeded() -> None:
    """Far-field overlapped speech falls back to sampling; with a seed a fresh model repeats the same words."""
    from lightomni_ros.core.perception.asr import AsrConfig, Transcriber
    from lightomni_ros.eval.conversations import meeting

    meet = meeting(MEDIA)
    if meet is None:
        pytest.skip('the AMI meeting clip is not in the media folder')
    runs = []
    for _ in range(2):
        tr = Transcriber(AsrConfig(context=False, beam_size=1, seed=0))
        try:
            runs.append(tr.transcribe(meet.audio))
        finally:
            tr.close()
    assert runs[0].counts.get('asr_fallbacks', 0) >= 1, runs[0].counts     # sampling really happened
    assert runs[0].text == runs[1].text and runs[0].text


@pytest.fixture(scope='module')
def encoder() -> VoiceEncoder:
    return VoiceEncoder(ModelResolver().resolve('voice').path)


@pytest.fixture(scope='module')
def voices() -> dict[str, list[np.ndarray]]:
    out = collections.defaultdict(list)
    for spk, text, audio in utterances(MEDIA):
        out[spk].append(audio)
    return out


@needs_media
def test_encoder_tells_the_media_voices_apart(encoder, voices) -> None:
    lj = [encoder.embed(a) for a in voices['lj']]
    jfk = encoder.embed(voices['jfk'][0])
    same = min(similarity(a, b) for a in lj for b in lj)
    other = max(similarity(a, jfk) for a in lj)
    assert same > 0.75 > other, (same, other)


@needs_media
def test_turns_of_a_two_voice_conversation_and_the_same_voice_next_time(encoder, voices) -> None:
    cfg = VoicesConfig()
    reg = VoiceRegistry(encoder.name, cfg.threshold)
    tracker = TurnTracker(encoder, reg, cfg)
    rng = random.Random(0)
    lj, jfk = ('lj', 'a', voices['lj'][0]), ('jfk', 'b', voices['jfk'][0])
    conv = mix('t', 'long', [(*lj, 0.0), (*jfk, len(lj[2]) / 16000 + 0.4)], rng)
    turns, events = tracker.turns(conv.audio)
    pairs = frame_pairs([(p.speaker, p.start, p.end) for p in conv.placed],
                        [(t.voice_id, t.start, t.end) for t in turns], 0, conv.seconds)
    purity, coverage = purity_coverage(pairs)
    assert purity > 0.9 and coverage > 0.9, turns
    assert [e.op for e in events].count('new') == 2
    # another recording: JFK first this time, the same ids come back and nothing new is created
    again = mix('u', 'long', [(*jfk, 0.0), (*lj, len(jfk[2]) / 16000 + 0.6)], rng)
    turns2, events2 = tracker.turns(again.audio)
    ids = {t.voice_id for t in turns2 if t.end - t.start > 3}
    assert ids == {t.voice_id for t in turns if t.end - t.start > 3} and not [e for e in events2 if e.op == 'new']
    assert tracker.changed(voices['lj'][0][-32000:], voices['jfk'][0][:32000])


@needs_media
def test_a_voice_seen_talking_links_to_the_face_and_keeps_its_id(encoder, voices) -> None:
    class Asr:     # the words are not what this test is about
        def transcribe(self, audio, start=None, end=None, *, once=False):
            from lightomni_ros.core.perception.asr import Transcript
            return Transcript('hello there', [Word(' hello', 0.5, 1.0, 0.9), Word(' there', 1.0, 1.5, 0.9)],
                              'en', len(audio) / 16000)

    cfg = VoicesConfig(link_hits=2)
    reg = VoiceRegistry(encoder.name, cfg.threshold)
    hearing = Hearing(Asr(), TurnTracker(encoder, reg, cfg))
    lj = voices['lj'][0]
    linked = []
    for k in range(3):
        seg = SegmentData(k, 100.0 * k, 100.0 * k + 10, 0, speech_start=100.0 * k, speech_end=100.0 * k + 9.6,
                          faces=[FaceSeen('<face_4>', 1, (0, 0, 1, 1), 0.9, 0.1, 100.0 * k + 1)])
        _, events = hearing.hear(seg, lj)
        linked += [e for e in events if e.op == 'link']
        assert {t.face_id for t in seg.turns} == {'<face_4>'}
    assert len(linked) == 1 and linked[0].face_id == '<face_4>'
    # heard with nobody in view later: still that face's voice
    seg = SegmentData(9, 900.0, 910.0, 0, speech_start=900.0, speech_end=909.6)
    hearing.hear(seg, lj)
    assert seg.turns[0].face_id == '<face_4>' and seg.turns[0].voice_id == linked[0].voice_id
    # the same voice (or one that sounds like it) while another face alone is in view: the face seen speaks
    seg = SegmentData(10, 1000.0, 1010.0, 0, speech_start=1000.0, speech_end=1009.6,
                      faces=[FaceSeen('<face_7>', 2, (0, 0, 1, 1), 0.9, 0.1, 1001.0)])
    hearing.hear(seg, lj)
    assert seg.turns[0].face_id == '<face_7>' and seg.turns[0].voice_id == linked[0].voice_id
    assert reg.forget_face('<face_4>') == [linked[0].voice_id] and not reg.voices


def test_registry_sync_keeps_ids_names_and_never_reuses_an_id() -> None:
    reg = VoiceRegistry('resemblyzer', 0.75)
    e = np.ones(256, np.float32)
    reg.sync([VoiceGalleryEntry(voice_id='<voice_7>', embedding=e, observations=5, backend='resemblyzer',
                                name='Ana')], version=3)
    assert reg.match(e)[0] == '<voice_7>' and reg.get('<voice_7>').name == 'Ana'
    assert reg.create(-e + 2, 3.0).voice_id == '<voice_8>'
    assert reg.sync([], version=2) == []                        # an older gallery is ignored
    assert reg.sync([], version=4) == ['<voice_7>'] and reg.ids() == ['<voice_8>']


@pytest.fixture(scope='module')
def embedder():
    return text_embedder(EmbeddingConfig(backend='minilm'))


def _memory(tmp_path, embedder) -> ConsolidationRuntime:
    return ConsolidationRuntime(ConsolidationConfigs(memory=MemoryConfig(memory_dir=str(tmp_path))),
                                embedder=embedder, clock=lambda: 1000.0)


def test_voices_are_stored_named_resolved_and_forgotten_with_their_person(tmp_path, embedder) -> None:
    mem = _memory(tmp_path, embedder)
    assert Store(tmp_path / 'v.db').version == SCHEMA_VERSION >= 3
    emb = list(np.linspace(0, 1, 256))
    mem.apply_voice('new', '<voice_0>', emb, 'resemblyzer', 4.0)
    mem.apply_voice('new', '<voice_1>', emb, 'resemblyzer', 3.0)
    v0 = mem.voice_gallery_version()
    # heard only: the unseen voice introduces itself, and memory names it
    seg = SegmentInput(segment_id=1, start=990.0, end=999.0, transcript="Hi, I'm Ana. I run the marketing team.",
                       turns=[SpeakerTurn(start=0, end=9, voice_id='<voice_0>',
                                          text="Hi, I'm Ana. I run the marketing team.")])
    topic = fallback_topic(seg, '', 'test')
    assert topic.semantic[0].startswith(f'<voice_0>, {UNSEEN_SPEAKER} said:')
    mem.enqueue(topic)
    mem.process_all()
    assert {v.voice_id: v.name for v in mem.voices()}['<voice_0>'] == 'Ana' and mem.voice_gallery_version() > v0
    hit = mem.query(text='who runs the marketing team?')
    assert any(e.content.startswith('Ana said:') for e, _ in hit.semantic), hit.semantic
    # later the voice is seen talking with a face: what it said is that person's
    mem.apply_voice('link', '<voice_1>', emb, 'resemblyzer', 9.0, '<face_2>')
    mem.apply_identity('<face_2>', list(np.ones(128)), 'dlib', 3)
    mem.enqueue(TopicData(segment_id=2, start=1000.0, end=1005.0, face_ids=[],
                          semantic=[f'<voice_1>, {UNSEEN_SPEAKER} said: the budget is due on Friday'],
                          audio='the budget is due on Friday', producer='test'))
    mem.process_all()
    hit = mem.query(text='when is the budget due?', face_ids=[])
    assert any('<face_2> said:' in e.content for e, _ in hit.semantic)
    assert '<face_2>' in [p.face_id for p in hit.profiles]
    res = mem.forget_face('<face_2>')
    assert res.voice_ids == ['<voice_1>'] and res.removed_voices == 1
    assert [v.voice_id for v in mem.voices()] == ['<voice_0>']
    assert not any('budget' in e.content for e, _ in mem.query(text='when is the budget due?').semantic)
    res = mem.forget_voice('<voice_0>')
    assert res.voice_ids == ['<voice_0>'] and not mem.voices()
    mem.close()
    # persistence: a reopened memory has what was stored (nothing, after the forgets) and the counters
    again = _memory(tmp_path, embedder)
    assert not again.voices() and again.voice_gallery_version() >= v0
    again.close()


def test_who_said_what_with_several_voices_in_one_segment() -> None:
    seg = SegmentInput(segment_id=3, transcript='We ship on Monday. No, Tuesday.', face_ids=['<face_1>'],
                       turns=[SpeakerTurn(start=0, end=2, voice_id='<voice_3>', face_id='<face_1>',
                                          text='We ship on Monday.'),
                              SpeakerTurn(start=2, end=3, voice_id='<voice_4>', text='No, Tuesday.')])
    topic = fallback_topic(seg, '', 'test')
    assert topic.semantic == ['<face_1> said: We ship on Monday.', '<voice_4> said: No, Tuesday.']
    assert topic.visual.startswith('<face_1> talking')


def test_scores() -> None:
    assert kept('the budget meeting moved to Friday', 'The budget meeting is on Friday') == (3, 3)
    # the offline decode's misheard word ("Fridge") is no word streaming lost, when what was said is known
    assert kept('the budget meeting moved to Friday', 'The budget meeting is on Fridge') == (2, 3)
    assert kept('the budget meeting moved to Friday', 'The budget meeting is on Fridge',
                'The budget meeting is on Friday') == (2, 2)
    truth = [('a', 0.0, 2.0), ('b', 2.0, 4.0)]
    p, c = purity_coverage(frame_pairs(truth, [('v1', 0.0, 3.0), ('v2', 3.0, 4.0)], 0, 4, step=0.5))
    assert (p, c) == (0.75, 0.75)
    seg = SegmentData(1, 0.0, 12.0, 0, speech_start=0.0, speech_end=12.0, speech_duration=12.0)
    assert collapsed([seg], [(1.0 + i, 'w') for i in range(10)]) == (1, 1)


def test_the_hearing_benchmark_counts_the_work_done_ahead() -> None:
    # a span heard ahead at a pause is decoded before its segment closes: the node's real-time factor includes it
    from types import SimpleNamespace

    from lightomni_ros.eval.bench import Report
    from lightomni_ros.eval.bench_hearing import score_node

    values = {'audio_seconds': '100', 'vad_ms_total': '2000', 'asr_ms_total': '3000', 'asr_ahead_ms_total': '5000',
              'voice_ms_total': '500', 'asr_ahead_used': '7', 'asr_ahead_wasted': '2', 'audio_chunks': '5000'}
    diag = SimpleNamespace(values=[SimpleNamespace(key=k, value=v) for k, v in values.items()])
    report = Report('hearing')
    score_node({'diag': diag, 'lines': [{'done': True, 'audio_chunks': 5000}], 'cpu_s': 30.0, 'cpu': 30.0}, 100.0,
               report)
    f = report.figures
    assert f['rtf'] == pytest.approx(0.10)          # (2 + 3 + 5) s of work per 100 s of audio
    assert f['rtf_stage']['asr_ahead'] == pytest.approx(0.05)
    assert f['discards']['asr_ahead_wasted'] == 2 and f['audio_dropped'] == 0


def test_the_hearing_benchmark_counts_only_said_words_the_offline_decode_found() -> None:
    # the mixed set knows what was said: a word the offline decode misheard is not one streaming lost; the meeting
    # has no transcript, so there every word of the offline decode counts
    from lightomni_ros.core.segment import WordData
    from lightomni_ros.eval.bench import Report
    from lightomni_ros.eval.bench_hearing import score
    from lightomni_ros.eval.conversations import Conversation, Placed

    said = 'the budget meeting moved to friday'
    convs = [Conversation(name='dev/overlap0_r0', kind='overlap', audio=np.zeros(16000, np.float32),
                          placed=[Placed(speaker='a', text=said, start=0.0, end=1.0)], ratio=0.0, path='a.wav'),
             Conversation(name='meeting/clip', kind='meeting', audio=np.zeros(16000, np.float32), path='m.wav')]
    words = [WordData(start=0.1 * i, end=0.1 * i + 0.05, word=f' {w}', probability=1.0)
             for i, w in enumerate(said.split())]
    segs = [SegmentData(1, 0.0, 1.0, 0, speech_start=0.0, speech_end=1.0, transcript=said, words=words),
            SegmentData(2, 10.0, 11.0, 0, speech_start=10.0, speech_end=11.0, transcript=said,
                        words=list(words))]
    res = {'records': segs, 'windows': {'a.wav': (0.0, 2.0), 'm.wav': (10.0, 12.0)}}
    misheard = 'the budget meeting moved to fridge'
    report = Report('hearing')
    score(convs, res, {c.name: (misheard, []) for c in convs}, report)
    f = report.figures
    assert f['conversations']['content_recall_ratio'] == 1.0      # 3 of the 3 said words the offline decode found
    assert f['conversations']['offline_agreement'] == pytest.approx(0.75)
    assert f['meeting']['content_recall_ratio'] == pytest.approx(0.75)
