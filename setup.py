# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""pip install of the lightomni_ros Python package (the PyPI-wheel set-up; colcon uses CMakeLists.txt)."""

from setuptools import find_packages, setup

# Node executables: the same names `ros2 run lightomni_ros <name>` finds on a ROS 2 install (CMakeLists.txt).
NODES = {
    'perception_node': 'lightomni_ros.nodes.perception:main',
    'consolidation_node': 'lightomni_ros.nodes.consolidation:main',
    'reflex_node': 'lightomni_ros.nodes.reflex:main',
}

setup(
    name='lightomni_ros',
    version='0.1.0',
    description='Light-Omni long-term multimodal memory and reflex responses for ROS 2 robots',
    license='Apache-2.0',
    python_requires='>=3.10',
    packages=find_packages(include=['lightomni_ros', 'lightomni_ros.*']),
    package_data={'lightomni_ros': ['py.typed']},
    entry_points={
        'console_scripts': ['lightomni = lightomni_ros.cli:main']
        + [f'{name} = {target}' for name, target in NODES.items()],
    },
)
