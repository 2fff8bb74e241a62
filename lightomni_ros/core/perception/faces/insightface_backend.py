# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""insightface buffalo_s backend on onnxruntime: SCRFD detector + 5 landmarks, ArcFace (MobileFaceNet) 512-d embedding.

Used when the ``buffalo_s`` pack (the folder insightface unpacks: det_500m.onnx, w600k_mbf.onnx, ...) is in the
models directory. The insightface Python package is not needed: detection decoding, alignment and embedding are
done here with onnxruntime and OpenCV, following the pack's published pre/post-processing.
"""

from __future__ import annotations

import pathlib

import numpy as np

from .backend import FaceDetection, FacesConfig, crop

#: ArcFace 112x112 landmark template (eyes, nose, mouth corners)
ARCFACE_DST = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655],
                        [70.7299, 92.2041]], np.float32)


def anchor_centers(h: int, w: int, stride: int, num_anchors: int) -> np.ndarray:
    """(h*w*num_anchors, 2) anchor centres in input pixels, row-major, anchors repeated per cell."""
    ys, xs = np.mgrid[:h, :w]
    centers = (np.stack([xs, ys], axis=-1).astype(np.float32) * stride).reshape(-1, 2)
    return np.repeat(centers, num_anchors, axis=0) if num_anchors > 1 else centers


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Greedy non-maximum suppression; indices kept, best first."""
    order = np.argsort(-scores)
    keep = []
    while order.size:
        i = order[0]
        keep.append(int(i))
        xx1 = np.maximum(boxes[i, 0], boxes[order[1:], 0])
        yy1 = np.maximum(boxes[i, 1], boxes[order[1:], 1])
        xx2 = np.minimum(boxes[i, 2], boxes[order[1:], 2])
        yy2 = np.minimum(boxes[i, 3], boxes[order[1:], 3])
        inter = np.maximum(0, xx2 - xx1) * np.maximum(0, yy2 - yy1)
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        ov = inter / (area[i] + area[order[1:]] - inter + 1e-9)
        order = order[1:][ov <= iou]
    return keep


def decode_scrfd(outputs: list[np.ndarray], size: tuple[int, int], threshold: float,
                 strides: tuple[int, ...] = (8, 16, 32), num_anchors: int = 2,
                 nms_iou: float = 0.4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SCRFD raw outputs (scores x3, boxes x3, keypoints x3) -> boxes (n, 4), scores (n,), keypoints (n, 5, 2)."""
    h, w = size
    nf = len(strides)
    all_b, all_s, all_k = [], [], []
    for i, stride in enumerate(strides):
        scores = outputs[i].reshape(-1)
        dist = outputs[i + nf].reshape(-1, 4) * stride
        kps = outputs[i + 2 * nf].reshape(-1, 10) * stride if len(outputs) >= 3 * nf else None
        c = anchor_centers(h // stride, w // stride, stride, num_anchors)
        sel = np.nonzero(scores >= threshold)[0]
        if not sel.size:
            continue
        cc = c[sel]
        d = dist[sel]
        all_b.append(np.stack([cc[:, 0] - d[:, 0], cc[:, 1] - d[:, 1], cc[:, 0] + d[:, 2], cc[:, 1] + d[:, 3]], 1))
        all_s.append(scores[sel])
        if kps is not None:
            k = kps[sel].reshape(-1, 5, 2) + cc[:, None, :]
            all_k.append(k)
        else:
            all_k.append(np.zeros((sel.size, 5, 2), np.float32))
    if not all_b:
        return np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros((0, 5, 2), np.float32)
    boxes, scores, kps = np.concatenate(all_b), np.concatenate(all_s), np.concatenate(all_k)
    keep = nms(boxes, scores, nms_iou)
    return boxes[keep], scores[keep], kps[keep]


class InsightFaceBackend:
    """buffalo_s: SCRFD-500M detection, ArcFace MobileFaceNet embedding; cosine distance."""

    name = 'insightface'
    dim = 512
    default_threshold = 0.6          # cosine distance (similarity 0.4)

    def __init__(self, pack: str | pathlib.Path, cfg: FacesConfig, threads: int = 1, det_size: int = 640) -> None:
        import onnxruntime as ort

        pack = pathlib.Path(pack)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        self.cfg = cfg
        self.det_size = det_size
        det = rec = None
        for f in sorted(pack.glob('*.onnx')):
            s = ort.InferenceSession(str(f), sess_options=opts, providers=['CPUExecutionProvider'])
            shape = s.get_inputs()[0].shape
            if len(s.get_outputs()) in (6, 9) and det is None:
                det = s
            elif shape[-1] == 112 and shape[-2] == 112 and len(s.get_outputs()) == 1 and \
                    s.get_outputs()[0].shape[-1] == 512 and rec is None:
                rec = s
        if det is None or rec is None:
            raise FileNotFoundError(f'{pack}: no SCRFD detector and/or 112x112 ArcFace recogniser ONNX found')
        self._det, self._rec = det, rec

    def detect(self, rgb: np.ndarray) -> list[FaceDetection]:
        """Detect, gate, align and embed the faces of an RGB image."""
        import cv2

        h, w = rgb.shape[:2]
        scale = self.det_size / max(h, w)
        nh, nw = int(round(h * scale)), int(round(w * scale))
        canvas = np.zeros((self.det_size, self.det_size, 3), np.float32)
        canvas[:nh, :nw] = cv2.resize(rgb, (nw, nh))
        blob = ((canvas - 127.5) / 128.0).transpose(2, 0, 1)[None].astype(np.float32)
        outs = self._det.run(None, {self._det.get_inputs()[0].name: blob})
        boxes, scores, kps = decode_scrfd(outs, (self.det_size, self.det_size), max(0.3, self.cfg.min_score))
        found = []
        for b, s, k in zip(boxes / scale, scores, kps / scale):
            det = FaceDetection(tuple(float(v) for v in b), float(s), np.zeros(0, np.float32))
            if det.score < self.cfg.min_score or det.size < self.cfg.min_face_px:
                continue
            found.append((det, k))
        found.sort(key=lambda d: -d[0].size)
        out = []
        for det, k in found[:self.cfg.max_faces]:
            m, _ = cv2.estimateAffinePartial2D(k.astype(np.float32), ARCFACE_DST, method=cv2.LMEDS)
            if m is None:
                continue
            face = cv2.warpAffine(rgb, m, (112, 112), borderValue=0.0).astype(np.float32)
            x = ((face - 127.5) / 127.5).transpose(2, 0, 1)[None]
            e = self._rec.run(None, {self._rec.get_inputs()[0].name: x})[0][0]
            det.embedding = (e / (np.linalg.norm(e) + 1e-12)).astype(np.float32)
            det.crop = crop(rgb, det.box, self.cfg.avatar_px)
            out.append(det)
        return out

    def distance(self, a: np.ndarray, b: np.ndarray) -> float:
        """Cosine distance of (normalised) embeddings."""
        a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
        return float(1.0 - a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))
