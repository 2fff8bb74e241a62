# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The YAML scenario format: a timeline of media the robot sees and hears, and probes that score what it does.

A scenario is parsed into plain dataclasses (:class:`Scenario`, :class:`Item`, :class:`Probe`) and validated
completely before any media is touched; every error names the file, the line and the item, e.g.
``sample/scenario.yaml:14: timeline[2] (id 'clip'): unknown key 'vidoe' (expected one of ...)``.
The format is documented in docs/SCENARIOS.md; :mod:`lightomni_ros.eval.bagwriter` renders a scenario into a bag.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import pathlib
import re
from typing import Any

import yaml

#: timeline kinds: exactly one of these keys per item
ITEM_KINDS = ('say', 'video', 'audio', 'idle', 'text')
#: memory kinds a question probe may expect (prefix of Action.memory_ids entries)
MEMORY_KINDS = ('semantic', 'episodic', 'profile')
_ID_RE = re.compile(r'^[A-Za-z0-9_.-]+$')
DEFAULT_START = '2026-01-05T09:00:00Z'


class ScenarioError(ValueError):
    """The scenario is invalid; the message names the file, line and item."""


class _Map(dict):
    """A YAML mapping that remembers the line it started on (1-based)."""

    line = 0


class _LineLoader(yaml.SafeLoader):
    """Safe loader whose mappings carry their line number."""


def _construct_map(loader: _LineLoader, node: yaml.MappingNode) -> _Map:
    out = _Map(loader.construct_mapping(node, deep=True))
    out.line = node.start_mark.line + 1
    keys = [loader.construct_object(k, deep=True) for k, _ in node.value]
    dupes = sorted({str(k) for k in keys if keys.count(k) > 1})
    if dupes:
        raise ScenarioError(f'line {out.line}: duplicate key(s) {dupes}')
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)


@dataclasses.dataclass
class CameraSpec:
    """How the camera topic is written."""

    transport: str = 'compressed'   # 'compressed' (sensor_msgs/CompressedImage, JPEG) or 'raw' (sensor_msgs/Image)
    fps: float = 10.0               # frame rate for still images (videos keep their source rate)
    max_width: int = 640            # frames wider than this are scaled down (aspect kept)
    jpeg_quality: int = 85
    frame_id: str = 'camera'


@dataclasses.dataclass
class AudioSpec:
    """How the microphone topic is written (always 16 kHz mono S16LE, streamed over the whole timeline)."""

    chunk_ms: int = 20
    frame_id: str = 'microphone'
    noise_dbfs: float | None = None   # optional white noise floor (e.g. -60) so VADs see a live microphone


@dataclasses.dataclass
class TtsSpec:
    """espeak-ng settings for `say:` lines and spoken questions."""

    voice: str = 'en-us'
    speed: int = 150                # words per minute
    pitch: int = 50


@dataclasses.dataclass
class Item:
    """One timeline entry."""

    kind: str                       # one of ITEM_KINDS
    id: str
    line: int
    index: int
    text: str = ''                  # say: the line spoken; text: the typed instruction
    path: pathlib.Path | None = None   # video/audio file
    seconds: float = 0.0            # idle duration
    image: pathlib.Path | None = None
    person: str = ''                # identity label of who is seen/heard (same label = same person)
    transcript: str = ''            # what is said (say: the text; video/audio: given by the scenario)
    voice: str = ''                 # say: espeak-ng voice override
    gap: float = 1.0                # silence after the item, seconds
    probe: str = ''                 # set on items generated from a spoken/typed probe question


@dataclasses.dataclass
class Probe:
    """Something to check in the robot's outputs."""

    kind: str                       # 'question', 'identity' or 'proactive'
    id: str
    line: int
    index: int
    ask: str = ''                   # question spoken by TTS
    typed: str = ''                 # question typed on the text topic
    at: float | None = None         # absolute time of the question (s since start)
    after: str = ''                 # anchor item id (question placed after it; window relative to its end)
    delay: float = 1.0              # question: pause after the anchor before asking
    wait: float = 10.0              # question: silence left after the question for the answer
    image: pathlib.Path | None = None
    voice: str = ''
    person: str = ''                # who asks (identity label, optional)
    expect: list[str] = dataclasses.field(default_factory=list)        # all must appear in the answer
    expect_any: list[str] = dataclasses.field(default_factory=list)    # at least one must appear
    expect_at_least: int = 1        # ... or at least this many different ones of expect_any
    memory: str = ''                # memory kind the answer should cite (MEMORY_KINDS)
    timeout: float = 15.0           # question: seconds after the question's end within which the answer counts
    item: str = ''                  # identity: the item whose person is checked
    same_as: str = ''               # identity: ... is the same person as this item
    different_from: str = ''        # identity: ... is not the same person as this item
    window: tuple[float, float] = (0.0, 0.0)   # proactive: [from, to] seconds after the anchor's end (or absolute)
    due: float | None = None        # proactive: when the speech is due (same reference as window)


