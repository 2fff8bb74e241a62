# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The DDS transport in force: which Fast DDS profile, and whether a large camera frame fits its shared memory.

A sample larger than the shared-memory segment cannot go through shared memory: Fast DDS sends it as UDP fragments,
and best-effort camera frames were then almost all lost (docs/GRAPH.md). The built-in transports have 512 KB
segments, less than one 640x480 rgb8 frame.
"""

from __future__ import annotations

import os
import pathlib
import xml.etree.ElementTree as ET

from lightomni_ros import dds

from .record import ERROR, OK, WARN, Check, Context

BUILTIN_SEGMENT = 512 * 1024
#: CDR header, std_msgs/Header, sizes and encoding of a sensor_msgs/Image, rounded up
IMAGE_OVERHEAD = 256


def frame_bytes(width: int, height: int) -> int:
    """Return the serialized size of one rgb8 sensor_msgs/Image."""
    return width * height * 3 + IMAGE_OVERHEAD


def _local(tag: str) -> str:
    return tag.rsplit('}', 1)[-1]


def _find(node: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in node.iter() if _local(e.tag) == name]


def _text(node: ET.Element, name: str) -> str | None:
    found = _find(node, name)
    return found[0].text.strip() if found and found[0].text else None


def shm_segment(path: pathlib.Path) -> tuple[int | None, str]:
    """Largest shared-memory segment the profile's default participant uses (None: no shared memory), and how."""
    root = ET.parse(path).getroot()
    descriptors = {}
    for d in _find(root, 'transport_descriptor'):
        descriptors[_text(d, 'transport_id') or ''] = d
    participants = _find(root, 'participant')
    default = next((p for p in participants if p.get('is_default_profile') == 'true'), None)
    if default is None:
        return BUILTIN_SEGMENT, 'no default participant profile: built-in transports (512 KB shared memory)'
    used = [e.text.strip() for e in _find(default, 'transport_id') if e.text]
    builtin = (_text(default, 'useBuiltinTransports') or 'true').lower() != 'false'
    sizes = []
    for tid in used:
        d = descriptors.get(tid)
        if d is not None and (_text(d, 'type') or '').upper() == 'SHM':
            sizes.append(int(_text(d, 'segment_size') or BUILTIN_SEGMENT))
    if sizes:
        return max(sizes), f'participant {default.get("profile_name")!r}: shared-memory transport ' \
                           f'{max(sizes) / 1048576:g} MB' + (' (and the built-in ones)' if builtin else '')
    if builtin:
        return BUILTIN_SEGMENT, 'built-in transports (512 KB shared memory)'
    return None, f'participant {default.get("profile_name")!r} has no shared-memory transport (UDP only)'


def check(ctx: Context) -> list[Check]:
    """Name the profile in force and compare its shared-memory segment with a frame of ``ctx.frame``."""
    rmw = os.environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    if rmw != 'rmw_fastrtps_cpp':
        return [Check('dds profile', OK, f'RMW_IMPLEMENTATION={rmw}: the Fast DDS profile does not apply; frame '
                                         'sizes were not checked')]
    width, height = ctx.frame
    need = frame_bytes(width, height)
    transports = os.environ.get('FASTDDS_BUILTIN_TRANSPORTS')
    chosen = next((k for k in (dds.PROFILE_ENV, 'FASTRTPS_DEFAULT_PROFILES_FILE') if os.environ.get(k)), None)
    shipped = dds.profile_path()
    if chosen:
        path = pathlib.Path(os.environ[chosen])
        source = f'{chosen}={path}' + (' (the shipped profile)' if shipped and path == shipped else ' (yours)')
        if not path.is_file():
            return [Check('dds profile', ERROR, f'{source} does not exist: Fast DDS ignores it',
                          f'point {chosen} at an existing profile, or unset it to use {shipped}')]
        try:
            segment, how = shm_segment(path)
        except (ET.ParseError, ValueError) as exc:
            return [Check('dds profile', ERROR, f'{source} is not a valid profile: {exc}',
                          f'fix the XML, or unset {chosen} to use the shipped {shipped}')]
    elif transports:
        source = f'FASTDDS_BUILTIN_TRANSPORTS={transports}'
        segment, how = BUILTIN_SEGMENT, 'built-in transports (512 KB shared memory)'
    else:
        source = 'no profile (Fast DDS defaults)'
        segment, how = BUILTIN_SEGMENT, 'built-in transports (512 KB shared memory)'
    if os.path.isfile('DEFAULT_FASTDDS_PROFILES.xml') or os.path.isfile('DEFAULT_FASTRTPS_PROFILES.xml'):
        source += '; a DEFAULT_FAST*_PROFILES.xml in this folder is loaded too'
    frame = f'a {width}x{height} rgb8 frame ({need / 1048576:.2f} MB)'
    fix = (f'give every process a profile whose SHM transport_descriptor has segment_size >= {_round_up(need)} '
           f'(the shipped {shipped.name if shipped else "config/fastdds.xml"} has 4 MB; unset '
           'FASTDDS_BUILTIN_TRANSPORTS / FASTDDS_DEFAULT_PROFILES_FILE to use it), or publish CompressedImage')
    if segment is None:
        return [Check('dds profile', WARN, f'{source}: {how}; {frame} goes as UDP fragments', fix)]
    if segment < need:
        return [Check('dds profile', WARN, f'{source}: {how}; {frame} does not fit the {segment / 1048576:g} MB '
                                           'segment: it goes as UDP fragments and best-effort frames get lost', fix)]
    return [Check('dds profile', OK, f'{source}: {how}; {frame} fits')]


def _round_up(n: int) -> int:
    mb = 1048576
    return -(-n // mb) * mb
