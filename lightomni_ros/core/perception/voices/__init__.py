# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Voices: speaker embeddings (Resemblyzer's encoder), speaker turns of a span, a voice identity registry."""

from .encoder import VoiceEncoder, similarity
from .registry import Voice, VoiceEvent, VoiceGalleryEntry, VoiceRegistry, voice_index
from .turns import Turn, TurnTracker, VoicesConfig

__all__ = ['VoiceEncoder', 'similarity', 'Voice', 'VoiceEvent', 'VoiceGalleryEntry', 'VoiceRegistry', 'voice_index',
           'Turn', 'TurnTracker', 'VoicesConfig']
