# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Child process for the replay tests: a stand-in for the node graph with the graph's real topics and types.

- ``/text_input`` (String): publishes a Segment (typed text) and an Action that speaks ``you said: <text>`` citing
  ``semantic:1``; a text containing "remind me" also fires, 2 s later, a Reminder on ``reminders/due`` and a proactive
  Action (source REMINDER) saying ``reminder: <text>``;
- ``/camera/image_raw/compressed``: one FaceObservation ``<face_1>`` per frame (stamped with the frame's stamp);
- ``/audio``: counted; /diagnostics reports ``queue_depth`` (chunks since the last text) every 0.5 s, and the values
  ``lightomni replay --drain`` reads from the three real nodes (lightomni_ros/eval/drain.py), for the work it has done;
- a GlobalState grows by one node per text; a Topic per text (a "remember that ..." text is a remembered item).
"""

from __future__ import annotations

import sys

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from lightomni_ros.msg import (Action, AudioStamped, FaceObservation, GlobalState, GlobalStateNode, Reminder, Segment,
                               Topic)
from lightomni_ros.nodes.common import LATCHED_QOS, RELIABLE_QOS, SENSOR_QOS
from lightomni_ros.nodes.process import run_node
from rclpy.node import Node
from sensor_msgs.msg import CompressedImage
from std_msgs.msg import String


class Echo(Node):
    """The stand-in graph."""

    def __init__(self) -> None:
        super().__init__('replay_echo', namespace='/lightomni')
        self.seg_id = 0
        self.audio = 0
        self.gs = GlobalState(k=8)
        self.pub_seg = self.create_publisher(Segment, 'segments', RELIABLE_QOS)
        self.pub_act = self.create_publisher(Action, 'actions', RELIABLE_QOS)
        self.pub_rem = self.create_publisher(Reminder, 'reminders/due', RELIABLE_QOS)
        self.pub_face = self.create_publisher(FaceObservation, 'faces/detections', RELIABLE_QOS)
        self.pub_gs = self.create_publisher(GlobalState, 'global_state', LATCHED_QOS)
        self.pub_topic = self.create_publisher(Topic, 'topics', RELIABLE_QOS)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_subscription(String, '/text_input', self.on_text, RELIABLE_QOS)
        self.create_subscription(AudioStamped, '/audio', self.on_audio, SENSOR_QOS)
        self.create_subscription(CompressedImage, '/camera/image_raw/compressed', self.on_image, SENSOR_QOS)
        self.create_timer(0.5, self.on_diag)
        self.pending: list = []
        self.get_logger().info('echo ready')

    def on_text(self, msg: String) -> None:
        """Answer a typed text (and schedule a reminder)."""
        now = self.get_clock().now().to_msg()
        self.seg_id += 1
        seg = Segment(segment_id=self.seg_id, trigger=Segment.TRIGGER_TYPED_TEXT, typed_text=msg.data,
                      start=now, end=now)
        self.pub_seg.publish(seg)
        act = Action(segment_id=self.seg_id, source=Action.SOURCE_SEGMENT, p_speech=0.9, speak=True,
                     response=f'you said: {msg.data}', memory_ids=['semantic:1'], speech_end=now)
        act.header.stamp = now
        self.pub_act.publish(act)
        self.gs.version += 1
        self.gs.nodes.append(GlobalStateNode(id=self.seg_id, text=msg.data))
        self.gs.script_tokens = 10 * len(self.gs.nodes)
        self.pub_gs.publish(self.gs)
        self.audio = 0
        remembered = [msg.data] if msg.data.lower().startswith('remember that') else []
        self.pub_topic.publish(Topic(segment_id=self.seg_id, audio=msg.data, remembered=remembered,
                                     response=act.response, producer='echo'))
        if 'remind me' in msg.data.lower():
            timer = None

            def fire() -> None:
                self.destroy_timer(timer)
                due = self.get_clock().now().to_msg()
                self.pub_rem.publish(Reminder(id=1, due=due, text=msg.data, status=Reminder.STATUS_FIRED))
                self.pub_act.publish(Action(source=Action.SOURCE_REMINDER, speak=True,
                                            response=f'reminder: {msg.data}'))
            timer = self.create_timer(2.0, fire)

    def on_audio(self, msg: AudioStamped) -> None:
        """Count an audio chunk."""
        self.audio += 1

    def on_image(self, msg: CompressedImage) -> None:
        """Report one face per frame."""
        self.pub_face.publish(FaceObservation(face_id='<face_1>', track_id=1, score=0.9, stamp=msg.header.stamp))

    def on_diag(self) -> None:
        """Publish the queue depth, and the drain values of the three nodes it stands in for."""
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        n = str(self.seg_id)   # every text is answered, its Topic stored and its S_g published at once
        roles = {'perception': {'text_received': n, 'segments': n, 'output_pending': '0', 'audio_queue': '0'},
                 'reflex': {'segments': n, 'sleep_pending': '0', 'topics.echo': n},
                 'consolidation': {'topics.stored': n, 'topics_consolidated': n, 'queue_depth': '0',
                                   'sg_version': str(self.gs.version)}}
        arr.status = [DiagnosticStatus(name='replay_echo', hardware_id='replay_echo',
                                       values=[KeyValue(key='queue_depth', value=str(self.audio % 7))])]
        arr.status += [DiagnosticStatus(name=f'replay_echo: {role}', hardware_id='replay_echo',
                                        values=[KeyValue(key=k, value=v) for k, v in values.items()])
                       for role, values in roles.items()]
        self.pub_diag.publish(arr)


def main() -> int:
    """Spin until SIGINT, through the nodes' own runner: a callback racing the shutdown must not exit 1."""
    return run_node(Echo, threads=1)


if __name__ == '__main__':
    sys.exit(main())
