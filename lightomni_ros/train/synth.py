# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Synthetic interaction streams: one generator for the reaction heads and the memory and generation adapters.

A *stream* (:mod:`.stream`) is a scripted long interaction: several people (``<face_N>`` ids, names, attributes)
come and go, introduce themselves, talk to each other and to the robot, state facts (several in one breath), correct
them ("actually, the meeting is on Friday"), ask "remember that ..." and "remind me ..." requests, type notes, ask
questions that memory can answer, questions it cannot, and questions that need no memory; a radio or TV talks over
them (:mod:`.events`, :mod:`.questions`). Every segment yields, from the same facts:

- a reaction example: the two trigger labels, where the speech came from, the memory that exists at that moment, the
  gold entry a retrieval should find, and the S_g the reflex pass would read;
- a memory-adapter pair: the segment (with the names memory knows) -> the memory JSON, and the gold facts with their
  subjects and keywords that score it;
- a generation-adapter pair when the robot answers: question + the memories retrieval would give + S_g -> the reply
  (a refusal when the memories do not hold the answer), with the keywords that score it (:mod:`.pairs`).

Noisy variants follow the paper's robustness test: unrelated text four times the length of the query prepended, and
ASR-style corruptions. The same seed gives the same files. The held-out split has its own seed, names, objects,
places, events, topics, broadcasts and phrasings (:mod:`.world`, :mod:`.templates`; a test checks that no template
is shared), and the training split's questions also go through a label-neutral lead-in grammar (:mod:`.phrasing`).

Output: ``<out>/<split>/examples.jsonl`` (one segment per line), ``memories.jsonl`` (every entry of every stream),
``pairs_memory.jsonl``, ``pairs_generation.jsonl`` and ``meta.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import random
from typing import Any, Sequence

from . import events, pairs, phrasing, questions, restate, stream, templates, windows, world
from .stream import Stream
from .templates import TEMPLATES

ASR_CONFUSIONS = {'where': 'wear', 'there': 'their', 'to': 'two', 'for': 'four', 'know': 'no', 'right': 'write',
                  'robot': 'row bot', 'tea': 'tee', 'here': 'hear', 'what': 'watt', 'the': 'a', 'is': 'his',
                  'my': 'mine', 'did': 'did', 'remind': 'remained', 'allergic': 'a lurgic', 'drink': 'drank'}
FILLERS = ('uh', 'um', 'erm', 'you know', 'like')
SPLIT_SEEDS = {'train': 0, 'heldout': 1000}
NOISE_KINDS = ('prefix', 'asr')
HELDOUT_NOISE = ('prefix', 'asr', 'prefix+asr')
#: kinds of segment and how often a stream draws each (events.EVENTS and questions.QUESTIONS)
WEIGHTS = {'idle': 2.5, 'state': 3.0, 'about': 1.0, 'tell_robot': 1.0, 'intro': 2.0, 'intro_other': 0.7,
           'object_state': 1.5, 'object_move': 0.7, 'remember': 2.0, 'typed_note': 1.0, 'event': 1.5,
           'correction': 1.0, 'opinion': 2.0, 'to_person': 2.0, 'self_talk': 1.0, 'device': 3.0, 'remind': 1.5,
           'general': 2.0, 'chitchat': 2.0, 'ask_other': 2.5, 'ask_self': 1.0, 'ask_object': 2.5, 'ask_event': 1.5,
           'ask_topic': 1.2, 'ask_heard': 1.2, 'ask_said': 1.0, 'ask_name': 0.6}


