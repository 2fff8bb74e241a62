# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The choice of face backend from config and the model packs present (kept apart so backends never import it)."""

from __future__ import annotations

from ...models import ModelResolver
from .backend import FaceBackend, FacesConfig


def make_backend(cfg: FacesConfig, resolver: ModelResolver | None = None, threads: int = 1) -> FaceBackend:
    """The configured backend: insightface when chosen (or auto and its pack exists), else dlib."""
    resolver = resolver or ModelResolver()
    choice = cfg.backend
    if choice == 'auto':
        choice = 'insightface' if resolver.available('face_insightface') else 'dlib'
    if choice == 'insightface':
        from .insightface_backend import InsightFaceBackend

        return InsightFaceBackend(resolver.resolve('face_insightface').path, cfg, threads=threads)
    from .dlib_backend import DlibBackend

    return DlibBackend(resolver.resolve('face_dlib').path, cfg)


__all__ = ['make_backend']
