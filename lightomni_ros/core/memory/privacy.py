# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Privacy settings of long-term memory: retention per memory kind, raw audio, encryption at rest (docs/PRIVACY.md).

People a robot meets never agreed to be remembered: what is kept, for how long, and in what form on disk is set here
and enforced by the consolidation node (:mod:`lightomni_ros.core.consolidation.retention`, the store's SQLCipher
mode). Raw inputs (audio clips, keyframes) expire first, events next, facts and profiles last.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ConfigError, param

DAY_S = 86400.0


@dataclass
class RetentionConfig:
    """How long each kind of memory is kept (days; 0 keeps it until it is forgotten on request)."""

    raw_audio: float = param(30.0, 'Audio clips of episodic events (their raw_refs WAV files): deleted, and the '
                                   'reference removed, this many days after the event.', min=0.0)
    keyframes: float = param(30.0, 'Keyframe images referenced by episodic events (raw_refs image files; the nodes '
                                   'store none today): deleted this many days after the event.', min=0.0)
    episodic: float = param(365.0, 'Episodic events M_e (and the text of their level-0 S_g node) this many days '
                                   'after they ended.', min=0.0)
    semantic: float = param(0.0, 'Facts M_s not pinned by "Remember that ..." this many days after they were last '
                                 'met (pinned facts stay until forgotten).', min=0.0)
    profiles: float = param(0.0, 'A person not seen for this many days is forgotten entirely (profile, face, '
                                 'entries about them), as a Forget of their face would.', min=0.0)

    def check(self) -> None:
        """Raw inputs expire no later than the events that point to them."""
        for raw in ('raw_audio', 'keyframes'):
            if self.episodic and (not getattr(self, raw) or getattr(self, raw) > self.episodic):
                raise ConfigError(f'{raw}: raw inputs must expire no later than episodic ({self.episodic:g} days)')


@dataclass
class PrivacyConfig:
    """Encryption at rest, raw audio, and the retention schedule."""

    encryption: str = param('auto', 'SQLCipher encryption of memory.db: "auto" (on when a key is found), "on" (a '
                                    'missing key fails configure) or "off".', choices=['auto', 'on', 'off'])
    key_env: str = param('LIGHTOMNI_MEMORY_KEY', 'Environment variable holding the passphrase (checked first).')
    key_file: str = param('', 'File holding the passphrase; it must belong to the node\'s user with mode 600 (a key '
                              'others can read is refused).')
    store_raw_audio: bool = param(True, 'Keep the audio clips Topics point to; false drops every raw_refs entry of '
                                        'an arriving Topic and deletes its file (set perception\'s '
                                        'segments.audio_store: none too, so no clip is ever written).')
    audio_dir: str = param('', 'Folder of perception\'s segment WAVs (its segments.audio_dir; empty: the same '
                               'default, <cache_dir>/segments). Forgets and expiry delete referenced files there '
                               'and in <memory_dir>/audio only, never elsewhere.')
    retention_check_s: float = param(3600.0, 'Period of the retention pass (also run at activation).', min=1.0)


__all__ = ['RetentionConfig', 'PrivacyConfig', 'DAY_S']