@dataclasses.dataclass
class SynthConfig:
    """How much to generate, and how."""

    streams: int = 24
    segments: int = 44             # segments per stream
    people: tuple[int, int] = (3, 5)
    noisy_fraction: float = 1.0    # fraction of memory questions that also get each noisy variant
    noisy_other: float = 0.15      # fraction of other addressed utterances that get a noisy variant
    sg_events: int = 2             # episodic events in the S_g script of each example (one more or less)
    # noisy variants made of each chosen example (both corruptions at once too: the held-out split has them)
    noise_kinds: tuple[str, ...] = ('prefix', 'asr', 'prefix+asr')
    weights: dict[str, float] = dataclasses.field(default_factory=lambda: dict(WEIGHTS))
    multi_fact: float = 0.3        # statements and introductions with a second fact in the same breath
    speaker_seen: float = 0.75     # with several people in view, how often perception singles out the speaker
    typed_questions: float = 0.1   # questions typed instead of spoken
    no_wake: float = 0.35          # requests and questions with "you" said without a wake word by someone alone
    unseen_asker: float = 0.1      # questions asked from out of view (nobody in view; always with a wake word)
    unanswerable: float = 0.25     # questions about something never said
    probes: int = 0                # generation-only questions at the end of each stream
    # and "what happened in the last N minutes?" after them (train.windows); 0 by default: the adapter trained with
    # four per stream summarised worse than the extractive summary (models/README.md, 2026-12-04)
    window_questions: int = 0
    idle_pairs: float = 0.3        # silent segments among the memory adapter's pairs
    # other wordings of each training statement (restate module), each another memory pair with the same target
    restatements: int = 1
    # segments perception gives no frame labels (camera dark or covered, nothing it recognises): a radio heard in
    # a dark room is rendered with neither people nor a scene, which the memory pass must handle too
    no_labels: float = 0.2
    # speech nobody singled out that perception's voice registry names (the rest is too short to tell)
    voice_heard: float = 0.8
    # statements among people that tell of others or of things: the share also given to the memory adapter as heard
    # from nobody seen talking (pairs.unsingled_copy), so it keeps what such a voice tells, not only what it says of
    # itself (which names nobody memory could keep it of)
    unsingled_copies: float = 1.0


# -- noise ------------------------------------------------------------------------------------------------------
def prefix_noise(query: str, noise_pool: tuple[str, ...], rng: random.Random, factor: int = 4) -> str:
    """Unrelated text of ``factor`` times the query's word count, prepended to the query (paper robustness test)."""
    want = factor * len(query.split())
    words: list[str] = []
    while len(words) < want:
        words += rng.choice(noise_pool).split()
    return ' '.join(words[:want]) + ' ' + query


def asr_corrupt(text: str, rng: random.Random, rate: float = 0.2) -> str:
    """ASR-style errors: lowercase without punctuation, misheard words, dropped words, fillers, split characters."""
    out = []
    for w in text.lower().replace(',', ' ').replace('?', ' ').replace('.', ' ').split():
        r = rng.random()
        if w in ASR_CONFUSIONS and r < 0.6:
            out.append(ASR_CONFUSIONS[w])
        elif r < rate * 0.4:
            continue                                   # dropped
        elif r < rate * 0.7 and len(w) > 3:
            i = rng.randrange(1, len(w) - 1)
            out.append(w[:i] + w[i + 1:])              # a clipped phoneme
        else:
            out.append(w)
        if rng.random() < rate * 0.3:
            out.append(rng.choice(FILLERS))
    return ' '.join(out) or text.lower()


def noisy_variants(ex: dict[str, Any], noise_pool: tuple[str, ...], rng: random.Random,
                   kinds: Sequence[str] = NOISE_KINDS) -> list[dict[str, Any]]:
    """Noisy copies of an example (labels and gold unchanged): 'prefix', 'asr' or both ('prefix+asr')."""
    out = []
    for kind in kinds:
        if kind not in NOISE_KINDS + ('prefix+asr',):
            raise ValueError(f'unknown noise kind {kind!r}')
        v = dict(ex)
        v['noise'] = kind
        text = asr_corrupt(ex['query'], rng) if 'asr' in kind else ex['query']
        v['transcript'] = prefix_noise(text, noise_pool, rng) if 'prefix' in kind else text
        out.append(v)
    return out


