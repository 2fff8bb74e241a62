# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""lightomni_ros: Light-Omni long-term multimodal memory and reflex responses for ROS 2 robots.

The generated interfaces (``lightomni_ros.msg``, ``lightomni_ros.srv``) are built into the environment's
site-packages by CMake/rosidl, while this source package may be installed elsewhere (an editable install);
``extend_path`` merges every ``lightomni_ros`` folder on ``sys.path`` so both halves import as one package.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
__version__ = '0.1.0'
