# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Test launch file: a talker and a lifecycle listener (autostarted), with knobs for failure cases."""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node


def generate_launch_description():
    """Two nodes in a namespace, wired through a remap."""
    return LaunchDescription([
        DeclareLaunchArgument('ns', default_value='demo'),
        DeclareLaunchArgument('exit_after', default_value='0'),
        DeclareLaunchArgument('code', default_value='0'),
        DeclareLaunchArgument('ignore_sigint', default_value='false'),
        Node(package='lightomni_test', executable='talker', name='talker', namespace=LaunchConfiguration('ns'),
             parameters=[{'greeting': 'launch'}], remappings=[('chatter', 'chat')],
             arguments=['--exit-after', LaunchConfiguration('exit_after'), '--code', LaunchConfiguration('code'),
                        '--ignore-sigint', LaunchConfiguration('ignore_sigint')]),
        LifecycleNode(package='lightomni_test', executable='listener', name='listener',
                      namespace=LaunchConfiguration('ns'), remappings=[('chatter', 'chat')], autostart='true'),
    ])
