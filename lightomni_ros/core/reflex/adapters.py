# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Multi-LoRA on one backbone (paper 3.3, C.1): memory, generation and reaction adapters switched per call.

Adapters are peft folders ``<directory>/<name>/`` (adapter_config.json + adapter_model.safetensors). A role whose
adapter is absent runs on the base model (adapters disabled), so the node works before training has shipped any.
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
import threading
from typing import Iterator

import torch

from ..models import holds_trained_set
from .config import AdapterConfig

log = logging.getLogger('lightomni.reflex')

ADAPTERS = ('memory', 'generation', 'reaction')
#: the roles whose passes run on the float weights when int8 copies exist (``backbone.quantize``): the reflex heads
#: read the reaction pass's hidden states, which the int8 copies move by about half their norm (an action head refit
#: on int8 states read held-out speech at F1 0.864 against 0.959, 2026-12-07), and the memory pass's JSON broke more
#: often on int8 weights (valid 0.977 against 1.000 on the unseen pair 138-139); the answers run on int8
FLOAT_ROLES = ('reaction', 'memory')


def lora_config(cfg: AdapterConfig, init_lora_weights: bool = True):  # -> peft.LoraConfig
    """The LoRA recipe of the paper: r, alpha, dropout from the config, all linear layers of the language model."""
    from peft import LoraConfig

    # Only the decoder's linear layers: the vision/audio towers of the omni thinker stay frozen (C.1).
    target = r'.*(language_model|model)\.layers\.\d+\..*(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)'
    return LoraConfig(r=cfg.rank, lora_alpha=cfg.alpha, lora_dropout=cfg.dropout, target_modules=target,
                      bias='none', task_type='CAUSAL_LM', init_lora_weights=init_lora_weights)


def project_models_dirs(models_dir: str | pathlib.Path | None, backbone: str = '') -> list[pathlib.Path]:
    """Where trained weights are looked up: models_dir first, then the package's own models/ folder.

    Each holds the set trained on the default backbone; a set trained on another backbone pack lives in its
    ``<pack>/`` subfolder (with its ``TRAINING.json``) and replaces it when ``backbone`` (the loaded backbone's name)
    is that pack: weights trained on one backbone never serve another.
    """
    out = [pathlib.Path(models_dir).expanduser()] if models_dir else []
    try:
        from ament_index_python.packages import get_package_share_directory

        out.append(pathlib.Path(get_package_share_directory('lightomni_ros')) / 'models')
    except Exception:  # noqa: BLE001 - not installed through ament: the source tree's folder
        pass
    out.append(pathlib.Path(__file__).resolve().parents[3] / 'models')
    out = [d / backbone if backbone and holds_trained_set(d / backbone) else d for d in out]
    return list(dict.fromkeys(out))


def find_trained(name: str, models_dir: str | pathlib.Path | None, marker: str = '',
                 backbone: str = '') -> pathlib.Path | None:
    """First existing ``name`` (absolute, or under :func:`project_models_dirs`); ``marker`` must exist inside it."""
    p = pathlib.Path(name).expanduser()
    cands = [p] if p.is_absolute() else [d / p for d in project_models_dirs(models_dir, backbone)]
    for c in cands:
        if (c / marker).exists() if marker else c.exists():
            return c
    return None


def adapter_dir(cfg: AdapterConfig, models_dir: str | pathlib.Path | None,
                backbone: str = '') -> pathlib.Path | None:
    """Folder holding the adapters (absolute ``directory``, or inside models_dir / the package's models/).

    The first folder, in that order, that holds any adapter: adapters trained together are used together (a
    models_dir with its own reaction adapter is not mixed with the package's memory adapter).
    """
    p = pathlib.Path(cfg.directory).expanduser()
    for d in [p] if p.is_absolute() else [m / p for m in project_models_dirs(models_dir, backbone)]:
        if any((d / n / 'adapter_config.json').exists() for n in ADAPTERS):
            return d
    return None


class AdapterSet:
    """The loaded adapters and the switch between them (thread-safe: one model call at a time holds ``lock``)."""

    def __init__(self, backbone, cfg: AdapterConfig, models_dir: str | pathlib.Path | None = None) -> None:
        self.backbone = backbone
        self.cfg = cfg
        self.loaded: dict[str, str] = {}
        self.lock = threading.RLock()
        self.active = 'base'
        self.weights = None     # Int8Weights when the backbone's linear layers have int8 copies (backbone.quantize)
        folder = adapter_dir(cfg, models_dir, getattr(backbone, 'name', ''))
        found = [(n, folder / n) for n in ADAPTERS
                 if folder is not None and (folder / n / 'adapter_config.json').is_file()]
        if found:
            from peft import PeftModel

            model = backbone.model
            for name, path in found:
                try:
                    if not isinstance(model, PeftModel):
                        model = PeftModel.from_pretrained(model, str(path), adapter_name=name, is_trainable=False)
                    else:
                        model.load_adapter(str(path), adapter_name=name, is_trainable=False)
                except Exception as exc:  # noqa: BLE001 - an adapter trained for another backbone does not fit
                    if isinstance(model, PeftModel) and name in model.peft_config:
                        model.delete_adapter(name)
                    log.warning('adapter %s at %s does not fit this backbone (%s: %s); the base model serves it',
                                name, path, type(exc).__name__, str(exc).splitlines()[0][:200])
                    continue
                self.loaded[name] = str(path)
            if isinstance(model, PeftModel):
                backbone.model = model.eval()
        missing = [n for n in ADAPTERS if n not in self.loaded]
        if missing:
            log.info('adapters %s absent (looked in %s): the base model serves those roles', missing, folder)

    @property
    def peft(self):
        """The PeftModel (None when no adapter is loaded)."""
        return self.backbone.model if self.loaded else None

    @contextlib.contextmanager
    def use(self, name: str) -> Iterator[str]:
        """Run the body with adapter ``name`` active (or the base model when it is absent); yields what is active."""
        with self.lock:
            if self.weights is not None:
                self.weights.use(name not in FLOAT_ROLES)
            if name in self.loaded:
                self.backbone.model.set_adapter(name)
                self.active = name
                try:
                    yield name
                finally:
                    self.active = 'base'
            elif self.loaded:
                with self.backbone.model.disable_adapter():
                    self.active = 'base'
                    yield 'base'
            else:
                yield 'base'

    def describe(self) -> dict[str, str]:
        """Which roles run on which adapter (for diagnostics)."""
        return {n: (self.loaded[n] if n in self.loaded else 'absent (base model)') for n in ADAPTERS}


def create_adapters(backbone, cfg: AdapterConfig, out_dir: str | pathlib.Path, names=ADAPTERS,
                    random_b: bool = False, seed: int = 0) -> list[pathlib.Path]:
    """Write fresh adapter folders for ``backbone`` (training starts from these; ``random_b`` makes them non-zero).

    The backbone's model is left unchanged (a deep copy is wrapped).
    """
    import copy

    from peft import get_peft_model

    out = []
    torch.manual_seed(seed)
    for name in names:
        model = get_peft_model(copy.deepcopy(backbone.model), lora_config(cfg, init_lora_weights=not random_b),
                               adapter_name=name)
        model.save_pretrained(str(pathlib.Path(out_dir)), selected_adapters=[name])
        path = pathlib.Path(out_dir) / name  # peft writes a named adapter to <dir>/<name>
        if not (path / 'adapter_config.json').is_file():
            raise RuntimeError(f'peft did not write {path}')
        out.append(path)
        del model
    return out
