# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""rclpy wrappers around the core: messages <-> core types, parameters -> configs, QoS, diagnostics."""

from ..env import passive_openmp

# before any node module imports torch or CTranslate2: their OpenMP runtimes read the wait policy when they load
passive_openmp()
