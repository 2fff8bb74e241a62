# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Requests to be forgotten ("forget me", "forget what I told you") from a recognised person (docs/PRIVACY.md).

The request is recognised by patterns (spoken or typed), before any model call, so it works whatever the backbone
says. Who asks is the speaker perception saw (or the only face in view): a request nobody in view can be tied to is
not carried out, and the reply says why. The interaction itself is never queued for sleep time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .types import Decision, SegmentInput

_FORGET = re.compile(r"\bforget\s+(?:about\s+)?(?:me\b|(?:all\s+|everything\s+)?(?:about\s+me\b|(?:of\s+)?what\s+i\s+"
                     r"(?:have\s+)?(?:told|said\s+to|said)\b|that\s+i\s+(?:was\s+)?here\b)|everything\s+i\s+"
                     r"(?:have\s+)?(?:told|said)\b)", re.I)
_NEGATED = re.compile(r"\b(?:don'?t|do\s+not|never|won'?t|will\s+not|can'?t|cannot|not)\s+(?:ever\s+)?forget\b", re.I)
_FACE = re.compile(r'^<face_\d+>$')


@dataclass(frozen=True)
class ForgetRequest:
    """A person asking to be forgotten (``face_id`` empty when nobody in view can be tied to the request)."""

    face_id: str
    text: str


def forget_request(seg: SegmentInput) -> ForgetRequest | None:
    """The forget request in the segment's utterance, or None."""
    said = seg.utterance
    if not said or not _FORGET.search(said) or _NEGATED.search(said):
        return None     # "don't forget what I told you" asks for the opposite
    who = seg.speaker
    return ForgetRequest(face_id=who if _FACE.match(who) else '', text=said)


def forget_decision(seg: SegmentInput, req: ForgetRequest, error: str | None) -> Decision:
    """The spoken confirmation (or why nothing was forgotten); a template, never generated."""
    if not req.face_id:
        reply = ('I can only forget someone I recognise. Please face the camera, alone, and ask me again.')
        notes = ['forget: nobody in view can be tied to the request']
    elif error:
        reply = f'I could not forget you just now: {error}. Please ask me again.'
        notes = [f'forget {req.face_id} failed: {error}']
    else:
        reply = 'Done. I have forgotten you, your face and everything you told me.'
        notes = [f'forget: {req.face_id} forgotten']
    return Decision(segment_id=seg.segment_id, p_speech=1.0, p_search=0.0, speak=True, search=False, response=reply,
                    memory_ids=[], latency_ms={}, backend='template', query=np.zeros(0, np.float32), notes=notes,
                    response_source='template')


__all__ = ['ForgetRequest', 'forget_request', 'forget_decision']
