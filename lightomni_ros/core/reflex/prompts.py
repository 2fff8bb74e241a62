# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The text of every prompt: reflex pass, response and sleep-time memory pass (training renders through this too).

Training and the engine call the same functions, so the adapters and heads are trained on exactly what the node
renders at run time (a segment id once rendered in training only cost the heads F1). The memory pass and the response
read the segment with the names memory knows ("Joe (<face_1>) said: ..."); the reflex pass reads the plain rendering
of :func:`~.backbone.render_segment`. Retrieved memories and S_g lines are shown with short clock times
(``[10:02]``) instead of the store's full ``[YYYY-MM-DD HH:MM:SS]--[...]`` spans: a third of the tokens, and the order
(oldest first) says which of two conflicting memories is newer.

Turn markers come from the backbone's :class:`ChatFormat` (ChatML for SmolLM2 and Qwen, Gemma's turns for Gemma 3).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .types import SOMEONE, MemoryItem, SegmentInput

SYSTEM_REFLEX = ('You are the assistant of a robot that sees and hears continuously. Decide whether to speak now '
                 'and what to recall.')
SYSTEM_RESPONSE = ('You are a robot with a memory. Answer in one short sentence from the memories, or say that you '
                   'do not know.')
SYSTEM_MEMORY = ('You are the memory of a robot. Write the JSON of this segment: what was seen, facts in the third '
                 'person with names, what to remember, reminders.')
SYSTEM_SUMMARY = 'You summarize memories faithfully.'
#: keys of the memory JSON, in the order the adapter writes them (empty lists are left out)
MEMORY_KEYS = ('visual', 'semantic', 'remembered', 'reminders')


@dataclass(frozen=True)
class ChatFormat:
    """Turn markers of a backbone's chat template."""

    name: str
    start: str                       # '{role}' is replaced by the role's name
    end: str                         # closes a turn (its first token ends a reply)
    roles: Mapping[str, str] = field(default_factory=dict)
    bos: str = ''                    # text in front of every prompt (Gemma reads badly without <bos>)

    def turn(self, role: str, text: str) -> str:
        """One whole turn."""
        return f'{self.open(role)}{text}{self.end}\n'

    def open(self, role: str) -> str:
        """The start of a turn (the assistant's reply follows it)."""
        return self.start.replace('{role}', self.roles.get(role, role))


CHATML = ChatFormat('chatml', '<|im_start|>{role}\n', '<|im_end|>')
GEMMA = ChatFormat('gemma', '<start_of_turn>{role}\n', '<end_of_turn>',
                   {'system': 'user', 'assistant': 'model'}, bos='<bos>')


def chat_format(tokenizer: Any) -> ChatFormat:
    """The chat format of a transformers tokenizer: Gemma's turns when it has them, else ChatML."""
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, 'get_vocab') else {}
    return GEMMA if '<start_of_turn>' in vocab and '<|im_start|>' not in vocab else CHATML


# -- shared pieces -----------------------------------------------------------------------------------------------
def system_prefix(system: str, sg_script: str, chat: ChatFormat = CHATML, heading: str = 'What happened so far '
                  '(oldest first):') -> str:
    """The cacheable prefix: system text and (a view of) the global state S_g."""
    sg = sg_script.strip() or '(nothing remembered yet)'
    return chat.bos + chat.turn('system', f'{system}\n{heading}\n{sg}')


def sg_tail(sg_script: str, max_tokens: int) -> str:
    """The newest lines of S_g within ``max_tokens`` (about 4 characters a token); the whole script when 0.

    The response prompt reads this bounded view, so its prefill and decoding do not grow with months of memory;
    retrieval brings the older specifics, and the reflex pass still reads the whole S_g.
    """
    if max_tokens <= 0 or len(sg_script) <= 4 * max_tokens:
        return sg_script
    kept: list[str] = []
    budget = 4 * max_tokens
    for line in reversed(sg_script.splitlines()):
        if len(line) + 1 > budget:
            break
        kept.append(line)
        budget -= len(line) + 1
    return '\n'.join(['(older events: see the memories)'] + kept[::-1])


def clip_tokens(text: str, max_tokens: int) -> str:
    """``text`` cut at a word boundary to about ``max_tokens`` tokens (4 characters each); unchanged when 0."""
    if max_tokens <= 0 or len(text) <= 4 * max_tokens:
        return text
    return text[:4 * max_tokens].rsplit(' ', 1)[0] + ' ...'


_STAMP = r'\d{4}-\d{2}-\d{2} (\d{2}:\d{2}):\d{2}'
_SPAN = re.compile(rf'^(?:L(\d+) )?\[{_STAMP}\](?:--\[{_STAMP}\])?:?\s*')


