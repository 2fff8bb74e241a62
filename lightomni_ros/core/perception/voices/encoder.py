# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Speaker embeddings: the Resemblyzer voice encoder (GE2E, 3-layer LSTM, 256-d), run without its package code.

The weights ship inside the ``resemblyzer`` PyPI package (``pretrained.pt``), found through the model resolver's
``voice`` role and loaded with ``torch.load(weights_only=True)`` (tensors only, no code). The package's own code needs
librosa and webrtcvad, so the network and its input are rebuilt here: a 40-band mel power spectrogram (25 ms
Hann windows every 10 ms, Slaney mel scale as librosa makes it) of audio raised to -30 dBFS, 1.6 s partial windows,
the LSTM's last hidden state through a linear layer and a ReLU, L2-normalised (exported once to ONNX under
``cache_dir()``, keyed by the weights' content). Cosine similarity compares voices.
"""

from __future__ import annotations

import logging
import os
import pathlib

import numpy as np

from ...models import cache_dir, content_key

log = logging.getLogger('lightomni.perception')

RATE = 16000
N_FFT = 400              # 25 ms
HOP = 160                # 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160     # 1.6 s per partial window
TARGET_DBFS = -30.0


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above."""
    f = np.asarray(f, np.float64)
    mel = f / (200.0 / 3)
    log_part = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(f >= 1000.0, log_part, mel)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, np.float64)
    return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), (200.0 / 3) * m)


def mel_filters(rate: int = RATE, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """Triangular mel filters with Slaney area normalisation, (n_mels, n_fft // 2 + 1)."""
    fft_f = np.fft.rfftfreq(n_fft, 1.0 / rate)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(rate / 2.0), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_f[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    w = np.maximum(0.0, np.minimum(lower, upper))
    return (w * (2.0 / (mel_f[2:] - mel_f[:-2]))[:, None]).astype(np.float32)


_FILTERS = mel_filters()
_WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)


def normalize_volume(wav: np.ndarray, target_dbfs: float = TARGET_DBFS) -> np.ndarray:
    """Raise quiet audio to ``target_dbfs`` (never lowered), as the encoder was trained."""
    rms = float(np.sqrt(np.mean(np.square(wav, dtype=np.float64)))) if len(wav) else 0.0
    if rms <= 1e-9:
        return wav
    change = target_dbfs - 20 * np.log10(rms)
    return wav * np.float32(10 ** (change / 20)) if change > 0 else wav


def mel_spectrogram(wav: np.ndarray) -> np.ndarray:
    """(frames, 40) mel power spectrogram of 16 kHz audio (frames centred every 10 ms, reflect-padded ends)."""
    wav = np.asarray(wav, np.float32)
    pad = N_FFT // 2
    x = np.pad(wav, pad, mode='reflect') if len(wav) > pad else np.pad(wav, pad)
    n = 1 + (len(x) - N_FFT) // HOP
    frames = np.lib.stride_tricks.as_strided(x, (n, N_FFT), (x.strides[0] * HOP, x.strides[0]))
    power = np.abs(np.fft.rfft(frames * _WINDOW, axis=1)) ** 2
    return (power.astype(np.float32) @ _FILTERS.T).astype(np.float32)


def export_encoder(weights: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """Export the LSTM encoder (mel windows (n, 160, 40) -> L2-normalised (n, 256)) to ONNX at ``out``."""
    import torch

    class _Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(N_MELS, 256, 3, batch_first=True)
            self.linear = torch.nn.Linear(256, 256)

        def forward(self, mels: torch.Tensor) -> torch.Tensor:
            _, (h, _) = self.lstm(mels)
            e = torch.relu(self.linear(h[-1]))
            return e / e.norm(dim=1, keepdim=True).clamp_min(1e-9)

    state = torch.load(str(weights), map_location='cpu', weights_only=True)['model_state']
    net = _Encoder()
    net.load_state_dict({k: v for k, v in state.items() if k.startswith(('lstm.', 'linear.'))})
    tmp = out.with_suffix(f'.tmp{os.getpid()}')
    with torch.no_grad():
        torch.onnx.export(net.eval(), torch.zeros(2, PARTIAL_FRAMES, N_MELS), str(tmp), input_names=['mels'],
                          output_names=['embedding'], dynamic_axes={'mels': {0: 'n'}, 'embedding': {0: 'n'}},
                          opset_version=17, dynamo=False)
    os.replace(tmp, out)        # atomic: concurrent exporters never see a partial file
    return out


class VoiceEncoder:
    """Resemblyzer's LSTM speaker encoder, exported once to ONNX and run by onnxruntime (one thread by default).

    Torch's LSTM on two shared cores took 40-900 ms per window depending on the load; onnxruntime on one thread is
    steadier and faster.
    """

    dim = 256
    name = 'resemblyzer'

    def __init__(self, weights: str | pathlib.Path, device: str = 'cpu', threads: int = 1) -> None:
        import onnxruntime as ort

        self.weights = pathlib.Path(weights)
        self.path = cache_dir() / f'resemblyzer-{content_key(self.weights)}.onnx'
        if not self.path.exists():
            log.info('exporting the voice encoder to %s (once)', self.path)
            export_encoder(self.weights, self.path)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        providers = ['CPUExecutionProvider']
        if device == 'cuda' and 'CUDAExecutionProvider' in ort.get_available_providers():
            providers.insert(0, 'CUDAExecutionProvider')
        self.session = ort.InferenceSession(str(self.path), sess_options=opts, providers=providers)

    def partials(self, mels: np.ndarray) -> np.ndarray:
        """Embeddings of a batch of 160-frame mel windows (batch, 160, 40) -> (batch, 256), L2-normalised."""
        return self.session.run(None, {'mels': np.ascontiguousarray(mels, np.float32)})[0]

    def windows(self, wav: np.ndarray, hop_s: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
        """Embeddings of 1.6 s windows every ``hop_s`` over ``wav``: (centres in seconds, (n, 256)).

        Audio shorter than one window is zero-padded to one window.
        """
        mel = mel_spectrogram(normalize_volume(np.asarray(wav, np.float32)))
        if len(mel) < PARTIAL_FRAMES:
            mel = np.pad(mel, ((0, PARTIAL_FRAMES - len(mel)), (0, 0)))
        step = max(1, int(round(hop_s * RATE / HOP)))
        starts = list(range(0, len(mel) - PARTIAL_FRAMES + 1, step))
        if starts[-1] < len(mel) - PARTIAL_FRAMES - step // 2:
            starts.append(len(mel) - PARTIAL_FRAMES)
        batch = np.stack([mel[s:s + PARTIAL_FRAMES] for s in starts])
        centres = (np.asarray(starts) + PARTIAL_FRAMES / 2) * HOP / RATE
        return centres, self.partials(batch)

    def embed(self, wav: np.ndarray) -> np.ndarray:
        """One embedding for an utterance: the normalised mean of its windows."""
        _, e = self.windows(wav, hop_s=1 / 1.3)
        m = e.mean(axis=0)
        return (m / max(float(np.linalg.norm(m)), 1e-9)).astype(np.float32)


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two voice embeddings."""
    return float(np.dot(a, b) / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-9))
