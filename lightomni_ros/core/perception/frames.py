# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Keyframes: 1 fps sampling from any camera rate, a blur filter, a near-duplicate filter, and visual hints.

Frames are decoded and validated by :func:`decode_image` / :func:`decode_compressed`; :class:`KeyframeSampler` picks
one frame per period from the stamps alone (cheap enough for the subscription callback); :class:`KeyframeFilter` drops
blurred frames (variance of the Laplacian) and near-duplicates (cosine similarity of EfficientNet-Lite0 features,
exported once to ONNX under ``cache_dir()``), and names the top ImageNet classes as short visual hints.
"""

from __future__ import annotations

import logging
import os
import pathlib
import threading
from dataclasses import dataclass, field

import numpy as np

from ..config import param
from ..models import ModelResolver, cache_dir, content_key
from .imagenet_labels import LABELS

log = logging.getLogger('lightomni.perception')

#: encoding -> (channels, numpy dtype, conversion to RGB: cv2 colour code or None)
ENCODINGS = {'rgb8': 3, 'bgr8': 3, 'rgba8': 4, 'bgra8': 4, 'mono8': 1, 'mono16': 1}
MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255.0
STD = np.array([0.229, 0.224, 0.225], np.float32) * 255.0


class ImageFormatError(ValueError):
    """A frame cannot be used: the message names the problem (reported as a diagnostics WARN)."""

    def __init__(self, key: str, text: str) -> None:
        super().__init__(text)
        self.key = key


@dataclass
class FramesConfig:
    """Camera frames and keyframes."""

    image_transport: str = param('raw', 'Camera input: sensor_msgs/Image on camera/image_raw (raw) or '
                                        'CompressedImage on camera/image_raw/compressed (compressed).',
                                 choices=['raw', 'compressed'])
    keyframe_hz: float = param(1.0, 'Keyframe sampling rate (the paper uses 1 fps).', min=0.05, max=30.0)
    blur_threshold: float = param(15.0, 'Frames whose variance of the Laplacian (grey, 320 px wide) is below this are '
                                        'dropped as blurred; 0 disables.', min=0.0)
    encoder: bool = param(True, 'Compute EfficientNet-Lite0 features (near-duplicate filter, Keyframe.feature, hints).')
    duplicate_similarity: float = param(0.92, 'A keyframe whose feature cosine similarity to the last kept one is '
                                              'above this is a near-duplicate and dropped; 1 disables.',
                                        min=0.0, max=1.0)
    max_duplicate_gap_s: float = param(10.0, 'A near-duplicate is still kept when the last kept keyframe is this old '
                                             '(a static scene still shows up in segments).', min=0.0)
    hint_top_k: int = param(3, 'Top ImageNet labels considered as visual hints per keyframe.', min=0, max=10)
    hint_min_prob: float = param(0.15, 'Minimum class probability of a visual hint.', min=0.0, max=1.0)
    jpeg_quality: int = param(80, 'JPEG quality of keyframes in segments.', min=10, max=100)
    jpeg_max_side: int = param(640, 'Keyframes are downscaled to this longest side before JPEG encoding.', min=64)
    max_keyframes: int = param(30, 'Most keyframes kept per segment (evenly thinned beyond).', min=1)
    max_pixels: int = param(16_000_000, 'Frames with more pixels are rejected as absurd.', min=64)
    threads: int = param(1, 'onnxruntime intra-op threads for the image encoder.', min=1)


def decode_image(encoding: str, width: int, height: int, step: int, data: bytes | memoryview,
                 max_pixels: int = 16_000_000) -> np.ndarray:
    """Validate a sensor_msgs/Image payload and return an RGB uint8 array (raises ImageFormatError)."""
    import cv2

    enc = (encoding or '').lower()
    if enc not in ENCODINGS:
        raise ImageFormatError('image_encoding', f'unsupported encoding {encoding!r} (use {sorted(ENCODINGS)})')
    if width <= 0 or height <= 0:
        raise ImageFormatError('image_size', f'empty image {width}x{height}')
    if width * height > max_pixels:
        raise ImageFormatError('image_size', f'absurd image size {width}x{height}')
    ch = ENCODINGS[enc]
    bpp = ch * (2 if enc == 'mono16' else 1)
    if step < width * bpp:
        raise ImageFormatError('image_step', f'step {step} < width {width} x {bpp} bytes per pixel')
    n = len(data)
    if n == 0:
        raise ImageFormatError('image_empty', 'empty image data')
    if n != step * height:
        raise ImageFormatError('image_data_size', f'data holds {n} bytes, expected step {step} x height {height} = '
                                                  f'{step * height} (truncated or wrong size)')
    buf = np.frombuffer(data, np.uint8).reshape(height, step)[:, :width * bpp]
    if enc == 'mono16':
        gray = (buf.copy().view('<u2') >> 8).astype(np.uint8)
        return cv2.cvtColor(gray, cv2.COLOR_GRAY2RGB)
    img = buf.reshape(height, width, ch)
    if enc == 'rgb8':
        return np.ascontiguousarray(img)
    code = {'bgr8': cv2.COLOR_BGR2RGB, 'rgba8': cv2.COLOR_RGBA2RGB, 'bgra8': cv2.COLOR_BGRA2RGB,
            'mono8': cv2.COLOR_GRAY2RGB}[enc]
    return cv2.cvtColor(np.ascontiguousarray(img), code)


def decode_compressed(fmt: str, data: bytes | memoryview, max_pixels: int = 16_000_000) -> np.ndarray:
    """Decode a sensor_msgs/CompressedImage (JPEG/PNG) to RGB uint8 (raises ImageFormatError)."""
    import cv2

    if len(data) == 0:
        raise ImageFormatError('image_empty', 'empty compressed image data')
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise ImageFormatError('image_decode', f'compressed image (format {fmt!r}) does not decode: corrupt or '
                                               'truncated')
    if img.shape[0] * img.shape[1] > max_pixels:
        raise ImageFormatError('image_size', f'absurd image size {img.shape[1]}x{img.shape[0]}')
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def encode_jpeg(rgb: np.ndarray, quality: int = 80, max_side: int = 0) -> bytes:
    """JPEG bytes of an RGB image (downscaled to ``max_side`` when given)."""
    import cv2

    if max_side and max(rgb.shape[:2]) > max_side:
        f = max_side / max(rgb.shape[:2])
        rgb = cv2.resize(rgb, (max(1, round(rgb.shape[1] * f)), max(1, round(rgb.shape[0] * f))),
                         interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode('.jpg', cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    return buf.tobytes() if ok else b''


def sharpness(rgb: np.ndarray) -> float:
    """Variance of the Laplacian of the grey image at 320 px width (resolution-independent blur measure)."""
    import cv2

    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    h, w = gray.shape
    if w != 320:
        gray = cv2.resize(gray, (320, max(1, round(h * 320 / w))), interpolation=cv2.INTER_AREA)
    return float(cv2.Laplacian(gray, cv2.CV_64F).var())


class KeyframeSampler:
    """Chooses one frame per ``1/rate`` seconds from stamps; stamps going backwards restart the clock."""

    def __init__(self, rate_hz: float = 1.0) -> None:
        self.period = 1.0 / rate_hz
        self.next_t: float | None = None

    def due(self, stamp: float) -> bool:
        """Whether a frame stamped ``stamp`` should become a keyframe candidate (does not commit)."""
        if self.next_t is None or stamp >= self.next_t:
            return True
        return stamp < self.next_t - 2 * self.period - 1.0     # clock jumped backwards

    def take(self, stamp: float) -> None:
        """Commit ``stamp`` as sampled: the next one is due a period later (no drift at any camera rate)."""
        if self.next_t is None or stamp >= self.next_t + self.period or stamp < self.next_t - 2 * self.period - 1.0:
            self.next_t = stamp + self.period
        else:
            self.next_t += self.period


def export_encoder(weights: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """Export EfficientNet-Lite0 (pooled 1280-d feature + ImageNet logits) to ONNX at ``out``."""
    import torch
    from efficientnet_lite_pytorch import EfficientNet

    class _Both(torch.nn.Module):
        def __init__(self, net: torch.nn.Module) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            f = self.net.extract_features(x).mean(dim=(2, 3))
            return f, self.net._fc(f)

    net = EfficientNet.from_name('efficientnet-lite0')
    net.load_state_dict(torch.load(str(weights), map_location='cpu', weights_only=True))
    net.set_swish(memory_efficient=False)   # the autograd-function swish does not export
    model = _Both(net).eval()
    tmp = out.with_suffix(f'.tmp{os.getpid()}')
    with torch.no_grad():
        torch.onnx.export(model, torch.zeros(1, 3, 224, 224), str(tmp), input_names=['image'],
                          output_names=['feature', 'logits'], dynamic_axes={'image': {0: 'n'}}, opset_version=17,
                          dynamo=False)
    os.replace(tmp, out)        # atomic: concurrent exporters never see a partial file
    return out


class ImageEncoder:
    """EfficientNet-Lite0 on onnxruntime: L2-normalised 1280-d features and ImageNet class probabilities."""

    def __init__(self, resolver: ModelResolver | None = None, threads: int = 1) -> None:
        import onnxruntime as ort

        weights = (resolver or ModelResolver()).resolve('image_encoder').path
        if weights.is_dir():
            onnx_files = sorted(weights.glob('*.onnx'))
            pths = sorted(weights.glob('*.pth'))
            if onnx_files:
                path = onnx_files[0]
            elif pths:
                weights = pths[0]
                path = None
            else:
                raise FileNotFoundError(f'no .onnx or .pth in the image encoder pack {weights}')
        else:
            path = None
        if path is None:
            path = cache_dir() / f'efficientnet-lite0-{content_key(weights)}.onnx'
            if not path.exists():
                log.info('exporting EfficientNet-Lite0 to %s (once)', path)
                export_encoder(weights, path)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), sess_options=opts, providers=['CPUExecutionProvider'])
        self.path = path

    def __call__(self, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(normalised feature, class probabilities) of one RGB image."""
        import cv2

        x = cv2.resize(rgb, (224, 224), interpolation=cv2.INTER_AREA).astype(np.float32)
        x = ((x - MEAN) / STD).transpose(2, 0, 1)[None]
        feat, logits = self.session.run(None, {'image': np.ascontiguousarray(x)})
        f = feat[0] / (np.linalg.norm(feat[0]) + 1e-12)
        z = logits[0] - logits[0].max()
        p = np.exp(z)
        return f.astype(np.float32), (p / p.sum()).astype(np.float32)