# -- one stream's segments -----------------------------------------------------------------------------------------
def step(st: Stream) -> None:
    """Add one segment of a randomly chosen kind to ``st`` (weights favour what a robot mostly hears)."""
    kinds = dict(st.cfg.weights)
    if not st.tpl.get('chitchat'):
        kinds.pop('chitchat', None)
    kind = st.rng.choices(list(kinds), list(kinds.values()))[0]
    make = questions.QUESTIONS.get(kind) or events.EVENTS[kind]
    said = make(st)
    if said is None:
        said = events.idle(st)
    st.record(said)


def probe(st: Stream) -> None:
    """A generation-only question at the end of ``st`` (more answer pairs without more segments)."""
    kind = st.rng.choice(list(questions.QUESTIONS))
    said = questions.QUESTIONS[kind](st)
    if said is None or not said.speech:
        return
    seg = st.segment_input(said, st.t, st.t + 3.0)
    st.probes.append({'kind': said.kind, 'start': round(st.t, 1), 'end': round(st.t + 3.0, 1),
                      'face_ids': seg.face_ids, 'speaker_face': seg.speaker_face,
                      'visual_tags': st.rng.sample(st.vocab['scenes'], 1), 'transcript': said.transcript,
                      'typed_text': said.typed, 'sg': st.sg(), 'names': dict(st.names),
                      'response': said.response, 'answer': said.answer,
                      'context': pairs.context(st, said, seg.utterance, said.gold, st.rng, st.stand_in)})
    asked = st.reworded(said)
    if asked:
        st.probes[-1]['reworded'] = asked
    st.t += st.rng.uniform(5.0, 60.0)


# -- the whole split ----------------------------------------------------------------------------------------------
def generate(split: str, seed: int | None = None, cfg: SynthConfig | None = None) -> dict[str, Any]:
    """Segments, memories and adapter pairs of one split (``train`` or ``heldout``), deterministic given the seed."""
    if split not in TEMPLATES:
        raise ValueError(f'unknown split {split!r}; use one of {sorted(TEMPLATES)}')
    cfg = cfg or SynthConfig()
    seed = SPLIT_SEEDS[split] if seed is None else seed
    rng = random.Random(f'{split}:{seed}')
    examples, memories, probes = [], [], []
    for s in range(cfg.streams):
        st = Stream(split, s, random.Random(f'{split}:{seed}:{s}'), cfg)
        for _ in range(cfg.segments):
            step(st)
        for _ in range(cfg.probes):
            probe(st)
        st.probes += windows.window_probes(st, cfg.window_questions)
        memories += st.memories
        probes += st.probes
        for ex in st.examples:
            examples.append(ex)
            if not ex['transcript']:
                continue        # typed text and silence have no ASR errors
            memq = ex['gold'] is not None
            if (memq and rng.random() < cfg.noisy_fraction) or \
                    (ex['speech'] and not memq and rng.random() < cfg.noisy_other):
                examples += noisy_variants(ex, TEMPLATES[split]['noise'], rng, cfg.noise_kinds)
    for i, ex in enumerate(examples):
        ex['id'] = f'{split}/{i}'
    prng = random.Random(f'{split}:{seed}:pairs')
    return {'split': split, 'seed': seed, 'config': dataclasses.asdict(cfg), 'examples': examples,
            'memories': memories, 'pairs': {'memory': pairs.memory_pairs(
                examples, cfg.idle_pairs, prng, cfg.unsingled_copies, random.Random(f'{split}:{seed}:unsingled'),
                cfg.voice_heard),
                                            'generation': pairs.generation_pairs(examples, probes)}}


