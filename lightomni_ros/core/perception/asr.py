# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Speech recognition with faster-whisper (CTranslate2 Whisper) on each speech span, with word timings.

The model comes from the resolver's ``asr`` role: a CTranslate2 Whisper pack in ``models_dir`` on a robot
(e.g. faster-whisper-small), else Whisper tiny.en shipped in a PyPI package. ``model`` names a pack explicitly.
"""

from __future__ import annotations

import logging
import pathlib
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from ..config import param
from ..text import introduced_name
from ..models import ModelNotFoundError, ModelResolver

log = logging.getLogger('lightomni.perception')


@dataclass
class AsrConfig:
    """Speech recognition (faster-whisper)."""

    model: str = param('', 'ASR model: a CTranslate2 Whisper folder path, a pack name in models_dir, or empty for '
                           'the resolver default (models_dir pack, else Whisper tiny.en from PyPI).')
    device: str = param('cpu', 'CTranslate2 device.', choices=['cpu', 'cuda', 'auto'])
    compute_type: str = param('int8', 'CTranslate2 compute type (int8 on CPU, float16 or int8_float16 on GPU).',
                              choices=['int8', 'int8_float32', 'int8_float16', 'float16', 'float32', 'default'])
    language: str = param('en', 'Language code; empty detects it per span (multilingual models only).')
    beam_size: int = param(1, 'Beam size (1 = greedy: fastest).', min=1, max=10)
    threads: int = param(1, 'CPU threads for the ASR.', min=1)
    min_span_s: float = param(0.3, 'Shorter speech spans are not transcribed.', min=0.0)
    name_hints: int = param(32, 'Most names of known people (heard in introductions, or from stored profiles) passed '
                                'to Whisper as hotwords, so a rare name is not heard as common words ("Barack" as '
                                '"the rock"); 0 disables.', min=0)


@dataclass
class Word:
    """One recognised word; times in seconds from the start of the transcribed audio."""

    word: str
    start: float
    end: float
    probability: float


@dataclass
class Transcript:
    """The ASR result of one speech span."""

    text: str
    words: list[Word] = field(default_factory=list)
    language: str = ''
    duration: float = 0.0


def resolve_model(cfg: AsrConfig, resolver: ModelResolver) -> tuple[pathlib.Path, str]:
    """The CTranslate2 model folder for ``cfg.model`` (path, pack name or default) and a readable name."""
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


class Transcriber:
    """faster-whisper on 16 kHz float32 mono audio."""

    def __init__(self, cfg: AsrConfig, resolver: ModelResolver | None = None) -> None:
        from faster_whisper import WhisperModel

        self.cfg = cfg
        self.path, self.name = resolve_model(cfg, resolver or ModelResolver())
        self.model = WhisperModel(str(self.path), device=cfg.device, compute_type=cfg.compute_type,
                                  cpu_threads=cfg.threads, num_workers=1, local_files_only=True)
        self.multilingual = bool(self.model.model.is_multilingual)
        self.names: list[str] = []
        log.info('ASR model %s at %s (%s, %s)', self.name, self.path, cfg.device, cfg.compute_type)

    def learn_names(self, names: Iterable[str]) -> None:
        """Add names to the hotwords (newest kept, at most ``name_hints``)."""
        for name in names:
            if name and name not in self.names:
                self.names.append(name)
        del self.names[:max(0, len(self.names) - self.cfg.name_hints)]

    def learn_from(self, transcript: str) -> str:
        """Add the name someone gives in ``transcript`` ("I'm Ana") to the hotwords; returns it ('' when none)."""
        name = introduced_name(transcript)
        self.learn_names([name])
        return name

    def transcribe(self, audio: np.ndarray) -> Transcript:
        """Transcribe one span (the whole array) with word timings."""
        audio = np.asarray(audio, np.float32)
        duration = len(audio) / 16000.0
        if duration < self.cfg.min_span_s:
            return Transcript('', [], self.cfg.language, duration)
        language = self.cfg.language or None
        if not self.multilingual:
            language = 'en'
        segments, info = self.model.transcribe(
            audio, language=language, beam_size=self.cfg.beam_size, word_timestamps=True, vad_filter=False,
            condition_on_previous_text=False, without_timestamps=False,
            hotwords=' '.join(self.names) if self.names and self.cfg.name_hints else None)
        words: list[Word] = []
        texts = []
        for seg in segments:
            texts.append(seg.text.strip())
            for w in seg.words or []:
                words.append(Word(w.word, float(w.start), float(w.end), float(w.probability)))
        return Transcript(' '.join(t for t in texts if t), words, info.language or (language or ''), duration)
