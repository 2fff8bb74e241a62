#!/usr/bin/env bash
# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
#
# The one set-up path: creates .venv, installs the pinned requirements, fixes the ROS wheels' baked-in build paths,
# builds the msg/srv interfaces into the venv and installs the package. Each step keeps a stamp (a hash of its inputs)
# in .venv/.stamps, so a second run with nothing changed only compares hashes.
#
#   GPU=1          install requirements/gpu.txt on top (NVIDIA robots)
#   FLEET=0        skip requirements/fleet.txt (Milvus client, milvus-lite, a Milvus server for the fleet tests)
#   ROS_DISTRO     when set and the system rclpy imports, use the ROS 2 install (venv with system site packages)
#   LIGHTOMNI_VENV venv location (default: <repo>/.venv)
set -euo pipefail

# -P: the physical checkout, also when this script is reached through a link (links and stamps must name it)
ROOT=$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${LIGHTOMNI_VENV:-$ROOT/.venv}
GPU=${GPU:-0}
FLEET=${FLEET:-1}
STAMPS=$VENV/.stamps
log() { printf '[setup] %s\n' "$*" >&2; }
hash_of() { (cd "$ROOT" && cat "$@" 2>/dev/null; printf '%s' "$MODE$GPU") | sha256sum | cut -c1-32; }
is_current() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
mark() { mkdir -p "$STAMPS"; printf '%s' "$2" > "$STAMPS/$1"; }

pick_python() {
  for p in "${PYTHON:-}" python3.11 python3; do
    [ -n "$p" ] && command -v "$p" >/dev/null && { command -v "$p"; return; }
  done
  log "no python3 found"; exit 1
}

# --- mode: PyPI ROS wheels (default) or a sourced ROS 2 install -------------------------------------------------
MODE=wheels
if [ -n "${ROS_DISTRO:-}" ] && /usr/bin/python3 -c 'import rclpy' >/dev/null 2>&1; then
  MODE=system
fi

# --- system packages -----------------------------------------------------------------------------------------------
need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v g++ >/dev/null || need_apt+=(g++)
command -v espeak-ng >/dev/null || need_apt+=(espeak-ng)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  log "apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# --- venv ------------------------------------------------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  PY=$(pick_python)
  log "creating $VENV ($MODE mode) with $PY"
  if [ $MODE = system ]; then
    /usr/bin/python3 -m venv --system-site-packages "$VENV"
  else
    "$PY" -m venv "$VENV"
  fi
fi
VPY=$VENV/bin/python
# pip's own output is noisy with index warnings; keep errors.
pip_install() { "$VPY" -m pip install -q --disable-pip-version-check "$@" 2> >(grep -v '^WARNING: Location' >&2); }

req_files="requirements/base.txt requirements/nodeps.txt"
[ $MODE = wheels ] && req_files="requirements/ros.txt $req_files"
[ "$GPU" = 1 ] && req_files="$req_files requirements/gpu.txt"
[ "$FLEET" = 1 ] && req_files="$req_files requirements/fleet.txt"
h=$(hash_of $req_files)
if ! is_current requirements "$h"; then
  log "installing requirements ($req_files)"
  t0=$(date +%s)
  if [ $MODE = wheels ]; then pip_install -r "$ROOT/requirements/ros.txt"; fi
  pip_install -r "$ROOT/requirements/base.txt"
  pip_install --no-deps -r "$ROOT/requirements/nodeps.txt"
  if [ "$GPU" = 1 ]; then pip_install -r "$ROOT/requirements/gpu.txt"; fi
  if [ "$FLEET" = 1 ]; then pip_install -r "$ROOT/requirements/fleet.txt"; fi
  log "requirements installed in $(( $(date +%s) - t0 )) s"
  mark requirements "$h"
fi

# --- the wheels' baked-in build paths ------------------------------------------------------------------------------
if [ $MODE = wheels ]; then
  "$VPY" "$ROOT/scripts/fix_wheel_paths.py" "$VENV"
fi

# Like colcon's --symlink-install: share/lightomni_ros/{config,launch,models} point at the source tree, so edits to
# parameters, launch files and shipped weights take effect without a rebuild.
link_share() {
  local share=$VENV/share/lightomni_ros d
  for d in config launch models; do
    rm -rf "${share:?}/$d"
    ln -s "$ROOT/$d" "$share/$d"
  done
}

# --- interfaces (msg/srv) into the venv ------------------------------------------------------------------------------
h=$(hash_of CMakeLists.txt package.xml msg/*.msg srv/*.srv)
if ! is_current interfaces "$h"; then
  log "building interfaces (msg/srv) with CMake"
  t0=$(date +%s)
  BUILD=$ROOT/build/interfaces
  prefix_path=$VENV
  [ $MODE = system ] && prefix_path="$VENV;/opt/ros/$ROS_DISTRO"
  rm -rf "$BUILD"; mkdir -p "$ROOT/build"
  AMENT_PREFIX_PATH=$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH} cmake -S "$ROOT" -B "$BUILD" \
    -DCMAKE_PREFIX_PATH="$prefix_path" -DCMAKE_INSTALL_PREFIX="$VENV" -DPython3_EXECUTABLE="$VPY" \
    -DBUILD_TESTING=OFF -DLIGHTOMNI_INSTALL_PYTHON=OFF > "$ROOT/build/interfaces.log" 2>&1 \
    && cmake --build "$BUILD" -j"$(nproc)" >> "$ROOT/build/interfaces.log" 2>&1 \
    && cmake --install "$BUILD" >> "$ROOT/build/interfaces.log" 2>&1 \
    || { tail -40 "$ROOT/build/interfaces.log" >&2; log "interface build failed (full log: build/interfaces.log)"; exit 1; }
  # rosidl writes an empty lightomni_ros/__init__.py into site-packages; without it that folder is a namespace portion
  # that lightomni_ros/__init__.py (the source tree) merges into its __path__ (msg, srv, type support libraries).
  # Its egg-info is dropped too: pip would otherwise take it for an older install of this package and, when
  # installing the package below, uninstall it together with the generated msg/srv files.
  site=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -rf "$site/lightomni_ros/__init__.py" "$site"/lightomni_ros-*.egg-info
  link_share
  log "interfaces built in $(( $(date +%s) - t0 )) s"
  mark interfaces "$h"
fi

# --- the package itself (editable; 'compat' mode puts the source folder on sys.path, see above) --------------------
h=$(hash_of setup.py setup.cfg)
if ! is_current package "$h"; then
  log "installing lightomni_ros (editable)"
  pip_install --no-deps --no-build-isolation -e "$ROOT" --config-settings editable_mode=compat
  mark package "$h"
fi
log "ready ($MODE mode): $VENV"
