# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The reflex engine: one backbone, three adapters, the latent heads and the caches behind every model call.

Passes of one segment (all sharing its cached features and the per-adapter S_g prefix cache):
reflex pass (reaction adapter) -> retrieval -> response (generation adapter) -> later, in sleep time, the memory
pass (memory adapter) that writes the Topic. A user pass pre-empts sleep-time work between model calls.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime as _dt
import logging
import threading
import time
import zoneinfo
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch

from ..embedding import EmbedderMismatch, EmbeddingConfig, TextEmbedder, embedder_id, text_embedder
from ..models import ModelResolver
from ..summary import MERGE, PROFILE, SummaryRequest, SummaryResult
from ..text import clipped, fmt_time, introduced_name, introduced_other, named_in, names_person
from ..timeparse import TimeWindow, find_window
from ..topic import TopicData
from . import generation as gen
from . import prompts as P
from .adapters import AdapterSet, find_trained
from .addressing import AddressGate, calls_other, calls_robot_back, wake_words
from .backbone import Backbone, Int8Weights, Part, assemble, cache_kwargs, load_backbone
from .cache import FeatureCache, PrefixCache, PrefixEntry, copy_cache, crop_to
from .config import (AdapterConfig, BackboneConfig, CacheConfig, ExportConfig, LatentConfig, PruningConfig,
                     ResponseConfig)
from .answering import (DONT_KNOW, UNANSWERED, answering, confirmation, extractive_answer, false_reminder,
                        in_own_voice, last_turn, last_words, leaves_out, of_asker, misattributed, newest_telling,
                        of_others, off_topic, one_source, unanswered_claim, unfounded_refusal, unquoted, words_of_asked)
from .grounding import (NO_ANSWER, asks, asks_to_keep, content_words, holds_only_a_question, is_quote_question,
                        is_refusal, opens_refusal, promises_to_keep, prose_problem, quoting_within, reply_problem,
                        unsupported)
from .jsonshape import keeper
from .latent import LatentHeads, fused_query, heads_embedder
from .people import people_answer, people_window, who_am_i
from .placement import misplaced, placing_within
from .pruning import PruneResult, prune
from .recall import is_summary_question, summary_answer, window_context, window_events
from .retrieval import MemoryClient, MemoryQuery, NoMemory
from .sleep import (Preemption, alone_voices, better_reading, by_name, distinct, fallback_topic, find_remembered,
                    find_reminders, introductions, memory_opening, one_sentence, parse_json_object, reread,
                    tells, topic_from_reply, untold)
from .spelling import misspelled_name, unknown_person
from .streaming import ChunkSink, ReplyStream
from .types import (Decision, MemoryItem, PrefixWarmup, ReflexOutput, ResponsePrompt, Retrieved, SegmentInput,
                    StateNode)

log = logging.getLogger('lightomni.reflex')
#: share of a model summary's content words that may be absent from its texts (paraphrase: "met", "discussed")
SUMMARY_NEW_WORDS = 0.25
#: prefix kinds that do not read S_g (:meth:`ReflexEngine.prefix_text`)
_SG_FREE = ('memory', 'summary')


