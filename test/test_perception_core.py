# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Perception core against real models and real recordings (no ROS): audio, VAD, ASR, faces, keyframes, segments."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from lightomni_ros.core.models import ModelResolver
from lightomni_ros.core.perception.asr import AsrConfig, Transcriber
from lightomni_ros.core.perception.audio import (AudioConfig, AudioFormatError, AudioStream, Resampler,
                                                 decode_chunk)
from lightomni_ros.core.perception.faces import FacePipeline, FacesConfig, IdentityRegistry, make_backend
from lightomni_ros.core.perception.frames import (FramesConfig, ImageEncoder, ImageFormatError, KeyframeFilter,
                                                  KeyframeSampler, decode_compressed, decode_image, encode_jpeg)
from lightomni_ros.core.perception.imagenet_labels import LABELS
from lightomni_ros.core.perception.pipeline import AudioPath, SpeechEnded
from lightomni_ros.core.perception.segmenter import PerceptionState, Segmenter, SegmenterConfig
from lightomni_ros.core.perception.vad import SileroVad, StreamingVad, VadConfig
from lightomni_ros.core.segment import END_OF_SPEECH, TIMEOUT, TYPED_TEXT, FaceSeen, KeyframeData
from lightomni_ros.eval.perception_media import (FACES, GRID, SPEECH, load_audio, load_image, load_video,
                                                 media_dir, normalize, word_errors)

MEDIA = media_dir()
needs_media = pytest.mark.skipif(MEDIA is None, reason='development media not found: set LIGHTOMNI_MEDIA or put '
                                                       'shared/media beside the checkout (see docs/CONTRIBUTING.md)')


@pytest.fixture(scope='module')
def vad_model() -> SileroVad:
    return SileroVad(ModelResolver().resolve('vad').path)


@pytest.fixture(scope='module')
def asr() -> Transcriber:
    return Transcriber(AsrConfig())


@pytest.fixture(scope='module')
def face_backend():
    return make_backend(FacesConfig())


@pytest.fixture(scope='module')
def encoder() -> ImageEncoder:
    return ImageEncoder()


def stream_chunks(x: np.ndarray, sr: int, t0: float = 100.0, ms: float = 20.0, fmt: str = 'S16LE'):
    """(stamp, bytes, format, channels, rate) chunks as a microphone driver delivers them."""
    n = max(1, int(sr * ms / 1000))
    for i in range(0, len(x), n):
        c = x[i:i + n]
        data = (np.clip(c, -1, 1) * 32767).astype('<i2').tobytes() if fmt == 'S16LE' else c.astype('<f4').tobytes()
        yield t0 + i / sr, data, fmt, c.shape[1], sr


# --- audio ------------------------------------------------------------------------------------------------------------
def test_decode_formats_downmix_and_scale() -> None:
    stereo = np.array([[0.5, -0.5], [0.25, 0.25]], np.float32)
    s16 = (stereo * 32767).astype('<i2').tobytes()
    np.testing.assert_allclose(decode_chunk(s16, 'S16LE', 2, 44100), [0.0, 0.25], atol=1e-4)
    f32 = stereo.astype('<f4').tobytes()
    np.testing.assert_allclose(decode_chunk(f32, 'F32LE', 2, 48000), [0.0, 0.25], atol=1e-6)
    s32 = (stereo[:, :1] * 2 ** 31).astype('<i4').tobytes()
    np.testing.assert_allclose(decode_chunk(s32, 'S32LE', 1, 16000), [0.5, 0.25], atol=1e-6)


@pytest.mark.parametrize('kwargs,key', [
    (dict(data=b'\x00\x01' * 10, sample_format='S16LE', channels=1, sample_rate=16000, coding_format='mp3'),
     'audio_coding'),
    (dict(data=b'\x00\x01' * 10, sample_format='U8', channels=1, sample_rate=16000), 'audio_format'),
    (dict(data=b'\x00\x01' * 10, sample_format='S16LE', channels=1, sample_rate=3), 'audio_rate'),
    (dict(data=b'\x00\x01' * 10, sample_format='S16LE', channels=1, sample_rate=10_000_000), 'audio_rate'),
    (dict(data=b'\x00\x01' * 10, sample_format='S16LE', channels=0, sample_rate=16000), 'audio_channels'),
    (dict(data=b'', sample_format='S16LE', channels=1, sample_rate=16000), 'audio_empty'),
    (dict(data=b'\x00\x01\x02', sample_format='S16LE', channels=1, sample_rate=16000), 'audio_truncated'),
    (dict(data=b'\x00' * 12, sample_format='S16LE', channels=4, sample_rate=16000), 'audio_truncated'),
    (dict(data=np.array([0.1, np.nan], '<f4').tobytes(), sample_format='F32LE', channels=1, sample_rate=16000),
     'audio_nan'),
    (dict(data=np.array([0.1, np.inf], '<f4').tobytes(), sample_format='F32LE', channels=1, sample_rate=16000),
     'audio_nan'),
])
def test_bad_audio_is_rejected_with_a_named_problem(kwargs: dict, key: str) -> None:
    with pytest.raises(AudioFormatError) as err:
        decode_chunk(**kwargs)
    assert err.value.key == key and str(err.value)


