# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Evaluation: media -> bag, replay, scoring, benchmarks, plots."""
