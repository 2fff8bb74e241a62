# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Fast DDS shared-memory segments in /dev/shm: find the ones a killed process left behind, and remove them.

A node that exits normally releases its segments; one killed with SIGKILL cannot. A segment that appeared while the
graph ran and that no live process maps or holds open is such a leftover; removing it (with its ``_el`` lock file and
``sem.<name>_mutex`` semaphore) is what Fast DDS itself would have done.
"""

from __future__ import annotations

import os
import pathlib

SHM = pathlib.Path('/dev/shm')


def segments() -> set[str]:
    """Names of Fast DDS files in /dev/shm."""
    if not SHM.is_dir():
        return set()
    return {p.name for p in SHM.iterdir() if 'fastdds' in p.name or 'fastrtps' in p.name}


def held_names() -> set[str]:
    """Shared-memory names currently mapped or open by any live process."""
    names: set[str] = set()
    for proc in pathlib.Path('/proc').iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for line in (proc / 'maps').read_text().splitlines():
                if '/dev/shm/' in line:
                    names.add(line.split('/dev/shm/', 1)[1].split()[0])
            for fd in (proc / 'fd').iterdir():
                target = os.readlink(fd)
                if target.startswith('/dev/shm/'):
                    names.add(target[len('/dev/shm/'):])
        except (OSError, IndexError):
            continue
    return names


def orphans(before: set[str]) -> set[str]:
    """Segments created since ``before`` that no live process holds (lock and semaphore files not listed)."""
    new = segments() - before
    return {n for n in new - held_names() if not n.endswith('_el') and not n.startswith('sem.')}


def remove_orphans(before: set[str]) -> list[str]:
    """Remove the orphans of :func:`orphans` with their lock and semaphore files; return what was removed."""
    removed = []
    for name in sorted(orphans(before)):
        for related in (name, f'{name}_el', f'sem.{name}_mutex'):
            try:
                (SHM / related).unlink()
                removed.append(related)
            except FileNotFoundError:
                pass
    return removed