@dataclasses.dataclass
class Scenario:
    """A validated scenario."""

    name: str
    path: pathlib.Path | None
    base_dir: pathlib.Path
    description: str = ''
    start_ns: int = 0
    camera: CameraSpec = dataclasses.field(default_factory=CameraSpec)
    audio: AudioSpec = dataclasses.field(default_factory=AudioSpec)
    tts: TtsSpec = dataclasses.field(default_factory=TtsSpec)
    items: list[Item] = dataclasses.field(default_factory=list)
    probes: list[Probe] = dataclasses.field(default_factory=list)
    attribution: str = ''

    def item(self, item_id: str) -> Item:
        """The timeline item with this id (KeyError when absent)."""
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)


class _Ctx:
    """Error formatting for one scenario file."""

    def __init__(self, where: str, base_dir: pathlib.Path) -> None:
        self.where = where
        self.base_dir = base_dir

    def fail(self, line: int, what: str, text: str) -> ScenarioError:
        loc = f'{self.where}:{line}' if line else self.where
        return ScenarioError(f'{loc}: {what}{": " if what else ""}{text}')


def _check_keys(ctx: _Ctx, node: _Map, allowed: set[str], what: str) -> None:
    unknown = sorted(set(node) - allowed)
    if unknown:
        raise ctx.fail(node.line, what, f'unknown key(s) {unknown} (expected some of {sorted(allowed)})')


def _num(ctx: _Ctx, node: _Map, key: str, what: str, default: Any = None, *, minimum: float | None = 0.0,
         integer: bool = False) -> Any:
    if key not in node or node[key] is None:
        return default
    v = node[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
        kind = 'an integer' if integer else 'a number'
        raise ctx.fail(node.line, what, f'{key!r} must be {kind}, got {v!r}')
    if minimum is not None and v < minimum:
        raise ctx.fail(node.line, what, f'{key!r} must be >= {minimum:g}, got {v!r}')
    return v if integer else float(v)


def _str(ctx: _Ctx, node: _Map, key: str, what: str, default: str = '', *, nonempty: bool = False) -> str:
    if key not in node or node[key] is None:
        if nonempty:
            raise ctx.fail(node.line, what, f'{key!r} must not be empty')
        return default
    v = node[key]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str):
        raise ctx.fail(node.line, what, f'{key!r} must be a string, got {type(v).__name__} {v!r}')
    if nonempty and not v.strip():
        raise ctx.fail(node.line, what, f'{key!r} must not be empty')
    return v.strip()


def _words(ctx: _Ctx, node: _Map, key: str, what: str) -> list[str]:
    if key not in node or node[key] is None:
        return []
    v = node[key]
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        raise ctx.fail(node.line, what, f'{key!r} must be a list of keywords, got {v!r}')
    out = [str(x).strip() for x in v]
    if any(not x for x in out):
        raise ctx.fail(node.line, what, f'{key!r} holds an empty keyword')
    return out


def _file(ctx: _Ctx, node: _Map, key: str, what: str, *, check: bool) -> pathlib.Path | None:
    if key not in node or node[key] is None:
        return None
    raw = _str(ctx, node, key, what, nonempty=True)
    p = pathlib.Path(raw).expanduser()
    p = p if p.is_absolute() else ctx.base_dir / p
    if check and not p.is_file():
        raise ctx.fail(node.line, what, f'{key} file {raw!r} not found (looked at {p})')
    return p


def _section(ctx: _Ctx, data: _Map, key: str, cls: type, ints: tuple[str, ...] = ()) -> Any:
    node = data.get(key)
    if node is None:
        return cls()
    if not isinstance(node, _Map):
        raise ctx.fail(data.line, key, f'must be a mapping, got {node!r}')
    names = {f.name for f in dataclasses.fields(cls)}
    _check_keys(ctx, node, names, key)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in node:
            continue
        if f.name in ints:
            kwargs[f.name] = _num(ctx, node, f.name, key, integer=True, minimum=1)
        elif isinstance(f.default, str):
            kwargs[f.name] = _str(ctx, node, f.name, key, nonempty=True)
        else:
            kwargs[f.name] = _num(ctx, node, f.name, key, minimum=None if f.name == 'noise_dbfs' else 0.001)
    return cls(**kwargs)