def short_span(line: str, newest: bool = False) -> tuple[str, str]:
    """("[10:02]" or "[09:00-10:00]" for a merged S_g node, the rest) of a store or S_g line; ('', line) without one.

    The store renders ``[YYYY-MM-DD HH:MM:SS]--[YYYY-MM-DD HH:MM:SS]: text`` (S_g lines add ``L<level>``); a level-0
    line or a fact shows its start, a summary of several events its span. ``newest``: a fact shows its end, the last
    time it was said (a repeated fact is stored once, its span extended to the repeat).
    """
    m = _SPAN.match(line.strip())
    if not m:
        return '', line.strip()
    level, start, end = m.group(1), m.group(2), m.group(3)
    if newest and level in (None, '0') and end:
        return f'[{end}]', line.strip()[m.end():]
    stamp = f'[{start}-{end}]' if level not in (None, '0') and end and end != start else f'[{start}]'
    return stamp, line.strip()[m.end():]


def compact_sg(sg_script: str, max_tokens: int) -> str:
    """The newest S_g lines within ``max_tokens`` with short clock times (the response prompt's view of S_g)."""
    lines = []
    for line in sg_script.splitlines():
        if line.strip():
            stamp, text = short_span(line)
            lines.append(f'{stamp} {text}'.strip())
    return sg_tail('\n'.join(lines), max_tokens)


def face_names(memories: Sequence[MemoryItem]) -> dict[str, str]:
    """``<face_N>`` -> name, from retrieved profiles ("<face_0> is Barack (...)")."""
    names = {}
    for m in memories:
        if m.ref.startswith('profile:'):
            hit = _PROFILE_NAME.match(m.text.strip())
            if hit:
                names[hit.group(1)] = hit.group(2).strip()
    return names


_PROFILE_NAME = re.compile(r'^(<face_\d+>) is ([^(;]+?)\s*(?:\(|$)')


def named(face: str, names: Mapping[str, str]) -> str:
    """A face as prompts name it: 'Joe (<face_1>)' when the name is known, else the face id."""
    return f'{names[face]} ({face})' if names.get(face) else face


def perception_text(seg: SegmentInput, names: Mapping[str, str] | None = None,
                    tz: _dt.tzinfo | None = None) -> str:
    """The segment as the memory pass and the response read it: clock time, who is in view and who spoke (named)."""
    names = names or {}
    clock = _dt.datetime.fromtimestamp(seg.start, tz).strftime('%H:%M') if seg.start > 0 else '--:--'
    lines = [f'[{clock}, {max(0.0, seg.end - seg.start):.0f} s]']
    lines.append('Visible people: ' + (', '.join(named(f, names) for f in seg.face_ids) or 'nobody'))
    if seg.visual_tags:
        lines.append('Scene: ' + ', '.join(seg.visual_tags))
    if seg.transcript.strip():
        # one line per run of one speaker's turns (perception's voices), else the whole transcript with its speaker
        said = seg.said() if not seg.typed_text.strip() else [(seg.speaker, seg.transcript.strip())]
        for who, words in said:
            who = named(who, names) if who.startswith('<face_') else who
            lines.append(f'{who} said: "{words}"')
    if seg.typed_text.strip():
        who = '' if seg.speaker == SOMEONE else f' by {named(seg.speaker, names)}'
        lines.append(f'Typed{who}: "{seg.typed_text.strip()}"')
    if not seg.transcript.strip() and not seg.typed_text.strip():
        lines.append('(nobody spoke)')
    return '\n'.join(lines)


# -- the sleep-time memory pass ----------------------------------------------------------------------------------
def summary_prefix(chat: ChatFormat = CHATML) -> str:
    """The prefix of an S_g merge or profile update (the Summarize service).

    It does not read S_g: a summary must say only what its texts say (they come in the turn), and a prefix holding
    months of S_g cost the sleep-time worker seconds of prefill per merge, rebuilt after every S_g change.
    """
    return chat.bos + chat.turn('system', SYSTEM_SUMMARY)


def memory_prefix(chat: ChatFormat = CHATML) -> str:
    """The memory pass's cacheable prefix (it does not read S_g: the pass stays cheap and independent of it)."""
    return chat.bos + chat.turn('system', SYSTEM_MEMORY)


def segment_turn(backbone: Any, seg: SegmentInput, names: Mapping[str, str] | None = None,
                 tz: _dt.tzinfo | None = None, omni_parts: list | None = None) -> list:
    """The segment as a user turn of the memory pass or the response (prompt parts of ``backbone``).

    A text backbone reads :func:`perception_text`; the omni thinker reads its frames and audio (``omni_parts``: the
    engine's cached, pruned segment parts) followed by a line with the names of the people in view.
    """
    if backbone.kind == 'text':
        return [backbone.text_part(backbone.chat.turn('user', perception_text(seg, names, tz)))]
    parts = omni_parts if omni_parts is not None else backbone.segment_parts(seg, backbone.encode_segment(seg))
    known = [f'{face} is {names[face]}.' for face in seg.face_ids if names and names.get(face)]
    return parts + ([backbone.text_part(backbone.chat.turn('user', ' '.join(known)))] if known else [])


