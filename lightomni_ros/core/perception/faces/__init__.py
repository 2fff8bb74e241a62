# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Faces: detector + embedder backends (dlib, insightface), a tracker with EMA embeddings, an identity registry."""

from .backend import FaceBackend, FaceDetection, FacesConfig
from .factory import make_backend
from .registry import Identity, IdentityEvent, IdentityRegistry
from .tracker import FacePipeline, Track, Tracker

__all__ = ['FaceBackend', 'FaceDetection', 'FacesConfig', 'make_backend', 'Identity', 'IdentityEvent',
           'IdentityRegistry', 'FacePipeline', 'Track', 'Tracker']
