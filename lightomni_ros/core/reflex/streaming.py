# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Streaming replies: the first sentence is said as soon as it is decoded and grounded, then the rest.

Text-to-speech can start on the first sentence while the model is still decoding the others, so the time to the first
spoken word does not grow with the length of the reply. The pieces go to a sink (the reflex node publishes them as
SpeechChunk messages) and are kept on the Decision (the offline facade reads them there).
"""

from __future__ import annotations

import re
import time
from typing import Callable

from .types import Decision, SpeechChunk

#: receives each piece of a reply as soon as it is ready (called from the model's thread: it must not block)
ChunkSink = Callable[[SpeechChunk], None]

# a sentence ends at . ! or ? followed by white space: the next words have begun, so the sentence is complete
_SENTENCE_END = re.compile(r'[.!?]+["\')\]]*\s+')


def first_sentence(text: str) -> str:
    """The first complete sentence of ``text`` ('' while none is complete)."""
    m = _SENTENCE_END.search(text)
    if m is None:
        return ''
    return text[:m.end()].strip()


class ReplyStream:
    """The pieces of one reply: the first sentence early (when ``check`` finds no problem in it), then the rest.

    ``check`` returns why a sentence must not be said ('' when it may); None says every sentence may.
    """

    def __init__(self, segment_id: int, sink: ChunkSink | None = None,
                 check: Callable[[str], str] | None = None, t0: float | None = None) -> None:
        self.segment_id = segment_id
        self.sink = sink
        self.check = check
        self.chunks: list[SpeechChunk] = []
        self.t0 = time.perf_counter() if t0 is None else t0     # perf_counter time the chunks' ``ms`` count from
        self.enabled = True

    @property
    def spoken(self) -> str:
        """What was said before the reply was finished."""
        return ' '.join(c.text for c in self.chunks)

    def partial(self, text: str) -> None:
        """The reply decoded so far: say its first sentence once it is complete and passes the check."""
        if self.chunks or not self.enabled:
            return
        sentence = first_sentence(text)
        if not sentence or len(sentence) >= len(text.strip()):
            return
        if self.check is not None and self.check(sentence):
            self.enabled = False        # not said early; the whole reply is checked and said at the end
            return
        self._emit(sentence, False)

    def finish(self, response: str) -> str:
        """Say what is left of the final ``response``; return the response as it was said in total.

        When the final response does not continue the sentence already said (it was replaced after the whole reply
        failed its check), the reply ends with that sentence.
        """
        if not self.chunks:
            if response:
                self._emit(response, True)
            return response
        said = self.spoken
        if response.startswith(said):
            self._emit(response[len(said):].strip(), True)
            return response
        self._emit('', True)
        return said

    def _emit(self, text: str, final: bool) -> None:
        chunk = SpeechChunk(segment_id=self.segment_id, index=len(self.chunks), text=text, final=final,
                            ms=(time.perf_counter() - self.t0) * 1000.0)
        self.chunks.append(chunk)
        if self.sink is not None:
            self.sink(chunk)


def say_whole(d: Decision, sink: ChunkSink | None) -> Decision:
    """A decision made without the model (a template, a confirmation): its response as one final piece."""
    if d.speak and d.response and not d.chunks:
        stream = ReplyStream(d.segment_id, sink)
        stream.finish(d.response)
        d.chunks = stream.chunks
    return d
