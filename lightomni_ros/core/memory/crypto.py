# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Encryption at rest of the memory database (SQLCipher): where the key comes from, and opening a file with it.

The key is a passphrase read from an environment variable or from a file that only the node's user may read (a key
file readable by the group or others is refused: a key anyone on the robot can read protects nothing). A plain
memory file met with a key is encrypted in place once (``sqlcipher_export``); an encrypted file met without the key
is refused with a message that names where the key is looked for.
"""

from __future__ import annotations

import logging
import os
import pathlib
import stat
from typing import Any

log = logging.getLogger('lightomni.memory')

SQLITE_HEADER = b'SQLite format 3\x00'


class MemoryKeyError(RuntimeError):
    """The encryption key cannot be had (missing, empty, or a key file others can read)."""


def read_key(env_var: str, key_file: str) -> str | None:
    """The passphrase from ``env_var`` (when set and not empty), else from ``key_file`` (when given); None when neither.

    A key file must be a regular file owned by this process's user with no group or other permission bits.
    """
    if env_var and os.environ.get(env_var):
        return os.environ[env_var]
    if not key_file:
        return None
    path = pathlib.Path(key_file).expanduser()
    try:
        st = path.lstat()
    except OSError as e:
        raise MemoryKeyError(f'key file {path}: {e.strerror}') from e
    if not stat.S_ISREG(st.st_mode):
        raise MemoryKeyError(f'key file {path} is not a regular file')
    if st.st_uid != os.getuid():
        raise MemoryKeyError(f'key file {path} belongs to uid {st.st_uid}, not to this user ({os.getuid()})')
    if st.st_mode & 0o077:
        raise MemoryKeyError(f'key file {path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); chmod 600 it')
    key = path.read_text().strip()
    if not key:
        raise MemoryKeyError(f'key file {path} is empty')
    return key


def is_plain_sqlite(path: pathlib.Path) -> bool:
    """Whether ``path`` holds an unencrypted SQLite database (its first bytes are SQLite's header)."""
    try:
        with open(path, 'rb') as f:
            return f.read(16) == SQLITE_HEADER
    except OSError:
        return False


def _quote(key: str) -> str:
    return "'" + key.replace("'", "''") + "'"


def connect(path: pathlib.Path, key: str | None, **kwargs: Any) -> Any:
    """A DB-API connection to ``path``: sqlite3 without a key, SQLCipher with one (a plain file is encrypted first)."""
    if key is None:
        import sqlite3
        return sqlite3.connect(str(path), **kwargs)
    from sqlcipher3 import dbapi2 as sqlcipher

    if path.exists() and path.stat().st_size and is_plain_sqlite(path):
        encrypt_in_place(path, key)
    db = sqlcipher.connect(str(path), **kwargs)
    db.execute(f'PRAGMA key = {_quote(key)}')
    return db


def encrypt_in_place(path: pathlib.Path, key: str) -> None:
    """Rewrite a plain SQLite file as an SQLCipher file with ``key`` (the plain copy is overwritten, then removed)."""
    from sqlcipher3 import dbapi2 as sqlcipher

    tmp = path.with_name(path.name + '.encrypting')
    tmp.unlink(missing_ok=True)
    db = sqlcipher.connect(str(path), isolation_level=None)
    try:
        db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
        version = db.execute('PRAGMA user_version').fetchone()[0]
        db.execute(f'ATTACH DATABASE {_quote(str(tmp))} AS encrypted KEY {_quote(key)}')
        db.execute("SELECT sqlcipher_export('encrypted')")
        db.execute(f'PRAGMA encrypted.user_version = {int(version)}')
        db.execute('DETACH DATABASE encrypted')
    finally:
        db.close()
    size = path.stat().st_size
    with open(path, 'r+b') as f:          # the plain bytes must not stay on disk after the rename
        f.write(b'\0' * size)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)
    for suffix in ('-wal', '-shm'):
        pathlib.Path(str(path) + suffix).unlink(missing_ok=True)
    log.warning('memory store %s was plain text: encrypted in place with SQLCipher', path)


__all__ = ['read_key', 'connect', 'encrypt_in_place', 'is_plain_sqlite', 'MemoryKeyError', 'SQLITE_HEADER']