@pytest.mark.parametrize('rate', [8000, 22050, 44100, 48000])
def test_streaming_resampler_is_accurate_and_alias_free(rate: int) -> None:
    t = np.arange(rate * 2) / rate
    r = Resampler(rate)
    y = np.concatenate([r.process(np.sin(2 * np.pi * 440 * t[i:i + rate // 50]).astype(np.float32))
                        for i in range(0, len(t), rate // 50)])
    assert abs(len(y) - 32000) < 40
    ref = np.sin(2 * np.pi * 440 * np.arange(len(y)) / 16000)
    assert np.abs(y[100:-100] - ref[100:-100]).max() < 1e-3
    if rate > 24000:    # a 12 kHz tone is above the 8 kHz Nyquist of the output: it must vanish, not alias
        r = Resampler(rate)
        z = r.process(np.sin(2 * np.pi * 12000 * t).astype(np.float32))
        assert np.sqrt((z[100:] ** 2).mean()) < 1e-3


def test_stream_fills_gaps_skips_duplicates_and_tolerates_backward_stamps() -> None:
    st = AudioStream(AudioConfig())
    chunk = (np.full(320, 1000, '<i2')).tobytes()      # 20 ms at 16 kHz
    assert len(st.push(10.00, chunk, 'S16LE', 1, 16000)) == 320
    assert len(st.push(10.02, chunk, 'S16LE', 1, 16000)) == 320
    assert len(st.push(10.02, chunk, 'S16LE', 1, 16000)) == 0          # duplicate
    out = st.push(10.54, chunk, 'S16LE', 1, 16000)                      # 0.5 s gap -> silence, then the chunk
    assert len(out) == 320 + 8000 and np.all(out[:8000] == 0)
    assert abs(st.time_of(st.n) - 10.56) < 1e-3
    assert len(st.push(5.0, chunk, 'S16LE', 1, 16000)) == 320           # clock jumped back: kept, timeline re-based
    assert st.counters['duplicates'] == 1 and st.counters['gaps_filled'] == 1 and st.counters['backward_stamps'] == 1
    assert abs(st.time_of(st.n) - 5.02) < 1e-3
    out = st.push(100.0, chunk, 'S16LE', 1, 16000)                      # long gap: fill capped, re-based on stamp
    assert len(out) == 320 + 32000 and abs(st.time_of(st.n) - 100.02) < 1e-3


# --- VAD + ASR on real recordings -------------------------------------------------------------------------------------
def _speech_region(x: np.ndarray, sr: int) -> tuple[float, float]:
    """First and last 20 ms frame with energy above 20% of the loudest (an independent look at where speech is)."""
    mono = x.mean(axis=1)
    n = sr // 50
    rms = np.array([np.sqrt((mono[i:i + n] ** 2).mean()) for i in range(0, len(mono) - n, n)])
    loud = np.nonzero(rms > 0.2 * rms.max())[0]
    return loud[0] * n / sr, (loud[-1] + 1) * n / sr


@needs_media
@pytest.mark.parametrize('clip', GRID)
def test_grid_clip_gives_one_span_holding_the_sentence(clip: str, vad_model: SileroVad, asr: Transcriber) -> None:
    x, sr = load_audio(MEDIA / clip)
    pad = np.zeros((sr, x.shape[1]), np.float32)            # one second of digital silence around the clip
    path = AudioPath(AudioConfig(), StreamingVad(vad_model, VadConfig()))
    vad_model.reset()
    events = []
    for ch in stream_chunks(np.concatenate([pad, x, pad]), sr):
        events += path.push(*ch)
    events += path.flush()
    spans = [e for e in events if isinstance(e, SpeechEnded)]
    assert len(spans) == 1, f'{clip}: {len(spans)} speech spans'
    t0, t1, audio = spans[0].start, spans[0].end, spans[0].audio
    lo, hi = _speech_region(x, sr)
    clip_start = 100.0 + 1.0
    # The span covers the loud part of the sentence and stays inside the clip's own silence.
    assert clip_start < t0 <= clip_start + lo and clip_start + hi <= t1 < clip_start + len(x) / sr + 0.3, \
        (t0 - clip_start, t1 - clip_start, lo, hi)
    span_text = asr.transcribe(audio).text
    offline = asr.transcribe(Resampler(sr).process(x.mean(axis=1), flush=True)).text
    ref = SPEECH[clip]
    assert word_errors(ref, span_text)[0] <= word_errors(ref, offline)[0], (span_text, offline, ref)
    assert normalize(span_text)[-1] == normalize(ref)[-1]       # the sentence's last word is inside the span


@needs_media
def test_ambient_sound_without_speech_gives_no_span(vad_model: SileroVad) -> None:
    rng = np.random.default_rng(0)
    # Real room tone (the silence before speech in each GRID clip), looped, plus fan-like noise and mains hum.
    tones = []
    for clip in GRID:
        x, sr = load_audio(MEDIA / clip)
        lo, _ = _speech_region(x, sr)
        tones.append(x[:int(max(0.1, lo - 0.15) * sr)])
    room = np.concatenate(tones * 8)[:sr * 8]
    t = np.arange(sr * 8) / sr
    hum = 0.05 * np.sin(2 * np.pi * 50 * t) + 0.02 * np.sin(2 * np.pi * 150 * t)
    brown = np.cumsum(rng.normal(0, 1, len(t)))
    brown = 0.05 * (brown - np.convolve(brown, np.ones(400) / 400, 'same')) / 20
    ambient = room + (hum + brown)[:, None].astype(np.float32)
    path = AudioPath(AudioConfig(), StreamingVad(vad_model, VadConfig()))
    vad_model.reset()
    events = []
    for ch in stream_chunks(ambient.astype(np.float32), sr):
        events += path.push(*ch)
    events += path.flush()
    assert not [e for e in events if isinstance(e, SpeechEnded)], events


@needs_media
def test_jfk_stereo_44k_streaming_transcript(vad_model: SileroVad, asr: Transcriber) -> None:
    x, sr = load_audio(MEDIA / 'speech/jfk.flac')
    assert x.shape[1] == 2 and sr == 44100
    path = AudioPath(AudioConfig(), StreamingVad(vad_model, VadConfig()))
    vad_model.reset()
    spans = []
    for ch in stream_chunks(np.concatenate([x, np.zeros((sr, 2), np.float32)]), sr, fmt='F32LE'):
        spans += [e for e in path.push(*ch) if isinstance(e, SpeechEnded)]
    text = ' '.join(asr.transcribe(s.audio).text for s in spans)
    errors, n = word_errors(SPEECH['speech/jfk.flac'], text)
    assert errors / n <= 0.1, text


@needs_media
def test_speech_heard_ahead_at_a_pause_is_the_span_that_ends_there(vad_model: SileroVad, asr: Transcriber) -> None:
    """The span a pause reports is the one the VAD closes, sample for sample; its decode is reused, not redone.

    JFK's sentence, streamed: pauses inside the speech are heard ahead and wasted (the speech goes on); at each end
    of speech the decode ahead is the one used, and every span reads as a plain decode of it reads.
    """
    x, sr = load_audio(MEDIA / 'speech/jfk.flac')
    x = np.concatenate([x, np.zeros((sr, 2), np.float32)])

    def stream(ahead: bool) -> tuple[list[str], collections.Counter]:
        path = AudioPath(AudioConfig(), StreamingVad(vad_model, VadConfig()))
        vad_model.reset()
        asr._context = None
        texts, counts, last = [], collections.Counter(), None
        for ch in stream_chunks(x, sr, fmt='F32LE'):
            for ev in path.push(*ch):
                if isinstance(ev, SpeechEnded):
                    if ahead:
                        assert (last.start, last.end) == (ev.start, ev.end) and np.array_equal(last.audio, ev.audio)
                    tr = asr.transcribe(ev.audio, ev.start, ev.end)
                    texts.append(tr.text)
                    counts.update(tr.counts)
            pause = path.paused(300, 10.0) if ahead else None
            if pause is not None:
                counts.update(asr.decode_ahead(pause.audio, pause.start))
                last = pause
        return texts, counts

    plain, none = stream(False)
    texts, counts = stream(True)
    assert texts == plain and len(texts) >= 2, (texts, plain)
    assert counts['asr_ahead_used'] == len(texts) and not none['asr_ahead']
    assert counts['asr_ahead'] == counts['asr_ahead_used'] + counts['asr_ahead_wasted']


def test_asr_name_hints(asr: Transcriber) -> None:
    """Names heard in introductions become hotwords (bounded); recognition still works with them."""
    try:
        assert asr.learn_from("Hi robot, I'm Barack.") == 'Barack' and asr.learn_from('I am tired') == ''
        asr.learn_names(['Joe', 'Barack', ''])
        assert asr.names == ['Barack', 'Joe']
        asr.learn_names(f'Name{i:02d}' for i in range(40))
        assert len(asr.names) == asr.cfg.name_hints and asr.names[-1] == 'Name39'
        x, sr = load_audio(MEDIA / 'speech/jfk.flac')
        mono = Resampler(sr).process(x.mean(axis=1).astype(np.float32), flush=True)
        text = asr.transcribe(mono).text
        errors, n = word_errors(SPEECH['speech/jfk.flac'], text)
        assert errors / n <= 0.15, text
    finally:
        asr.names.clear()


def test_asr_decodes_once_while_perception_is_behind(asr: Transcriber, monkeypatch: pytest.MonkeyPatch) -> None:
    """`once` (perception behind) asks Whisper for one temperature and no retry; the words are still there."""
    temperatures = []
    real = asr.model.transcribe

    def spy(audio, **kwargs):
        temperatures.append(tuple(kwargs['temperature']))
        return real(audio, **kwargs)

    monkeypatch.setattr(asr.model, 'transcribe', spy)
    x, sr = load_audio(MEDIA / 'speech/jfk.flac')
    mono = Resampler(sr).process(x.mean(axis=1).astype(np.float32), flush=True)
    quick = asr.transcribe(mono, once=True)
    assert temperatures == [(0.0,)] and quick.counts.get('asr_shed') == 1
    errors, n = word_errors(SPEECH['speech/jfk.flac'], quick.text)
    assert errors / n <= 0.15, quick.text
    full = asr.transcribe(mono)
    assert len(temperatures[-1]) == 6 and 'asr_shed' not in full.counts


def test_vad_max_speech_cuts_long_speech(vad_model: SileroVad) -> None:
    class Always:
        def __call__(self, window: np.ndarray) -> float:
            return 0.99

        def reset(self) -> None:
            pass
    vad = StreamingVad(Always(), VadConfig(max_speech_s=2.0))
    ev = vad.feed(np.zeros(16000 * 5, np.float32))
    ends = [e[1] for e in ev if e[0] == 'end']
    assert len(ends) == 2 and all(s.forced for s in ends) and ends[0].end - ends[0].start <= 2 * 16000 + 512


# --- faces ------------------------------------------------------------------------------------------------------------
@needs_media
def test_photos_give_one_id_per_person_and_both_in_the_group(face_backend) -> None:
    pipe = FacePipeline(face_backend, FacesConfig())
    got: dict[str, set[str]] = {}
    for rel in sorted(FACES, key=lambda r: 'group' in r):     # single portraits first, the group photo last
        img = load_image(MEDIA / rel)
        for _ in range(3):          # a camera sees the person for a few keyframes
            tracks, _ = pipe.process(img)
        got[rel] = {t.face_id for t in tracks}
        assert len(tracks) == len(FACES[rel]), (rel, tracks)
    person_ids: dict[str, set[str]] = {}
    for rel, names in FACES.items():
        if len(names) == 1:
            person_ids.setdefault(names[0], set()).update(got[rel])
    assert all(len(v) == 1 and '' not in v for v in person_ids.values()), person_ids
    assert person_ids['obama'] != person_ids['biden']
    assert got['faces/public_figures/group_obama_and_biden.jpg'] == person_ids['obama'] | person_ids['biden']
    assert len(pipe.registry.identities) == 2


@needs_media
@pytest.mark.parametrize('clip', GRID[:2])
def test_grid_talker_keeps_one_id_through_the_clip(clip: str, face_backend) -> None:
    frames, fps = load_video(MEDIA / clip)
    pipe = FacePipeline(face_backend, FacesConfig())
    ids, tracks_seen = [], set()
    for img in frames[::5]:
        tracks, _ = pipe.process(img)
        assert len(tracks) == 1
        tracks_seen.add(tracks[0].track_id)
        ids.append(tracks[0].face_id)
    assert len(tracks_seen) == 1
    confirmed = [i for i in ids if i]
    assert len(confirmed) >= len(ids) - FacesConfig().confirm_hits and len(set(confirmed)) == 1, ids


def test_registry_sync_forget_and_stable_ids() -> None:
    dist = lambda a, b: float(np.linalg.norm(a - b))  # noqa: E731
    reg = IdentityRegistry('dlib', dist, 0.5)
    e = np.eye(4, dtype=np.float32)
    assert reg.sync([('<face_3>', e[0], 5, 'dlib'), ('<face_9>', e[1], 2, 'insightface')], version=1) == []
    assert reg.next_index == 10 and reg.ids() == ['<face_3>'] and reg.skipped_foreign == 1
    new = reg.create(e[2], 3)
    assert new.face_id == '<face_10>' and reg.match(e[2] + 0.01)[0] == '<face_10>'
    # A newer gallery without <face_3> means it was forgotten; the local, not yet stored <face_10> stays.
    assert reg.sync([], version=2) == ['<face_3>'] and reg.ids() == ['<face_10>']
    assert reg.sync([('<face_3>', e[0], 5, 'dlib')], version=1) == []          # stale version ignored
    assert reg.forget('<face_10>') and reg.match(e[2]) is None
    assert reg.create(e[3], 3).face_id == '<face_11>'                           # ids are never reused
    for _ in range(9):
        assert reg.observe('<face_11>', e[3]) is None
    upd = reg.observe('<face_11>', e[3])
    assert upd.op == 'update' and upd.observations == 13


# --- frames -----------------------------------------------------------------------------------------------------------
def test_keyframe_sampler_gives_the_rate_at_any_camera_rate() -> None:
    for fps in (30.0, 7.0, 1.5):
        s = KeyframeSampler(1.0)
        taken = 0
        for i in range(int(fps * 20)):
            t = 50.0 + i / fps
            if s.due(t):
                s.take(t)
                taken += 1
        assert abs(taken - min(20, fps * 20)) <= 1, (fps, taken)
    s = KeyframeSampler(1.0)
    s.take(100.0)
    assert not s.due(100.5) and s.due(101.0) and s.due(10.0)           # a clock reset restarts sampling


@pytest.mark.parametrize('kwargs,key', [
    (dict(encoding='yuv420', width=4, height=2, step=12, data=b'\x00' * 24), 'image_encoding'),
    (dict(encoding='rgb8', width=4, height=2, step=8, data=b'\x00' * 16), 'image_step'),
    (dict(encoding='rgb8', width=4, height=2, step=12, data=b'\x00' * 20), 'image_data_size'),
    (dict(encoding='rgb8', width=4, height=2, step=12, data=b''), 'image_empty'),
    (dict(encoding='rgb8', width=0, height=2, step=0, data=b''), 'image_size'),
    (dict(encoding='mono8', width=100000, height=100000, step=100000, data=b'\x00'), 'image_size'),
])
def test_bad_images_are_rejected_with_a_named_problem(kwargs: dict, key: str) -> None:
    with pytest.raises(ImageFormatError) as err:
        decode_image(**kwargs)
    assert err.value.key == key


def test_image_decoding_encodings_and_compressed() -> None:
    rgb = np.zeros((2, 3, 3), np.uint8)
    rgb[..., 0] = 200
    bgr = rgb[..., ::-1].copy()
    padded = np.zeros((2, 12), np.uint8)
    padded[:, :9] = bgr.reshape(2, 9)
    assert (decode_image('bgr8', 3, 2, 12, padded.tobytes()) == rgb).all()
    assert decode_image('mono8', 3, 2, 3, b'\x07' * 6).shape == (2, 3, 3)
    big = np.random.default_rng(1).integers(0, 255, (64, 64, 3), np.uint8)
    jpeg = encode_jpeg(big, 95)
    assert decode_compressed('jpeg', jpeg).shape == (64, 64, 3)
    with pytest.raises(ImageFormatError) as err:
        decode_compressed('jpeg', jpeg[:len(jpeg) // 8])
    assert err.value.key == 'image_decode'


@needs_media
def test_encoder_export_is_keyed_by_the_weights_content(tmp_path) -> None:
    """A new virtual environment installing the same weights reuses the cached ONNX export instead of adding one."""
    import os

    from lightomni_ros.core.models import content_key as _weights_key

    a, b, c = tmp_path / 'a.pth', tmp_path / 'venv2' / 'a.pth', tmp_path / 'c.pth'
    b.parent.mkdir()
    a.write_bytes(b'weights' * 1000)
    b.write_bytes(b'weights' * 1000)
    c.write_bytes(b'weights' * 999 + b'other!!')
    os.utime(b, (1, 1))
    assert _weights_key(a) == _weights_key(b) != _weights_key(c)


def test_blur_duplicate_filters_and_visual_hints(encoder: ImageEncoder) -> None:
    import cv2

    frames, _ = load_video(MEDIA / GRID[0])
    kf = KeyframeFilter(FramesConfig(), encoder)
    first = kf.process(frames[0], 0.0)
    assert first.kept and first.feature.shape == (1280,) and abs(np.linalg.norm(first.feature) - 1) < 1e-4
    assert all(h in LABELS for h in first.hints)
    assert kf.process(frames[25], 1.0).reason == 'duplicate'             # the same talker a second later
    assert kf.process(cv2.GaussianBlur(frames[50], (0, 0), 6), 2.0).reason == 'blur'
    photo = load_image(MEDIA / 'faces/public_figures/barack_obama_1.jpg')
    other = kf.process(photo, 3.0)
    assert other.kept and other.similarity < 0.8 and other.hints
    assert kf.process(frames[60], 20.0).kept                               # a duplicate older than the gap is kept


# --- segments ---------------------------------------------------------------------------------------------------------
def _kf(t: float, hints: list[str] = ()) -> KeyframeData:
    return KeyframeData(t, b'jpeg', np.zeros(4, np.float32), 100.0, list(hints))


def test_segmenter_rules() -> None:
    seg = Segmenter(SegmenterConfig(timeout_s=30.0), next_id=7)
    assert seg.tick(0.0) is None
    seg.add_keyframe(_kf(1.0, ['suit']))
    seg.add_faces([FaceSeen('<face_1>', 1, (0, 0, 9, 9), 0.9, 0.1, 1.0), FaceSeen('', 2, (0, 0, 9, 9), 0.9, -1, 1.0)])
    assert seg.tick(29.9) is None
    out = seg.tick(30.2)
    assert out.trigger == TIMEOUT and out.segment_id == 7 and (out.start, out.end) == (0.0, 30.0)
    assert len(out.keyframes) == 1 and out.visual_tags == ['suit'] and len(out.faces) == 2
    seg.speech_started(35.0)
    assert seg.tick(70.0) is None                           # no time-out while someone speaks
    seg.add_keyframe(_kf(39.0))
    seg.add_keyframe(_kf(41.0))                             # after the end of speech: next segment
    seg.add_faces([FaceSeen('<face_1>', 1, (0, 0, 9, 9), 0.9, 0.1, 38.0)])
    seg.add_faces([FaceSeen('<face_1>', 1, (0, 0, 9, 9), 0.9, 0.1, 41.0)])
    out = seg.speech_ended(34.8, 40.0)
    assert out.trigger == END_OF_SPEECH and out.speech_end == 40.0 and abs(out.speech_duration - 5.2) < 1e-9
    assert [k.stamp for k in out.keyframes] == [39.0] and out.start == 30.0
    assert [f.stamp for f in out.faces] == [38.0]           # the observation inside the segment
    out = seg.typed(42.0, 'what time is it')
    assert out.trigger == TYPED_TEXT and out.typed_text == 'what time is it'
    assert [k.stamp for k in out.keyframes] == [41.0] and [f.stamp for f in out.faces] == [41.0]
    assert out.segment_id == 9
    # Sensor time jumps back (a bag restarted): the open segment restarts rather than never timing out.
    assert seg.tick(5.0) is None and seg.start == 5.0
    seg.add_faces([FaceSeen('<face_1>', 1, (0, 0, 9, 9), 0.9, 0.1, 20.0)])
    assert seg.tick(35.5).trigger == TIMEOUT
    # A time-out in which nothing was seen or heard is not a segment: its span joins the next one.
    assert seg.tick(65.5) is None and seg.empty_skipped == 1 and seg.start == 65.0
    seg.add_keyframe(_kf(70.0))
    out = seg.tick(95.2)
    assert (out.segment_id, out.start, out.end) == (11, 65.0, 95.0)
    every = Segmenter(SegmenterConfig(timeout_s=30.0, publish_empty=True))
    every.tick(0.0)
    assert every.tick(30.5).trigger == TIMEOUT and every.empty_skipped == 0


def test_perception_state_survives_restart(tmp_path) -> None:
    st = PerceptionState(tmp_path / 'state.json')
    assert (st.next_segment_id, st.next_face_index) == (1, 0)
    st.save(42, 5)
    st2 = PerceptionState(tmp_path / 'state.json')
    assert (st2.next_segment_id, st2.next_face_index) == (42, 5)
    (tmp_path / 'bad.json').write_text('{not json')
    assert PerceptionState(tmp_path / 'bad.json').next_segment_id == 1


def test_face_backend_choice_and_scrfd_decoding(tmp_path) -> None:
    from lightomni_ros.core.models import ModelNotFoundError
    from lightomni_ros.core.perception.faces.insightface_backend import decode_scrfd, nms

    # Without a buffalo_s pack in models_dir, auto falls back to dlib; asking for insightface names the pack.
    assert make_backend(FacesConfig(backend='auto'), ModelResolver(tmp_path)).name == 'dlib'
    with pytest.raises(ModelNotFoundError, match='buffalo_s'):
        make_backend(FacesConfig(backend='insightface'), ModelResolver(tmp_path))
    (tmp_path / 'buffalo_s').mkdir()
    with pytest.raises(FileNotFoundError, match='SCRFD'):
        make_backend(FacesConfig(backend='auto'), ModelResolver(tmp_path))
    # SCRFD post-processing: one confident anchor at stride 8, cell (x=3, y=2), second anchor of the cell.
    size = (64, 64)
    outs = []
    for stride in (8, 16, 32):
        n = (64 // stride) ** 2 * 2
        outs.append(np.zeros((n, 1), np.float32))
    for stride in (8, 16, 32):
        outs.append(np.zeros(((64 // stride) ** 2 * 2, 4), np.float32))
    for stride in (8, 16, 32):
        outs.append(np.zeros(((64 // stride) ** 2 * 2, 10), np.float32))
    idx = (2 * 8 + 3) * 2 + 1
    outs[0][idx] = 0.9
    outs[3][idx] = [1, 1, 2, 2]                   # distances in stride units: left, top, right, bottom
    outs[6][idx] = [0.5, 0] * 5
    boxes, scores, kps = decode_scrfd(outs, size, 0.5)
    np.testing.assert_allclose(boxes, [[24 - 8, 16 - 8, 24 + 16, 16 + 16]])
    assert scores.tolist() == pytest.approx([0.9]) and kps[0, 0].tolist() == [28, 16]
    b = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]], np.float32)
    assert nms(b, np.array([0.9, 0.8, 0.7]), 0.4) == [0, 2]


def test_wer_normalisation() -> None:
    assert normalize('Lay red with P9 again.') == 'lay red with p nine again'.split()
    assert normalize("Bin blue at F-2, now!") == 'bin blue at f two now'.split()
    assert word_errors('bin blue at f two now', 'Bimblue F2 now.') == (3, 6)
    assert word_errors('a b c', '') == (3, 3) and word_errors('', 'x') == (1, 0)


def test_asr_model_from_path_pack_or_package(tmp_path) -> None:
    from lightomni_ros.core.models import ModelNotFoundError
    from lightomni_ros.core.perception.asr import resolve_model

    default, name = resolve_model(AsrConfig(), ModelResolver(tmp_path))
    assert (default / 'model.bin').is_file() and 'tiny.en' in name
    assert resolve_model(AsrConfig(model=str(default)), ModelResolver())[0] == default
    with pytest.raises(ModelNotFoundError, match='faster-whisper-small'):
        resolve_model(AsrConfig(model='faster-whisper-small'), ModelResolver(tmp_path))
    (tmp_path / 'faster-whisper-small').mkdir()          # a robot's pack in models_dir wins over the package
    small = (tmp_path / 'faster-whisper-small', 'faster-whisper-small')
    assert resolve_model(AsrConfig(), ModelResolver(tmp_path)) == small
    assert resolve_model(AsrConfig(model='faster-whisper-small'), ModelResolver(tmp_path)) == small
