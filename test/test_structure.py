# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The package's shape: no import cycles, and the core's layers import only downwards.

Imports are read from the source (every ``import``/``from`` statement, module level or inside functions), so a cycle
that only a lazy import closes is found too.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / 'lightomni_ros'


def _module(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix('')
    parts = list(rel.parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _imports(path: pathlib.Path) -> set[str]:
    """Package modules ``path`` imports (resolved to the module, not the names it takes)."""
    mod = _module(path)
    package = mod if path.name == '__init__.py' else mod.rsplit('.', 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith('lightomni_ros'))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')[:len(package.split('.')) - node.level + 1]
                target = '.'.join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ''
            if not target.startswith('lightomni_ros'):
                continue
            for a in node.names:     # "from .x import y": y may be a submodule
                out.add(f'{target}.{a.name}' if _exists(f'{target}.{a.name}') else target)
    return {m for m in out if _exists(m)} - {mod}


def _exists(mod: str) -> bool:
    p = PKG.parent.joinpath(*mod.split('.'))
    return p.with_suffix('.py').is_file() or (p / '__init__.py').is_file()


def graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (generated msg/srv are not part of the source tree)."""
    return {_module(p): _imports(p) for p in PKG.rglob('*.py')}


def _cycle(g: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        stack.append(m)
        for n in sorted(g.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return []

    for m in sorted(g):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return []


def test_no_import_cycles() -> None:
    cycle = _cycle(graph())
    assert not cycle, 'import cycle: ' + ' -> '.join(cycle)


def test_cycle_finder_finds_one() -> None:
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': set()}) == ['a', 'b', 'c', 'a']


#: what each layer of the core may not import (package prefixes)
FORBIDDEN = {
    'lightomni_ros.core': ('lightomni_ros.nodes', 'lightomni_ros.eval', 'lightomni_ros.train',
                           'lightomni_ros.launch_runner', 'lightomni_ros.cli'),
    'lightomni_ros.core.perception': ('lightomni_ros.core.reflex', 'lightomni_ros.core.memory',
                                      'lightomni_ros.core.consolidation', 'lightomni_ros.core.agent'),
    'lightomni_ros.core.reflex': ('lightomni_ros.core.perception', 'lightomni_ros.core.memory',
                                  'lightomni_ros.core.consolidation', 'lightomni_ros.core.agent'),
    'lightomni_ros.core.memory': ('lightomni_ros.core.perception', 'lightomni_ros.core.reflex',
                                  'lightomni_ros.core.consolidation', 'lightomni_ros.core.agent'),
    'lightomni_ros.core.consolidation': ('lightomni_ros.core.perception', 'lightomni_ros.core.reflex',
                                         'lightomni_ros.core.agent'),
}


@pytest.mark.parametrize('layer', sorted(FORBIDDEN))
def test_core_layers_import_downwards(layer: str) -> None:
    bad = [(m, n) for m, deps in graph().items() if m == layer or m.startswith(layer + '.')
           for n in deps for f in FORBIDDEN[layer] if n == f or n.startswith(f + '.')]
    assert not bad, f'{layer} imports what it must not: {bad}'


def test_core_never_imports_rclpy() -> None:
    bad = []
    for p in (PKG / 'core').rglob('*.py'):
        for node in ast.walk(ast.parse(p.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ''] if isinstance(node, ast.ImportFrom) else []
            bad += [f'{p.relative_to(PKG)}: {n}' for n in names if n.split('.')[0] in ('rclpy', 'rosidl_runtime_py')]
    assert not bad, bad