@dataclass
class EngineConfigs:
    """Every config the engine reads."""

    backbone: BackboneConfig = field(default_factory=BackboneConfig)
    adapters: AdapterConfig = field(default_factory=AdapterConfig)
    latent: LatentConfig = field(default_factory=LatentConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    pruning: PruningConfig = field(default_factory=PruningConfig)
    export: ExportConfig = field(default_factory=ExportConfig)
    models_dir: str = ''
    response: ResponseConfig = field(default_factory=ResponseConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)


def zone(name: str) -> _dt.tzinfo | None:
    """The zone called ``name`` (None: this machine's zone, also for a name this machine does not know)."""
    if not name:
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        log.warning('unknown time zone %r from the global state; reading times in the system zone', name)
        return None


def check_heads_embedder(path: Any, embedder: TextEmbedder) -> None:
    """Refuse heads whose projection was trained against another text embedder (it would project into noise)."""
    trained_with, dim = heads_embedder(path)
    mine = embedder_id(embedder)
    if (trained_with and trained_with != mine) or (dim and dim != embedder.dim):
        raise EmbedderMismatch(
            f'reflex heads {path} were trained with the text embedder {trained_with or f"(unrecorded)/{dim}"} but '
            f'this runtime embeds with {mine}; set embedding.backend to match, or train heads for {mine} '
            f'(lightomni train)')
    if not trained_with:
        log.warning('reflex heads %s do not record their text embedder; assuming %s (same dimension)', path, mine)


def _names_for(face: str, names: dict[str, str], told: str, seg: SegmentInput) -> bool:
    """Whether the response prompt needs the profile of ``face``: its id is in ``told``, it is in view or asked of."""
    name = names.get(face, '')
    return face in told or face in seg.face_ids or bool(name) and names_person(seg.utterance, '', name)


def greeting(utterance: str) -> str:
    """The greeting ("Nice to meet you, Ana.") to someone introduced, by themself or by another; '' otherwise."""
    name = introduced_name(utterance) or introduced_other(utterance)
    return f'Nice to meet you, {name}.' if name and not utterance.rstrip().endswith('?') else ''


class ReflexEngine:
    """Owns the backbone and runs every model call (thread-safe; one call at a time)."""

    def __init__(self, cfgs: EngineConfigs, memory: MemoryClient | None = None, *,
                 backbone: Backbone | None = None, embedder: TextEmbedder | None = None) -> None:
        self.cfgs = cfgs
        resolver = ModelResolver(cfgs.models_dir or None)
        self.resolver = resolver
        self.backbone = backbone or load_backbone(cfgs.backbone, resolver)
        if self.backbone.kind == 'omni':
            self.backbone.set_frame_size(cfgs.pruning.frame_size)
        self.adapters = AdapterSet(self.backbone, cfgs.adapters, resolver.models_dir)
        self.quantized = ''
        if cfgs.backbone.quantize == 'int8':
            self._quantize()
        self.embedder = embedder or text_embedder(cfgs.embedding, cfgs.models_dir, set_threads=False)
        lat = cfgs.latent
        self.heads = LatentHeads(self.backbone.hidden_size, self.embedder.dim, lat.soft_prompts,
                                 lat.projection_hidden, lat.seed).to(self.backbone.device).eval()
        heads_path = find_trained(lat.heads_file, resolver.models_dir, backbone=getattr(self.backbone, 'name', ''))
        if heads_path is not None:
            check_heads_embedder(heads_path, self.embedder)
            self.heads.load(heads_path)
        self.memory = memory or NoMemory()
        self.features = FeatureCache(cfgs.cache.feature_entries, cfgs.cache.features)
        self.prefixes = PrefixCache(cfgs.cache.prefix)
        self.preemption = Preemption()
        self.address = AddressGate(cfgs.latent)     # whom the robot last answered: follow-ups need not name it
        # voices heard talking to nobody with nobody in view (a radio, a TV): the same voice beside people is that
        # device again (sleep.broadcast); kept for the process's life, learnt again after a restart
        self.heard_alone: set[str] = set()
        self.sg_version = 0
        self.sg_script = ''
        # A GlobalState callback must not wait seconds for the model (it would hold back the node's other callbacks).
        self._sg_lock = threading.Lock()
        self._sg_pending: tuple[int, str, str, tuple[StateNode, ...]] | None = None
        self.tz: _dt.tzinfo | None = None      # the consolidation node's zone (GlobalState.timezone)
        self.sg_nodes: tuple[StateNode, ...] = ()
        # (item, its embedding, its time): embedded once when kept, so a question only embeds itself
        self.recent: collections.deque[tuple[MemoryItem, np.ndarray, float]] = collections.deque(
            maxlen=max(1, cfgs.response.recent_interactions))
        self.last_prune: PruneResult | None = None
        self.accelerated: Any = None     # export.ReflexRunner when an exported path is faster
        self.backend = f'torch-{self.backbone.device.type}'

    # -- state ---------------------------------------------------------------------------------------------------
    def set_global_state(self, version: int, script: str, *, timezone: str = '',
                         nodes: Sequence[StateNode] = ()) -> None:
        """Adopt a new S_g (now when the model is free, else at the start of its next pass; never blocks).

        ``timezone`` is the zone spoken times are read in (the consolidation node's), ``nodes`` S_g's nodes with their
        spans (for questions about a span of time).
        """
        with self._sg_lock:
            self._sg_pending = (int(version), script, timezone, tuple(nodes))
        if self.adapters.lock.acquire(blocking=False):
            try:
                self._adopt_global_state()
            finally:
                self.adapters.lock.release()

    @property
    def next_sg_version(self) -> int:
        """The S_g version the next pass reads: the pending one, else the current."""
        with self._sg_lock:
            return self._sg_pending[0] if self._sg_pending is not None else self.sg_version

    def _adopt_global_state(self) -> None:
        """Switch to the pending S_g (called holding the model lock); prefix caches of other versions are dropped."""
        with self._sg_lock:
            pending, self._sg_pending = self._sg_pending, None
        if pending is None:
            return
        version, script, timezone, self.sg_nodes = pending
        self.tz = zone(timezone)
        if (version, script) != (self.sg_version, self.sg_script):
            self.sg_version, self.sg_script = version, script
            self.prefixes.invalidate(keep_version=self.sg_version)

    def cache_stats(self) -> dict[str, int]:
        """Hit/miss counters of both caches."""
        return {'feature_hits': self.features.hits, 'feature_misses': self.features.misses,
                'prefix_hits': self.prefixes.hits, 'prefix_misses': self.prefixes.misses,
                'prefix_reused_tokens': self.prefixes.reused_tokens,
                'prefix_prefilled_tokens': self.prefixes.prefilled_tokens}

    # -- building blocks -------------------------------------------------------------------------------------------
    def segment_features(self, seg: SegmentInput) -> Any:
        """Encoder outputs of ``seg`` (computed once per segment while cached)."""
        return self.features.get(('seg', seg.segment_id), lambda: self.backbone.encode_segment(seg))

    def segment_parts(self, seg: SegmentInput) -> list[Part]:
        """Prompt parts of the segment, pruned when configured (omni)."""
        feats = self.segment_features(seg)
        keep = None
        if self.backbone.kind == 'omni' and self.cfgs.pruning.enabled and feats['tokens']:
            self.last_prune = prune(feats['tokens'], self.cfgs.pruning)
            keep = self.last_prune.keep
        return self.backbone.segment_parts(seg, feats, keep)

    def soft_part(self) -> Part:
        """The N soft prompts as the last part of the reflex prompt."""
        n = self.heads.n_prompts
        pos = torch.arange(n, device=self.backbone.device).unsqueeze(0).expand(self.backbone.pos_dims, n)
        return Part(self.heads.soft_prompts.to(self.backbone.dtype), pos, n, 'soft')

    def _pos_arg(self, pos: torch.Tensor) -> torch.Tensor:
        return pos.unsqueeze(1) if self.backbone.pos_dims == 3 else pos.view(1, -1)

    @torch.no_grad()
    def prefill(self, kind: str, parts: list[Part], adapter: str,
                script: str | None = None) -> tuple[torch.Tensor, Any, int, int]:
        """Run [prefix of ``kind`` (cached per adapter and S_g version), parts]; return hidden, cache, offsets.

        ``script`` replaces the response's view of S_g (``kind`` must then name it: the cache is keyed by kind). A
        prefix whose warm-up has not finished is completed in this same forward call, from the longest cached prefix
        it shares.
        Returns the hidden states of ``parts``, the cache, the prefix length and the next position.
        """
        self._adopt_global_state()
        dec = self.backbone.decoder()
        key = self._prefix_key(adapter, kind)
        entry = self._prefix_entry(key, script)
        # a held response prompt's tokens may still follow the prefix: this prompt replaces them (that prompt then
        # no longer reads as itself, see ResponsePrompt.reads, and is prefilled again when it is decoded from)
        crop_to(entry.cache, entry.done)
        rest = entry.ids[entry.done:]
        emb, pos, end = assemble(([self.backbone.ids_part(rest)] if rest else []) + parts, entry.done)
        try:
            out = dec(inputs_embeds=emb, position_ids=self._pos_arg(pos), **cache_kwargs(dec, entry.cache))
        except Exception:
            if rest:
                self.prefixes.drop(key)     # some layers may hold the tail, others not
            raise
        if rest:
            entry.done = len(entry.ids)
            self.prefixes.prefilled_tokens += len(rest)
        return out.last_hidden_state[0][len(rest):], entry.cache, len(entry.ids), end

    def prefix_text(self, kind: str, script: str | None = None) -> str:
        """The cacheable prefix of a pass.

        The reflex reads the whole S_g, the response its newest part (short times) or ``script`` (the events of a
        time window), the memory pass and summaries none of it.
        """
        chat = self.backbone.chat
        if kind == 'reflex':
            return P.system_prefix(P.SYSTEM_REFLEX, self.sg_script, chat)
        if kind.startswith('response'):
            return P.response_prefix(self.sg_script, self.cfgs.response.sg_max_tokens, chat, window=script)
        if kind == 'memory':
            return P.memory_prefix(chat)
        if kind == 'summary':
            return P.summary_prefix(chat)
        raise ValueError(f'no prefix of kind {kind!r}')

    def _prefix_key(self, adapter: str, kind: str) -> tuple[str, int, str]:
        """The cache key of a prefix: the S_g version only for the kinds that read S_g.

        The memory pass's and the summaries' prefixes stay one entry across S_g changes instead of a copy per version
        that pushes the reflex and response prefixes out of the cache.
        """
        return adapter, 0 if kind in _SG_FREE else self.sg_version, kind

    def _prefix_entry(self, key: tuple[str, int, str], script: str | None = None) -> PrefixEntry:
        """The cached prefix of ``key``; when missing, a new entry holding the longest cached prefix it shares.

        The new entry's cache is a copy of that prefix (the older version's entry stays usable until it is evicted);
        the caller prefills the rest (``entry.ids[entry.done:]``).
        """
        from transformers import DynamicCache

        entry = self.prefixes.get(key)
        if entry is not None:
            return entry
        ids = list(self.backbone.tokenizer.encode(self.prefix_text(key[2], script)))
        base, n = self.prefixes.closest(key[0], key[2], ids)
        entry = PrefixEntry(ids=ids, cache=copy_cache(base.cache, n) if base is not None else DynamicCache(), done=n)
        self.prefixes.reused_tokens += n
        self.prefixes.put(key, entry)
        return entry

    def _extend(self, key: tuple[str, int, str], entry: PrefixEntry, stop: Callable[[], bool]) -> bool:
        """Prefill the rest of ``entry`` in chunks of ``cache.prefill_chunk_tokens``, checking ``stop`` before each.

        Progress is kept in the entry: a user pass, or the next warm-up, goes on from there. False when stopped.
        """
        dec = self.backbone.decoder()
        chunk = self.cfgs.cache.prefill_chunk_tokens or len(entry.ids)
        while not entry.complete:
            if stop():
                return False
            piece = entry.ids[entry.done:entry.done + chunk]
            emb, pos, _ = assemble([self.backbone.ids_part(piece)], entry.done)
            try:
                dec(inputs_embeds=emb, position_ids=self._pos_arg(pos), **cache_kwargs(dec, entry.cache))
            except Exception:
                self.prefixes.drop(key)
                raise
            entry.done += len(piece)
            self.prefixes.prefilled_tokens += len(piece)
        return True

    @contextlib.contextmanager
    def sleep_time(self) -> Iterator[None]:
        """Hold the model for sleep-time work, on ``backbone.sleep_threads`` torch threads (restored after).

        With one thread the work stays on the calling thread, so that thread's priority (the reflex node lowers its
        sleep worker's) is the work's priority; the answers' passes keep ``backbone.threads``.
        """
        with self.adapters.lock:
            n = self.cfgs.backbone.sleep_threads
            before = torch.get_num_threads()
            if n and n != before:
                torch.set_num_threads(n)
            try:
                yield
            finally:
                if n and n != before:
                    torch.set_num_threads(before)

    @torch.no_grad()
    def warm_prefixes(self, sleep: bool = True) -> PrefixWarmup:
        """Build the reflex and response S_g prefixes of the current S_g before the next question needs them.

        Called in sleep time: otherwise the first question after every S_g update pays the changed part of the prefix
        (tens of seconds for a long S_g on a CPU). Each prefix starts from the cached one sharing the most leading
        tokens and is prefilled in chunks; a waiting user pass stops the warm-up between chunks (the progress is kept).
        ``sleep=False`` (at start, before any question) runs on all the backbone's threads.
        """
        out = PrefixWarmup()
        if not self.cfgs.cache.prefix:
            return out
        stop = self.preemption.pending
        with self.sleep_time() if sleep else self.adapters.lock:
            self._adopt_global_state()
            for role, kind in (('reaction', 'reflex'), ('generation', 'response')):
                if role == 'reaction' and self.accelerated is not None:
                    continue        # the exported reflex graph runs the whole prompt; it has no prefix cache
                with self.adapters.use(role) as active:
                    key = self._prefix_key(active, kind)
                    if self.prefixes.has(key):
                        continue
                    entry = self._prefix_entry(key)
                    before = entry.done
                    finished = self._extend(key, entry, stop)
                    out.prefilled_tokens += entry.done - before
                    if not finished:
                        out.preempted = True
                        break
                    out.built += 1
        return out

    def full_sequence(self, seg: SegmentInput) -> tuple[torch.Tensor, torch.Tensor]:
        """inputs_embeds [1, L, H] and position ids of the whole reflex prompt (for export and parity checks)."""
        self._adopt_global_state()
        prefix = self.backbone.text_part(self.prefix_text('reflex'))
        emb, pos, _ = assemble([prefix] + self.segment_parts(seg) + [self.soft_part()])
        return emb, self._pos_arg(pos)

    # -- the three passes ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def reflex_pass(self, seg: SegmentInput) -> ReflexOutput:
        """One forward pass on [S_g, I^t, P_soft] with the reaction adapter -> p_act, z_ret, fused query."""
        with self.adapters.use('reaction') as active:
            if self.accelerated is not None:
                emb, pos = self.full_sequence(seg)
                p_act, z_ret = self.accelerated.run(emb, pos)
                backend, n_tokens = self.accelerated.name, int(emb.shape[1])
            else:
                parts = self.segment_parts(seg) + [self.soft_part()]
                hidden, cache, plen, _ = self.prefill('reflex', parts, active)
                n = self.heads.n_prompts
                p, z = self.heads(hidden[-n:])
                crop_to(cache, plen)
                p_act, z_ret = p.cpu().numpy(), z.cpu().numpy()
                backend, n_tokens = self.backend, plen + sum(len(x) for x in parts)
        text_vec = self.embedder.embed([seg.utterance])[0] if seg.utterance else None
        return ReflexOutput(float(p_act[0]), float(p_act[1]), z_ret, fused_query(z_ret, text_vec), backend, n_tokens,
                            text_vec)

    @contextlib.contextmanager
    def response_prompt(self, seg: SegmentInput, memories: list[MemoryItem],
                        context: str = '') -> Iterator[ResponsePrompt]:
        """The generation adapter's prompt for ``seg`` and ``memories``, prefilled once for every decode after it.

        A retry's beams read the prompt the greedy reply was decoded from: prefilling it again would cost the user as
        much as the greedy reply's own prefill. The cache goes back to its prefix when the body ends.
        """
        with self.adapters.use('generation') as active:
            omni = self.segment_parts(seg) if self.backbone.kind == 'omni' else None
            parts = P.response_parts(self.backbone, seg, memories, None, self.cfgs.response.memory_max_tokens,
                                     omni_parts=omni)
            kind = f'response:{hash(context)}' if context else 'response'
            hidden, cache, plen, end = self.prefill(kind, parts, active, script=context or None)
            try:
                yield ResponsePrompt(seg=seg, memories=memories, context=context, hidden_last=hidden[-1:],
                                     cache=cache, length=int(cache.get_seq_length()), end=end,
                                     tokens=plen + sum(len(p) for p in parts))
            finally:
                crop_to(cache, plen)

    @torch.no_grad()
    def respond(self, seg: SegmentInput, memories: list[MemoryItem], max_new_tokens: int | None = None,
                stop: Callable[[], bool] | None = None, context: str = '',
                stream: ReplyStream | None = None, prompt: ResponsePrompt | None = None,
                no_refusal: bool = False, quotes_from: Sequence[MemoryItem] | None = None,
                places_from: Sequence[MemoryItem] | None = None) -> tuple[str, int]:
        """The generation adapter's reply from S_g, memories and the segment; returns (text, prompt tokens).

        ``context`` replaces the newest part of S_g in the prompt (a question about a span of time reads that span);
        ``stream`` sees the reply as it is decoded (its first sentence is said early); ``prompt``, when it was
        prefilled for the same segment, memories and context, is decoded from instead of prefilling them again;
        ``no_refusal``: the reply is the most likely that does not open with a refusal (a memory answers);
        ``quotes_from``: a quotation the reply opens says only words said in these memories (:func:`quoting_within`);
        ``places_from``: a thing the reply places is where one of these memories puts it (:func:`placing_within`).
        """
        tok = self.backbone.tokenizer
        partial = (lambda ids: stream.partial(gen.clean_response(tok.decode(ids)))) if stream else None
        avoid = (lambda ids: opens_refusal(tok.decode(ids))) if no_refusal else None
        tests = ([quoting_within(quotes_from)] if quotes_from is not None else []) + \
            ([placing_within(places_from)] if places_from is not None else [])

        def keep(ids: list[int]) -> bool:
            text = tok.decode(ids)
            return all(test(text) for test in tests)

        def greedy(hidden: torch.Tensor, cache: Any, end: int, limit: int, newline: Any) -> list[list[int]]:
            return [gen.greedy_decode(self.backbone, hidden, cache, end, limit, stop, newline, partial, avoid,
                                      keep if tests else None)[0]]

        replies, n = self._decode_replies(seg, memories, max_new_tokens, context, greedy, prompt)
        return replies[0], n

    @torch.no_grad()
    def respond_candidates(self, seg: SegmentInput, memories: list[MemoryItem], width: int,
                           max_new_tokens: int | None = None, stop: Callable[[], bool] | None = None,
                           context: str = '', prompt: ResponsePrompt | None = None) -> list[str]:
        """The ``width`` most likely replies of the generation adapter to the prompt :meth:`respond` reads.

        Best first, from a beam search: the alternatives to a greedy reply the grounding check refused. ``prompt`` as
        for :meth:`respond`.
        """
        def beams(hidden: torch.Tensor, cache: Any, end: int, limit: int, newline: Any) -> list[list[int]]:
            return gen.beam_decode(self.backbone, hidden, cache, end, limit, width, stop, newline)[0]

        return self._decode_replies(seg, memories, max_new_tokens, context, beams, prompt)[0]

    def _decode_replies(self, seg: SegmentInput, memories: list[MemoryItem], max_new_tokens: int | None,
                        context: str, decode: Callable[..., list[list[int]]],
                        prompt: ResponsePrompt | None = None) -> tuple[list[str], int]:
        """``decode`` after the response prompt (``prompt`` when it reads the same); the cleaned replies, its tokens."""
        with contextlib.ExitStack() as held:
            if prompt is None or not prompt.reads(seg, memories, context):
                prompt = held.enter_context(self.response_prompt(seg, memories, context))
            tok = self.backbone.tokenizer
            newline = (lambda i: '\n' in tok.decode([i])) if self.cfgs.response.stop_at_newline else None
            # the adapter again: a held prompt may have seen another adapter's pass in between
            with self.adapters.use('generation'):
                try:
                    out = decode(prompt.hidden_last, prompt.cache, prompt.end,
                                 max_new_tokens or self.cfgs.backbone.max_new_tokens, newline)
                finally:
                    crop_to(prompt.cache, prompt.length)     # the prompt stays for the next decode
        return [gen.clean_response(tok.decode(ids)) for ids in out] or [''], prompt.tokens

    def known_names(self, face_ids: list[str]) -> dict[str, str]:
        """Names memory knows for ``face_ids`` (from their profiles; {} when memory cannot be asked)."""
        if not face_ids:
            return {}
        got = self.memory.query(MemoryQuery(face_ids=list(face_ids)))
        return P.face_names(got.profiles)

    @torch.no_grad()
    def memory_pass(self, seg: SegmentInput, response: str, stop: Callable[[], bool] | None = None,
                    max_new_tokens: int | None = None) -> TopicData | None:
        """Sleep-time memory adapter pass -> Topic (None when pre-empted; the caller re-queues).

        The names of the people in view are asked of memory first (outside the model lock), so the facts name them.
        """
        names = self.known_names(list(seg.face_ids))
        opening = memory_opening(seg, self._saw_frames(seg), names)
        read = self._read(seg, names, opening, stop, limit=max_new_tokens)
        if read is None:
            return None
        return self._second_look(seg, response, self._memory_topic(seg, response, read[0], names, opening), names,
                                 opening, stop)

    def _second_look(self, seg: SegmentInput, response: str, topic: TopicData, names: dict[str, str],
                     opening: str, stop: Callable[[], bool] | None) -> TopicData | None:
        """``topic``, or a better reading of ``seg`` (None when pre-empted).

        A beam reading whose facts pass the checks where the greedy one's did not (:func:`~.sleep.reread`), and the
        facts of statements no fact tells of, each read alone (:func:`~.sleep.untold`): a greedy decode of a small
        adapter on words unlike its training misses facts a less likely reading, or the sentence alone, has.
        """
        cfg = self.cfgs.backbone
        # every pass, single or batched, comes here once its reading is parsed: the one place the voices are learnt
        self.heard_alone |= alone_voices(seg, response)
        if self.backbone.test_model:
            return topic
        if cfg.memory_retry_beams > 1 and reread(seg, topic, self.heard_alone):
            readings = self._read(seg, names, opening, stop, cfg.memory_retry_beams)
            if readings is None:
                return None
            topic = better_reading(topic, [self._memory_topic(seg, response, ids, names, opening) for ids in readings],
                                   tells(seg))
        # a name the whole segment gives names the facts of a sentence read alone ("call me Leila. I react badly to
        # peanuts.": "Leila is allergic to peanuts.", as the whole reading says it)
        named = {**dict(introductions(seg)), **names}
        for sentence in untold(seg, topic) if cfg.memory_read_alone else []:
            part = one_sentence(seg, sentence)
            ids = self._read(part, names, opening, stop)
            if ids is None:
                return None
            alone = self._memory_topic(part, response, ids[0], names, opening)
            topic.semantic = distinct(topic.semantic + by_name(alone.semantic, named))
            topic.dropped += alone.dropped
            topic.placed += alone.placed
            topic.timed += alone.timed
            topic.read_alone += 1
        return topic

    def _read(self, seg: SegmentInput, names: dict[str, str], opening: str, stop: Callable[[], bool] | None,
              width: int = 1, limit: int | None = None) -> list[list[int]] | None:
        """The memory adapter's readings of ``seg`` (greedy, or ``width`` beams best first); None when pre-empted."""
        with self.sleep_time(), self.adapters.use('memory') as active:
            omni = self.segment_parts(seg) if self.backbone.kind == 'omni' else None
            parts = P.memory_parts(self.backbone, seg, names, omni_parts=omni, opening=opening)
            hidden, cache, plen, end = self.prefill('memory', parts, active)
            limit = limit or self.cfgs.backbone.memory_max_new_tokens
            keep = self._memory_keep(opening)
            try:
                if width > 1:
                    readings, interrupted = gen.beam_decode(self.backbone, hidden[-1:], cache, end, limit, width, stop,
                                                            keep=keep)
                else:
                    ids, interrupted = gen.greedy_decode(self.backbone, hidden[-1:], cache, end, limit, stop,
                                                         keep=keep)
                    readings = [ids]
            finally:
                crop_to(cache, plen)
        return None if interrupted else readings

    def _memory_keep(self, opening: str) -> Callable[[list[int]], bool] | None:
        """The memory reply held to the Topic JSON's shape (``backbone.memory_json_shape``), or None."""
        if not self.cfgs.backbone.memory_json_shape:
            return None
        tok = self.backbone.tokenizer
        return keeper(tok.decode, '{' + opening, set(getattr(tok, 'eos_ids', set())))

    def _saw_frames(self, seg: SegmentInput) -> bool:
        return self.backbone.kind == 'omni' and bool(seg.frames)

    def _memory_topic(self, seg: SegmentInput, response: str, ids: list[int],
                      names: dict[str, str] | None = None, opening: str = '') -> TopicData:
        """The Topic of a memory pass's generated ids (the prompt ends with the reply's ``{`` and ``opening``)."""
        if self.backbone.test_model:
            return fallback_topic(seg, response, 'backbone is a randomly initialised TEST model', self.tz)
        return topic_from_reply(seg, response, '{' + opening + self.backbone.tokenizer.decode(ids), self.tz, names,
                                saw_frames=self._saw_frames(seg), placements=self.cfgs.backbone.memory_placements,
                                event_times=self.cfgs.backbone.memory_event_times,
                                heard_alone=self.heard_alone)

    @torch.no_grad()
    def memory_passes(self, items: Sequence[tuple[SegmentInput, str]], stop: Callable[[], bool] | None = None,
                      max_new_tokens: int | None = None) -> list[TopicData] | None:
        """Memory passes over several queued interactions (segment, response), decoded as one batch.

        Each segment is prefilled alone after the shared memory prefix (it does not read S_g), then all are decoded
        together: on a CPU a decode step of a few rows costs little more than one, so a backlog drains several times
        faster. Returns the Topics in order, or None when pre-empted (the caller re-queues them all).
        """
        if len(items) == 1:
            one = self.memory_pass(items[0][0], items[0][1], stop, max_new_tokens)
            return None if one is None else [one]
        names = [self.known_names(list(seg.face_ids)) for seg, _ in items]
        openings = [memory_opening(seg, self._saw_frames(seg), known) for (seg, _), known in zip(items, names)]
        rows: list[gen.PrefilledRow] = []
        with self.sleep_time(), self.adapters.use('memory') as active:
            cache = None
            for (seg, _), known, opening in zip(items, names, openings):
                if stop is not None and stop():
                    return None
                omni = self.segment_parts(seg) if self.backbone.kind == 'omni' else None
                parts = P.memory_parts(self.backbone, seg, known, omni_parts=omni, opening=opening)
                hidden, cache, plen, end = self.prefill('memory', parts, active)
                try:
                    keys, values = gen.suffix_kv(cache, plen)
                finally:
                    crop_to(cache, plen)
                rows.append(gen.PrefilledRow(hidden_last=hidden[-1:], keys=keys, values=values, offset=end))
            ids, interrupted = gen.greedy_decode_batch(
                self.backbone, cache, rows, max_new_tokens or self.cfgs.backbone.memory_max_new_tokens, stop,
                keeps=[self._memory_keep(opening) for opening in openings])
        if interrupted:
            return None
        topics = []
        for (seg, response), row_ids, known, opening in zip(items, ids, names, openings):
            topic = self._second_look(seg, response, self._memory_topic(seg, response, row_ids, known, opening),
                                      known, opening, stop)
            if topic is None:
                return None
            topics.append(topic)
        return topics

    @torch.no_grad()
    def summarize(self, req: SummaryRequest, default_max_tokens: int = 120,
                  stop: Callable[[], bool] | None = None) -> SummaryResult:
        """S_g merge or profile update with the memory adapter; no summary, and why, when it is not usable."""
        req.check()
        body = '\n'.join(f'- {t}' for t in req.texts)
        if req.mode == MERGE:
            instructions = ['Summarize these events in one short paragraph']
            ask = f'{instructions[0]}:\n{body}'
        else:
            known = ', '.join(f'{k}: {v}' for k, v in req.known.items()) or 'nothing yet'
            instructions = [f'Known about {req.face_id}', 'Recent events', f'Describe {req.face_id} in one short '
                            f'paragraph (name, occupation, preferences, relationships)']
            ask = f'{instructions[0]}: {known}.\n{instructions[1]}:\n{body}\n{instructions[2]}.'
        with self.sleep_time(), self.adapters.use('memory') as active:
            chat = self.backbone.chat
            parts = [self.backbone.text_part(chat.turn('user', ask) + chat.open('assistant'))]
            hidden, cache, plen, end = self.prefill('summary', parts, active)
            try:
                ids, interrupted = gen.greedy_decode(self.backbone, hidden[-1:], cache, end,
                                                     req.max_tokens or default_max_tokens, stop)
            finally:
                crop_to(cache, plen)
        text = gen.clean_response(self.backbone.tokenizer.decode(ids))
        out = SummaryResult(summary=text, producer='memory-adapter',
                            name=named_in(req.face_id, req.texts) if req.mode == PROFILE else '')
        # the adapter is trained for the memory JSON, not for summaries: unprompted, the 135M model invents people
        # ("a young, talented musician known for his love of pizza") that would be recalled as truth
        new = unsupported(text, ask)
        # a profile may come as one JSON object of attributes; JSON anywhere else is residue of the memory JSON
        obj = parse_json_object(text) if req.mode == PROFILE else None
        unfit = prose_problem(text, instructions, ask, json_ok=obj is not None and text.lstrip().startswith('{'))
        if interrupted:
            out.problem = 'pre-empted'
        elif self.backbone.test_model:
            out.problem = 'TEST model'
        elif len(text.split()) < 3:
            out.problem = 'model summary too short'
        elif unfit:
            out.problem = unfit
        elif len(new) > SUMMARY_NEW_WORDS * len(content_words(text)):
            out.problem = f'model summary not grounded in its texts (new words: {", ".join(sorted(new)[:5])})'
        elif req.mode == PROFILE and not any(names_person(text, req.face_id, n)
                                             for n in {str(req.known.get('name') or ''), out.name}):
            # "Miele; roof repair; cycling race; Edo": words of the events, but about nobody
            out.problem = f'model profile does not name {req.face_id}'
        if out.problem:     # no summary: the caller's extractive summarizer writes one (RequestSummarizer)
            out.summary, out.producer = '', ''
            return out
        if req.mode == PROFILE:
            out.attributes = {k: str(v) for k, v in (obj or {}).items() if isinstance(v, (str, int, float))}
            out.attributes.setdefault('persona', out.summary)
        return out

    # -- the whole decision for one segment --------------------------------------------------------------------
    def decide(self, seg: SegmentInput, speech_threshold: float, search_threshold: float, k_semantic: int,
               k_episodic: int, always_answer_questions: bool = True, on_chunk: ChunkSink | None = None) -> Decision:
        """Reflex pass -> retrieval -> response: everything an Action carries.

        The spoken response also goes to ``on_chunk`` piece by piece: its first sentence as soon as it is decoded and
        grounded, then the rest (``Decision.chunks`` keeps them).
        """
        lat: dict[str, float] = {}
        notes = [] if self.heads.trained else ['heads untrained']
        self.preemption.request()
        t_wait = time.perf_counter()
        try:
            return self._decide(seg, t_wait, lat, notes, speech_threshold, search_threshold, k_semantic,
                                k_episodic, always_answer_questions, on_chunk)
        finally:
            self.preemption.release_one()

    def _decide(self, seg: SegmentInput, t_wait: float, lat: dict[str, float], notes: list[str],
                speech_threshold: float, search_threshold: float, k_semantic: int, k_episodic: int,
                always_answer_questions: bool, on_chunk: ChunkSink | None) -> Decision:
        # ``held`` keeps the response prompt prefilled until the decision is made (a retry decodes from it again)
        with self.adapters.lock, contextlib.ExitStack() as held:
            lat['preemption_wait'] = (time.perf_counter() - t_wait) * 1000
            self.preemption.record(lat['preemption_wait'])
            t0 = time.perf_counter()
            out = self.reflex_pass(seg)
            sg_version = self.sg_version       # adopted by the pass: the memory this decision sees
            lat['reflex'] = (time.perf_counter() - t0) * 1000
            speak = out.p_speech >= speech_threshold
            search = out.p_search >= search_threshold or speak
            follow_up = False        # answered only because its speaker was answered a moment ago
            if seg.proactive:
                speak, search = True, False
            elif always_answer_questions and seg.typed_text.strip():
                # typed text comes through the robot's own text channel: it is always addressed to the robot.
                # Spoken words are the action head's alone (radio, TV and people talking to each other say
                # questions too; a keyword rule answered them)
                if not speak:   # the rule overrides the action head: say so in the Action
                    notes.append('speech by typed-text rule')
                speak = search = True
            elif self.cfgs.latent.answer_when_called and self.address.called(seg):
                # called by name ("Robot, ..."): answered whatever the head says, which never saw the names
                if not speak:
                    notes.append('speech by wake-word rule')
                speak = search = True
            elif speak:
                # the head cannot know the robot's names or whether it is mid-conversation: speech that neither
                # names it nor follows its reply is not answered (and only searched when the search head says so)
                quiet = self.address.why_not(seg)
                if quiet:
                    notes.append(quiet)
                    speak, search = False, out.p_search >= search_threshold
                follow_up = speak and self.address.follow_up_only(seg)
            memories: list[MemoryItem] = []
            window = find_window(seg.utterance, seg.end or time.time(), self.tz) if search else None
            summary = window is not None and is_summary_question(seg.utterance)
            if window is not None:
                notes.append(f'window: {window.phrase}')
            if search or seg.face_ids:
                t0 = time.perf_counter()
                got = self.memory.query(MemoryQuery(
                    # profiles only when not searching: k=0 means "the default k" to the service
                    vector=out.query if search else np.zeros(0, np.float32), text=seg.utterance if search else '',
                    k_semantic=k_semantic if search else 0,
                    # a summary reads the window's episodes spread over it, not the few closest to the question
                    k_episodic=(3 * self.cfgs.response.summary_events if summary else k_episodic) if search else 0,
                    face_ids=list(seg.face_ids), embedder=embedder_id(self.embedder) if search else '',
                    window_start=window.start if window else 0.0, window_end=window.end if window else 0.0,
                    chronological=summary))
                lat['retrieval'] = (time.perf_counter() - t0) * 1000
                if got.error:
                    notes.append(f'retrieval: {got.error}')
                memories = got.items if search else got.profiles
                if search:
                    memories += self.recent_candidates(seg.utterance, out.text_embedding, window)
            response, source = '', ''
            shown: list[MemoryItem] = []
            rc = self.cfgs.response
            robot_names = wake_words(self.cfgs.latent.wake_words)

            # a question as its words show it, or, for speech, as the heads read it: speech recognition drops the
            # question mark and clips the words of asking ("can you tel me were the thermos is"), and a promise to
            # keep is no answer to that. Typed words show what they are
            by_words = asks(seg.utterance)
            # a request to keep something ("keep in mind that the torch is ...", "remind me in ten minutes to ...")
            # says what it is, whatever the heads read in it: its answer is a confirmation, not a memory
            reminders = find_reminders(seg.utterance, seg.end, seg.face_ids[0] if seg.face_ids else '', self.tz)
            keeps = bool(reminders or find_remembered(seg.utterance))
            asked = by_words or (out.p_search >= search_threshold and not seg.typed_text.strip() and not keeps)
            # words that tell something: a request to keep it, or a sentence the recogniser ended as a statement
            # (words it left unpunctuated may be a question it garbled: those are answered as one)
            tells = not asked and (keeps or seg.utterance.rstrip().endswith(('.', '!')))

            told: list[MemoryItem] | None = None     # the memories that answer, read once per question

            def check(text: str) -> str:
                # a claim must come from the memories (of the person asked about, when the question names one, by a
                # name memory holds, spelled as memory does), one of which answers and says all it adds ("your home
                # keys" from "my house keys" and another's "at home"), and tell of what was asked; a refusal must not
                # be said over a memory that answers
                return reply_problem(text, seg.utterance, memories, rc.grounding_min_overlap, asked) or \
                    calls_robot_back(text, robot_names) or \
                    misspelled_name(text, memories, seg.utterance) or \
                    unknown_person(text, memories, seg.utterance) or \
                    unanswered_claim(text, seg.utterance, memories, robot_names, asked, told) or \
                    (one_source(text, seg.utterance, memories, robot_names, told) if asked else '') or \
                    misattributed(text, seg.utterance, memories, robot_names, rc.grounding_min_overlap) or \
                    in_own_voice(text, memories) or \
                    off_topic(text, seg.utterance, memories, robot_names) or \
                    unquoted(text, seg.utterance, memories, robot_names, rc.grounding_min_overlap) or \
                    of_others(text, seg.utterance, memories, robot_names, seg.speaker) or \
                    misplaced(text, memories) or \
                    unfounded_refusal(text, seg.utterance, memories, robot_names, seg.speaker) or \
                    false_reminder(text, reminders)

            stream = ReplyStream(seg.segment_id, on_chunk, t0=t_wait, check=check if rc.grounding_check else None)
            if follow_up:
                # a follow-up may be for someone else in view (called by name), or a remark that asks nothing
                others = [n for f, n in P.face_names(memories).items() if f in seg.face_ids and f != seg.speaker]
                other = calls_other(seg.utterance, others)
                if other:
                    notes.append(f'quiet: a follow-up that calls {other}, not the robot')
                    speak = False
                stream.enabled = asks(seg.utterance)     # a remark's reply is said whole, once it is known
            if speak and not seg.proactive:
                response = self.people_reply(seg) or greeting(seg.utterance) or \
                    who_am_i(seg.utterance, seg.speaker, P.face_names(memories))
                source = 'template' if response else ''
            if speak and not response and self.cfgs.response.quote_questions and search \
                    and is_quote_question(seg.utterance):
                response = extractive_answer(seg.utterance, words_of_asked(seg.utterance, memories, robot_names),
                                             self.embedder.embed, robot_names)
                if response:
                    source = 'extractive'
                    notes.append('extractive: a question about what was said')
            if speak and not response and summary:
                response, source = self._recall(seg, memories, window, notes, lat)
            if speak and not response:
                t0 = time.perf_counter()
                context = shown = self.response_memories(memories, seg)
                told = answering(seg.utterance, memories, robot_names)
                prompt = held.enter_context(self.response_prompt(seg, context))
                # a memory answers: the check would refuse "I don't know.", so the greedy reply is not one (a beam
                # search after a refusal cost as much again as the reply)
                no_refusal = rc.grounding_check and rc.refusal_free_greedy and asked and \
                    bool(unfounded_refusal(DONT_KNOW, seg.utterance, memories, robot_names, seg.speaker))
                # the words of a quotation come from the memories (asked what someone said, from theirs): the check
                # refuses any other
                quotes = (words_of_asked(seg.utterance, memories, robot_names) if is_quote_question(seg.utterance)
                          else memories) if rc.grounding_check and rc.grounded_quotes else None
                # and a thing it places is where a memory puts it ("in the attic" for the umbrella in the car)
                places = memories if rc.grounding_check and rc.grounded_places else None
                response, _ = self.respond(seg, context, stop=self.preemption.halted, stream=stream, prompt=prompt,
                                           no_refusal=no_refusal, quotes_from=quotes, places_from=places)
                source = 'generated'
                lat['generation'] = (time.perf_counter() - t0) * 1000
                if self.cfgs.response.grounding_check:
                    # checked against (and quoted from) everything retrieved, not only what the prompt showed
                    problem = check(response)
                    # a confirmation refused only because the heads read a question the words do not show: a
                    # memory that answers is quoted (a question speech recognition garbled); with none, it was a
                    # statement the heads also search on, and the confirmation is said (it claims nothing)
                    unsure = problem == NO_ANSWER and not by_words
                    # only for a question: to a statement the beams find any sentence of a memory grounded; and
                    # not when no memory answers: only a refusal could pass, and one is said without the search
                    if problem and asked and not unsure and problem != UNANSWERED and not stream.chunks \
                            and rc.retry_beams > 1 and not self.preemption.halted():
                        t0 = time.perf_counter()
                        response, problem = self._retry(
                            prompt, response, problem,
                            lambda text: check(text) or leaves_out(text, seg.utterance, memories, robot_names, asked,
                                                                   told), notes)
                        lat['retry'] = (time.perf_counter() - t0) * 1000
                    # told something, the robot confirms it (memory keeps it) rather than read out another memory
                    quote = extractive_answer(seg.utterance, last_turn(seg.utterance, memories, robot_names),
                                              self.embedder.embed, robot_names, asker=seg.speaker) \
                        if problem and not tells and not stream.chunks else ''
                    if problem and stream.chunks:   # its grounded first sentence is said already: it ends there
                        notes.append(f'reply cut to its first sentence: {problem}')
                        response = stream.spoken
                    elif quote:
                        notes.append(f'extractive: {problem}; the model\'s reply: "{clipped(response, 24)}"')
                        response, source = quote, 'extractive'
                    elif unsure:
                        notes.append('confirmed: the heads searched, but the words ask nothing and no memory answers')
                    elif problem and asked:      # asked, with no memory that answers: it says so
                        notes.append(f'reply refused, no memory answers: {problem}')
                        response, source = DONT_KNOW, 'template'
                    elif problem and tells and not seg.proactive:
                        notes.append(f'confirmed: told, not asked, and the reply failed the check ({problem})')
                        response, source = confirmation(seg.utterance, bool(reminders)), 'template'
                    elif problem:       # the last guard: nothing ungrounded is said, even with nothing to quote
                        notes.append(f'reply refused: {problem}')
                        response = ''
                if not response:
                    notes.append('empty response from the model')
            if follow_up and speak and not asks(seg.utterance) and is_refusal(response):
                notes.append('quiet: a follow-up that asks nothing, and the reply would be a refusal')
                speak, response, source = False, '', ''
            # a remark to the room by the person just answered ("heads up, the vet is on Wednesday") is remembered
            # all the same; confirming it aloud talks over the people present unless it asked the robot to keep it
            if follow_up and speak and not asked and promises_to_keep(response) and not asks_to_keep(seg.utterance):
                notes.append('quiet: a follow-up remark that asks the robot nothing; it is remembered unconfirmed')
                speak, response, source = False, '', ''
            if self.backbone.test_model:
                notes.append('TEST backbone')
        if speak and response:
            response = stream.finish(response)
            lat['first_chunk'] = stream.chunks[0].ms
            self.address.replied(seg)
        self.remember_recent(seg, answered=speak)
        return Decision(segment_id=seg.segment_id, p_speech=out.p_speech, p_search=out.p_search, speak=speak,
                        search=search, response=response, memory_ids=[m.ref for m in memories], latency_ms=lat,
                        backend=out.backend, query=out.query, notes=notes, response_source=source,
                        reminders=reminders, sg_version=sg_version, chunks=stream.chunks,
                        shown_ids=[m.ref for m in shown])

    def _retry(self, prompt: ResponsePrompt, reply: str, problem: str, check: Callable[[str], str],
               notes: list[str]) -> tuple[str, str]:
        """The most likely beam reply to ``prompt`` (the greedy ``reply``'s) that passes ``check``.

        Returns (that reply, ''), or (``reply``, ``problem``) when none passes.
        """
        for rank, alternative in enumerate(self.respond_candidates(prompt.seg, prompt.memories,
                                                                   self.cfgs.response.retry_beams,
                                                                   stop=self.preemption.halted, prompt=prompt)):
            if alternative and alternative != reply and not check(alternative):
                notes.append(f'beam reply {rank + 1} of {self.cfgs.response.retry_beams}: the greedy one failed '
                             f'the check ({problem})')
                return alternative, ''
        return reply, problem

    def _recall(self, seg: SegmentInput, memories: list[MemoryItem], window: TimeWindow, notes: list[str],
                lat: dict[str, float]) -> tuple[str, str]:
        """A question about what happened in a window: answered from that window's events in time order."""
        events = window_events(memories, self.sg_nodes, window.start, window.end, self.tz,
                               self.cfgs.response.summary_events, wake_words(self.cfgs.latent.wake_words))
        t0 = time.perf_counter()
        profiles = [m for m in memories if m.ref.startswith('profile:')]
        response, _ = self.respond(seg, profiles, self.cfgs.response.summary_max_new_tokens,
                                   stop=self.preemption.halted, context=window_context(events, window.phrase))
        lat['generation'] = (time.perf_counter() - t0) * 1000
        told = [MemoryItem('event', e) for e in events] + memories
        problem = reply_problem(response, seg.utterance, told, self.cfgs.response.grounding_min_overlap) \
            if self.cfgs.response.grounding_check else ''
        if response and not problem and not (events and is_refusal(response)):
            return response, 'generated'
        why = problem or ('a refusal, with events remembered' if response else 'empty response from the model')
        notes.append(f'extractive: {why} (events of {window.phrase}); the model\'s reply: "{clipped(response, 24)}"')
        return summary_answer(events, window.phrase), 'extractive'

    def people_reply(self, seg: SegmentInput) -> str:
        """The answer to a "who did I talk to ..." question from the profiles ('' when it is none, or no memory)."""
        window = people_window(seg.utterance, seg.end or time.time(), self.tz)
        ask = getattr(self.memory, 'people', None)
        people = ask() if window is not None and ask is not None else None
        if people is None:
            return ''
        return people_answer(people, *window, exclude=seg.face_ids)

    def remember_recent(self, seg: SegmentInput, answered: bool = False) -> None:
        """Keep the segment as a recent interaction (a retrieval candidate until it has long been consolidated).

        A question the robot ``answered`` is not kept: it was asked of the robot, not said to anyone (its episode
        keeps it); one to someone else is what its speaker said.
        """
        if self.cfgs.response.recent_interactions <= 0 or (answered and seg.utterance.endswith('?')):
            return
        if seg.utterance:
            text = f'{seg.speaker} {"typed" if seg.typed_text else "said"}: {seg.utterance}'
        elif seg.visual_tags or seg.face_ids:
            text = f'saw {", ".join(seg.face_ids + seg.visual_tags)}'
        else:
            return
        # its time orders it among stored memories: it stays a candidate after its facts are stored, and a fact
        # stored since ("the earrings are in the green basket" after a note of "on the fridge") is the newer
        said = fmt_time(seg.end, self.tz) if seg.end > 0 else ''
        self.recent.append((MemoryItem(f'recent:{seg.segment_id}', text, said=said), self.embedder.embed([text])[0],
                            seg.end))

    def recent_candidates(self, question: str, q: np.ndarray | None = None,
                          window: TimeWindow | None = None) -> list[MemoryItem]:
        """Recent interactions (of ``window`` only, when given) scored by their similarity to ``question``."""
        # a question holds nothing to recall and would be the closest match to the next one; asked what someone
        # said, it is what they said ("Kwame, could you close the window?")
        quote = is_quote_question(question)
        items = [(m, v) for m, v, t in self.recent if (window is None or window.start <= t <= window.end)
                 and (quote or not holds_only_a_question(m.text))]
        if not items or not question:
            return []
        q = self.embedder.embed([question])[0] if q is None else q
        return [dataclasses.replace(m, score=float(v @ q)) for m, v in items]

    def response_memories(self, memories: list[MemoryItem], seg: SegmentInput | None = None) -> list[MemoryItem]:
        """What the response prompt shows: up to ``response.max_memories`` entries and the profiles that name them.

        The entries are those that could answer the question (``response.focus_answering``), closest first, when any
        could; else the closest. The profiles are those that name a face of the entries (the ids a name resolves),
        of the people in view and of the people the question names: the name of a bystander of a shown episode,
        with nobody in view, made the generation adapter refuse over the answer ("where are Joe's car keys?").
        """
        rc = self.cfgs.response
        profiles = [m for m in memories if m.ref.startswith('profile:')]
        facts = sorted((m for m in memories if not m.ref.startswith('profile:')), key=lambda m: -m.score)
        names = P.face_names(profiles)
        if rc.focus_answering and seg is not None:
            robot = wake_words(self.cfgs.latent.wake_words)
            # asked what someone said, with no topic: their newest words ("repeat what Tariq said")
            last = last_words(seg.utterance, profiles + facts, robot)
            # the profiles name the faces the question may name
            found = last or answering(seg.utterance, profiles + facts, robot)
            found = of_asker(found, seg.utterance, seg.speaker, names)
            # not those a newer one supersedes (a thing moved, a meeting moved): the adapter picks among what it reads
            found = newest_telling(seg.utterance, found, profiles + facts, robot)
            facts = found or facts
        facts = facts[:rc.max_memories]
        if seg is None:
            return profiles + facts
        told = ' '.join(m.text for m in facts)
        return [m for m in profiles if _names_for(m.ref[len('profile:'):], names, told, seg)] + facts

    def _quantize(self) -> None:
        """int8 copies of the backbone's linear layers on a CPU (``backbone.quantize``), for the response pass."""
        bb = self.backbone
        if bb.device.type != 'cpu':
            log.warning('backbone.quantize int8 applies on a CPU only: %s keeps %s', bb.device, bb.dtype)
            return
        self.adapters.weights = weights = Int8Weights(bb.model)
        self.quantized = f'int8 ({len(weights)} linear layers; the reflex and memory passes in {bb.dtype})'.replace(
            'torch.', '')
        log.info('backbone %s: %d linear layers in int8 for the response pass', bb.name, len(weights))

    def describe(self) -> dict[str, Any]:
        """Diagnostics view of the engine."""
        return {'backbone': self.backbone.describe(), 'adapters': self.adapters.describe(),
                'heads': self.heads.source, 'heads_trained': self.heads.trained, 'backend': self.backend,
                'embedder': self.embedder.name, 'sg_version': self.sg_version, 'quantized': self.quantized}


__all__ = ['ReflexEngine', 'EngineConfigs', 'Retrieved', 'fallback_topic']
