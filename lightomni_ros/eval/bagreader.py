# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Read any rosbag2 (ours or a robot's; .mcap or .db3; a folder or a single storage file) and say what is wrong.

Robot bags are often odd: metadata.yaml that disagrees with the storage (QoS strings, counts, missing or extra
topics, a file name that changed), a file truncated by a power cut, a message whose bytes do not decode, types that
are not installed here. :class:`BagReader` reads what can be read and records every such finding as a
:class:`Problem` (also logged) instead of failing:

- the storage files are the source of truth; metadata.yaml is only cross-checked (the ``rosbags`` folder reader,
  by contrast, matches no connection when the two disagree on QoS and then reads nothing);
- MCAP: indexed reading through ``rosbags``; a file it cannot open (no footer after truncation, bad index) is
  scanned record by record up to the damage;
- SQLite: read with the standard library, read-only; a damaged database is read row by row, skipping what fails;
- messages are decoded with ``rclpy.serialization`` (the ament type support) when ``check=True``; a message that
  does not decode is reported and skipped; topics of an unknown type are reported once and skipped.
"""

from __future__ import annotations

import dataclasses
import heapq
import logging
import pathlib
import sqlite3
import struct
from typing import Any, Iterable, Iterator

import yaml

from . import rostypes

log = logging.getLogger('lightomni.eval.bagreader')
MCAP_MAGIC = b'\x89MCAP0\r\n'


@dataclasses.dataclass
class Problem:
    """Something wrong with the bag.

    ``kind``: metadata, storage, truncated, decode, unknown_type, qos; or graph (added by a replay: nobody subscribed,
    the graph stopped).
    """

    kind: str
    text: str
    topic: str = ''
    count: int = 1

    def __str__(self) -> str:
        where = f' [{self.topic}]' if self.topic else ''
        times = f' (x{self.count})' if self.count > 1 else ''
        return f'{self.kind}{where}: {self.text}{times}'


@dataclasses.dataclass
class TopicInfo:
    """One topic of the bag as found in the storage (counts from the storage; metadata's kept for comparison)."""

    topic: str                      # name in the bag
    msgtype: str                    # pkg/msg/Type
    count: int = 0                  # messages in the storage (index/statistics or counted)
    qos: list = dataclasses.field(default_factory=list)   # rosbags Qos records offered when recording
    metadata_count: int | None = None
    cls: Any = None                 # rclpy class, None when the type is not installed here
    name: str = ''                  # name after remapping

    @property
    def header_first(self) -> bool:
        """Whether the message begins with a std_msgs/Header."""
        return self.cls is not None and rostypes.header_first(self.cls)


@dataclasses.dataclass
class BagMessage:
    """One message: remapped topic, type, receive time (ns) and raw CDR bytes."""

    topic: str
    info: TopicInfo
    t_ns: int
    data: bytes


def parse_remaps(items: Iterable[str]) -> dict[str, str]:
    """``from:=to`` strings -> dict (ValueError naming the bad item)."""
    out = {}
    for item in items:
        if ':=' not in item:
            raise ValueError(f'a remap is from:=to, got {item!r}')
        a, b = item.split(':=', 1)
        if not a.startswith('/') or not b.startswith('/'):
            raise ValueError(f'remap topics must be absolute (/name), got {item!r}')
        out[a] = b
    return out


# --- storage readers ------------------------------------------------------------------------------------------------
class _Storage:
    """One storage file: topics and a time-ordered message iterator (raw bytes)."""

    def __init__(self, path: pathlib.Path, problems: list[Problem]) -> None:
        self.path = path
        self.problems = problems
        self.topics: dict[str, TopicInfo] = {}

    def problem(self, kind: str, text: str, topic: str = '') -> None:
        p = Problem(kind, f'{self.path.name}: {text}', topic)
        self.problems.append(p)
        log.warning('%s', p)

    def messages(self, topics: set[str]) -> Iterator[tuple[str, int, bytes]]:  # pragma: no cover - interface
        raise NotImplementedError


class _McapWalker:
    """A sequential reader of MCAP records that stops cleanly at the first damaged one (schemas, channels, messages)."""

    def __init__(self, storage: _Storage) -> None:
        self.storage = storage
        self.schemas: dict[int, str] = {}
        self.channels: dict[int, TopicInfo] = {}
        self.out: list[tuple[str, int, bytes]] = []

    def walk(self, buf: bytes, pos: int, end: int, nested: bool) -> tuple[int, str]:
        """Records of ``buf[pos:end]``; return where it stopped and why ('' at the end or at the footer)."""
        while pos < end:
            if pos + 9 > end:
                return pos, 'a record header is cut off'
            op = buf[pos]
            (size,) = struct.unpack_from('<Q', buf, pos + 1)
            body_at = pos + 9
            if body_at + size > end:
                if op == 0x06 and not nested:
                    self.partial_chunk(buf[body_at:end])
                return pos, f'record 0x{op:02x} of {size} bytes is cut off'
            try:
                if self.record(op, buf[body_at:body_at + size], nested):
                    return end, ''
            except Exception as exc:  # noqa: BLE001 - damaged record: report and stop here
                return pos, f'record 0x{op:02x} at byte {pos} does not parse ({exc})'
            pos = body_at + size
        return pos, ''

    def record(self, op: int, body: bytes, nested: bool) -> bool:
        """One record; True at the footer."""
        from rosbags.rosbag2.storage_mcap import decompress, get_qos

        if op == 0x03:      # schema
            (sid,) = struct.unpack_from('<H', body, 0)
            (n,) = struct.unpack_from('<I', body, 2)
            self.schemas[sid] = body[6:6 + n].decode()
        elif op == 0x04:    # channel
            cid, sid = struct.unpack_from('<HH', body, 0)
            (n,) = struct.unpack_from('<I', body, 4)
            topic = body[8:8 + n].decode()
            q = 8 + n
            (m,) = struct.unpack_from('<I', body, q)
            q += 4 + m      # message encoding
            (mlen,) = struct.unpack_from('<I', body, q)
            info = self.storage.topics.setdefault(topic, TopicInfo(topic, self.schemas.get(sid, '')))
            try:
                info.qos = get_qos(body[q:q + 4 + mlen])
            except Exception:  # noqa: BLE001 - QoS metadata is optional
                pass
            self.channels[cid] = info
        elif op == 0x05:    # message
            cid, _seq, log_time = struct.unpack_from('<HIQ', body, 0)
            if cid in self.channels:
                self.channels[cid].count += 1
                self.out.append((self.channels[cid].topic, log_time, bytes(body[22:])))
        elif op == 0x06 and not nested:   # chunk
            _s, _e, usize, crc = struct.unpack_from('<QQQI', body, 0)
            (n,) = struct.unpack_from('<I', body, 28)
            comp = body[32:32 + n].decode()
            (csize,) = struct.unpack_from('<Q', body, 32 + n)
            raw = body[40 + n:40 + n + csize]
            inner = decompress(raw, comp, usize, crc) if comp else raw
            self.walk(inner, 0, len(inner), True)
        return op == 0x02   # footer

    def partial_chunk(self, body: bytes) -> None:
        """The complete records at the start of a cut-off chunk (uncompressed, or zstd decoded as a stream)."""
        if len(body) < 32:
            return
        (n,) = struct.unpack_from('<I', body, 28)
        comp = body[32:32 + n].decode(errors='replace')
        raw = body[40 + n:]
        if comp == 'zstd':
            try:
                import zstandard

                raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
            except Exception:  # noqa: BLE001 - no zstandard, or nothing decodable
                return
        elif comp:
            return
        before = len(self.out)
        self.walk(raw, 0, len(raw), True)
        if len(self.out) > before:
            self.storage.problem('truncated', f'{len(self.out) - before} messages recovered from the cut-off chunk')


class _Mcap(_Storage):
    """MCAP through rosbags (indexed); on failure, a sequential scan that stops cleanly at the damage."""

    def __init__(self, path: pathlib.Path, problems: list[Problem]) -> None:
        super().__init__(path, problems)
        from rosbags.rosbag2.errors import ReaderError
        from rosbags.rosbag2.storage_mcap import McapReader

        self._reader: Any = None
        self._scanned: list[tuple[str, int, bytes]] | None = None
        try:
            reader = McapReader(path)
            reader.open()
            self._reader = reader
            for c in reader.connections:
                info = self.topics.setdefault(c.topic, TopicInfo(c.topic, c.msgtype))
                info.count += c.msgcount
                info.qos += list(c.ext.offered_qos_profiles)
        except (ReaderError, OSError, ValueError, struct.error, AssertionError) as exc:
            self.problem('storage', f'cannot be opened as an indexed MCAP ({exc}); scanning it record by record')
            self._scan()

    def _scan(self) -> None:
        import mmap

        with self.path.open('rb') as f:
            size = f.seek(0, 2)
            # mapped, not read: a damaged robot bag can be many GB
            data: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b''
        if data[:len(MCAP_MAGIC)] != MCAP_MAGIC:
            self.problem('storage', 'no MCAP magic at the start: not an MCAP file; nothing read')
            self._scanned = []
            return
        walker = _McapWalker(self)
        # Skip the header record after the magic, then walk the data section.
        try:
            stop, why = walker.walk(data, len(MCAP_MAGIC), len(data), False)
        finally:
            if not isinstance(data, bytes):
                data.close()
        if why:
            self.problem('truncated', f'{why} at byte {stop} of {size}; {len(walker.out)} messages before it were '
                                      'recovered')
        walker.out.sort(key=lambda m: m[1])
        self._scanned = walker.out

    def messages(self, topics: set[str]) -> Iterator[tuple[str, int, bytes]]:
        """Time-ordered (topic, t_ns, data) of the selected topics."""
        if self._scanned is not None:
            yield from (m for m in self._scanned if m[0] in topics)
            return
        from rosbags.rosbag2.errors import ReaderError

        conns = [c for c in self._reader.connections if c.topic in topics]
        n = 0
        try:
            for c, t, data in self._reader.messages(conns):
                n += 1
                yield c.topic, t, bytes(data)
        except (ReaderError, OSError, ValueError, struct.error, AssertionError) as exc:
            self.problem('storage', f'reading stopped after {n} messages: {exc}')


class _Sqlite(_Storage):
    """rosbag2 SQLite storage, read-only with the standard library."""

    def __init__(self, path: pathlib.Path, problems: list[Problem], expected: int = 0) -> None:
        super().__init__(path, problems)
        self.expected = expected
        self._names: dict[int, str] = {}
        self._tmp: Any = None
        self.db = sqlite3.connect(f'file:{path}?mode=ro&immutable=1', uri=True, check_same_thread=False)
        try:
            self.db.execute('SELECT count(*) FROM sqlite_master').fetchone()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            self.db = self._padded_copy(exc)
        try:
            cols = [r[1] for r in self.db.execute('PRAGMA table_info(topics)')]
            qos_col = 'offered_qos_profiles' if 'offered_qos_profiles' in cols else "''"
            for tid, name, msgtype, fmt, qos in self.db.execute(
                    f'SELECT id, name, type, serialization_format, {qos_col} FROM topics'):
                info = self.topics.setdefault(name, TopicInfo(name, msgtype))
                self._names[tid] = name
                if fmt != 'cdr':
                    self.problem('storage', f'serialization format {fmt!r} is not CDR', name)
                try:
                    from rosbags.rosbag2.metadata import parse_qos

                    info.qos = parse_qos(qos) if qos else []
                except Exception as exc:  # noqa: BLE001 - QoS string is informative only
                    self.problem('qos', f'offered_qos_profiles does not parse ({exc})', name)
        except sqlite3.DatabaseError as exc:
            self.problem('storage', f'topics table unreadable ({exc}); nothing can be read')
            return
        try:
            for tid, n in self.db.execute('SELECT topic_id, count(*) FROM messages GROUP BY topic_id'):
                if tid in self._names:
                    self.topics[self._names[tid]].count = n
        except sqlite3.DatabaseError as exc:
            self.problem('truncated', f'messages table damaged ({exc}); reading it row by row')
            self._count_rows()

    def _padded_copy(self, exc: Exception) -> sqlite3.Connection:
        """Open a copy extended with zero pages to the size its header declares (a truncated file then opens)."""
        import shutil
        import tempfile

        self._tmp = tempfile.TemporaryDirectory(prefix='lightomni_db3_')
        copy = pathlib.Path(self._tmp.name) / self.path.name
        shutil.copyfile(self.path, copy)
        with copy.open('r+b') as f:
            head = f.read(100)
            if len(head) == 100 and head.startswith(b'SQLite format 3\x00'):
                (page,) = struct.unpack('>H', head[16:18])
                (pages,) = struct.unpack('>I', head[28:32])
                declared = (65536 if page == 1 else page) * pages
                size = copy.stat().st_size
                if declared > size:
                    f.truncate(declared)
                    self.problem('truncated', f'file is {size} bytes but its header declares {declared} '
                                              f'({exc}); reading what is left of it')
        return sqlite3.connect(f'file:{copy}?mode=ro', uri=True, check_same_thread=False)

    def _rows(self) -> Iterator[tuple[int, int, bytes]]:
        """Row-by-row recovery: every id that still reads, up to a run of misses."""
        misses, rowid, limit = 0, 0, max(1000, self.expected)
        while misses < limit:
            rowid += 1
            try:
                row = self.db.execute('SELECT topic_id, timestamp, data FROM messages WHERE id = ?',
                                      (rowid,)).fetchone()
            except sqlite3.DatabaseError:
                row = None
            if row is None:
                misses += 1
                continue
            misses = 0
            yield row

    def _count_rows(self) -> None:
        self._recovered = sorted(self._rows(), key=lambda r: r[1])
        for info in self.topics.values():
            info.count = 0
        for tid, _, _ in self._recovered:
            if tid in self._names:
                self.topics[self._names[tid]].count += 1
        self.problem('truncated', f'{len(self._recovered)} messages recovered row by row')

    def messages(self, topics: set[str]) -> Iterator[tuple[str, int, bytes]]:
        """Time-ordered (topic, t_ns, data) of the selected topics."""
        n = 0
        try:
            rows: Iterable[tuple[int, int, bytes]]
            if hasattr(self, '_recovered'):
                rows = self._recovered
            else:
                rows = self.db.execute('SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp')
            for tid, t, data in rows:
                name = self._names.get(tid)
                if name is None:
                    continue
                if name in topics:
                    n += 1
                    yield name, int(t), bytes(data)
        except sqlite3.DatabaseError as exc:
            self.problem('storage', f'reading stopped after {n} messages: {exc}')


# --- the reader -----------------------------------------------------------------------------------------------------
class BagReader:
    """A rosbag2 folder or storage file, read leniently; see the module doc.

    ``remap`` renames topics (bag name -> published name); ``topics`` (bag names) restricts what is read.
    """

    def __init__(self, path: str | pathlib.Path, *, remap: dict[str, str] | None = None,
                 topics: Iterable[str] | None = None) -> None:
        self.path = pathlib.Path(path)
        self.remap = dict(remap or {})
        self.problems: list[Problem] = []
        self.metadata: dict[str, Any] | None = None
        self.storages: list[_Storage] = []
        self.topics: dict[str, TopicInfo] = {}
        self._decode_fail: dict[str, Problem] = {}
        self._tmp: Any = None
        self._origin: dict[pathlib.Path, pathlib.Path] = {}
        self._message_zstd = False
        self._open(set(topics) if topics else None)

    def problem(self, kind: str, text: str, topic: str = '') -> None:
        """Record (and log) a finding."""
        p = Problem(kind, text, topic)
        self.problems.append(p)
        log.warning('%s', p)

    # -- opening --------------------------------------------------------------------------------------------------
    def _files(self) -> list[pathlib.Path]:
        if not self.path.exists():
            raise FileNotFoundError(f'bag {self.path} does not exist')
        if self.path.is_file():
            if self.path.name.endswith(('.mcap.zstd', '.db3.zstd')):
                return [self._unzstd(self.path)]
            if self.path.suffix not in ('.mcap', '.db3'):
                raise ValueError(f'{self.path}: not a rosbag2 storage file (.mcap or .db3)')
            return [self.path]
        found = sorted(p for p in self.path.iterdir() if p.suffix in ('.mcap', '.db3'))
        # `ros2 bag record --compression-mode file` leaves <name>.mcap.zstd: read a decompressed copy
        found += [self._unzstd(p) for p in sorted(self.path.iterdir()) if p.name.endswith(('.mcap.zstd', '.db3.zstd'))]
        meta_path = self.path / 'metadata.yaml'
        if not meta_path.is_file():
            self.problem('metadata', 'no metadata.yaml in the folder; reading the storage files found there')
        else:
            try:
                doc = yaml.safe_load(meta_path.read_text())
                self.metadata = doc['rosbag2_bagfile_information']
                if not isinstance(self.metadata, dict):
                    raise TypeError('rosbag2_bagfile_information is not a mapping')
            except (yaml.YAMLError, KeyError, TypeError, OSError, UnicodeDecodeError) as exc:
                self.metadata = None
                self.problem('metadata', f'metadata.yaml unreadable ({type(exc).__name__}: {exc}); '
                                         'reading the storage files found in the folder')
        if self.metadata is not None:
            listed = [self.path / pathlib.PurePath(str(x)).name
                      for x in self.metadata.get('relative_file_paths') or []]
            missing = [p.name for p in listed if not p.exists()]
            if missing:
                self.problem('metadata', f'metadata.yaml lists files that are missing: {missing}')
            unlisted = [self._origin.get(p, p).name for p in found if self._origin.get(p, p) not in listed]
            if unlisted and listed:
                self.problem('metadata', f'storage files not listed in metadata.yaml are read too: {unlisted}')
            mode = str(self.metadata.get('compression_mode') or '').lower()
            self._message_zstd = mode == 'message'
            if mode not in ('', 'none', 'file', 'message') or (
                    mode in ('file', 'message') and str(self.metadata.get('compression_format')) != 'zstd'):
                self.problem('metadata', f'compression {mode!r}/{self.metadata.get("compression_format")!r} is not '
                                         'supported; messages are read as they are stored')
            ver = self.metadata.get('version')
            if isinstance(ver, int) and ver > 9:
                self.problem('metadata', f'metadata version {ver} is newer than 9; reading it anyway')
        if not found:
            raise FileNotFoundError(f'{self.path}: no .mcap or .db3 storage file found')
        return found

    def _unzstd(self, path: pathlib.Path) -> pathlib.Path:
        """Decompress a zstd-compressed storage file into this reader's temporary folder."""
        import shutil
        import tempfile

        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix='lightomni_bag_')
        out = pathlib.Path(self._tmp.name) / path.name[:-len('.zstd')]
        try:
            with path.open('rb') as src, _zstd().open(src, 'rb') as z, out.open('wb') as dst:
                shutil.copyfileobj(z, dst)
        except Exception as exc:  # noqa: BLE001 - a damaged stream: keep what was decompressed
            self.problem('truncated', f'{path.name}: zstd stream ends early ({exc}); reading what was decompressed')
        self._origin[out] = path
        return out

    def _open(self, only: set[str] | None) -> None:
        for f in self._files():
            expected = int((self.metadata or {}).get('message_count') or 0)
            st = _Mcap(f, self.problems) if f.suffix == '.mcap' else _Sqlite(f, self.problems, expected)
            self.storages.append(st)
            for name, info in st.topics.items():
                have = self.topics.get(name)
                if have is None:
                    self.topics[name] = dataclasses.replace(info, qos=list(info.qos))
                else:
                    if have.msgtype != info.msgtype:
                        self.problem('storage', f'type {info.msgtype} in {f.name} but {have.msgtype} before', name)
                    have.count += info.count
        self._cross_check()
        for name, info in list(self.topics.items()):
            if only is not None and name not in only:
                del self.topics[name]
                continue
            info.name = self.remap.get(name, name)
            info.cls = rostypes.message_class(info.msgtype)
            if info.cls is None and info.count:
                self.problem('unknown_type', f'type {info.msgtype} is not installed here; its {info.count} '
                                             'messages cannot be decoded or replayed and are skipped', name)
        for src in self.remap:
            if src not in self.topics:
                self.problem('metadata', f'remap source {src} is not a topic of the bag')

    def _cross_check(self) -> None:
        if self.metadata is None:
            return
        meta_topics: dict[str, dict] = {}
        for row in self.metadata.get('topics_with_message_count') or []:
            try:
                tm = row['topic_metadata']
                meta_topics[tm['name']] = {'type': tm.get('type', ''), 'count': int(row.get('message_count', 0)),
                                           'qos': tm.get('offered_qos_profiles', '')}
            except (KeyError, TypeError, ValueError):
                self.problem('metadata', f'a topics_with_message_count entry is malformed: {row!r}')
        for name, m in meta_topics.items():
            info = self.topics.get(name)
            if info is None:
                if m['count']:
                    self.problem('metadata', f'metadata.yaml lists {m["count"]} messages but the storage has no such '
                                             'topic', name)
                continue
            info.metadata_count = m['count']
            if m['type'] and rostypes.normalize_type(m['type']) != rostypes.normalize_type(info.msgtype):
                self.problem('metadata', f'type {m["type"]} in metadata.yaml, {info.msgtype} in the storage '
                                         '(storage used)', name)
            if m['count'] != info.count:
                self.problem('metadata', f'metadata.yaml counts {m["count"]} messages, the storage {info.count} '
                                         '(storage used)', name)
            if m['qos'] and info.qos:
                try:
                    from rosbags.rosbag2.metadata import parse_qos

                    meta_qos = parse_qos(m['qos'])
                except Exception as exc:  # noqa: BLE001
                    self.problem('qos', f'offered_qos_profiles in metadata.yaml does not parse ({exc})', name)
                    continue
                if meta_qos != info.qos:
                    self.problem('qos', 'offered QoS in metadata.yaml differs from the storage in '
                                        f'{_qos_diff(meta_qos, info.qos)}; the storage\'s is used', name)
        for name, info in self.topics.items():
            if name not in meta_topics and info.count:
                self.problem('metadata', f'topic with {info.count} messages is missing from metadata.yaml', name)

    # -- reading --------------------------------------------------------------------------------------------------
    @property
    def start_ns(self) -> int:
        """Receive time of the first message (after reading; from the first message when unknown)."""
        for m in self.messages():
            return m.t_ns
        return 0

    def messages(self, *, check: bool = False, skip_unknown: bool = True) -> Iterator[BagMessage]:
        """Every readable message in time order; with ``check`` each one is decoded first and skipped if it fails."""
        from rclpy.serialization import deserialize_message

        wanted = {n for n, i in self.topics.items() if i.cls is not None or not skip_unknown}
        streams = [st.messages(wanted & set(st.topics)) for st in self.storages]
        for topic, t_ns, data in heapq.merge(*streams, key=lambda m: m[1]):
            info = self.topics[topic]
            if self._message_zstd:   # --compression-mode message: each message is a zstd frame
                try:
                    data = _zstd().decompress(data)
                except Exception as exc:  # noqa: BLE001
                    self._decode_failed(topic, t_ns, exc)
                    continue
            if check:
                try:
                    deserialize_message(data, info.cls)
                except Exception as exc:  # noqa: BLE001 - any decode failure is reported the same way
                    self._decode_failed(topic, t_ns, exc)
                    continue
            yield BagMessage(info.name, info, t_ns, data)

    def _decode_failed(self, topic: str, t_ns: int, exc: Exception) -> None:
        p = self._decode_fail.get(topic)
        if p is None:
            p = Problem('decode', f'message at t={t_ns} does not decode as {self.topics[topic].msgtype} '
                                  f'({type(exc).__name__}: {exc}); skipped', topic)
            self._decode_fail[topic] = p
            self.problems.append(p)
            log.warning('%s', p)
        else:
            p.count += 1

    def decode(self, msg: BagMessage) -> Any | None:
        """The rclpy message, or None (reported) when it does not decode."""
        from rclpy.serialization import deserialize_message

        try:
            return deserialize_message(msg.data, msg.info.cls)
        except Exception as exc:  # noqa: BLE001
            self._decode_failed(msg.info.topic, msg.t_ns, exc)
            return None

    def summary(self) -> dict[str, Any]:
        """Topics, counts and problems as a JSON-able dict."""
        return {'path': str(self.path),
                'storage': sorted({st.path.suffix.lstrip('.') for st in self.storages}),
                'topics': {n: {'type': i.msgtype, 'count': i.count, 'metadata_count': i.metadata_count,
                               'published_as': i.name, 'installed': i.cls is not None}
                           for n, i in sorted(self.topics.items())},
                'problems': [dataclasses.asdict(p) for p in self.problems]}

    def close(self) -> None:
        """Release the storage files."""
        for st in self.storages:
            if isinstance(st, _Sqlite):
                st.db.close()
                if st._tmp is not None:
                    st._tmp.cleanup()
            elif isinstance(st, _Mcap) and st._reader is not None:
                st._reader.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> 'BagReader':
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _zstd() -> Any:
    """The zstd module (Python 3.14's compression.zstd, or its backport that rosbags depends on)."""
    try:
        from compression import zstd  # type: ignore[import-not-found]
    except ImportError:
        from backports import zstd  # type: ignore[no-redef]
    return zstd