_ITEM_COMMON = {'id', 'image', 'person', 'gap'}
_ITEM_KEYS = {
    'say': _ITEM_COMMON | {'say', 'voice'},
    'video': (_ITEM_COMMON - {'image'}) | {'video', 'transcript'},
    'audio': _ITEM_COMMON | {'audio', 'transcript'},
    'idle': {'id', 'idle', 'image', 'person'},
    'text': {'id', 'text', 'person', 'gap'},
}


def _parse_item(ctx: _Ctx, node: Any, index: int, check_files: bool, parent_line: int) -> Item:
    if not isinstance(node, _Map):
        raise ctx.fail(parent_line, f'timeline[{index}]', f'must be a mapping with one of {list(ITEM_KINDS)}, '
                                                          f'got {node!r}')
    kinds = [k for k in ITEM_KINDS if k in node]
    item_id = str(node.get('id', f'item{index}'))
    what = f'timeline[{index}] (id {item_id!r})'
    if len(kinds) != 1:
        raise ctx.fail(node.line, what, f'needs exactly one of {list(ITEM_KINDS)}, found {kinds or "none"}')
    kind = kinds[0]
    _check_keys(ctx, node, _ITEM_KEYS[kind], what)
    if 'id' in node and (not isinstance(node['id'], str) or not _ID_RE.match(node['id'])):
        raise ctx.fail(node.line, what, f'id must be a word of letters, digits, _ . -, got {node["id"]!r}')
    it = Item(kind=kind, id=item_id, line=node.line, index=index,
              image=_file(ctx, node, 'image', what, check=check_files),
              person=_str(ctx, node, 'person', what),
              gap=_num(ctx, node, 'gap', what, 1.0))
    if kind == 'say':
        it.text = it.transcript = _str(ctx, node, 'say', what, nonempty=True)
        it.voice = _str(ctx, node, 'voice', what)
    elif kind == 'text':
        it.text = _str(ctx, node, 'text', what, nonempty=True)
    elif kind == 'idle':
        it.seconds = _num(ctx, node, 'idle', what)
        if it.seconds is None or it.seconds <= 0:
            raise ctx.fail(node.line, what, f"'idle' must be a positive number of seconds, got {node['idle']!r}")
        it.gap = 0.0
    else:
        it.path = _file(ctx, node, kind, what, check=check_files)
        it.transcript = _str(ctx, node, 'transcript', what)
    return it


_PROBE_KEYS = {
    'question': {'id', 'ask', 'type', 'at', 'after', 'delay', 'wait', 'image', 'voice', 'person', 'expect',
                 'expect_any', 'expect_at_least', 'memory', 'timeout'},
    'identity': {'id', 'identity'},
    'proactive': {'id', 'proactive', 'after', 'window', 'due', 'expect', 'expect_any'},
}