def memory_parts(backbone: Any, seg: SegmentInput, names: Mapping[str, str] | None = None,
                 tz: _dt.tzinfo | None = None, omni_parts: list | None = None, opening: str = '') -> list:
    """Prompt parts after :func:`memory_prefix`: the segment turn and the start of the reply (``{``).

    ``opening``: more of the reply that is known already (``sleep.memory_opening``), its own part so that it is
    split into the tokens it has in the training targets (they are tokenized after the ``{``).
    """
    return segment_turn(backbone, seg, names, tz, omni_parts) + \
        [backbone.text_part(backbone.chat.open('assistant') + '{')] + \
        ([backbone.text_part(opening)] if opening else [])


def memory_target(topic: Mapping[str, Any]) -> str:
    """The memory JSON the adapter is trained to write after the prompt's ``{`` (keys in order, empties left out)."""
    obj = {k: topic[k] for k in MEMORY_KEYS if topic.get(k)}
    return json.dumps(obj, ensure_ascii=False)[1:]


# -- the response ------------------------------------------------------------------------------------------------
def response_prefix(sg_script: str, max_tokens: int, chat: ChatFormat = CHATML, window: str | None = None) -> str:
    """System text and the newest part of S_g with short times: the response's cacheable prefix.

    ``window`` (the events of a span of time a question asks about, :func:`.recall.window_context`) takes S_g's place.
    """
    if window is not None:
        return system_prefix(SYSTEM_RESPONSE, window, chat, 'Recent events:')
    return system_prefix(SYSTEM_RESPONSE, compact_sg(sg_script, max_tokens), chat, 'Recent events:')


def memory_lines(memories: Sequence[MemoryItem], max_tokens: int = 0) -> list[str]:
    """Memories as the response reads them: the names of the people (profiles), then entries oldest first.

    An episode keeps the time of its start (``[10:02] ...``), a fact the time it was last said: "the thermos is in the
    basket" said at 10:01 and again at 10:20, after "... under the bed" at 10:10, is the newer of the two. Recent
    interactions show no time but sort by theirs (``MemoryItem.said``), mostly last: one that outlived its
    consolidation comes before a fact stored since. Each line is cut to ``max_tokens`` (0: whole).
    """
    names = face_names(memories)
    lines = [f'{face} is {name}.' for face, name in names.items()]
    dated = []
    for i, m in enumerate(memories):
        if m.ref.startswith('profile:'):
            continue
        fact = m.ref.startswith('semantic:')
        stamp, text = short_span(m.text, newest=fact)
        key = said_at(m) if fact else m.said or span_times(m.text)[0]
        dated.append((key, i, f'{stamp} {clip_tokens(text, max_tokens)}'.strip()))
    lines += [line for _, _, line in sorted(dated)]
    return lines


_TIME = r'\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}'
_SORT = re.compile(rf'^(?:L\d+ )?\[({_TIME})\](?:--\[({_TIME})\])?')
#: what an entry without a time (a recent interaction) sorts as: after every date, the newest
UNDATED = '~'


def span_times(text: str) -> tuple[str, str]:
    """(start, end) of a store or S_g line as text that sorts in time order; an entry without them is undated."""
    m = _SORT.match(text.strip())
    if not m:
        return UNDATED, UNDATED
    return m.group(1), m.group(2) or m.group(1)


def said_at(memory: MemoryItem) -> str:
    """When ``memory`` was last said (its span's end, else its ``said``), as text that sorts in time order.

    Undated is newest.
    """
    return memory.said or span_times(memory.text)[1]


def memories_text(memories: Sequence[MemoryItem], max_tokens: int = 0, chat: ChatFormat = CHATML) -> str:
    """The retrieved memories as a turn of the response prompt ('' when there are none)."""
    lines = memory_lines(memories, max_tokens)
    if not lines:
        return chat.turn('system', 'Memories: none.')
    return chat.turn('system', 'Memories (oldest first):\n' + '\n'.join(f'- {line}' for line in lines))


def response_parts(backbone: Any, seg: SegmentInput, memories: Sequence[MemoryItem],
                   names: Mapping[str, str] | None = None, max_tokens: int = 0, tz: _dt.tzinfo | None = None,
                   omni_parts: list | None = None) -> list:
    """Prompt parts after :func:`response_prefix`: the memories, the segment (named) and the start of the reply."""
    known = dict(face_names(memories))
    known.update(names or {})
    chat = backbone.chat
    return [backbone.text_part(memories_text(memories, max_tokens, chat))] + \
        segment_turn(backbone, seg, known, tz, omni_parts) + [backbone.text_part(chat.open('assistant'))]


__all__ = ['ChatFormat', 'CHATML', 'GEMMA', 'chat_format', 'SYSTEM_REFLEX', 'SYSTEM_RESPONSE', 'SYSTEM_MEMORY',
           'SYSTEM_SUMMARY', 'summary_prefix',
           'MEMORY_KEYS', 'system_prefix', 'sg_tail', 'clip_tokens', 'short_span', 'compact_sg', 'face_names',
           'span_times', 'said_at', 'UNDATED', 'perception_text', 'segment_turn', 'memory_prefix', 'memory_parts',
           'memory_target', 'response_prefix', 'memory_lines', 'memories_text', 'response_parts']
