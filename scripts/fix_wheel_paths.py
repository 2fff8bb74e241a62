# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Rewrite the build-machine paths baked into the ROS wheels' CMake export files.

The PyPI ROS wheels were built under /opt/python/cp311-cp311; their
``share/*/cmake/*Export.cmake`` files name that Python's include directory and
numpy's, so building our interfaces against them fails until those paths point
at this venv's Python and numpy. Idempotent: files already fixed are left alone.
"""

import pathlib
import re
import subprocess
import sys

BAKED = re.compile(r'/opt/python/cp3\d+-cp3\d+(?:/lib/python3\.\d+/site-packages/numpy/_core/include'
                   r'|/include/python3\.\d+)')


def main(venv: str) -> int:
    """Fix every export file under ``venv/share``; print how many changed."""
    py = pathlib.Path(venv) / 'bin' / 'python'
    code = 'import sysconfig, numpy; print(sysconfig.get_paths()["include"]); print(numpy.get_include())'
    out = subprocess.run([str(py), '-c', code], check=True, capture_output=True, text=True,
                         env={'PATH': '/usr/bin:/bin', '_ROS_WHEELS_BOOTSTRAP_COMPLETE': '1'}).stdout.split()
    py_include, np_include = out[-2], out[-1]

    def repl(m: re.Match) -> str:
        return np_include if m.group(0).endswith('numpy/_core/include') else py_include

    changed = 0
    for path in (pathlib.Path(venv) / 'share').glob('*/cmake/*.cmake'):
        text = path.read_text()
        new = BAKED.sub(repl, text)
        if new != text:
            path.write_text(new)
            changed += 1
    if changed:
        print(f'[setup] fixed baked-in build paths in {changed} CMake export files', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
