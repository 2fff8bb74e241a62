# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""A node's process: ``main()`` with a guarded spin, the signals that stop it, and an exit that cannot hang.

rclpy turns SIGINT and SIGTERM alike into a quiet exit 0, so the log's last line names which one arrived. Once the
node is stopping, a SIGTERM (a launcher escalating because the stop takes too long) writes every thread's stack to
the log and terminates the process, as it does any other. Once the node's own clean-up is done (lifecycle shutdown,
node destroyed, context shut down), an interpreter that still waits ``EXIT_GRACE_S`` later for a thread stuck in
native code is not waited for: the stacks go to the log and the process exits 0 (nothing of the node's is left
to save), well inside a launcher's 15 s SIGINT grace.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Sequence

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState
from rclpy.node import Node

from ..env import PARENT_ENV, prepare as prepare_env

#: seconds the interpreter may take to exit after the node's clean-up (the launcher's SIGINT grace is 15 s)
EXIT_GRACE_S = 5.0


def run_node(factory: Callable[[], Node], args: Sequence[str] | None = None, *, threads: int = 4) -> int:
    """Run a node as main() does: init, spin, exit 0 on Ctrl-C or external shutdown.

    ``threads=1`` spins a single-threaded executor (exceptions in callbacks, ``sys.exit`` included, end the process);
    more threads let slow callbacks of different callback groups run side by side. The log's last line says why the
    node stopped (which signal, or none seen).
    """
    prepare_env()     # own ament prefix and DDS profile: works from any directory, nothing sourced
    received = _note_signals()      # before rclpy.init: its handler shuts the context down, then calls these
    rclpy.init(args=args if args is not None else sys.argv)
    node = None
    why = 'the ROS context was shut down (no SIGINT or SIGTERM seen)'
    try:
        node = factory()
        _stop_when_launcher_gone()
        executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        spin_guarded(executor, node)
    except (KeyboardInterrupt, ExternalShutdownException) as e:
        why = type(e).__name__
    finally:
        _stack_dump_on_sigterm()
        name = node.get_name() if node is not None else 'node'
        if node is not None:
            # not the node's logger: its /rosout publisher died with the context
            rclpy.logging.get_logger('lightomni_ros.run_node').info(
                f'{name} stopping: {" + ".join(received) or why}')
            _finish_lifecycle(node)
            node.destroy_node()
        rclpy.try_shutdown()
        if threading.current_thread() is threading.main_thread():      # a process's main(), not a test's thread
            _force_exit_after(name, EXIT_GRACE_S)
    return 0


def _force_exit_after(name: str, grace_s: float) -> None:
    """End a process whose interpreter has not exited ``grace_s`` after the node's clean-up.

    Every thread's stack goes to stderr first; the exit code is 0 (nothing of the node's is left to save). A daemon
    thread: it never holds the process up itself.
    """
    def wait_then_exit() -> None:
        time.sleep(grace_s)
        sys.stderr.write(f'[WARN] [lightomni_ros.run_node]: {name} stopped cleanly but the process has not exited '
                         f'{grace_s:g} s later; forcing the exit. Threads:\n')
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        os._exit(0)

    threading.Thread(target=wait_then_exit, name='exit_watchdog', daemon=True).start()


def _stop_when_launcher_gone(period_s: float = 1.0) -> None:
    """Stop as on Ctrl-C once the launcher that started this node (``LIGHTOMNI_PARENT_PID``) is gone.

    Our launchers start each node in a session of its own; a launcher that died without stopping them (a native
    fault, SIGKILL) would otherwise leave the node running and answering in its ROS domain. Only in a process's
    main thread (a test driving main() has its own clean-up).
    """
    try:
        launcher = int(os.environ.get(PARENT_ENV, '0'))
    except ValueError:
        return
    if launcher <= 1 or threading.current_thread() is not threading.main_thread():
        return

    def watch() -> None:
        while process_alive(launcher):
            time.sleep(period_s)
        rclpy.logging.get_logger('lightomni_ros.run_node').warning(
            f'the launcher that started this node (pid {launcher}) is gone: stopping')
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, name='launcher_watch', daemon=True).start()


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(') ', 1)[1].split()[0] != 'Z'     # the name in parentheses may hold ') '
    except (FileNotFoundError, IndexError):
        return False


def _note_signals() -> list[str]:
    """Record the names of the SIGINT / SIGTERM this process receives (SIGINT still raises KeyboardInterrupt)."""
    received: list[str] = []

    def note(signum: int, _frame: Any) -> None:
        received.append(signal.Signals(signum).name)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt

    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, note)
    except ValueError:      # not the main thread (a test driving main()): rclpy's handling alone
        pass
    return received


def _stack_dump_on_sigterm() -> None:
    """From the node's stop on, SIGTERM writes every thread's stack to stderr and terminates the process."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        faulthandler.register(signal.SIGTERM, file=sys.stderr, all_threads=True, chain=True)
    except (ValueError, RuntimeError, OSError):      # not the main thread, or stderr has no file descriptor
        pass


def spin_guarded(executor: Any, node: Node) -> None:
    """Spin until shutdown; a callback that raises is logged with its traceback and the node keeps running.

    One malformed message (found by fuzzing: a uint64 id SQLite cannot hold) must not take a robot's memory node
    down; the callback's own handling names the problem in diagnostics where it can.
    """
    import traceback

    while rclpy.ok(context=executor.context):
        try:
            executor.spin()
            return
        except (KeyboardInterrupt, ExternalShutdownException):
            raise
        except Exception as e:  # noqa: BLE001 - the safety net itself
            if not rclpy.ok(context=executor.context):
                return
            node.get_logger().error(f'callback failed, node continues: {type(e).__name__}: {e}\n'
                                    f'{traceback.format_exc(limit=6)}')


def _finish_lifecycle(node: Node) -> None:
    """Run a lifecycle node's on_shutdown callback on Ctrl-C, as a lifecycle manager would have.

    It stops the node's worker threads and releases models; skipping it leaves threads inside native code (torch,
    onnxruntime, DDS) while the interpreter exits, which aborts the process. rclpy's signal handler has already shut
    the context down, so the state machine cannot run the transition; the callback is called directly (our nodes'
    on_shutdown is safe in any state and when called twice).
    """
    if not isinstance(node, LifecycleNode):
        return
    try:
        node.on_shutdown(LifecycleState('shutting_down', 0))
    except Exception as exc:  # noqa: BLE001 - best effort while exiting; the reason is logged
        node.get_logger().warning(f'shutdown on exit failed: {exc}')
