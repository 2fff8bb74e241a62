# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Pure-Python core of Light-Omni: perception, memory, reflex and consolidation. Never imports rclpy."""
