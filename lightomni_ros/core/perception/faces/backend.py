# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The face backend protocol (detect + embed), its config, and image helpers the backends share."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ...config import param

log = logging.getLogger('lightomni.perception')


@dataclass
class FacesConfig:
    """Face detection, tracking and identities."""

    enabled: bool = param(True, 'Run face detection and identities on keyframes.')
    backend: str = param('auto', 'Face backend: insightface (buffalo_s pack in models_dir), dlib (PyPI), or auto '
                                 '(insightface when its pack exists, else dlib).',
                         choices=['auto', 'dlib', 'insightface'])
    min_face_px: int = param(40, 'Quality gate: smaller faces (box side in source pixels) are ignored.', min=8)
    min_score: float = param(0.4, 'Quality gate: detector confidence mapped to [0, 1] below which faces are ignored.',
                             min=0.0, max=1.0)
    detect_max_side: int = param(960, 'Images are downscaled to this longest side before detection.', min=160)
    max_faces: int = param(10, 'Most faces handled per keyframe (largest first).', min=1)
    match_threshold: float = param(0.0, 'Embedding distance under which two faces are the same person; 0 uses the '
                                        "backend's default (dlib 0.55 euclidean, insightface 0.6 cosine).", min=0.0)
    track_iou: float = param(0.3, 'Box overlap (IoU) that lets a detection continue a track with a looser '
                                  'appearance check.', min=0.0, max=1.0)
    track_max_age: int = param(5, 'Keyframes a track survives without a detection.', min=0)
    ema_alpha: float = param(0.3, "Weight of a new observation in a track's embedding EMA (paper A.1).",
                             min=0.01, max=1.0)
    confirm_hits: int = param(3, 'Consistent detections a track needs before a new identity is created for it.',
                              min=1)
    update_every: int = param(10, 'Observations between OP_UPDATE reports of an identity embedding.', min=1)
    avatar_px: int = param(128, 'Longest side of the avatar crop sent with a new identity.', min=32)


@dataclass
class FaceDetection:
    """One face: box (x0, y0, x1, y1) in source pixels, confidence in [0, 1], embedding, avatar crop (RGB)."""

    box: tuple[float, float, float, float]
    score: float
    embedding: np.ndarray
    crop: np.ndarray | None = field(default=None, repr=False)

    @property
    def size(self) -> float:
        """Shorter side of the box."""
        return min(self.box[2] - self.box[0], self.box[3] - self.box[1])


class FaceBackend(Protocol):
    """A face detector + embedder."""

    name: str
    dim: int
    default_threshold: float

    def detect(self, rgb: np.ndarray) -> list[FaceDetection]:
        """Faces in an RGB uint8 image (boxes in its pixels)."""

    def distance(self, a: np.ndarray, b: np.ndarray) -> float:
        """Distance between two embeddings (0 = same)."""


def downscale(rgb: np.ndarray, max_side: int) -> tuple[np.ndarray, float]:
    """Image resized so its longest side is at most ``max_side``, and the factor back to source pixels."""
    import cv2

    h, w = rgb.shape[:2]
    s = max(h, w)
    if s <= max_side:
        return rgb, 1.0
    f = max_side / s
    return cv2.resize(rgb, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA), 1.0 / f


def crop(rgb: np.ndarray, box: tuple[float, float, float, float], max_px: int, margin: float = 0.2) -> np.ndarray:
    """Face crop with a margin, at most ``max_px`` on its longest side."""
    import cv2

    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = box
    mx, my = (x1 - x0) * margin, (y1 - y0) * margin
    a, b = max(0, int(x0 - mx)), max(0, int(y0 - my))
    c, d = min(w, int(x1 + mx)), min(h, int(y1 + my))
    out = rgb[b:d, a:c]
    if out.size == 0:
        return np.zeros((1, 1, 3), np.uint8)
    s = max(out.shape[:2])
    if s > max_px:
        f = max_px / s
        out = cv2.resize(out, (max(1, round(out.shape[1] * f)), max(1, round(out.shape[0] * f))),
                         interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(out)
