# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Raw input files that memory points to (``raw_refs``: segment audio clips, keyframes): deleted on forget and expiry.

Only files inside the known raw folders are ever deleted, and only regular files (never a symlink): a reference that
arrived in a hostile Topic or backup ("file:///etc/passwd", "../../x") is ignored, not followed.
"""

from __future__ import annotations

import logging
import os
import pathlib
import urllib.parse
from typing import Iterable

log = logging.getLogger('lightomni.consolidation')

AUDIO_SUFFIXES = ('.wav', '.flac', '.ogg', '.mp3')
IMAGE_SUFFIXES = ('.jpg', '.jpeg', '.png', '.webp')


def ref_path(ref: str) -> pathlib.Path | None:
    """The local path of a ``file://`` URI or a plain absolute path; None for anything else."""
    if ref.startswith('file://'):
        parsed = urllib.parse.urlparse(ref)
        if parsed.netloc not in ('', 'localhost'):
            return None
        path = urllib.parse.unquote(parsed.path)
    else:
        path = ref
    return pathlib.Path(path) if path.startswith('/') else None


def is_audio(ref: str) -> bool:
    """Whether a reference names an audio clip."""
    return ref.lower().endswith(AUDIO_SUFFIXES)


def is_image(ref: str) -> bool:
    """Whether a reference names a keyframe image."""
    return ref.lower().endswith(IMAGE_SUFFIXES)


class RawFiles:
    """Deletes referenced raw files inside ``roots`` only."""

    def __init__(self, roots: Iterable[str | os.PathLike]) -> None:
        self.roots = [pathlib.Path(r).expanduser().resolve() for r in roots]

    def inside(self, ref: str) -> pathlib.Path | None:
        """The file a reference names when it lies inside a root (after resolving ``..``), else None."""
        path = ref_path(ref)
        if path is None:
            return None
        parent = path.parent.resolve()     # the folder may hold symlinks; the file itself must not be one
        full = parent / path.name
        return full if any(parent == r or r in parent.parents for r in self.roots) else None

    def delete(self, refs: Iterable[str]) -> int:
        """Delete the regular files the references name inside the roots; return how many were deleted."""
        n = 0
        for ref in refs:
            path = self.inside(ref)
            if path is None:
                if ref:
                    log.info('raw reference %r is outside the raw folders: not deleted', ref[:200])
                continue
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                path.unlink()
                n += 1
            except OSError as e:
                log.warning('cannot delete %s: %s', path, e)
        return n


__all__ = ['RawFiles', 'ref_path', 'is_audio', 'is_image', 'AUDIO_SUFFIXES', 'IMAGE_SUFFIXES']
