# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni doctor``: check an installation and a running graph, each finding with a fix (like ``ros2 doctor``).

One module per area (:mod:`.install`, :mod:`.dds`, :mod:`.models`, :mod:`.accel`, :mod:`.host`, :mod:`.graph`),
each a function ``check(ctx) -> list[Check]``; :mod:`.cli` runs them and prints text or JSON.
"""
