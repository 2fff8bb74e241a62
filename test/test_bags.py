# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Scenario -> rosbag2 round trips, real rosbag2 recordings (../shared/media/bags) and corrupt bags."""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import cv2
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from std_msgs.msg import String

from lightomni_ros.eval import bagwriter, rostypes, scenario
from lightomni_ros.eval.bagreader import BagReader, parse_remaps, read_all

REPO = pathlib.Path(__file__).resolve().parents[1]
MEDIA = pathlib.Path(os.environ.get('LIGHTOMNI_MEDIA', REPO.parent / 'shared' / 'media'))
BAGS = MEDIA / 'bags'
needs_media = pytest.mark.skipif(not (BAGS / 'rosbag2_talker_mcap').is_dir(),
                                 reason=f'real rosbag2 recordings not found under {BAGS} (set LIGHTOMNI_MEDIA)')
SCENARIO = f"""
name: tiny
camera: {{fps: 4, max_width: 320}}
timeline:
  - id: hi
    say: Hello robot.
    image: {REPO}/sample/media/faces/joe_biden_1.jpg
    person: joe
  - id: clip
    video: {REPO}/sample/media/video/bbaf2n.mpg
    transcript: bin blue at f two now
  - id: note
    text: Remember that the keys are in the drawer.
probes:
  - id: q
    type: where are the keys
    after: note
    wait: 1
    expect: [drawer]
"""


def make_bag(tmp: pathlib.Path, storage: str = 'mcap', transport: str = 'compressed') -> tuple[pathlib.Path, dict]:
    """A small scenario bag (TTS line with a photo, a GRID clip, a typed note and a typed question)."""
    sc = scenario.loads(SCENARIO)
    sc.camera.transport = transport
    out = tmp / f'bag_{storage}_{transport}'
    return out, bagwriter.write_bag(sc, out, storage=storage, progress=False)


@pytest.mark.parametrize('storage, transport', [('mcap', 'compressed'), ('sqlite3', 'raw')])
def test_round_trip(tmp_path: pathlib.Path, storage: str, transport: str) -> None:
    """Every message written reads back and decodes; stamps, rates, sizes and ground truth agree."""
    bag, gt = make_bag(tmp_path, storage, transport)
    assert (bag / bagwriter.GROUNDTRUTH).is_file() and bagwriter.load_ground_truth(bag) == json.loads(
        (bag / bagwriter.GROUNDTRUTH).read_text())
    cam = '/camera/image_raw/compressed' if transport == 'compressed' else '/camera/image_raw'
    with BagReader(bag) as reader:
        assert reader.problems == []
        assert {n: i.count for n, i in reader.topics.items()} == gt['message_counts']
        assert reader.topics['/audio'].msgtype == 'lightomni_ros/msg/AudioStamped'
        assert reader.topics['/audio'].qos[0].reliability.name == 'BEST_EFFORT'
        assert reader.topics['/text_input'].qos[0].reliability.name == 'RELIABLE'
        msgs = [(m.topic, m.t_ns, reader.decode(m)) for m in reader.messages(check=True)]
    assert len(msgs) == sum(gt['message_counts'].values())
    assert [t for _, t, _ in msgs] == sorted(t for _, t, _ in msgs)
    audio = [(t, m) for topic, t, m in msgs if topic == '/audio']
    assert all(m.info.sample_rate == 16000 and m.info.sample_format == 'S16LE' and len(m.data) == 640
               for _, m in audio[:-1])
    assert all(t == m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for t, m in audio)
    steps = np.diff([t for t, _ in audio])
    assert steps.min() == steps.max() == 20_000_000
    assert audio[0][0] == gt['start_ns'] and len(audio) * 0.02 == pytest.approx(gt['duration'], abs=0.02)
    pcm = np.frombuffer(b''.join(bytes(m.data) for _, m in audio), '<i2').astype(np.float32) / 32767
    hi = next(i for i in gt['items'] if i['id'] == 'hi')
    s0, s1 = int(hi['speech_start'] * 16000), int(hi['speech_end'] * 16000)
    assert np.sqrt(np.mean(pcm[s0:s1] ** 2)) > 20 * np.sqrt(np.mean(pcm[s1 + 1600:s1 + 8000] ** 2) + 1e-12)
    frames = [m for topic, _, m in msgs if topic == cam]
    if transport == 'compressed':
        img = cv2.imdecode(np.frombuffer(bytes(frames[0].data), np.uint8), cv2.IMREAD_COLOR)
        assert frames[0].format == 'jpeg' and img.shape[1] == 320
    else:
        f = frames[0]
        assert f.encoding == 'rgb8' and f.width == 320 and len(f.data) == 3 * 320 * f.height
    clip = next(i for i in gt['items'] if i['id'] == 'clip')
    clip_frames = [t for topic, t, _ in msgs
                   if topic == cam and clip['start'] - 0.001 <= (t - gt['start_ns']) / 1e9 < clip['end'] - 0.001]
    assert len(clip_frames) == 75   # the GRID clip's 3 s at 25 fps, at its source rate
    assert np.diff(clip_frames).min() == np.diff(clip_frames).max() == 40_000_000
    texts = [(t, m.data) for topic, t, m in msgs if topic == '/text_input']
    note = next(i for i in gt['items'] if i['id'] == 'note')
    q = gt['probes'][0]
    assert [m for _, m in texts] == ['Remember that the keys are in the drawer.', 'where are the keys']
    assert [(t - gt['start_ns']) / 1e9 for t, _ in texts] == pytest.approx([note['start'], q['start']], abs=1e-3)


