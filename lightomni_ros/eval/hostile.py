# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Hostile memory archives (for ImportMemory): each a way a backup can try to escape, lie or overload.

Built from a real export, so each differs from an acceptable archive by one defect. Used by ``lightomni bench
faults`` and the tests; every one must be refused with the store untouched.
"""

from __future__ import annotations

import io
import json
import pathlib
import tarfile

from lightomni_ros.core.consolidation.archive import MAX_CLIP_BYTES


def _tar(path: pathlib.Path, members: list[tuple[str, bytes | int, str]]) -> pathlib.Path:
    with tarfile.open(path, 'w') as tf:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind in ('sym', 'hard'):
                info.type = tarfile.SYMTYPE if kind == 'sym' else tarfile.LNKTYPE
                info.linkname = '/etc/passwd'
                tf.addfile(info)
            elif kind == 'dev':
                info.type = tarfile.CHRTYPE
                tf.addfile(info)
            elif kind == 'big':
                info.size = int(data)
                tf.addfile(info, io.BytesIO(b'\0' * int(data)))
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return path


def hostile_archives(folder: pathlib.Path, good_lines: list[str], t0: float = 1_780_000_000.0,
                     ) -> list[tuple[str, pathlib.Path]]:
    """(name, path) of archives an import must refuse, made in ``folder`` from the lines of a good JSONL export.

    ``good_lines`` must hold a meta record and at least one semantic record.
    """
    folder.mkdir(parents=True, exist_ok=True)
    meta, rest = good_lines[0], good_lines[1:]
    body = '\n'.join(good_lines).encode()
    sem = next(x for x in rest if '"type": "semantic"' in x)

    def jsonl(name: str, lines: list[str]) -> tuple[str, pathlib.Path]:
        p = folder / f'{name.replace(" ", "_")}.jsonl'
        p.write_text('\n'.join(lines))
        return name, p

    def with_meta(**kw: object) -> str:
        return json.dumps(json.loads(meta) | kw)
    good = [('memory.jsonl', body, '')]
    out = [
        ('path traversal', _tar(folder / 'traversal.tar', good + [('../../evil.wav', b'x', '')])),
        ('absolute path', _tar(folder / 'absolute.tar', good + [('/tmp/evil.wav', b'x', '')])),
        ('symlink member', _tar(folder / 'symlink.tar', good + [('audio/a.wav', b'', 'sym')])),
        ('hard link member', _tar(folder / 'hardlink.tar', good + [('audio/b.wav', b'', 'hard')])),
        ('device member', _tar(folder / 'device.tar', good + [('audio/c.wav', b'', 'dev')])),
        ('oversized member', _tar(folder / 'oversized.tar', good + [('audio/d.wav', MAX_CLIP_BYTES + 1, 'big')])),
        ('unexpected member', _tar(folder / 'unexpected.tar', good + [('run.sh', b'rm -rf ~', '')])),
        ('two indexes', _tar(folder / 'two.tar', good + good)),
        ('no index', _tar(folder / 'noindex.tar', [('audio/e.wav', b'RIFF', '')])),
        jsonl('wrong schema version', [with_meta(schema=99)] + rest),
        jsonl('wrong embedder', [with_meta(embedder='another-model')] + rest),
        jsonl('wrong dimension', [with_meta(dim=768)] + rest),
        jsonl('duplicate ids', good_lines + [sem]),
        jsonl('wrong field type', [meta, sem.replace('"start": ', '"start": "yesterday", "x": ')]),
        jsonl('unknown field', [meta, sem[:-1] + ', "pwn": 1}']),
        jsonl('NaN time', [meta, sem.replace('"pinned": ', '"end": NaN, "pinned": ')]),
        jsonl('raw reference outside', [meta, json.dumps({'type': 'episodic', 'start': t0, 'end': t0 + 1,
                                                         'raw_refs': ['file:///etc/passwd']})]),
        jsonl('bad face id', [meta, json.dumps({'type': 'semantic', 'content': 'x', 'start': t0, 'end': t0,
                                               'face_ids': ["<face_1>'; DROP TABLE semantic"]})]),
        jsonl('unknown record type', [meta, json.dumps({'type': 'shell', 'cmd': 'id'})]),
        jsonl('not an export', rest),
    ]
    link = folder / 'symlinked.jsonl'
    link.unlink(missing_ok=True)
    link.symlink_to(folder / 'wrong_schema_version.jsonl')
    out.append(('symlinked archive', link))
    return out


__all__ = ['hostile_archives']
