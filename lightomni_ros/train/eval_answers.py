# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni eval answers``: the memory pass, the answers and the speech decisions on the held-out split, end to end.

Each held-out stream is replayed through the offline facade (:class:`~lightomni_ros.core.agent.LightOmni`, no
perception, zero time scale) with the weights in ``models_dir``: every segment goes through
:meth:`ReflexEngine.decide` as the node runs it (reflex pass, heads and thresholds, the typed-text and wake-word
rules, retrieval from the real store, response, grounding check), then the sleep-time memory pass writes its Topic
into the real consolidation core (SQLite + FAISS, S_g, profiles, names), so every later question is answered from
what the memory adapter wrote, retrieved by the fused query. ASR-noisy copies of the addressed segments are decided
too (decisions only: they are not stored). Printed, and written with ``--json PATH``:

- ``memory_pass``: ``valid_json`` (memory passes whose reply parsed into a Topic), ``fact_recall`` and
  ``fact_precision`` (stored facts and remembered items against the generator's gold facts, by normalised keyword
  match), ``speaker_correct`` (a recalled fact names its subject; speech of an unseen speaker or a device stored as
  nobody's fact), ``unseen_as_person`` (device segments whose Topic states a fact naming a person in view),
  ``visual_replaced`` (descriptions of what was seen that the segment did not show, replaced by the rule's) and
  ``repaired`` (replies that were no JSON but whose complete fields were read; they do not count as valid JSON)
  ``second_readings`` (passes whose stored Topic is a beam reading kept on a second look, ``sleep.reread``),
  ``read_alone`` (passes that read statements no fact told of alone, ``sleep.untold``) and ``placed_by_rule``
  (passes that stored where a thing was put, read by rule, ``placement.with_placements``) and ``timed_by_rule`` (when
  an event is, ``schedule.with_schedule``); ``sleep_s``: seconds of sleep-time work per segment (its memory pass and
  consolidation, n / p50 / p95; the evaluation runs one thing at a time, so these are warm, uncontended figures);
- ``answers`` (questions to the robot): ``accuracy`` (answerable questions whose spoken reply holds every gold
  keyword and no superseded value), ``refusal`` (unanswerable questions answered "I don't know" / "I don't remember
  that"), ``grounded`` (replies whose content words all occur in the question or the retrieved memories, as
  written or as the robot says them, up to an inflection: "You come from Lisbon." from "<face_2> comes from
  Lisbon."; a quote's opening "From memory:" is a frame, not a claim; ``grounded_exact``: the same with every
  word as written, the figure reported before 2026-12-06's eighteenth round),
  ``prompt_echoes`` (spoken replies that copy the prompt), where the replies came from, and ``noisy`` (the ASR-noisy
  copies of the questions: ``accuracy`` over the answerable ones, ``confirmations``: replies that promise to keep
  what was said, as to a statement) and ``acknowledged`` (statements to keep, "Robot, remember that ...", confirmed
  as the generator's reply does);
- ``decisions``: ``speech_f1`` (the node's speak decision against the labels) and ``false_speech`` (how often it spoke
  over a radio or TV and over people talking to each other), per source;
- ``time_range``: at the end of each stream the robot is asked (typed) "what happened in the last N minutes?" for the
  last third and the last two thirds of it: ``in_window`` (questions whose QueryMemory entries all overlap the window
  the question names, read by the engine), ``summary_coverage`` (the window's gold facts the reply names) and
  ``generated`` (replies the generation adapter wrote, not the quoted events); ``time_range.today`` the same figures
  for "tell me what happened today." (the whole stream: more events than a summary names).

``--param backbone.memory_json_shape:=false`` (any ``backbone.*`` or ``response.*`` parameter) runs with one setting
changed, to measure what it does; ``run.params`` records it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import dataclasses
import json
import logging
import pathlib
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .templates import TEMPLATES

log = logging.getLogger('lightomni.train')


# -- scoring (pure functions, tested on hand-made cases) --------------------------------------------------------------
def norm(text: str) -> str:
    """Lower case, letters and digits only, single spaces (what keyword matching compares)."""
    return ' '.join(re.sub(r'[^a-z0-9]+', ' ', (text or '').lower()).split())


def has(text: str, keyword: str) -> bool:
    """Whether the normalised ``keyword`` occurs in ``text`` as whole words (its last one also in the plural).

    The plural: "painting watercolours" holds the keyword "watercolour" (the generator's own fact did not match it).
    """
    return bool(re.search(rf' {re.escape(norm(keyword))}(?:e?s)? ', f' {norm(text)} '))


def matches(text: str, keywords: Sequence[str]) -> bool:
    """Whether every keyword occurs in ``text`` (False without keywords)."""
    return bool(keywords) and all(has(text, k) for k in keywords)


@dataclass
class SegmentRun:
    """One held-out segment as the engine saw it: the record, the decision, its memories and the Topic."""

    record: dict[str, Any]
    speak: bool
    response: str = ''
    source: str = ''
    memories: list[str] = field(default_factory=list)       # texts the reply could draw on
    topic: Any = None                                         # TopicData of the memory pass (clean segments)
    notes: list[str] = field(default_factory=list)
    p_speech: float = 0.0
    seconds: float = 0.0      # the decision and its reply, warm (one model call at a time)
    shown: list[str] = field(default_factory=list)          # texts the response prompt showed (Decision.shown_ids)
    sleep_seconds: float = 0.0      # the sleep-time work after it: the memory pass and its consolidation


def memory_pass_metrics(runs: Sequence[SegmentRun]) -> dict[str, Any]:
    """The memory-pass figures over the passes (module docstring).

    valid_json, fact_recall, fact_precision, speaker_correct, unseen_as_person, visual_replaced: the share of the
    adapter's descriptions of what was seen that the segment did not show (replaced by the rule's), and repaired: the
    share of passes whose reply was no JSON but had complete fields (``sleep.salvage_fields``; not valid JSON),
    second_readings: the share whose Topic is a beam reading kept on a second look (``sleep.reread``), read_alone:
    the share that read statements alone (``sleep.untold``), placed_by_rule: the share that stored a placement read
    by rule (``placement.with_placements``), timed_by_rule: one that stored an event's time read by rule
    (``schedule.with_schedule``).
    """
    passes = [r for r in runs if r.topic is not None]
    valid = sum(r.topic.producer == 'memory-adapter' and not r.topic.repaired for r in passes)
    repaired = sum(bool(r.topic.repaired) for r in passes)
    replaced = sum(bool(r.topic.unseen_visual) for r in passes)
    second = sum(r.topic.reading > 0 for r in passes)
    alone = sum(r.topic.read_alone > 0 for r in passes)
    placed = sum(r.topic.placed > 0 for r in passes)
    timed = sum(r.topic.timed > 0 for r in passes)
    gold_n = recalled = pred_n = precise = 0
    speaker_ok = speaker_n = unseen_bad = 0
    for r in passes:
        gold = r.record.get('facts') or []
        pred = list(r.topic.semantic) + list(r.topic.remembered)
        names = r.record.get('names') or {}
        people = [*r.record['face_ids'], *(names.get(f, '') for f in r.record['face_ids'])]
        for g in gold:
            gold_n += 1
            hits = [p for p in pred if matches(p, g['keywords'])]
            if not hits:
                continue
            recalled += 1
            if g.get('subject'):
                # any stored fact that tells it of its subject: "<face_1> is called Tariq." is not judged by "Tariq
                # is allergic to gluten.", stored beside it, which holds the keyword "tariq" too
                speaker_n += 1
                speaker_ok += any(has(p, g['subject']) for p in hits)
        for p in pred:
            pred_n += 1
            precise += any(matches(p, g['keywords']) for g in gold)
        if r.record.get('source') == 'device':
            speaker_n += 1
            bad = any(has(p, who) for p in pred for who in people if who)
            speaker_ok += not bad
            unseen_bad += bad
    return {'passes': len(passes), 'valid_json': valid / max(1, len(passes)),
            'fact_recall': recalled / max(1, gold_n), 'fact_precision': precise / max(1, pred_n),
            'speaker_correct': speaker_ok / max(1, speaker_n), 'unseen_as_person': unseen_bad,
            'visual_replaced': replaced / max(1, valid + repaired), 'repaired': repaired / max(1, len(passes)),
            'second_readings': second / max(1, len(passes)), 'read_alone': alone / max(1, len(passes)),
            'placed_by_rule': placed / max(1, len(passes)), 'timed_by_rule': timed / max(1, len(passes)),
            'gold_facts': gold_n, 'stored_facts': pred_n,
            'sleep_s': seconds_at([r.sleep_seconds for r in passes])}


def uninflected(word: str) -> str:
    """``word`` without a possessive and its endings of inflection: "comes", "come" and "coming" read alike.

    Only what grammar adds is taken off (not the stem the answer checks compare, which keeps five letters): the
    figure says whether the reply's words were in the memories, not whether the checks let it through.
    """
    w = word.lower().split("'")[0]
    for ends in (('es', 's'), ('ing', 'ed')):       # "meetings" -> "meeting" -> "meet"
        end = next((e for e in ends if w.endswith(e) and len(w) - len(e) >= 3 and not w.endswith('ss')), '')
        w = w[:len(w) - len(end)]
    return w.rstrip('e') or w


def answer_metrics(runs: Sequence[SegmentRun]) -> dict[str, Any]:
    """accuracy, refusal, grounded, prompt_echoes and reply sources over the questions to the robot."""
    from ..core.reflex.answering import QUOTE
    from ..core.reflex.grounding import _PROMPT_ECHO, content_words, is_refusal, promises_to_keep, speakable

    qs = [r for r in runs if r.record.get('answer') and not r.record.get('noise')]
    noisy = [r for r in runs if r.record.get('answer') and r.record.get('noise')]
    noisy_answerable = [r for r in noisy if r.record['answer']['answerable']]
    told = [r for r in runs if not r.record.get('noise') and promises_to_keep(r.record.get('response') or '')]
    answerable = [r for r in qs if r.record['answer']['answerable']]
    unanswerable = [r for r in qs if not r.record['answer']['answerable']]
    correct = [r for r in answerable if matches(r.response, r.record['answer']['keywords'])
               and not any(has(r.response, w) for w in r.record['answer'].get('wrong', []))]
    refused = [r for r in unanswerable if is_refusal(r.response)]
    claims = [r for r in qs if r.response and not is_refusal(r.response)]
    grounded = exact = 0
    for r in claims:
        # a memory counts as written and as the robot says it (a face id as "a person", an episode as "I saw ...");
        # the quote's opening words are a frame, not a claim
        said = [content_words(m) | content_words(speakable(m, {})) for m in r.memories]
        known = content_words(r.record['query']).union(*said)
        claimed = content_words(r.response.removeprefix(QUOTE))
        exact += claimed <= known
        grounded += {uninflected(w) for w in claimed} <= {uninflected(w) for w in known}
    spoken = [r for r in runs if r.speak and r.response]
    echoes = sum(any(p in r.response.lower() for p in _PROMPT_ECHO) for r in spoken)
    by_source: dict[str, dict[str, int]] = {}
    for r in answerable:
        s = by_source.setdefault(r.source or 'silent', {'n': 0, 'correct': 0})
        s['n'] += 1
        s['correct'] += r in correct
    by_kind: dict[str, dict[str, int]] = {}
    for r in qs:
        info = r.record['answer']
        k = by_kind.setdefault(f'{info["kind"]}/{"answerable" if info["answerable"] else "unanswerable"}',
                               {'n': 0, 'ok': 0})
        k['n'] += 1
        k['ok'] += (r in correct) if r.record['answer']['answerable'] else (r in refused)
    return {'questions': len(qs), 'answerable': len(answerable), 'unanswerable': len(unanswerable),
            'accuracy': len(correct) / max(1, len(answerable)), 'refusal': len(refused) / max(1, len(unanswerable)),
            'grounded': grounded / max(1, len(claims)), 'grounded_exact': exact / max(1, len(claims)),
            'prompt_echoes': echoes, 'by_source': by_source,
            'by_kind': by_kind, 'latency_s': latency_by_source(spoken),
            # the same questions as speech recognition may garble them (decided, not stored): a confirmation ("Okay,
            # I will remember that.") to a question is the failure a listener notices first
            # statements to keep ("Robot, remember that ..."), answered as the generator answers them: with a
            # confirmation (the guard against confirming a question must not silence these)
            'acknowledged': sum(promises_to_keep(r.response) for r in told) / max(1, len(told)), 'told': len(told),
            'noisy': {'questions': len(noisy),
                      'accuracy': sum(matches(r.response, r.record['answer']['keywords'])
                                      for r in noisy_answerable) / max(1, len(noisy_answerable)),
                      'confirmations': sum(promises_to_keep(r.response) for r in noisy)}}


def seconds_at(values: Sequence[float]) -> dict[str, float]:
    """n, p50 and p95 of ``values`` (seconds, rounded to ms; zeros when there are none)."""
    import numpy as np

    if not values:
        return {'n': 0, 'p50': 0.0, 'p95': 0.0}
    return {'n': len(values), 'p50': round(float(np.percentile(values, 50)), 3),
            'p95': round(float(np.percentile(values, 95)), 3)}


def latency_by_source(spoken: Sequence[SegmentRun]) -> dict[str, dict[str, float]]:
    """Decision-to-reply seconds of the spoken replies per response source (p50, p95, n)."""
    by: dict[str, list[float]] = {}
    for r in spoken:
        by.setdefault(r.source or 'unknown', []).append(r.seconds)
    return {k: seconds_at(v) for k, v in sorted(by.items())}


def decision_metrics(runs: Sequence[SegmentRun], threshold: float | None = None) -> dict[str, Any]:
    """speech_f1 (and precision, recall) of the node's decision, false_speech over devices and overheard talk."""
    from ..core.reflex.config import LatentConfig
    from .eval_heads import prf

    threshold = LatentConfig().speech_threshold if threshold is None else threshold
    out: dict[str, Any] = dict(prf([r.speak for r in runs], [bool(r.record['speech']) for r in runs]))
    out['speech_f1'] = out.pop('f1')
    quiet = [r for r in runs if not r.record['speech'] and r.record.get('source') in ('device', 'person')]
    out['false_speech'] = sum(r.speak for r in quiet) / max(1, len(quiet))
    for src in ('device', 'person', 'none'):
        rows = [r for r in runs if not r.record['speech'] and r.record.get('source') == src]
        out[f'false_speech_{src}'] = sum(r.speak for r in rows) / max(1, len(rows))
    addressed = [r for r in runs if r.record['speech']]
    out['missed_by_kind'] = {}
    for r in addressed:
        if not r.speak:
            k = f'{r.record["kind"]}/{r.record.get("noise") or "clean"}'
            out['missed_by_kind'][k] = out['missed_by_kind'].get(k, 0) + 1
    # where a rule overrode the head (typed text, the robot called by name), and what the head alone would decide
    out['rule_overrides_by'] = {rule: sum(any(f'speech by {rule} rule' in n for n in r.notes) for r in runs)
                                for rule in ('typed-text', 'wake-word')}
    out['rule_overrides'] = sum(out['rule_overrides_by'].values())
    out['heads_only_speech_f1'] = prf([r.p_speech >= threshold for r in runs],
                                      [bool(r.record['speech']) for r in runs])['f1']
    out['segments'] = len(runs)
    return out


@dataclass
class WindowRun:
    """One time-window question ("what happened in the last 6 minutes?") as the engine answered it."""

    question: str
    start: float                      # the window the question names (epoch seconds)
    end: float
    found: bool                       # the engine read a window from the question (a note says so)
    spans: list[tuple[float, float]]  # spans of the entries QueryMemory returned for it
    reply: str
    events: list[list[str]]           # gold facts of the window: keyword lists (one event each)
    source: str = ''                  # the Action's response_source


def time_range_metrics(windows: Sequence[WindowRun]) -> dict[str, Any]:
    """in_window (questions whose returned entries all overlap the window) and summary_coverage (gold events named).

    A question whose window the engine did not read, or that returned no entry, is not in the window. An event is
    covered when the reply holds every keyword of one of its gold facts.
    """
    ok = sum(w.found and bool(w.spans) and all(e >= w.start and s <= w.end for s, e in w.spans) for w in windows)
    with_events = [w for w in windows if w.events]
    cover = [sum(any(matches(w.reply, kw) for kw in ev) for ev in w.events) / len(w.events) for w in with_events]
    return {'questions': len(windows), 'in_window': ok / max(1, len(windows)),
            'summary_coverage': sum(cover) / max(1, len(cover)), 'windows_read': sum(w.found for w in windows),
            'questions_with_events': len(with_events),
            'generated': sum(w.source == 'generated' for w in windows) / max(1, len(windows))}


SECTIONS: dict[str, Callable[[Sequence[SegmentRun]], dict[str, Any]]] = {
    'memory_pass': memory_pass_metrics, 'answers': answer_metrics, 'decisions': decision_metrics}


# -- the run ------------------------------------------------------------------------------------------------------
class RecordingMemory:
    """A memory client that keeps what the last search returned (the memories a reply could draw on)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.last: list[str] = []
        self.refs: list[str] = []          # entry refs ("episodic:12") of the last search
        self.texts: dict[str, str] = {}    # ref -> text of everything the last search returned

    def query(self, q: Any) -> Any:
        """Forward and remember the texts."""
        got = self.inner.query(q)
        if q.k_semantic or q.k_episodic:      # a search; a lookup of profiles (sleep-time naming) keeps it
            self.texts = {m.ref: m.text for m in got.items}
            self.last = [m.text for m in got.items]
            self.refs = [m.ref for m in got.semantic + got.episodic]
        return got

    def people(self):  # noqa: ANN201
        """Forward."""
        return self.inner.people()


def segment_input(rec: dict[str, Any], sid: int):
    """The SegmentInput of a held-out record."""
    from .pairs import segment_of
    return segment_of(rec, sid)


def run_stream(engine: Any, records: list[dict[str, Any]], memory_dir: pathlib.Path, configs: Any = None,
               progress: Any = None, windows: list[WindowRun] | None = None) -> list[SegmentRun]:
    """Replay one stream's segments through the facade; ASR-noisy copies are decided without being stored.

    With ``windows`` (a list), the stream's time-window questions are asked at its end and appended to it.
    """
    from ..core.agent import AgentConfigs, LightOmni

    engine.recent.clear()
    engine.prefixes.invalidate()     # S_g versions restart with every new store
    agent = LightOmni(memory_dir, configs or AgentConfigs(), perception=False, engine=engine,
                      embedder=engine.embedder, time_scale=0.0)
    rec_mem = RecordingMemory(engine.memory)
    engine.memory = rec_mem
    runs: list[SegmentRun] = []
    try:
        sid = 0
        for rec in records:
            sid += 1
            seg = segment_input(rec, sid)
            rec_mem.last, rec_mem.texts = [], {}
            if rec['noise']:
                recent = list(engine.recent)
                t0 = time.perf_counter()
                d = agent.reflex.decide(seg)       # the node's thresholds and retrieval sizes
                took = time.perf_counter() - t0
                engine.recent.clear()
                engine.recent.extend(recent)
                runs.append(SegmentRun(rec, d.speak, d.response if d.speak else '', d.response_source if d.speak
                                       else '', list(rec_mem.last) + _recent(engine), None, list(d.notes),
                                       d.p_speech, took, _shown(d.shown_ids, rec_mem, engine)))
            else:
                agent.advance(seg.start)
                t0 = time.perf_counter()
                act = agent.answer(seg)
                took = time.perf_counter() - t0
                memories = list(rec_mem.last) + _recent(engine)
                shown = _shown(act.shown_ids, rec_mem, engine)
                t0 = time.perf_counter()
                ev = agent.advance(seg.end + 1.0)
                slept = time.perf_counter() - t0
                topic = next((t for _, t in ev.topics if t.segment_id == sid), None)
                runs.append(SegmentRun(rec, act.speak, act.response, act.response_source, memories, topic,
                                       list(act.notes), act.p_speech, took, shown, slept))
            if progress is not None:
                progress.update(1)
        if windows is not None and records:
            windows += ask_windows(agent, rec_mem, [r for r in records if not r['noise']], sid)
    finally:
        agent.close()
    return runs


def _recent(engine: Any) -> list[str]:
    return [r[0].text for r in engine.recent]


def _shown(refs: Sequence[str], rec_mem: RecordingMemory, engine: Any) -> list[str]:
    """The texts of the memories a response prompt showed (the search's, or recent interactions)."""
    texts = {**rec_mem.texts, **{m.ref: m.text for m, _, _ in engine.recent}}
    return [texts.get(ref, ref) for ref in refs]


def window_questions(records: Sequence[dict[str, Any]]) -> list[tuple[str, float, float]]:
    """(question, asked at, window start) after a stream: its last third, its last two thirds (in minutes), and today.

    Each is worded by a held-out template no training pair uses (train.windows); "today" starts at midnight UTC, the
    streams' zone.
    """
    minutes_ask, day_ask = TEMPLATES['heldout']['ask_window'][:2]
    first, last = records[0]['start'], records[-1]['end']
    span_min = (last - first) / 60.0
    at = last + 5.0
    out = []
    for frac in (1 / 3, 2 / 3):
        minutes = max(1, round(span_min * frac))
        out.append((f'Robot, {minutes_ask.format(n=minutes)}', at, at + 3.0 - minutes * 60.0))
    midnight = _dt.datetime.fromtimestamp(at, _dt.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    out.append((f'Robot, {day_ask}', at, midnight.timestamp()))
    return out


def ask_windows(agent: Any, rec_mem: RecordingMemory, records: Sequence[dict[str, Any]], sid: int) -> list[WindowRun]:
    """Ask the stream's window questions (typed, so they are answered) and score what came back."""
    from ..core.memory.store import KIND_EPISODIC, KIND_SEMANTIC
    from ..core.reflex.types import SegmentInput

    entries = agent.memory.memory.entries
    out = []
    for text, at, start in window_questions(records):
        sid += 1
        end = at + 3.0
        agent.advance(at)
        rec_mem.refs = []
        act = agent.answer(SegmentInput(segment_id=sid, start=at, end=at + 3.0, typed_text=text))
        spans = []
        for ref in rec_mem.refs:
            kind, _, num = ref.partition(':')
            if kind in ('semantic', 'episodic') and num.isdigit():
                got = entries.get(KIND_SEMANTIC if kind == 'semantic' else KIND_EPISODIC, [int(num)])
                spans += [(e.start, e.end) for e in got.values()]
        events = [[f['keywords'] for f in r.get('facts') or [] if f.get('keywords')] for r in records
                  if r['end'] >= start and r['start'] <= end]
        out.append(WindowRun(question=text, start=start, end=end, found=any(n.startswith('window:') for n in act.notes),
                             spans=spans, reply=act.response, events=[e for e in events if e],
                             source=act.response_source))
        agent.advance(at + 4.0)
    return out


#: the engine's sections a run may set (``--param``): how the memory pass reads, how replies are made
PARAM_SECTIONS = ('backbone', 'response')


def parse_params(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``section.name:=value`` items -> {section: {name: value}}, values read as YAML ("false" -> False).

    Only :data:`PARAM_SECTIONS`; a name the section does not have is refused when the engine is built.
    """
    import yaml

    out: dict[str, dict[str, Any]] = {}
    for item in items:
        name, sep, value = item.partition(':=')
        section, dot, key = name.partition('.')
        if not sep or not dot or section not in PARAM_SECTIONS or not key:
            raise ValueError(f'an engine parameter is one of {"/".join(PARAM_SECTIONS)}.NAME:=VALUE '
                             f'(as in config/reflex.yaml), got {item!r}')
        out.setdefault(section, {})[key] = yaml.safe_load(value)
    return out


def evaluate(split_dir: str | pathlib.Path, models_dir: str | pathlib.Path, streams: int = 0, threads: int = 0,
             noisy: Sequence[str] = ('asr',), engine: Any = None, configs: Any = None, progress: bool = True,
             pack: str = '', skip: int = 0, params: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Replay the held-out streams (``streams`` of them after the first ``skip``; 0: all); return every figure.

    ``params`` ({section: {name: value}}, :func:`parse_params`) sets the engine's backbone and response parameters
    for the run (the shipped defaults otherwise).
    """
    from tqdm import tqdm

    from ..core.config import from_dict
    from ..core.reflex.config import BackboneConfig, ResponseConfig
    from ..core.reflex.engine import EngineConfigs, ReflexEngine
    from .synth import load_split

    split = load_split(split_dir)
    by_stream: dict[int, list[dict[str, Any]]] = {}
    for ex in split['examples']:
        if not ex['noise'] or ex['noise'] in noisy:
            by_stream.setdefault(ex['stream'], []).append(ex)
    chosen = sorted(by_stream)[skip:skip + streams if streams else None]
    if engine is None:
        from .train import load_text_embedder

        # the memory core's embedder: the facade's consolidation indexes with it, the engine reuses it
        params = params or {}
        backbone = from_dict(BackboneConfig, {'device': 'cpu', 'threads': threads, 'pack': pack,
                                              **params.get('backbone', {})})
        engine = ReflexEngine(EngineConfigs(backbone=backbone, response=from_dict(ResponseConfig,
                                                                                  params.get('response')),
                                            models_dir=str(models_dir)), embedder=load_text_embedder())
    total = sum(len(by_stream[s]) for s in chosen)
    t0 = time.time()
    runs: list[SegmentRun] = []
    windows: list[WindowRun] = []
    with tempfile.TemporaryDirectory(prefix='lightomni_eval_answers_') as tmp, \
            tqdm(total=total, desc='held-out streams', disable=not progress) as bar:
        for s in chosen:
            runs += run_stream(engine, by_stream[s], pathlib.Path(tmp) / f'stream_{s}', configs, bar, windows)
    res: dict[str, Any] = {name: fn(runs) for name, fn in SECTIONS.items()}
    # the last N minutes (the figures) apart from today: a whole day has more events than a summary names
    day = [w for w in windows if w.question.endswith(TEMPLATES['heldout']['ask_window'][1])]
    res['time_range'] = time_range_metrics([w for w in windows if w not in day]) | {'today': time_range_metrics(day)}
    res['run'] = {'streams': len(chosen), 'stream_ids': chosen, 'segments': len(runs), 'noisy_kinds': list(noisy),
                  'params': {k: dict(v) for k, v in (params or {}).items()},
                  'seconds': round(time.time() - t0, 1), 'adapters': engine.adapters.describe(),
                  'heads': engine.heads.source, 'backbone': engine.backbone.describe().get('name')}
    res['_runs'] = runs
    res['_windows'] = windows
    return res


def print_report(res: dict[str, Any]) -> None:
    """The figures as a table, with the issue's targets."""
    targets = {'memory_pass.valid_json': '>= 0.98', 'memory_pass.fact_recall': '>= 0.85',
               'memory_pass.fact_precision': '>= 0.9', 'memory_pass.speaker_correct': '>= 0.95',
               'memory_pass.unseen_as_person': '0', 'answers.accuracy': '>= 0.85', 'answers.refusal': '>= 0.8',
               'answers.grounded': '>= 0.95', 'answers.prompt_echoes': '0', 'decisions.speech_f1': '>= 0.9',
               'decisions.false_speech': '<= 0.05', 'time_range.in_window': '>= 0.85',
               'time_range.summary_coverage': '>= 0.6'}
    r = res['run']
    print(f'held-out: {r["streams"]} streams, {r["segments"]} segments ({r["seconds"]:.0f} s); backbone '
          f'{r["backbone"]}')
    for key, target in targets.items():
        sec, name = key.split('.')
        v = res[sec][name]
        print(f'  {key:<32} {v if isinstance(v, int) else f"{v:.3f}":>8}   target {target}')
    a, d = res['answers'], res['decisions']
    m = res['memory_pass']
    print(f'  memory pass: {m["visual_replaced"]:.3f} of the descriptions of what was seen were not what the segment '
          f'showed (the rule\'s used instead); sleep-time work a segment (the pass and its consolidation) p50 '
          f'{m["sleep_s"]["p50"]:.3f} p95 {m["sleep_s"]["p95"]:.3f} s (n={m["sleep_s"]["n"]})')
    print(f'  questions: {a["answerable"]} answerable, {a["unanswerable"]} unanswerable; replies by source '
          f'{json.dumps(a["by_source"])}; grounded word for word (no inflection taken off) {a["grounded_exact"]:.3f}')
    print('  reply latency (decision + reply, warm, s): ' + ', '.join(
        f'{k} p50 {v["p50"]:.3f} p95 {v["p95"]:.3f} (n={v["n"]})' for k, v in a['latency_s'].items()))
    n = a['noisy']
    print(f'  the {n["questions"]} ASR-noisy copies: accuracy {n["accuracy"]:.3f}, answered with a confirmation '
          f'{n["confirmations"]}; statements to keep confirmed {a["acknowledged"]:.3f} (of {a["told"]})')
    print(f'  speech precision {d["precision"]:.3f} recall {d["recall"]:.3f}; false speech on devices '
          f'{d["false_speech_device"]:.3f}, on people talking {d["false_speech_person"]:.3f}, '
          f'on silence {d["false_speech_none"]:.3f}; rules overrode the head {json.dumps(d["rule_overrides_by"])} '
          f'(the head alone: speech F1 {d["heads_only_speech_f1"]:.3f})')
    t, day = res['time_range'], res['time_range']['today']
    print(f'  time windows: replies written by the model {t["generated"]:.3f}; "what happened today?": entries in the '
          f'window {day["in_window"]:.3f}, events named {day["summary_coverage"]:.3f}, written by the model '
          f'{day["generated"]:.3f} (of {day["questions"]})')
    wrong = {k: v for k, v in a['by_kind'].items() if v['ok'] < v['n']}
    if wrong:
        print('  questions by kind (right / asked): ' + ', '.join(f'{k} {v["ok"]}/{v["n"]}' for k, v in wrong.items()))


def longer_heldout(out_dir: pathlib.Path, heldout: Any, streams: int) -> pathlib.Path:
    """The held-out split grown to ``streams`` streams, in its own folder under ``out_dir`` (generated unless there).

    Each stream draws from its own seed, so the first streams are those of the shipped split (the same people,
    segments and questions) and the rest are new: data no one has looked at, for a later round's unseen check. The
    shipped split's folder is left as it is (``eval heads`` reads all of it).
    """
    from .synth import SPLIT_SEEDS, generate, write

    folder = out_dir / f'heldout-{streams}'
    meta = folder / 'heldout' / 'meta.json'
    if meta.is_file() and json.loads(meta.read_text()).get('config', {}).get('streams') == streams:
        return folder / 'heldout'
    cfg = dataclasses.replace(heldout, streams=streams)
    return write(generate('heldout', SPLIT_SEEDS['heldout'], cfg), folder)


def register_area(areas: argparse._SubParsersAction) -> None:
    """Add ``eval answers``."""
    a = areas.add_parser('answers', help='memory pass, answers and speech decisions on the held-out split, end to end',
                         description=__doc__.splitlines()[0])
    a.add_argument('--models-dir', default=None, help='weights to evaluate (default: the shipped models/ folder)')
    a.add_argument('--data', default=None, help='held-out split folder (default: regenerate it in the cache)')
    a.add_argument('--json', dest='json_path', default=None, help='write the figures to this JSON file')
    a.add_argument('--records', default=None, metavar='JSONL',
                   help='write every segment (transcript, decision, reply, the memories its prompt showed, Topic) '
                        'for error analysis')
    a.add_argument('--streams', type=int, default=0, help='evaluate only the first N held-out streams (0: all)')
    a.add_argument('--skip-streams', type=int, default=0, metavar='N',
                   help='start after the first N held-out streams (a check on streams not looked at before)')
    a.add_argument('--heldout-streams', type=int, default=0, metavar='N',
                   help='grow the held-out split to N streams (the first ones unchanged, the rest never looked at; '
                        'kept in its own cache folder); 0: the shipped split')
    a.add_argument('--threads', type=int, default=0, help='torch CPU threads (0: torch default)')
    a.add_argument('--pack', default='', help='text backbone pack in the models dir (e.g. gemma-3-270m; default: '
                                              'the first one found, SmolLM2)')
    a.add_argument('--param', nargs='*', default=[], metavar='SECTION.NAME:=VALUE',
                   help='set an engine parameter for this run, as config/reflex.yaml names it (backbone.* or '
                        'response.*), e.g. backbone.memory_json_shape:=false')
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate, print, write JSON."""
    from .eval_heads import default_models_dir
    from .synth import default_data_dir, ensure_splits
    from .train import default_synth_configs

    train_cfg, heldout_cfg = default_synth_configs()
    try:
        params = parse_params(args.param)
    except ValueError as e:
        print(f'error: {e}', file=sys.stderr)
        return 2
    if args.data:
        data = args.data
    elif args.heldout_streams and args.heldout_streams != heldout_cfg.streams:
        data = longer_heldout(default_data_dir(), heldout_cfg, args.heldout_streams)
    else:
        data = ensure_splits(default_data_dir(), train_cfg, heldout_cfg)['heldout']
    res = evaluate(data, args.models_dir or str(default_models_dir(args.pack)), args.streams, args.threads,
                   pack=args.pack, skip=args.skip_streams, params=params)
    runs, windows = res.pop('_runs'), res.pop('_windows')
    print_report(res)
    if args.records:
        pathlib.Path(args.records).write_text(''.join(json.dumps({
            'id': r.record['id'], 'kind': r.record['kind'], 'source': r.record['source'], 'noise': r.record['noise'],
            'text': r.record['query'], 'speech': r.record['speech'], 'speak': r.speak, 'p_speech': round(r.p_speech, 4),
            'response': r.response,
            'response_source': r.source, 'gold_response': r.record.get('response', ''),
            'topic': None if r.topic is None else {'semantic': r.topic.semantic, 'remembered': r.topic.remembered,
                                                   'visual': r.topic.visual, 'producer': r.topic.producer,
                                                   'dropped': r.topic.dropped, 'problem': r.topic.problem,
                                                   'reading': r.topic.reading, 'read_alone': r.topic.read_alone,
                                                   'placed': r.topic.placed, 'timed': r.topic.timed,
                                                   'repaired': r.topic.repaired},
            'gold_topic': r.record.get('topic'), 'gold_facts': r.record.get('facts') or [],
            'gold_answer': r.record.get('answer'), 'notes': r.notes,
            'memories': r.memories, 'shown': r.shown}) + '\n' for r in runs) + ''.join(json.dumps({
                'kind': 'window_question', 'text': w.question, 'response': w.reply, 'response_source': w.source,
                'gold_events': w.events, 'window_read': w.found}) + '\n' for w in windows))
        print(f'  records: {args.records}')
    if args.json_path:
        pathlib.Path(args.json_path).write_text(json.dumps(res, indent=1, default=float) + '\n')
        print(f'  json: {args.json_path}')
    return 0


__all__ = ['evaluate', 'memory_pass_metrics', 'answer_metrics', 'decision_metrics', 'time_range_metrics',
           'SECTIONS', 'WindowRun', 'window_questions', 'SegmentRun', 'norm', 'matches', 'register_area', 'run']