def test_rosbags_reads_our_bag_with_our_definitions(tmp_path: pathlib.Path) -> None:
    """Interoperability: the rosbags library's own reader and CDR decoder agree with what rclpy wrote."""
    from rosbags.rosbag2 import Reader

    bag, gt = make_bag(tmp_path)
    store = rostypes.typestore()
    with Reader(bag) as reader:
        conns = [c for c in reader.connections if c.topic == '/audio']
        assert conns[0].digest.startswith('RIHS01_')
        n = 0
        for conn, t, raw in reader.messages(connections=conns):
            msg = store.deserialize_cdr(raw, conn.msgtype)
            assert msg.info.sample_rate == 16000 and msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec == t
            n += 1
    assert n == gt['message_counts']['/audio']


@needs_media
@pytest.mark.parametrize('name', ['rosbag2_talker_mcap', 'rosbag2_talker_sqlite3'])
def test_real_rosbag2_recordings(name: str) -> None:
    """The rosbag2 project's own `ros2 bag record` output reads fully; the metadata/storage QoS mismatch is reported."""
    msgs, problems = read_all(BAGS / name)
    by_topic: dict[str, list] = {}
    for topic, _, msg in msgs:
        by_topic.setdefault(topic, []).append(msg)
    assert [m.data for m in by_topic['/topic']] == [f'Hello, world! {i}' for i in range(10)]
    assert len(by_topic['/rosout']) == 10   # rcl_interfaces/Log: decodes with rclpy's type support
    qos = [p for p in problems if p.kind == 'qos']
    assert {p.topic for p in qos} == {'/topic', '/rosout', '/parameter_events'}
    assert all('deadline (0 s vs infinite)' in p.text for p in qos)
    assert [p for p in problems if p.kind != 'qos'] == []


@needs_media
def test_real_storage_file_alone_and_remap() -> None:
    """A storage file given without its folder reads without metadata; remaps rename topics."""
    with BagReader(BAGS / 'rosbag2_talker_sqlite3' / 'talker.db3', remap=parse_remaps(['/topic:=/chatter'])) as r:
        assert r.problems == []
        names = {m.topic for m in r.messages()}
        assert names == {'/chatter', '/rosout'}
        assert r.topics['/topic'].name == '/chatter' and r.topics['/topic'].count == 10
    with pytest.raises(ValueError, match='from:=to'):
        parse_remaps(['/topic=/chatter'])


