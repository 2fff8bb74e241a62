# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""(input, target) pairs of the memory and generation adapters, from the records of the streams.

The generation adapter reads what retrieval would give it at run time: the profiles of the people involved, and the
``response.max_memories`` entries closest to the question among everything stored so far (semantic facts, episodic
events, recent interactions), rendered as the store renders them. "Closest" is simulated by word overlap with a
little noise, and the gold entry is always among them when there is one (the fused query finds it in the top four
most of the time; ``lightomni eval heads``); an unanswerable question gets the closest entries that do not answer
it, so the adapter learns to refuse rather than to paraphrase whatever it reads. Old values that a correction
superseded are often among the closest (they share the question's words); the answer gives the new one.

The run-time memory pass misses facts (``lightomni eval answers``: fact recall 0.6-0.7), and then the words that
answer a question live only in the episode of the segment that said them ('saw Kwame talking; heard "I dropped my
laptop in the green basket"'). So in a share of the pairs (:data:`EPISODE_ONLY`) the gold fact is replaced by its
episode, and the target stays the direct answer: the adapter learns to answer from what was heard, in the robot's
words, instead of refusing whenever memory holds no clean sentence. These draws come from their own generator, so
the streams themselves (segments, labels, held-out split) do not change.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

from ..core.reflex.attribution import PERSON_ID
from ..core.reflex.config import ResponseConfig
from ..core.reflex.grounding import content_words
from ..core.reflex.sleep import CALLED_FACT

#: segment fields an adapter pair carries (what :func:`segment_of` reads back)
SEGMENT_FIELDS = ('kind', 'start', 'end', 'face_ids', 'speaker_face', 'voice', 'visual_tags', 'transcript',
                  'typed_text', 'names')
#: share of the answerable pairs whose gold fact is shown only as the episode that heard it
EPISODE_ONLY = 0.5


def context(st: Any, said: Any, question: str, gold: int | None, rng: random.Random,
            stand_in: random.Random | None = None) -> list[dict[str, str]]:
    """The memories retrieval would give the response to ``question`` at this point of the stream.

    ``stand_in`` draws whether the gold fact is shown as its episode instead (never when None).
    """
    k = ResponseConfig().max_memories
    words = content_words(question)
    cands: list[tuple[float, dict[str, str], list[str]]] = []
    for i, m in enumerate(st.memories):
        if i == gold:
            continue
        text = m['text']
        score = len(words & content_words(text)) / math.sqrt(1 + len(content_words(text))) + 0.3 * rng.random()
        cands.append((score, {'ref': f'{m["kind"]}:{i}', 'text': st.rendered(i)}, m['face_ids']))
    for j, (speaker, text, verb) in enumerate(st.recent):
        score = len(words & content_words(text)) / math.sqrt(1 + len(content_words(text))) + 0.3 * rng.random()
        cands.append((score, {'ref': f'recent:{j}', 'text': f'{speaker} {verb}: {text}'}, []))
    cands.sort(key=lambda c: -c[0])
    chosen = cands[:k - 1 if gold is not None else k]
    if gold is not None:
        m = st.memories[gold]
        shown = gold
        if stand_in is not None and m.get('episode') is not None and stand_in.random() < EPISODE_ONLY:
            shown = m['episode']
        at = rng.randrange(len(chosen) + 1)     # drawn as before: the stream's own draws never change
        if shown != gold:     # the episode may be among the closest already: shown once, where the gold goes
            at -= sum(c[1]['ref'] == f'episodic:{shown}' for c in chosen[:at])
            chosen = [c for c in chosen if c[1]['ref'] != f'episodic:{shown}']
        chosen.insert(at, (0.0, {'ref': f'{st.memories[shown]["kind"]}:{shown}', 'text': st.rendered(shown)},
                           m['face_ids']))
    faces = list(dict.fromkeys([p.face for p in said.present] + [f for _, _, fs in chosen for f in fs]))
    profiles = [{'ref': f'profile:{f}', 'text': f'{f} is {st.names[f]}'} for f in faces if f in st.names]
    return profiles + [item for _, item, _ in chosen]


def segment_of(ex: dict[str, Any], sid: int = 0):
    """The SegmentInput of a synthesized example (or adapter pair)."""
    from ..core.reflex.types import SegmentInput
    from ..core.segment import SpeakerTurn

    start, end, said = float(ex.get('start', 0.0)), float(ex.get('end', 0.0)), ex.get('transcript', '')
    # the voice perception named the unseen or unsingled speaker by: one turn over the whole segment
    turns = [SpeakerTurn(start=0.0, end=max(0.0, end - start), voice_id=ex['voice'], text=said)] \
        if ex.get('voice') and said.strip() and not ex.get('typed_text') else []
    return SegmentInput(segment_id=sid, start=start, end=end, transcript=said, typed_text=ex.get('typed_text', ''),
                        face_ids=list(ex.get('face_ids', [])), visual_tags=list(ex.get('visual_tags', [])),
                        speaker_face=ex.get('speaker_face', ''), turns=turns)


def speaker_by_id(ex: dict[str, Any]) -> dict[str, Any]:
    """``ex``'s memory target with the speaker named by their id in the facts ("<face_0> plays basketball.").

    The pass copies the id from the segment's "<face_0> said: ..." line, and the rules write the name memory knows or
    the segment gave (``sleep.by_name``): the small adapter misspelt rare names it had to copy ("Basketball" for
    Barack) or left the fact out. Naming facts and facts about anyone else keep their words.
    """
    topic = ex['topic']
    who = segment_of(ex).speaker
    named = {**ex['names'], **dict(m.groups() for m in map(CALLED_FACT.match, topic['semantic']) if m)}
    name = named.get(who, '') if PERSON_ID.fullmatch(who) else ''
    if not name:
        return topic

    def by_id(facts: list[str]) -> list[str]:
        return [f if CALLED_FACT.match(f) else re.sub(rf'\b{re.escape(name)}\b', who, f) for f in facts]
    return topic | {'semantic': by_id(topic['semantic']), 'remembered': by_id(topic['remembered'])}


def memory_pairs(examples: list[dict[str, Any]], idle_fraction: float, rng: random.Random,
                 unsingled: float = 0.0, copy_rng: random.Random | None = None,
                 voice_heard: float = 0.8) -> list[dict[str, Any]]:
    """One (segment -> memory JSON) pair per clean segment with words, and a fraction of the silent ones.

    The target names the speaker by id (:func:`speaker_by_id`); ``stored`` is what memory keeps of it after the
    rules (names). A segment also said other ways (``restated``, restate module) gives a pair per wording with the
    same target. A share ``unsingled`` of the statements that tell of others or of things (:func:`tells_of_others`)
    gives one more pair per wording, as heard from nobody seen talking (:func:`unsingled_copy`, drawn by
    ``copy_rng``), and half that share of the radio and TV heard with nobody in view one more as heard beside people
    (:func:`in_company_copy`), so that neither the voice nor the company decides alone what is kept.
    """
    out = []
    for ex in examples:
        if ex['noise']:
            continue
        if not (ex['transcript'] or ex['typed_text']) and rng.random() >= idle_fraction:
            continue
        pair = {f: ex[f] for f in SEGMENT_FIELDS} | {
            'target': speaker_by_id(ex), 'facts': ex['facts'], 'source': ex['source'],
            'stored': {k: ex['topic'][k] for k in ('semantic', 'remembered')}}
        for said in [pair] + [pair | other for other in ex.get('restated', [])]:
            out.append(said)
            if copy_rng is not None and tells_of_others(said) and copy_rng.random() < unsingled:
                out.append(unsingled_copy(said, copy_rng, voice_heard))
            if copy_rng is not None and broadcast_alone(said) and copy_rng.random() < unsingled / 2:
                out.append(in_company_copy(said, copy_rng))
    return out


def tells_of_others(pair: dict[str, Any]) -> bool:
    """Whether ``pair`` is a statement among people that tells facts, none of them about its speaker.

    Perception singled the speaker out; who said it does not change what memory keeps.
    """
    who = pair['speaker_face']
    if pair['source'] != 'person' or not who or pair['typed_text'] or len(pair['face_ids']) < 2:
        return False
    facts = pair['target']['semantic'] + pair['target']['remembered']
    name = pair['names'].get(who, '')
    return bool(facts) and not any(who in f or (name and re.search(rf'\b{re.escape(name)}\b', f)) for f in facts) \
        and all(f.get('subject') not in (who, name) for f in pair['facts'])


def unsingled_copy(pair: dict[str, Any], rng: random.Random, voice_heard: float) -> dict[str, Any]:
    """``pair`` as perception gives it when nobody is seen talking: said by a voice of the registry or by "someone".

    Most speech among people in view comes with its speaker singled out, so the statements the memory pass saw from a
    voice nobody was seen with were mostly first-person ones, which name nobody memory could keep them of; it learnt
    to keep nothing from such a voice, also where the words told of someone by name or of a thing.
    """
    voice = f'<voice_{rng.randint(1, 4)}>' if rng.random() < voice_heard else ''
    target = pair['target'] | {'visual': pair['target']['visual'].replace(' talking', '', 1)}
    return pair | {'speaker_face': '', 'voice': voice, 'target': target}


def broadcast_alone(pair: dict[str, Any]) -> bool:
    """Whether ``pair`` is a radio or TV heard with nobody in view."""
    return pair['source'] == 'device' and not pair['face_ids'] and bool(pair['transcript'])


def in_company_copy(pair: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``pair`` (:func:`broadcast_alone`) as heard with one to three people in view, none of them talking.

    The copies of :func:`unsingled_copy` teach the pass to keep what a voice nobody was seen with tells; these keep
    the other half in view: a TV the household watches tells the news, nothing memory keeps as a fact.
    """
    faces = rng.sample([f'<face_{i}>' for i in range(1, 6)], rng.randint(1, 3))
    tags = pair['target']['visual'].split('; ', 1)[1:]
    visual = '; '.join([', '.join(pair['names'].get(f) or f for f in faces)] + tags)
    return pair | {'face_ids': faces, 'target': pair['target'] | {'visual': visual}}


def generation_pairs(examples: list[dict[str, Any]], probes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One (question + memories + S_g -> reply) pair per clean segment the robot answers, and per probe.

    A question also asked another way (``reworded``, restate module) gives a second pair with the same memories and
    reply, right after the first.
    """
    out = []
    for ex in examples + probes:
        if ex.get('noise') or not ex.get('response'):
            continue
        pair = {f: ex[f] for f in SEGMENT_FIELDS if f in ex} | {'kind': ex.get('kind', ''), 'sg': ex['sg'],
                                                                'memories': ex['context'], 'target': ex['response'],
                                                                'answer': ex.get('answer')}
        if ex.get('window'):        # a question about a span of time reads its events instead of S_g
            pair['window'] = ex['window']
        out.append(pair)
        if ex.get('reworded'):
            out.append(pair | ex['reworded'])
    return out


__all__ = ['context', 'memory_pairs', 'segment_of', 'speaker_by_id', 'generation_pairs', 'tells_of_others',
           'unsingled_copy', 'broadcast_alone', 'in_company_copy', 'SEGMENT_FIELDS']
