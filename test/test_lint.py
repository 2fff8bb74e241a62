# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Linters in the ROS habit: flake8 (ament_flake8), docstrings (ament_pep257), copyright headers."""

from __future__ import annotations

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
SOURCES = ['lightomni_ros', 'test', 'launch', 'scripts', 'setup.py']
HEADER = ('# Copyright 2026 lightomni_ros contributors', '# SPDX-License-Identifier: Apache-2.0')


def python_files() -> list[pathlib.Path]:
    """Every tracked-looking Python file of the package (no venv/build)."""
    out = []
    for src in SOURCES:
        path = REPO / src
        files = [path] if path.is_file() else sorted(path.rglob('*.py'))
        out += [f for f in files if '__pycache__' not in f.parts]
    return out


@pytest.mark.linter
def test_flake8() -> None:
    """No flake8 errors (configuration in setup.cfg)."""
    from ament_flake8.main import main_with_errors

    rc, errors = main_with_errors(argv=['--config', str(REPO / 'setup.cfg'), *map(str, python_files())])
    assert rc == 0, f'{len(errors)} flake8 error(s):\n' + '\n'.join(errors[:50])


@pytest.mark.linter
def test_pep257() -> None:
    """Docstrings follow pep257 as ament_pep257 checks them."""
    from ament_pep257.main import main

    # ament's convention, less D213 (summary on the second line), D401 (imperative mood) and D402: the
    # project writes one-line summaries on the first line, as the style anchors (faster-whisper, nav2) do.
    rc = main(argv=['--add-ignore', 'D213', 'D401', 'D402', '--', *map(str, python_files())])
    assert rc == 0, 'pep257 errors (see output above)'


@pytest.mark.linter
def test_copyright_headers() -> None:
    """Every Python file (and script) starts with the project's copyright and SPDX lines."""
    missing = []
    scripts = [p for p in (REPO / 'scripts').iterdir() if p.is_file() and p.suffix != '.py']
    for f in python_files() + scripts:
        lines = [ln.rstrip() for ln in f.read_text().splitlines()[:4]]
        if f.suffix != '.py' and lines and lines[0].startswith('#!'):
            lines = lines[1:]
        if tuple(lines[:2]) != HEADER:
            missing.append(str(f.relative_to(REPO)))
    assert not missing, f'missing copyright header: {missing}'
