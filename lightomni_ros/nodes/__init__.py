# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""rclpy wrappers around the core: messages <-> core types, parameters -> configs, QoS, diagnostics."""
