# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""One robot of a fleet: the Light-Omni node graph with its memory on the fleet's Milvus (docs/FLEET.md).

The same three nodes as ``lightomni.launch.py`` (loaded from beside this file), with the consolidation node's
``memory.backend`` set to ``milvus``. Launch it once per robot, each with its own ``robot_id`` (and namespace when
several robots share one ROS domain); profiles and semantic memory are shared through the server, episodic memory,
S_g and reminders stay each robot's. The token comes from the environment variable LIGHTOMNI_MILVUS_TOKEN, never
from a launch argument (arguments are visible in the process list).

    ros2 launch lightomni_ros fleet.launch.py robot_id:=lobby-1 milvus_uri:=http://milvus.local:19530
"""

import importlib.util
import pathlib

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration

_spec = importlib.util.spec_from_file_location('lightomni_graph',
                                               pathlib.Path(__file__).with_name('lightomni.launch.py'))
graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graph)


def generate_launch_description():
    """The graph's arguments, the fleet's, and the three nodes with fleet memory."""
    fleet = [
        DeclareLaunchArgument('robot_id', description='this robot\'s id in the fleet (letters, digits, _ and -)'),
        DeclareLaunchArgument('milvus_uri', default_value='http://127.0.0.1:19530',
                              description='the fleet\'s Milvus (http(s)://host:port)'),
        DeclareLaunchArgument('fleet_id', default_value='default', description='the fleet\'s name on the server'),
        DeclareLaunchArgument('memory_dir', default_value='~/.local/share/lightomni_ros/memory',
                              description='the robot\'s local store (written first; the outbox lives there)'),
    ]
    memory = {'memory.backend': 'milvus', 'memory.milvus_uri': LaunchConfiguration('milvus_uri'),
              'memory.fleet_id': LaunchConfiguration('fleet_id'), 'memory.robot_id': LaunchConfiguration('robot_id'),
              'memory.memory_dir': LaunchConfiguration('memory_dir')}
    return LaunchDescription(graph.arguments() + fleet + graph.nodes(memory))