def top_labels(probs: np.ndarray, k: int, min_prob: float) -> list[str]:
    """Names of the top-``k`` classes above ``min_prob``."""
    if k <= 0:
        return []
    idx = np.argsort(-probs)[:k]
    return [LABELS[i] for i in idx if probs[i] >= min_prob]


@dataclass
class KeyframeResult:
    """A candidate keyframe after the filters: kept or dropped (with why)."""

    stamp: float
    kept: bool
    reason: str = ''                      # 'blur' or 'duplicate' when dropped
    sharpness: float = 0.0
    similarity: float = 0.0               # to the last kept keyframe (0 without encoder)
    feature: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), repr=False)
    hints: list[str] = field(default_factory=list)


class KeyframeFilter:
    """Blur and near-duplicate filters plus visual hints, for sampled frames in time order."""

    def __init__(self, cfg: FramesConfig, encoder: ImageEncoder | None) -> None:
        self.cfg = cfg
        self.encoder = encoder
        self._last_feature: np.ndarray | None = None
        self._last_kept_t: float | None = None
        self._lock = threading.Lock()

    def process(self, rgb: np.ndarray, stamp: float) -> KeyframeResult:
        """Filter one sampled frame."""
        s = sharpness(rgb)
        if self.cfg.blur_threshold > 0 and s < self.cfg.blur_threshold:
            return KeyframeResult(stamp, False, 'blur', s)
        if self.encoder is None:
            self._last_kept_t = stamp
            return KeyframeResult(stamp, True, '', s)
        feat, probs = self.encoder(rgb)
        with self._lock:
            sim = float(feat @ self._last_feature) if self._last_feature is not None else 0.0
            recent = self._last_kept_t is not None and 0 <= stamp - self._last_kept_t < self.cfg.max_duplicate_gap_s
            if sim > self.cfg.duplicate_similarity and recent:
                return KeyframeResult(stamp, False, 'duplicate', s, sim, feat)
            self._last_feature = feat
            self._last_kept_t = stamp
        return KeyframeResult(stamp, True, '', s, sim, feat, top_labels(probs, self.cfg.hint_top_k,
                                                                        self.cfg.hint_min_prob))
