# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Data synthesis, training of the reaction adapter and heads (and of the other adapters), evaluation."""