def _parse_probe(ctx: _Ctx, node: Any, index: int, check_files: bool, parent_line: int) -> Probe:
    if not isinstance(node, _Map):
        raise ctx.fail(parent_line, f'probes[{index}]', f'must be a mapping, got {node!r}')
    probe_id = str(node.get('id', f'probe{index}'))
    what = f'probes[{index}] (id {probe_id!r})'
    if 'id' in node and (not isinstance(node['id'], str) or not _ID_RE.match(node['id'])):
        raise ctx.fail(node.line, what, f'id must be a word of letters, digits, _ . -, got {node["id"]!r}')
    if 'identity' in node:
        kind = 'identity'
    elif 'proactive' in node:
        kind = 'proactive'
    elif 'ask' in node or 'type' in node:
        kind = 'question'
    else:
        raise ctx.fail(node.line, what, "needs 'ask:' or 'type:' (a question), 'identity:' or 'proactive:'")
    _check_keys(ctx, node, _PROBE_KEYS[kind], what)
    p = Probe(kind=kind, id=probe_id, line=node.line, index=index)
    if kind == 'question':
        if 'ask' in node and 'type' in node:
            raise ctx.fail(node.line, what, "give either 'ask:' (spoken) or 'type:' (typed), not both")
        p.ask = _str(ctx, node, 'ask', what, nonempty='ask' in node)
        p.typed = _str(ctx, node, 'type', what, nonempty='type' in node)
        p.at = _num(ctx, node, 'at', what)
        p.after = _str(ctx, node, 'after', what)
        if (p.at is None) == (not p.after):
            raise ctx.fail(node.line, what, "give exactly one of 'at:' (seconds) or 'after:' (an item id)")
        p.delay = _num(ctx, node, 'delay', what, 1.0)
        p.wait = _num(ctx, node, 'wait', what, 10.0)
        p.timeout = _num(ctx, node, 'timeout', what, 15.0)
        if p.timeout <= 0:
            raise ctx.fail(node.line, what, "'timeout' must be positive")
        p.image = _file(ctx, node, 'image', what, check=check_files)
        p.voice = _str(ctx, node, 'voice', what)
        p.person = _str(ctx, node, 'person', what)
        p.expect = _words(ctx, node, 'expect', what)
        p.expect_any = _words(ctx, node, 'expect_any', what)
        p.expect_at_least = int(_num(ctx, node, 'expect_at_least', what, 1, minimum=1))
        if p.expect_at_least > max(1, len(p.expect_any)):
            raise ctx.fail(node.line, what, f"'expect_at_least' ({p.expect_at_least}) is more than the "
                           f"{len(p.expect_any)} keywords of 'expect_any'")
        p.memory = _str(ctx, node, 'memory', what)
        if p.memory and p.memory not in MEMORY_KINDS:
            raise ctx.fail(node.line, what, f"'memory' must be one of {list(MEMORY_KINDS)}, got {p.memory!r}")
    elif kind == 'identity':
        spec = node['identity']
        if not isinstance(spec, _Map):
            raise ctx.fail(node.line, what, "'identity' must be a mapping {item: ID, same_as: ID} "
                                            'or {item: ID, different_from: ID}')
        _check_keys(ctx, spec, {'item', 'same_as', 'different_from'}, what)
        p.item = _str(ctx, spec, 'item', what, nonempty=True)
        p.same_as = _str(ctx, spec, 'same_as', what)
        p.different_from = _str(ctx, spec, 'different_from', what)
        if bool(p.same_as) == bool(p.different_from):
            raise ctx.fail(spec.line, what, "identity needs exactly one of 'same_as' or 'different_from'")
    else:
        if node['proactive'] is not True:
            raise ctx.fail(node.line, what, "'proactive' must be true")
        p.after = _str(ctx, node, 'after', what)
        win = node.get('window')
        if (not isinstance(win, list) or len(win) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in win)
                or not 0 <= win[0] < win[1]):
            raise ctx.fail(node.line, what, f"'window' must be [from, to] seconds with 0 <= from < to, got {win!r}")
        p.window = (float(win[0]), float(win[1]))
        p.due = _num(ctx, node, 'due', what)
        p.expect = _words(ctx, node, 'expect', what)
        p.expect_any = _words(ctx, node, 'expect_any', what)
        if not p.expect and not p.expect_any:
            raise ctx.fail(node.line, what, "a proactive probe needs 'expect' or 'expect_any' keywords")
    return p


def _start_ns(ctx: _Ctx, data: _Map) -> int:
    raw = data.get('start_time', DEFAULT_START)
    if isinstance(raw, dt.datetime):
        stamp = raw
    else:
        try:
            stamp = dt.datetime.fromisoformat(str(raw).replace('Z', '+00:00'))
        except ValueError:
            raise ctx.fail(data.line, 'start_time', f'expected an ISO 8601 time such as {DEFAULT_START}, '
                                                    f'got {raw!r}') from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return int(stamp.timestamp()) * 1_000_000_000 + stamp.microsecond * 1000


