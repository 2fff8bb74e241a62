# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Voices through the perception node across processes.

A stored voice is recognised in the Segment's turns; a forgotten one is dropped and heard again as a new voice (a new
id, never reused), reported on voices/identity.
"""

from __future__ import annotations

import os

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from harness import wait_for
from test_perception_node import MEDIA, NS, counter, feed, start_node

from lightomni_ros.core.models import ModelResolver
from lightomni_ros.core.perception.audio import Resampler
from lightomni_ros.core.perception.voices import VoiceEncoder
from lightomni_ros.eval.perception_media import load_audio
from lightomni_ros.msg import Segment, VoiceGallery, VoiceIdentity
from lightomni_ros.nodes.common import LATCHED_QOS, RELIABLE_QOS

pytestmark = [pytest.mark.skipif(MEDIA is None, reason='development media not found'), pytest.mark.timeout(240)]


def test_stored_voice_is_recognised_then_forgotten(spawn, ros, domain_id: int) -> None:
    clip = 'speech/jfk.flac'
    x, sr = load_audio(MEDIA / clip)
    emb = VoiceEncoder(ModelResolver().resolve('voice').path).embed(Resampler(sr).process(x.mean(axis=1),
                                                                                          flush=True))
    gallery = ros.node.create_publisher(VoiceGallery, f'{NS}/voices/gallery', LATCHED_QOS)
    gallery.publish(VoiceGallery(version=1, voices=[VoiceIdentity(
        op=VoiceIdentity.OP_UPDATE, voice_id='<voice_5>', name='John', embedding=emb.tolist(),
        embedding_backend='resemblyzer', observations=30.0)]))
    segs = ros.collect(Segment, f'{NS}/segments', RELIABLE_QOS)
    reported = ros.collect(VoiceIdentity, f'{NS}/voices/identity', RELIABLE_QOS)
    diags = ros.collect(DiagnosticArray, '/diagnostics', 50)
    start_node(spawn, domain_id, spawn.tmp, **{'faces.enabled': False, 'frames.encoder': False})
    feeder = feed(spawn, clip, '--gap-s', '2.0', '--fps', '0')
    wait_for(lambda: feeder.proc.poll() is not None, 60, what='the feeder to finish')
    first = wait_for(lambda: [s for s in segs if s.turns], 60, what='a segment with speaker turns')
    # everything the feeder sent is through the audio path and ASR (the node's own counters, not a fixed wait)
    wait_for(lambda: len(diags) > 2 and counter(diags, 'output_pending') == 0 and
             counter(diags, 'audio_queue') == 0, 60, what='perception to finish the clip')
    voices = {t.voice_id for s in segs for t in s.turns if t.end - t.start > 2.0}
    assert voices == {'<voice_5>'}, [(t.voice_id, t.start, t.end, t.text) for s in segs for t in s.turns]
    assert first[0].turns[0].text.strip() and not [r for r in reported if r.op == VoiceIdentity.OP_NEW]
    forgotten = ros.node.create_publisher(VoiceIdentity, f'{NS}/voices/forgotten', RELIABLE_QOS)
    wait_for(lambda: forgotten.get_subscription_count(), 10, what='voices/forgotten subscriber')
    forgotten.publish(VoiceIdentity(op=VoiceIdentity.OP_FORGET, voice_id='<voice_5>'))
    wait_for(lambda: counter(diags, 'voices_forgotten') >= 1, 30, what='the node to drop the voice')
    n = len(segs)
    feeder = feed(spawn, clip, '--gap-s', '2.0', '--fps', '0')
    new = wait_for(lambda: [r for r in reported if r.op == VoiceIdentity.OP_NEW], 60, what='a new voice')
    assert new[0].voice_id == '<voice_6>' and new[0].embedding_backend == 'resemblyzer'
    wait_for(lambda: feeder.proc.poll() is not None, 60, what='the feeder to finish')
    later = wait_for(lambda: [t for s in segs[n:] for t in s.turns if t.voice_id], 60, what='turns of new speech')
    assert '<voice_5>' not in {t.voice_id for t in later}
    assert os.path.exists(spawn.tmp / 'state.json')
