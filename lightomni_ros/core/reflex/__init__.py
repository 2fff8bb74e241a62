# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The reflex subsystem (paper 3.2, 3.3, A.2, C.2, D.4): backbone + adapters + latent heads + caches + export."""