def _qos_diff(a: list, b: list) -> str:
    """Which QoS fields differ between two offered-profile lists, e.g. ``deadline (0.0 s vs infinite)``."""
    if len(a) != len(b):
        return f'the number of publishers ({len(a)} vs {len(b)})'

    def show(v: Any) -> str:
        if hasattr(v, 'sec'):
            return 'infinite' if (v.sec, v.nsec) == rostypes._INFINITE else f'{v.sec + v.nsec * 1e-9:g} s'
        return v.name.lower() if hasattr(v, 'name') else str(v)

    diffs = []
    for qa, qb in zip(a, b):
        for field in qa._fields:
            va, vb = getattr(qa, field), getattr(qb, field)
            if va != vb:
                diffs.append(f'{field} ({show(va)} vs {show(vb)})')
    return ', '.join(dict.fromkeys(diffs)) or 'nothing that matters'


def read_all(path: str | pathlib.Path, **kwargs: Any) -> tuple[list[tuple[str, int, Any]], list[Problem]]:
    """Every decodable message of a bag as (topic, t_ns, rclpy message), and the problems found."""
    out = []
    with BagReader(path, **kwargs) as reader:
        for m in reader.messages():
            msg = reader.decode(m)
            if msg is not None:
                out.append((m.topic, m.t_ns, msg))
        return out, reader.problems