def write(data: dict[str, Any], out_dir: str | pathlib.Path) -> pathlib.Path:
    """Write one split as JSONL files under ``out_dir/<split>/``; return that folder."""
    folder = pathlib.Path(out_dir) / data['split']
    folder.mkdir(parents=True, exist_ok=True)
    files = {'examples.jsonl': data['examples'], 'memories.jsonl': data['memories'],
             'pairs_memory.jsonl': data['pairs']['memory'], 'pairs_generation.jsonl': data['pairs']['generation']}
    digest = hashlib.sha256()
    for name, rows in files.items():
        text = ''.join(json.dumps(r, sort_keys=True) + '\n' for r in rows)
        digest.update(text.encode())
        (folder / name).write_text(text)
    ex = data['examples']
    meta = {'split': data['split'], 'seed': data['seed'], 'config': data['config'], 'examples': len(ex),
            'memories': len(data['memories']), 'speech': sum(e['speech'] for e in ex),
            'search': sum(e['search'] for e in ex), 'noisy': sum(1 for e in ex if e['noise']),
            'pairs_memory': len(data['pairs']['memory']), 'pairs_generation': len(data['pairs']['generation']),
            'sha256': digest.hexdigest(), 'generator': generator_digest()}
    (folder / 'meta.json').write_text(json.dumps(meta, indent=1, sort_keys=True) + '\n')
    return folder


def generator_digest() -> str:
    """Digest of the generator's source (this module and the ones it draws from): other code regenerates a split.

    The core modules whose functions shape the records count too (how retrieval's closeness is simulated with
    ``content_words``, how memory renders entries and S_g lines): a change there changes the data.
    """
    from ..core.memory import global_state, store
    from ..core.reflex import config, grounding, recall

    digest = hashlib.sha256(pathlib.Path(__file__).read_bytes())
    for mod in (events, pairs, phrasing, questions, restate, stream, templates, windows, world, config, global_state,
                grounding, recall, store):
        digest.update(pathlib.Path(mod.__file__).read_bytes())
    return digest.hexdigest()[:16]


def default_data_dir() -> pathlib.Path:
    """Where splits are synthesized by default: a folder per generator version in the cache.

    Checkouts of other versions on the same machine never overwrite each other's data.
    """
    from ..core.models import cache_dir

    return cache_dir() / 'train_data' / generator_digest()


def read_jsonl(path: str | pathlib.Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file."""
    return [json.loads(line) for line in pathlib.Path(path).read_text().splitlines() if line.strip()]


def load_split(folder: str | pathlib.Path) -> dict[str, Any]:
    """Read a split written by :func:`write`."""
    folder = pathlib.Path(folder)
    return {'examples': read_jsonl(folder / 'examples.jsonl'), 'memories': read_jsonl(folder / 'memories.jsonl'),
            'pairs': {k: read_jsonl(folder / f'pairs_{k}.jsonl') for k in ('memory', 'generation')},
            'meta': json.loads((folder / 'meta.json').read_text())}


def ensure_splits(out_dir: str | pathlib.Path, train: SynthConfig | None = None,
                  heldout: SynthConfig | None = None, seed: int | None = None) -> dict[str, pathlib.Path]:
    """Generate both splits (train with ``seed``, held-out with its own seed) unless already there."""
    out = {}
    for split, cfg in (('train', train), ('heldout', heldout or SynthConfig(streams=9, noise_kinds=HELDOUT_NOISE))):
        folder = pathlib.Path(out_dir) / split
        s = SPLIT_SEEDS[split] if seed is None or split == 'heldout' else seed
        want = dataclasses.asdict(cfg or SynthConfig())
        if (folder / 'meta.json').is_file():
            meta = json.loads((folder / 'meta.json').read_text())
            if meta.get('seed') == s and meta.get('config') == json.loads(json.dumps(want)) \
                    and meta.get('generator') == generator_digest():
                out[split] = folder
                continue
        out[split] = write(generate(split, s, cfg), out_dir)
    return out


__all__ = ['SynthConfig', 'TEMPLATES', 'WEIGHTS', 'default_data_dir', 'generate', 'write', 'load_split',
           'ensure_splits', 'prefix_noise', 'asr_corrupt', 'read_jsonl']