def parse(data: Any, *, where: str = '<scenario>', base_dir: pathlib.Path | None = None,
          check_files: bool = True, path: pathlib.Path | None = None) -> Scenario:
    """Validate a loaded YAML document (mappings from :func:`load_text` carry line numbers)."""
    base = base_dir or pathlib.Path.cwd()
    ctx = _Ctx(where, base)
    if not isinstance(data, _Map):
        raise ctx.fail(0, '', 'a scenario is a mapping with at least a `timeline:` list')
    _check_keys(ctx, data, {'name', 'description', 'start_time', 'camera', 'audio', 'tts', 'timeline', 'probes',
                            'attribution'}, '')
    sc = Scenario(name=_str(ctx, data, 'name', '', path.stem if path else 'scenario'), path=path, base_dir=base,
                  description=_str(ctx, data, 'description', ''), start_ns=_start_ns(ctx, data),
                  camera=_section(ctx, data, 'camera', CameraSpec, ints=('max_width', 'jpeg_quality')),
                  audio=_section(ctx, data, 'audio', AudioSpec, ints=('chunk_ms',)),
                  tts=_section(ctx, data, 'tts', TtsSpec, ints=('speed', 'pitch')),
                  attribution=_str(ctx, data, 'attribution', ''))
    if sc.camera.transport not in ('compressed', 'raw'):
        raise ctx.fail(data['camera'].line, 'camera', f"'transport' must be 'compressed' or 'raw', "
                                                      f'got {sc.camera.transport!r}')
    if not 1 <= sc.camera.jpeg_quality <= 100:
        raise ctx.fail(data['camera'].line, 'camera', "'jpeg_quality' must be in 1..100")
    if not 5 <= sc.audio.chunk_ms <= 1000:
        raise ctx.fail(data['audio'].line, 'audio', "'chunk_ms' must be in 5..1000")
    timeline = data.get('timeline')
    if not isinstance(timeline, list) or not timeline:
        raise ctx.fail(data.line, 'timeline', 'must be a non-empty list of items')
    sc.items = [_parse_item(ctx, node, i, check_files, data.line) for i, node in enumerate(timeline)]
    probes = data.get('probes') or []
    if not isinstance(probes, list):
        raise ctx.fail(data.line, 'probes', 'must be a list')
    sc.probes = [_parse_probe(ctx, node, i, check_files, data.line) for i, node in enumerate(probes)]
    _cross_check(ctx, sc)
    return sc


def _cross_check(ctx: _Ctx, sc: Scenario) -> None:
    seen: dict[str, int] = {}
    for it in sc.items:
        if it.id in seen:
            raise ctx.fail(it.line, f'timeline[{it.index}]', f'id {it.id!r} already used by timeline[{seen[it.id]}]')
        seen[it.id] = it.index
    probe_ids: set[str] = set()
    for p in sc.probes:
        what = f'probes[{p.index}] (id {p.id!r})'
        if p.id in probe_ids or p.id in seen:
            raise ctx.fail(p.line, what, f'id {p.id!r} is already used')
        probe_ids.add(p.id)
        for ref in (p.after, p.item, p.same_as, p.different_from):
            if ref and ref not in seen:
                raise ctx.fail(p.line, what, f'refers to item {ref!r}, which is not in the timeline '
                                             f'(ids: {sorted(seen)})')
        if p.kind == 'identity':
            for ref in (p.item, p.same_as or p.different_from):
                if sc.item(ref).image is None and sc.item(ref).kind != 'video':
                    raise ctx.fail(p.line, what, f'item {ref!r} shows no face (no image or video)')
            if p.item == (p.same_as or p.different_from):
                raise ctx.fail(p.line, what, 'an identity probe compares two different items')
        if p.kind == 'question' and not (p.expect or p.expect_any):
            raise ctx.fail(p.line, what, "a question needs 'expect' or 'expect_any' keywords")


def load_text(text: str, *, where: str = '<scenario>') -> Any:
    """YAML text -> data whose mappings carry line numbers (ScenarioError on YAML syntax errors)."""
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass
    except ScenarioError as exc:
        raise ScenarioError(f'{where}: {exc}') from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        line = f':{mark.line + 1}' if mark is not None else ''
        raise ScenarioError(f'{where}{line}: YAML syntax error: {getattr(exc, "problem", exc)}') from None


def load(path: str | pathlib.Path, *, check_files: bool = True) -> Scenario:
    """Read and validate a scenario file; media paths are relative to the file's folder."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ScenarioError(f'{path}: scenario file not found')
    data = load_text(path.read_text(), where=str(path))
    return parse(data, where=str(path), base_dir=path.resolve().parent, check_files=check_files, path=path)


def loads(text: str, *, base_dir: pathlib.Path | None = None, check_files: bool = True,
          where: str = '<scenario>') -> Scenario:
    """Validate a scenario given as YAML text."""
    return parse(load_text(text, where=where), where=where, base_dir=base_dir, check_files=check_files)
