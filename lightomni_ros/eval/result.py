# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The result of a replay (through the node graph or the offline facade): ``result.json``, its score and report.

Both replays write the same result: what was played and recorded, timing, problems, and, when the bag carries ground
truth, the score of every probe and the Markdown report; this module is the one place that does it.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

RESULT = 'result.json'


def write_result(out: pathlib.Path, result: dict[str, Any]) -> None:
    """Write ``result.json`` (anything not JSON-ready as its text)."""
    (out / RESULT).write_text(json.dumps(result, indent=2, default=str))


def score_into(out: pathlib.Path, result: dict[str, Any], gt: dict[str, Any], outputs: Any) -> dict[str, Any]:
    """Score ``outputs`` against the ground truth, write the result and the report; return the result."""
    from . import report, scoring

    tb = scoring.TimeBase.from_result(result, gt)
    result['score'] = scoring.score(gt, outputs, tb)
    write_result(out, result)
    result['report'] = str(report.write_report(out, gt, result, outputs, tb))
    write_result(out, result)
    return result


__all__ = ['RESULT', 'write_result', 'score_into']