def _copy(src: pathlib.Path, dst: pathlib.Path) -> pathlib.Path:
    shutil.copytree(src, dst)
    for p in dst.iterdir():
        p.chmod(0o644)
    return dst


def _truncate(bag: pathlib.Path, frac: float) -> None:
    for f in bag.iterdir():
        if f.suffix in ('.mcap', '.db3'):
            data = f.read_bytes()
            f.write_bytes(data[:int(len(data) * frac)])


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_truncated_bag_reads_what_is_left(tmp_path: pathlib.Path, storage: str) -> None:
    """A file cut at 60 %: reported as truncated, the complete part is read and decodes."""
    bag, gt = make_bag(tmp_path, storage)
    total = sum(gt['message_counts'].values())
    _truncate(bag, 0.6)
    msgs, problems = read_all(bag)
    kinds = {p.kind for p in problems}
    assert 'truncated' in kinds, problems
    assert 'metadata' in kinds    # the counts in metadata.yaml no longer match
    assert 0.2 * total < len(msgs) < total
    assert all(m.info.sample_rate == 16000 for topic, _, m in msgs if topic == '/audio')


@needs_media
def test_truncated_real_mcap(tmp_path: pathlib.Path) -> None:
    """The real recording without its summary section and footer is scanned; all 20 messages are in its data part."""
    bag = _copy(BAGS / 'rosbag2_talker_mcap', tmp_path / 'b')
    _truncate(bag, 0.6)
    msgs, problems = read_all(bag)
    assert len(msgs) == 20
    assert any(p.kind == 'truncated' and 'talker.mcap' in p.text for p in problems)


def test_corrupt_metadata(tmp_path: pathlib.Path) -> None:
    """Unparsable metadata.yaml, or one naming a missing file: reported, and the storage files are read anyway."""
    bag, gt = make_bag(tmp_path)
    total = sum(gt['message_counts'].values())
    (bag / 'metadata.yaml').write_text('rosbag2_bagfile_information: [unclosed\n  - : :')
    msgs, problems = read_all(bag)
    assert len(msgs) == total
    assert any(p.kind == 'metadata' and 'metadata.yaml unreadable' in p.text for p in problems)
    (bag / 'metadata.yaml').write_text('rosbag2_bagfile_information:\n  version: 9\n  relative_file_paths: [old.mcap]\n'
                                       '  topics_with_message_count:\n  - message_count: 5\n    topic_metadata: '
                                       '{name: /gone, type: std_msgs/msg/String, offered_qos_profiles: ""}\n')
    msgs, problems = read_all(bag)
    assert len(msgs) == total
    texts = [str(p) for p in problems]
    assert any('missing: [\'old.mcap\']' in t for t in texts), texts
    assert any('[/gone]' in t and 'no such topic' in t for t in texts), texts
    assert any('[/audio]' in t and 'missing from metadata.yaml' in t for t in texts), texts


