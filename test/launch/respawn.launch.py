# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Test launch file: a talker and a lifecycle listener, both respawned, the listener brought up on every start."""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.event_handlers import OnProcessStart
from launch.events import matches_action
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from lifecycle_msgs.msg import Transition


def generate_launch_description():
    """The lifecycle pattern of lightomni.launch.py on two small nodes."""
    listener = LifecycleNode(package='lightomni_test', executable='listener', name='listener', namespace='demo',
                             remappings=[('chatter', 'chat')], respawn=LaunchConfiguration('respawn'),
                             respawn_delay=0.5)

    def change(tid):
        return EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(listener), transition_id=tid))
    return LaunchDescription([
        DeclareLaunchArgument('respawn', default_value='true'),
        Node(package='lightomni_test', executable='talker', name='talker', namespace='demo',
             remappings=[('chatter', 'chat')], respawn=True, respawn_delay=0.5),
        listener,
        RegisterEventHandler(OnProcessStart(target_action=listener,
                                            on_start=[change(Transition.TRANSITION_CONFIGURE)])),
        RegisterEventHandler(OnStateTransition(target_lifecycle_node=listener, goal_state='inactive',
                                               entities=[change(Transition.TRANSITION_ACTIVATE)])),
    ])
