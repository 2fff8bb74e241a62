# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""dlib face backend: HOG detector, 5-point landmarks, ResNet 128-d embedding (weights of face-recognition-models).

The weights folder comes from the resolver (``face_dlib`` role); the ``face_recognition_models`` package is never
imported (it needs pkg_resources).
"""

from __future__ import annotations

import pathlib

import numpy as np

from .backend import FaceDetection, FacesConfig, crop, downscale


class DlibBackend:
    """HOG + landmarks + ResNet embedding; euclidean distance (same person about 0.1-0.5, others about 0.7+)."""

    name = 'dlib'
    dim = 128
    default_threshold = 0.55

    def __init__(self, models: str | pathlib.Path, cfg: FacesConfig) -> None:
        import dlib

        models = pathlib.Path(models)
        self.cfg = cfg
        self._detector = dlib.get_frontal_face_detector()
        self._shape = dlib.shape_predictor(str(models / 'shape_predictor_5_face_landmarks.dat'))
        self._encoder = dlib.face_recognition_model_v1(str(models / 'dlib_face_recognition_resnet_model_v1.dat'))
        self._rect = dlib.rectangle

    @staticmethod
    def score(raw: float) -> float:
        """Map a HOG SVM margin (about 0..3) to [0, 1]."""
        return float(1.0 - np.exp(-max(0.0, raw)))

    def detect(self, rgb: np.ndarray) -> list[FaceDetection]:
        """Detect, gate, and embed the faces of an RGB image."""
        small, back = downscale(rgb, self.cfg.detect_max_side)
        small = np.ascontiguousarray(small)
        rects, scores, _ = self._detector.run(small, 0, 0.0)
        found = []
        for r, s in zip(rects, scores):
            box = (r.left() * back, r.top() * back, r.right() * back, r.bottom() * back)
            det = FaceDetection(box, self.score(s), np.zeros(0, np.float32))
            if det.score < self.cfg.min_score or det.size < self.cfg.min_face_px:
                continue
            found.append((det, r))
        found.sort(key=lambda d: -d[0].size)
        out = []
        for det, r in found[:self.cfg.max_faces]:
            shape = self._shape(small, r)
            det.embedding = np.asarray(self._encoder.compute_face_descriptor(small, shape, 0), np.float32)
            det.crop = crop(rgb, det.box, self.cfg.avatar_px)
            out.append(det)
        return out

    def distance(self, a: np.ndarray, b: np.ndarray) -> float:
        """Euclidean distance."""
        return float(np.linalg.norm(np.asarray(a) - np.asarray(b)))
