# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Accelerators: a GPU the system shows, and whether torch (CUDA), ONNX Runtime, TensorRT and FAISS can use it."""

from __future__ import annotations

import glob
import importlib.util
import shutil
import subprocess

from .record import OK, WARN, Check, Context

GPU_FIX = 'on an NVIDIA robot run `make setup GPU=1` (CUDA torch, onnxruntime-gpu, faiss-gpu-cu12, tensorrt; ' \
          'requirements/gpu.txt)'


def system_gpus() -> list[str]:
    """GPU names nvidia-smi lists ([] without an NVIDIA driver); device files when nvidia-smi is missing."""
    if shutil.which('nvidia-smi'):
        try:
            out = subprocess.run(['nvidia-smi', '--query-gpu=name', '--format=csv,noheader'], capture_output=True,
                                 text=True, timeout=20)
            return [line.strip() for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []
        except (OSError, subprocess.TimeoutExpired):
            return []
    return ['NVIDIA device'] * len(glob.glob('/dev/nvidia[0-9]*'))


def check(ctx: Context) -> list[Check]:
    """One finding for the GPU and torch, one for ONNX Runtime / TensorRT, one for FAISS."""
    gpus = system_gpus()
    out = []
    import torch

    cuda = torch.cuda.is_available()
    if cuda:
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        out.append(Check('gpu / torch', OK, f'torch {torch.__version__} with CUDA {torch.version.cuda}: {names}'))
    elif gpus:
        out.append(Check('gpu / torch', WARN, f'the system has {gpus} but torch {torch.__version__} cannot use it '
                                              f'(CUDA build: {torch.version.cuda or "no"}): models run on CPU',
                         GPU_FIX))
    else:
        out.append(Check('gpu / torch', OK, f'no GPU: every model runs on CPU (torch {torch.__version__})'))

    import onnxruntime as ort

    providers = ort.get_available_providers()
    trt = importlib.util.find_spec('tensorrt') is not None
    detail = f'onnxruntime {ort.__version__} providers {providers}; tensorrt package ' + \
             ('installed' if trt else 'not installed')
    if gpus and 'CUDAExecutionProvider' not in providers:
        out.append(Check('onnx runtime / tensorrt', WARN, detail + ': the GPU is not used by ONNX models', GPU_FIX))
    elif gpus and trt and 'TensorrtExecutionProvider' not in providers:
        out.append(Check('onnx runtime / tensorrt', WARN, detail + ': TensorRT is installed but ONNX Runtime has no '
                                                                   'TensorRT provider', GPU_FIX))
    else:
        out.append(Check('onnx runtime / tensorrt', OK, detail))

    try:
        import faiss
        n = faiss.get_num_gpus() if hasattr(faiss, 'get_num_gpus') else 0
    except ImportError as exc:
        out.append(Check('faiss', WARN, f'faiss does not import ({exc})', 'run `make setup`'))
        return out
    if gpus and not n:
        out.append(Check('faiss', OK, f'faiss {faiss.__version__}: CPU indexes (faiss-gpu not installed; exact '
                                      'search on CPU is fast enough below 10^6 entries)'))
    else:
        out.append(Check('faiss', OK, f'faiss {faiss.__version__}: {n} GPU(s) usable' if n else
                         f'faiss {faiss.__version__}: CPU indexes'))
    return out
