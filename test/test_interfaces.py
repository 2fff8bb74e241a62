# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Every custom message round-trips between two real processes; every service is called across processes."""

from __future__ import annotations

import importlib

from harness import wait_for
from msg_fill import fill, interface_names
from rclpy.serialization import deserialize_message, serialize_message

EXPECTED_MSGS = {'Ack', 'Action', 'AudioInfo', 'AudioStamped', 'FaceGallery', 'FaceIdentity', 'FaceObservation',
                 'GlobalState', 'GlobalStateNode', 'Keyframe', 'MemoryEntry', 'Profile', 'Reminder', 'Segment',
                 'SpeakerTurn', 'SpeechChunk', 'StageLatency', 'Topic', 'VoiceGallery', 'VoiceIdentity', 'WordTiming'}
EXPECTED_SRVS = {'ExportMemory', 'Forget', 'GetGlobalState', 'ImportMemory', 'ListProfiles', 'QueryMemory',
                 'Remember', 'Summarize'}


def test_all_interfaces_are_generated() -> None:
    """The generated Python modules hold every message and service of msg/ and srv/."""
    assert set(interface_names('msg')) == EXPECTED_MSGS
    assert set(interface_names('srv')) == EXPECTED_SRVS


def test_fill_is_complete_and_serializes() -> None:
    """The filler sets every field to a non-default value, and CDR serialization round-trips in process."""
    msgs = importlib.import_module('lightomni_ros.msg')
    for name in interface_names('msg'):
        cls = getattr(msgs, name)
        msg = fill(cls, 5)
        assert msg != cls(), name
        assert deserialize_message(serialize_message(msg), cls) == msg, name


def test_messages_round_trip_across_processes(ros, spawn) -> None:
    """Each message type goes to another process and comes back unchanged."""
    child = spawn.python('test/ros_echo.py', name='echo')
    msgs = importlib.import_module('lightomni_ros.msg')
    names = interface_names('msg')
    received = {}
    pubs = {}
    for name in names:
        cls = getattr(msgs, name)
        received[name] = ros.collect(cls, f'rt/{name}/out')
        pubs[name] = ros.node.create_publisher(cls, f'rt/{name}/in', 10)
    wait_for(lambda: all(p.get_subscription_count() > 0 for p in pubs.values()), 20,
             what='the echo process to subscribe to every type')
    for seed, name in enumerate(names, start=11):
        sent = fill(getattr(msgs, name), seed)
        wait_for(lambda: (pubs[name].publish(sent), received[name])[1], 10, interval=0.2,
                 what=f'{name} echoed back')
        assert received[name][0] == sent, f'{name} changed on the way: {received[name][0]} != {sent}'
    assert child.proc.poll() is None, child.output


def test_services_are_called_across_processes(ros, spawn) -> None:
    """Each service type is served by another process; request and response arrive intact."""
    spawn.python('test/ros_echo.py', name='echo')
    srvs = importlib.import_module('lightomni_ros.srv')
    for name in interface_names('srv'):
        cls = getattr(srvs, name)
        response = ros.call(cls, f'rt/{name}', fill(cls.Request, 3), timeout=20)
        assert response == fill(cls.Response, 7), f'{name}: unexpected response {response}'
