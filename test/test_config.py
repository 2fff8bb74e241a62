# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Config dataclasses: validation, strict keys, documentation rows."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from lightomni_ros.core import config as cfg


@dataclass
class DemoConfig:
    """A config used only by these tests."""

    threshold: float = cfg.param(0.5, 'a probability', min=0.0, max=1.0)
    mode: str = cfg.param('fast', 'how to run', choices=('fast', 'exact'))
    k: int = cfg.param(8, 'fan-in', min=2)
    enabled: bool = cfg.param(True, 'on/off')
    names: list = cfg.param(['a'], 'a list')

    def check(self) -> None:
        """Cross-field rule: exact mode needs k >= 4."""
        if self.mode == 'exact' and self.k < 4:
            raise cfg.ConfigError('k: exact mode needs k >= 4')


def test_defaults_validate_and_round_trip() -> None:
    """Defaults are valid; to_dict/from_dict round-trips; list defaults are not shared."""
    a = cfg.from_dict(DemoConfig)
    assert cfg.to_dict(a) == {'threshold': 0.5, 'mode': 'fast', 'k': 8, 'enabled': True, 'names': ['a']}
    b = cfg.from_dict(DemoConfig, cfg.to_dict(a))
    assert b == a
    a.names.append('x')
    assert DemoConfig().names == ['a']


@pytest.mark.parametrize('values, message', [
    ({'threshold': 1.5}, 'threshold: 1.5 is above the maximum'),
    ({'threshold': -0.1}, 'threshold: -0.1 is below the minimum'),
    ({'mode': 'slow'}, "mode: 'slow' is not one of"),
    ({'k': 1}, 'k: 1 is below the minimum 2'),
    ({'k': 2.5}, 'k: expected an integer'),
    ({'enabled': 'yes'}, 'enabled: expected true/false'),
    ({'threshold': 'high'}, 'threshold: expected a number'),
    ({'names': 'a'}, 'names: expected a list'),
    ({'treshold': 0.1}, "unknown parameter\\(s\\) \\['treshold'\\]"),
    ({'mode': 'exact', 'k': 3}, 'exact mode needs k >= 4'),
])
def test_bad_values_name_the_parameter(values: dict, message: str) -> None:
    """Every invalid value raises ConfigError naming the parameter."""
    with pytest.raises(cfg.ConfigError, match=message):
        cfg.from_dict(DemoConfig, values)


def test_ints_are_accepted_for_floats() -> None:
    """YAML `1` for a float parameter is accepted and stored as a float."""
    assert cfg.from_dict(DemoConfig, {'threshold': 1}).threshold == 1.0


def test_describe_rows() -> None:
    """describe() gives name, type, default, doc and bounds for docs and ROS descriptors."""
    rows = {r['name']: r for r in cfg.describe(DemoConfig)}
    assert rows['threshold']['type'] == 'float' and rows['threshold']['max'] == 1.0
    assert rows['mode']['choices'] == ('fast', 'exact')
    assert rows['k']['doc'] == 'fan-in'
