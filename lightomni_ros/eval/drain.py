# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni replay --drain``: wait, from outside the nodes, until the graph has finished with what it was given.

The nodes say how far they are on ``/diagnostics`` (1 Hz), and the consolidation node's latched ``global_state``
carries the S_g version; the watcher re-evaluates on every message it receives (no fixed sleeps). Drained means:

- perception has received every typed text sent to it (``text_received``, a reliable input, counted from its value
  when the replay started: a running graph may have had texts before) and has no segment queued or in ASR
  (``output_pending``, ``audio_queue``);
- reflex has answered every segment perception published (``segments`` + failed ones, ``warn.segment``) and has no
  interaction waiting for or in a memory pass (``sleep_pending``);
- consolidation has stored every Topic reflex published (``topics.stored`` + rejected ones, ``warn.topic``, against
  reflex's ``topics.*``), its queue is empty (``queue_depth``), and the newest S_g it published
  (``sg_version``) has arrived here.

Each node's status is read only when that node reports (a graph without perception skips its part). A segment the
perception node has not closed yet (it closes on speech end, typed text, or after ``segments.timeout_s``) is not
waited for.
"""

from __future__ import annotations

import threading
import time
from typing import Any

#: the status of each node is recognised by a value only it reports (reflex reports an sg_version too)
MARKERS = {'perception': 'output_pending', 'reflex': 'sleep_pending', 'consolidation': 'topics_consolidated'}


def _num(values: dict[str, str], key: str) -> float:
    try:
        return float(values.get(key, 0) or 0)
    except ValueError:
        return 0.0


class DrainWatch:
    """Follows the graph's diagnostics and S_g versions; :meth:`wait` returns once :meth:`pending` is empty."""

    def __init__(self, node: Any, namespace: str) -> None:
        from diagnostic_msgs.msg import DiagnosticArray

        from lightomni_ros.msg import GlobalState
        from lightomni_ros.nodes.common import LATCHED_QOS

        from .names import output_name

        #: typed texts sent: topic -> (messages, names of the nodes subscribed to it)
        self.texts: dict[str, tuple[int, set[str]]] = {}
        self.status: dict[str, dict[str, str]] = {}
        self.names: dict[str, str] = {}
        self.texts_before = 0.0            # perception's text_received when the replay started
        self.sg_version = -1
        self._cond = threading.Condition()
        self._subs = [
            node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 50),
            node.create_subscription(GlobalState, output_name(namespace, 'global_state'), self._on_state,
                                     LATCHED_QOS),
        ]

    def _on_diag(self, msg: Any) -> None:
        with self._cond:
            for st in msg.status:
                values = {kv.key: kv.value for kv in st.values}
                for role, marker in MARKERS.items():
                    if marker in values:
                        self.status[role] = values
                        self.names[role] = st.hardware_id
            self._cond.notify_all()

    def _on_state(self, msg: Any) -> None:
        with self._cond:
            self.sg_version = max(self.sg_version, int(msg.version))
            self._cond.notify_all()

    def pending(self) -> list[str]:
        """What the graph has not finished yet ([] when drained)."""
        with self._cond:
            p, r, c = (self.status.get(k) for k in ('perception', 'reflex', 'consolidation'))
            out = []
            if r is None or c is None:
                return [f'no diagnostics from {"reflex" if r is None else "consolidation"} yet']
            if p is not None:
                sent = sum(n for n, nodes in self.texts.values() if self.names['perception'] in nodes)
                got = _num(p, 'text_received') - self.texts_before
                if got < sent:
                    out.append(f'perception received {got:g} of {sent} typed texts')
                if _num(p, 'output_pending') or _num(p, 'audio_queue'):
                    out.append(f'perception has {_num(p, "output_pending"):g} segment(s) and '
                               f'{_num(p, "audio_queue"):g} audio chunk(s) in work')
                answered = _num(r, 'segments') + _num(r, 'warn.segment')
                if answered < _num(p, 'segments'):
                    out.append(f'reflex answered {answered:g} of {_num(p, "segments"):g} segments')
            if _num(r, 'sleep_pending'):
                out.append(f'{_num(r, "sleep_pending"):g} interaction(s) wait for the sleep-time memory pass')
            produced = sum(_num(r, k) for k in r if k.startswith('topics.'))
            stored = _num(c, 'topics.stored') + _num(c, 'warn.topic')
            if stored < produced:
                out.append(f'consolidation stored {stored:g} of {produced:g} Topics')
            if _num(c, 'queue_depth'):
                out.append(f'consolidation queue holds {_num(c, "queue_depth"):g} Topic(s)')
            if self.sg_version < _num(c, 'sg_version'):
                out.append(f'S_g version {_num(c, "sg_version"):g} not received yet (have {self.sg_version})')
            return out

    def begin(self, timeout: float, stop: threading.Event | None = None) -> bool:
        """Before playing: wait (up to ``timeout``) for the graph's diagnostics; note perception's text count."""
        t0 = time.monotonic()
        with self._cond:
            while ('reflex' not in self.status or 'consolidation' not in self.status) and \
                    time.monotonic() - t0 < timeout and not (stop is not None and stop.is_set()):
                self._cond.wait(min(1.0, max(0.01, timeout - (time.monotonic() - t0))))
            if 'perception' in self.status:
                self.texts_before = _num(self.status['perception'], 'text_received')
            return 'reflex' in self.status and 'consolidation' in self.status

    def wait(self, timeout: float, stop: threading.Event | None = None) -> dict[str, Any]:
        """Wait until drained, ``timeout`` passed or ``stop`` is set; return what happened (for result.json)."""
        t0 = time.monotonic()
        with self._cond:
            while True:
                pending = self.pending()
                if not pending or (stop is not None and stop.is_set()):
                    break
                left = timeout - (time.monotonic() - t0)
                if left <= 0:
                    break
                self._cond.wait(min(left, 1.0))   # woken by every status; the bound only re-checks `stop`
        return {'drained': not pending, 'waited_s': round(time.monotonic() - t0, 3), 'timeout_s': timeout,
                'pending': pending, 'sg_version': self.sg_version}

    def close(self, node: Any) -> None:
        """Drop the subscriptions."""
        for sub in self._subs:
            node.destroy_subscription(sub)
