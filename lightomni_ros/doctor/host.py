# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The host: the memory folder can be written (and its files read), free disk, clock and time zone."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
import zoneinfo

from lightomni_ros.core.models import cache_dir

from .record import ERROR, OK, WARN, Check, Context

MEMORY_FIX = 'set memory.memory_dir in config/consolidation.yaml (or a copy passed as config_dir:=) to a folder ' \
             'this user can write, or fix the permissions of the path named above'
#: free space below which memory and caches are at risk
DISK_WARN, DISK_ERROR = 2 << 30, 200 << 20
#: a system clock before this has not been set (no RTC, no time sync yet): memory times would be wrong
EARLIEST = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)


def memory_folder(ctx: Context) -> pathlib.Path:
    """The memory folder the consolidation node would use."""
    configured = ctx.memory_dir or ctx.params('consolidation').get('memory', {}).get('memory_dir') or \
        '~/.local/share/lightomni_ros/memory'
    return pathlib.Path(os.path.expanduser(str(configured)))


def _existing(path: pathlib.Path) -> pathlib.Path:
    """``path`` or its nearest ancestor that exists (may be a regular file: then nothing below it can be created)."""
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def check(ctx: Context) -> list[Check]:
    """The memory folder, free disk, the clock."""
    return [_memory(ctx), *_disk(ctx), *_clock(ctx)]


def _memory(ctx: Context) -> Check:
    folder = memory_folder(ctx)
    name = 'memory folder'
    base = _existing(folder)
    if not base.is_dir():
        kind = 'a regular file' if base.is_file() else 'not a folder'
        return Check(name, ERROR, f'{folder} cannot be created: {base} is {kind}', MEMORY_FIX)
    # Write for real (root passes any permission-bit test; a read-only mount or a full disk do not)
    try:
        with tempfile.NamedTemporaryFile(dir=base, prefix='.lightomni_doctor_') as f:
            f.write(b'x')
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        return Check(name, ERROR, f'{folder}: cannot write in {base} ({exc.strerror or exc})', MEMORY_FIX)
    if base != folder:
        return Check(name, OK, f'{folder} does not exist yet; the consolidation node will create it ({base} is '
                               'writable)')
    unreadable = []
    for path in sorted(folder.rglob('*'))[:1000]:
        if path.is_file():
            try:
                with path.open('rb') as f:
                    f.read(1)
            except OSError as exc:
                unreadable.append(f'{path.name} ({exc.strerror or exc})')
    if unreadable:
        return Check(name, ERROR, f'{folder}: unreadable files {unreadable[:5]}', MEMORY_FIX)
    sizes = [p.stat().st_size for p in folder.rglob('*') if p.is_file()]
    return Check(name, OK, f'{folder}: writable, {len(sizes)} files, {sum(sizes) / 1e6:.1f} MB')


def _disk(ctx: Context) -> list[Check]:
    out = []
    places = {'memory': _existing(memory_folder(ctx)), 'model cache': cache_dir()}
    for label, path in places.items():
        if not path.is_dir():
            continue   # reported by the memory check
        free = shutil.disk_usage(path).free
        detail = f'{free / (1 << 30):.1f} GB free at {path} ({label})'
        fix = f'free space on the file system of {path}, or move the {label} folder to a larger disk'
        if free < DISK_ERROR:
            out.append(Check(f'disk ({label})', ERROR, detail, fix))
        elif free < DISK_WARN:
            out.append(Check(f'disk ({label})', WARN, detail, fix))
        else:
            out.append(Check(f'disk ({label})', OK, detail))
    return out


def _synchronized() -> str:
    """'yes', 'no' or 'unknown' (timedatectl where systemd runs)."""
    if not shutil.which('timedatectl'):
        return 'unknown'
    try:
        out = subprocess.run(['timedatectl', 'show', '-p', 'NTPSynchronized', '--value'], capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return 'unknown'
    return {'yes': 'yes', 'no': 'no'}.get(out.stdout.strip(), 'unknown')


def _clock(ctx: Context) -> list[Check]:
    now = dt.datetime.now(dt.timezone.utc)
    local = time.strftime('%Z (UTC%z)')
    sync = _synchronized()
    clock = f'{now:%Y-%m-%d %H:%M:%S} UTC, local zone {local}, time synchronised: {sync}'
    out = []
    if now < EARLIEST:
        out.append(Check('clock', ERROR, clock + ': the clock is not set; memory times and reminders are wrong',
                         'set the clock (NTP: `timedatectl set-ntp true`, or an RTC) before starting the graph'))
    elif sync == 'no':
        out.append(Check('clock', WARN, clock, 'enable time synchronisation: `timedatectl set-ntp true`'))
    else:
        out.append(Check('clock', OK, clock))
    tz = str(ctx.params('consolidation').get('consolidation', {}).get('timezone', '') or '')
    fix = 'set consolidation.timezone in config/consolidation.yaml to the robot\'s IANA zone, e.g. "Europe/Berlin"'
    if tz:
        try:
            zone = zoneinfo.ZoneInfo(tz)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            out.append(Check('time zone', ERROR, f'consolidation.timezone {tz!r} is not a known IANA zone: the '
                                                 'consolidation node will not configure', fix))
            return out
        out.append(Check('time zone', OK, f'consolidation.timezone {tz}: now {now.astimezone(zone):%H:%M %Z}'))
    elif time.strftime('%z') == '+0000':
        out.append(Check('time zone', WARN, f'consolidation.timezone is empty and the system zone is {local}: "at '
                                            '5 pm" means 17:00 UTC', fix + ' (or set the system zone)'))
    else:
        out.append(Check('time zone', OK, f'consolidation.timezone empty: the system zone {local} is used'))
    return out
