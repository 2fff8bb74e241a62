# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""A node process lets idle OpenMP threads sleep, set before torch loads, unless the user chose how they wait."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lightomni_ros.env import OMP_USER_ENV, passive_openmp

# what a node executable does first (``reflex_node`` imports this module), then what its OpenMP runtime was given
PROBE = '''
import json, os, sys
import lightomni_ros.nodes.reflex
import torch
print(json.dumps({'policy': os.environ.get('OMP_WAIT_POLICY', ''), 'torch': 'torch' in sys.modules}))
'''


def node_env(**extra: str) -> dict[str, str]:
    """This process's environment without any OpenMP wait setting, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in OMP_USER_ENV}
    env.update(extra)
    return env


def probe(env: dict[str, str]) -> dict:
    """Import a node module in a fresh interpreter and report the wait policy it ran torch under."""
    out = subprocess.run([sys.executable, '-c', PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_node_package_sets_the_policy_before_torch_loads() -> None:
    # the package's own __init__ runs before any node module: torch is not loaded yet when it sets the policy
    code = ('import sys, os; import lightomni_ros.nodes; '
            'print(os.environ.get("OMP_WAIT_POLICY", ""), "torch" in sys.modules)')
    out = subprocess.run([sys.executable, '-c', code], env=node_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ['PASSIVE', 'False']
    assert probe(node_env()) == {'policy': 'PASSIVE', 'torch': True}


@pytest.mark.parametrize('user', [{'OMP_WAIT_POLICY': 'ACTIVE'}, {'GOMP_SPINCOUNT': '10000'}, {'KMP_BLOCKTIME': '0'}])
def test_a_users_choice_is_left_alone(user: dict[str, str]) -> None:
    env = node_env(**user)
    assert passive_openmp(env) == ''
    assert {k: env.get(k) for k in OMP_USER_ENV if k in env} == user
    if 'OMP_WAIT_POLICY' in user:       # one node process as well (the others read the same function)
        assert probe(env)['policy'] == 'ACTIVE'


def test_unset_means_passive() -> None:
    env: dict[str, str] = {}
    assert passive_openmp(env) == 'PASSIVE'
    assert env == {'OMP_WAIT_POLICY': 'PASSIVE'}
