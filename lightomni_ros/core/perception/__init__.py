# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Perception core: audio conversion, VAD, ASR, faces, keyframes and the segmenter (paper Algorithm 1, A.1-A.3)."""