def test_garbage_message_and_unknown_type(tmp_path: pathlib.Path) -> None:
    """A message whose bytes do not decode is skipped and reported; a topic of an unknown type too; the rest reads."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    bag = tmp_path / 'odd'
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        text = w.add_connection('/text', 'std_msgs/msg/String', typestore=rostypes.typestore())
        odd = w.add_connection('/odd', 'acme_msgs/msg/Widget', msgdef='int32 size\n', rihs01='RIHS01_' + '0' * 64)
        for i in range(5):
            data = serialize_message(String(data=f'm{i}'))
            if i == 2:
                data = b'\x00\x01\x00\x00' + b'\xff' * 3   # a length prefix that runs past the end
            w.write(text, 1000 + i, data)
        w.write(odd, 1001, b'\x00\x01\x00\x00\x07\x00\x00\x00')
    with BagReader(bag) as reader:
        got = [reader.decode(m).data for m in reader.messages(check=True)]
        problems = {p.kind: p for p in reader.problems}
    assert got == ['m0', 'm1', 'm3', 'm4']
    assert problems['decode'].topic == '/text' and 'does not decode as std_msgs/msg/String' in problems['decode'].text
    assert problems['unknown_type'].topic == '/odd' and 'acme_msgs/msg/Widget is not installed' in str(
        problems['unknown_type'])


def test_not_a_bag(tmp_path: pathlib.Path) -> None:
    """Paths that are not bags give one clear error."""
    with pytest.raises(FileNotFoundError, match='does not exist'):
        BagReader(tmp_path / 'none')
    (tmp_path / 'empty').mkdir()
    with pytest.raises(FileNotFoundError, match='no .mcap or .db3'):
        BagReader(tmp_path / 'empty')
    (tmp_path / 'x.txt').write_text('x')
    with pytest.raises(ValueError, match='not a rosbag2 storage file'):
        BagReader(tmp_path / 'x.txt')
    (tmp_path / 'junk.mcap').write_bytes(b'not an mcap at all')
    with BagReader(tmp_path / 'junk.mcap') as r:
        assert list(r.messages()) == []
        assert any('not an MCAP file' in p.text for p in r.problems)


def test_bag_cli(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture) -> None:
    """`lightomni bag`: writes the bag; an invalid scenario exits 2 with the error; an existing output needs --force."""
    from lightomni_ros import cli

    path = tmp_path / 's.yaml'
    path.write_text(SCENARIO)
    out = tmp_path / 'cli_bag'
    assert cli.main(['bag', str(path), '-o', str(out), '-s', 'sqlite3']) == 0
    assert (out / 'cli_bag.db3').is_file() and 'wrote' in capsys.readouterr().out
    assert cli.main(['bag', str(path), '-o', str(out)]) == 1
    assert 'use --force' in capsys.readouterr().out
    path.write_text(SCENARIO.replace('say:', 'sya:'))
    assert cli.main(['bag', str(path), '--check']) == 2
    assert "timeline[0] (id 'hi'): needs exactly one of" in capsys.readouterr().out


def test_sample_bag_builds(tmp_path: pathlib.Path) -> None:
    """The bundled sample renders: every probe placed, the reminder's window inside the bag, nothing overlaps."""
    sc = scenario.load(REPO / 'sample' / 'scenario.yaml')
    gt = bagwriter.write_bag(sc, tmp_path / 'sample', progress=False)
    assert len(gt['probes']) == len(sc.probes) and gt['duration'] > 100
    rem = next(p for p in gt['probes'] if p['kind'] == 'proactive')
    assert rem['window'][1] < gt['duration'] and rem['window'][0] < rem['due'] < rem['window'][1]
    again = next(i for i in gt['items'] if i['id'] == 'barack_again')
    assert rem['due'] == pytest.approx(again['speech_end'] + 60, abs=0.01)
    questions = [p for p in gt['probes'] if p['kind'] == 'question']
    spans = sorted([(p['start'], p['end']) for p in questions] + [(i['start'], i['end']) for i in gt['items']])
    assert all(a[1] <= b[0] + 1e-6 for a, b in zip(spans, spans[1:]))   # nothing is said over anything else
    assert gt['message_counts']['/camera/image_raw/compressed'] > 100 and gt['persons']['barack_again'] == 'barack'
    assert 'GRID' in gt['attribution']


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
@pytest.mark.parametrize('mode', ['file', 'message'])
def test_zstd_compressed_bags(tmp_path: pathlib.Path, storage: str, mode: str) -> None:
    """Bags recorded with --compression-format zstd (file or message mode) read like plain ones."""
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

    bag = tmp_path / 'z'
    w = Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3)
    w.set_compression(CompressionMode.FILE if mode == 'file' else CompressionMode.MESSAGE, CompressionFormat.ZSTD)
    with w:
        c = w.add_connection('/t', 'std_msgs/msg/String', typestore=rostypes.typestore())
        for i in range(5):
            w.write(c, 100 + i, serialize_message(String(data=f'z{i}')))
    if mode == 'file':
        assert [p.name.endswith('.zstd') for p in bag.iterdir() if p.name != 'metadata.yaml'] == [True]
    msgs, problems = read_all(bag)
    assert [m.data for _, _, m in msgs] == [f'z{i}' for i in range(5)] and problems == []
