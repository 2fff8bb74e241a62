# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The error every memory request raises for malformed input (a service answers success=false with its text)."""


class RequestError(ValueError):
    """A request is malformed (the node answers success=false with this text)."""


__all__ = ['RequestError']
