# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Execute a launch description: one process per node, lifecycle autostart, prefixed output, clean shutdown.

Shutdown escalates SIGINT -> SIGTERM -> SIGKILL on each node's process group (every node runs in its own session,
so nothing it spawned outlives it). The runner exits 0 when it was stopped (Ctrl-C, SIGTERM, ``duration``) and every
node exited cleanly, 1 when a node failed, and 2 when the description itself is invalid.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import logging
import os
import pathlib
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, TextIO

import yaml

from ..env import launched_here
from . import shim, shm

#: a node may be inside one model call when Ctrl-C comes (seconds on a busy CPU); it ends that call, then exits
SIGINT_GRACE_S = 15.0

log = logging.getLogger('lightomni.launch')


@dataclasses.dataclass
class NodeProcess:
    """A node of the description, resolved to a command line."""

    label: str
    cmd: list[str]
    env: dict[str, str]
    fqn: str
    lifecycle: bool
    autostart: bool
    proc: subprocess.Popen | None = None
    log_path: pathlib.Path | None = None
    reader: threading.Thread | None = None
    respawn: bool = False
    respawn_delay: float = 0.0
    #: lifecycle transitions requested on every start of the process (autostart, or the launch file's handlers)
    transitions: list[str] = dataclasses.field(default_factory=list)
    starts: int = 0


def parse_launch_arguments(items: list[str]) -> dict[str, str]:
    """``name:=value`` items -> dict; anything else is an error."""
    out = {}
    for item in items:
        if ':=' not in item:
            raise shim.LaunchError(f'launch arguments are name:=value, got {item!r}')
        name, value = item.split(':=', 1)
        out[name] = value
    return out


def load_description(path: str | os.PathLike) -> shim.LaunchDescription:
    """Run the launch file with the shim in place and return its ``generate_launch_description()``."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise shim.LaunchError(f'launch file {str(path)!r} not found')
    with shim.injected():
        namespace = runpy.run_path(str(path))
        if 'generate_launch_description' not in namespace:
            raise shim.LaunchError(f'{path} defines no generate_launch_description()')
        return namespace['generate_launch_description']()


def resolve_executable(package: str | None, executable: str) -> list[str]:
    """Command that starts ``executable`` of ``package``, as ``ros2 run`` would find it.

    A console script of an installed Python distribution is run with this interpreter (no shebang/venv mix-ups);
    otherwise ``<prefix>/lib/<package>/<executable>`` on AMENT_PREFIX_PATH.
    """
    for ep in importlib.metadata.entry_points(group='console_scripts', name=executable):
        dist = ep.dist.name.replace('-', '_') if ep.dist else ''
        if package is None or dist == package:
            return [sys.executable, '-c', f'import sys; from {ep.module} import {ep.attr}; sys.exit({ep.attr}())']
    for prefix in shim.ament_prefixes():
        candidate = prefix / 'lib' / (package or '') / executable
        if candidate.is_file() and os.access(candidate, os.X_OK):
            if candidate.read_bytes()[:64].startswith(b'#!') and b'python' in candidate.read_bytes()[:64]:
                return [sys.executable, str(candidate)]
            return [str(candidate)]
    raise shim.LaunchError(f'executable {executable!r} of package {package!r} not found '
                           '(console scripts or <prefix>/lib/<package>/ on AMENT_PREFIX_PATH)')


def _params_file(params: dict, tmpdir: pathlib.Path, label: str) -> str:
    nested: dict = {}
    for key, value in params.items():  # 'models.models_dir' -> {'models': {'models_dir': ...}}, as launch_ros does
        node = nested
        *parents, leaf = str(key).split('.')
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    path = tmpdir / f'{label}_params.yaml'
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': nested}}, sort_keys=False))
    return str(path)


def _fqn(namespace: str, name: str) -> str:
    ns = '/' + namespace.strip('/') if namespace and namespace.strip('/') else ''
    return f'{ns}/{name}'


def plan(description: shim.LaunchDescription, arguments: dict[str, str], tmpdir: pathlib.Path,
         ) -> tuple[list[NodeProcess], list[str]]:
    """Resolve every action to node processes; return them and the LogInfo messages."""
    context = shim.LaunchContext()
    declared: dict[str, shim.DeclareLaunchArgument] = {}
    env = dict(os.environ)
    nodes: list[NodeProcess] = []
    node_actions: list[tuple[Any, NodeProcess]] = []
    handlers: list[Any] = []
    messages: list[str] = []
    labels: set[str] = set()

    def visit(actions: list[Any]) -> None:
        for action in actions:
            if isinstance(action, shim.DeclareLaunchArgument):
                declared[action.name] = action
                if action.name in arguments:
                    value = arguments[action.name]
                elif action.default_value is not None:
                    value = str(shim.perform(action.default_value, context))
                else:
                    raise shim.LaunchError(f'launch argument {action.name!r} is required ({action.description})')
                if action.choices and value not in action.choices:
                    raise shim.LaunchError(f'launch argument {action.name!r}={value!r} not in {action.choices}')
                context.launch_configurations[action.name] = value
                continue
            if not action.enabled(context):
                continue
            if isinstance(action, shim.GroupAction):
                visit(action.actions)
            elif isinstance(action, shim.SetEnvironmentVariable):
                env[str(shim.perform(action.name, context))] = str(shim.perform(action.value, context))
            elif isinstance(action, shim.LogInfo):
                messages.append(str(shim.perform(action.msg, context)))
            elif isinstance(action, shim.Node):
                nodes.append(_node_process(action, context, env, tmpdir, labels))
                node_actions.append((action, nodes[-1]))
            elif isinstance(action, shim.RegisterEventHandler):
                handlers.append(action.event_handler)
            else:
                raise shim.LaunchError(f'unsupported launch action {type(action).__name__}')

    visit(description.entities)
    for action, node in node_actions:
        node.transitions = node.transitions or _start_transitions(action, handlers, node.label)
    unknown = sorted(set(arguments) - set(declared))
    if unknown:
        raise shim.LaunchError(f'unknown launch argument(s) {unknown}; declared: {sorted(declared)}')
    return nodes, messages


_TRANSITION_NAMES = {1: 'configure', 2: 'cleanup', 3: 'activate', 4: 'deactivate'}
_GOAL = {'configure': 'inactive', 'activate': 'active', 'deactivate': 'inactive', 'cleanup': 'unconfigured'}


def _start_transitions(action: shim.Node, handlers: list[Any], label: str) -> list[str]:
    """The transitions the launch file's handlers request when ``action``'s process starts, followed in order.

    Understands launch_ros's lifecycle pattern: OnProcessStart(target) -> EmitEvent(ChangeState(t1)), and
    OnStateTransition(target, goal_state=S) -> EmitEvent(ChangeState(t2)) chained on the state t1 leads to.
    """
    def requested(entities: list[Any]) -> list[str]:
        out = []
        for e in entities:
            ev = getattr(e, 'event', None)
            if isinstance(e, shim.EmitEvent) and isinstance(ev, shim.ChangeState):
                if ev.lifecycle_node_matcher is not action:
                    continue
                if ev.transition_id not in _TRANSITION_NAMES:
                    raise shim.LaunchError(f'{label}: transition {ev.transition_id} is not supported here')
                out.append(_TRANSITION_NAMES[ev.transition_id])
        return out

    chain: list[str] = []
    for h in handlers:
        if isinstance(h, shim.OnProcessStart) and h.target_action is action:
            chain += requested(h.on_start)
    state = _GOAL.get(chain[-1]) if chain else None
    for _ in range(4):          # follow OnStateTransition hops (configure -> inactive -> activate -> active)
        nxt = [t for h in handlers if isinstance(h, shim.OnStateTransition) and h.target_lifecycle_node is action
               and state is not None and h.goal_state == state for t in requested(h.entities)]
        if not nxt:
            break
        chain += nxt
        state = _GOAL.get(nxt[-1])
    return chain


def _node_process(action: shim.Node, context: shim.LaunchContext, env: dict[str, str], tmpdir: pathlib.Path,
                  labels: set[str]) -> NodeProcess:
    package = shim.perform(action.package, context)
    executable = str(shim.perform(action.executable, context))
    name = shim.perform(action.name, context)
    namespace = str(shim.perform(action.namespace, context) or '')
    label = str(name or executable)
    while label in labels:
        label += '_'
    labels.add(label)
    cmd = resolve_executable(package, executable)
    cmd += [str(shim.perform_deep(a, context)) for a in action.arguments]
    cmd += ['--ros-args']
    if name:
        cmd += ['-r', f'__node:={name}']
    if namespace:
        cmd += ['-r', f'__ns:=/{namespace.strip("/")}']
    for p in action.parameters:
        p = shim.perform_deep(p, context)
        if isinstance(p, dict):
            cmd += ['--params-file', _params_file(p, tmpdir, label)]
        else:
            if not pathlib.Path(str(p)).is_file():
                raise shim.LaunchError(f'{label}: parameters file {p!r} not found')
            cmd += ['--params-file', str(p)]
    for src, dst in action.remappings:
        cmd += ['-r', f'{shim.perform(src, context)}:={shim.perform(dst, context)}']
    cmd += [str(shim.perform_deep(a, context)) for a in action.ros_arguments]
    node_env = dict(env)
    node_env.update({str(k): str(shim.perform(v, context)) for k, v in action.additional_env.items()})
    node_env.setdefault('PYTHONUNBUFFERED', '1')
    node_env.setdefault('RCUTILS_COLORIZED_OUTPUT', '0')
    autostart = action.is_lifecycle and shim._truth(str(shim.perform(action.autostart, context)))
    respawn = shim._truth(str(shim.perform(action.respawn, context)))
    delay = shim.perform(action.respawn_delay, context)
    try:
        delay = float(delay) if delay not in (None, '') else 0.0
    except ValueError as e:
        raise shim.LaunchError(f'{label}: respawn_delay {delay!r} is not a number') from e
    return NodeProcess(label, cmd, node_env, _fqn(namespace, str(name or executable)), action.is_lifecycle, autostart,
                       respawn=respawn, respawn_delay=max(0.0, delay),
                       transitions=['configure', 'activate'] if autostart else [])


class Runner:
    """Start, watch and stop a planned set of node processes."""

    def __init__(self, nodes: list[NodeProcess], *, log_dir: pathlib.Path, out: TextIO = sys.stdout,
                 sigint_timeout: float = SIGINT_GRACE_S, sigterm_timeout: float = 5.0,
                 lifecycle_timeout: float = 300.0) -> None:
        self.nodes = nodes
        self.log_dir = log_dir
        self.out = out
        self.sigint_timeout = sigint_timeout
        self.sigterm_timeout = sigterm_timeout
        self.lifecycle_timeout = lifecycle_timeout
        self._stop = threading.Event()
        self._shm_before: set[str] = set()
        self.killed = False
        self._out_lock = threading.Lock()
        self.failed: list[str] = []

    # -- output ----------------------------------------------------------------------------------------------------
    def say(self, label: str, line: str) -> None:
        """Print one prefixed line."""
        with self._out_lock:
            self.out.write(f'[{label}] {line}\n')
            self.out.flush()

    def _pump(self, node: NodeProcess) -> None:
        assert node.proc is not None and node.proc.stdout is not None and node.log_path is not None
        with node.log_path.open('w' if node.starts == 1 else 'a') as logf:
            for raw in iter(node.proc.stdout.readline, b''):
                line = raw.decode(errors='replace').rstrip('\n')
                logf.write(line + '\n')
                logf.flush()
                self.say(node.label, line)

    # -- life cycle ------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start every node process (each in its own session)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._shm_before = shm.segments()
        for node in self.nodes:
            node.log_path = self.log_dir / f'{node.label}.log'
            self._start_one(node)

    def _start_one(self, node: NodeProcess) -> None:
        node.starts += 1
        node.proc = subprocess.Popen(node.cmd, env=launched_here(dict(node.env)), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        node.reader = threading.Thread(target=self._pump, args=(node,), daemon=True)
        node.reader.start()
        what = 'started' if node.starts == 1 else f'respawned (start {node.starts})'
        self.say('launch', f'{what} {node.label} (pid {node.proc.pid}): {" ".join(node.cmd[-12:])}')

    def _respawn(self, node: NodeProcess, code: int) -> None:
        """Start a node that exited again after its delay, and bring it back to its lifecycle state."""
        self.say('launch', f'{node.label} exited with code {code}; respawning in {node.respawn_delay:g} s')
        if node.reader is not None:
            node.reader.join(timeout=2.0)
        _signal_group(node.proc, signal.SIGKILL)     # anything it left in its group
        if code == -signal.SIGKILL:                  # a killed node cannot release its shared memory
            shm.remove_orphans(self._shm_before)
        if self._stop.wait(node.respawn_delay):
            return
        with open(node.log_path, 'a') as f:          # one log per node across its lives
            f.write(f'--- respawn after exit code {code} ---\n')
        self._start_one(node)
        if node.transitions:
            threading.Thread(target=self._bring_up, args=(node,), daemon=True).start()

    def _bring_up(self, node: NodeProcess) -> None:
        errors = run_transitions([node], self._stop.is_set, self.lifecycle_timeout)
        for err in errors:
            self.say('launch', f'ERROR: {err}')
        if not errors and node.transitions:
            self.say('launch', f'{node.label} is back: {" -> ".join(node.transitions)} done')

    def stop(self) -> None:
        """Ask the run loop to stop (thread-safe, signal-safe)."""
        self._stop.set()

    def shutdown(self) -> None:
        """SIGINT, then SIGTERM, then SIGKILL on each still-running node's process group."""
        for sig, timeout in ((signal.SIGINT, self.sigint_timeout), (signal.SIGTERM, self.sigterm_timeout),
                             (signal.SIGKILL, 5.0)):
            alive = [n for n in self.nodes if n.proc is not None and n.proc.poll() is None]
            if not alive:
                break
            if sig != signal.SIGINT:
                self.say('launch', f'escalating to {sig.name} for {[n.label for n in alive]}')
                self.killed = self.killed or sig == signal.SIGKILL
            for n in alive:
                _signal_group(n.proc, sig)
            deadline = time.monotonic() + timeout
            for n in alive:
                try:
                    n.proc.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        # Children of a node that exited on its own may still hold the group: make sure nothing outlives the launch.
        for n in self.nodes:
            if n.proc is not None:
                _signal_group(n.proc, signal.SIGKILL)
                if n.reader is not None:
                    n.reader.join(timeout=2.0)
        killed = self.killed or any(n.proc is not None and n.proc.returncode == -signal.SIGKILL for n in self.nodes)
        if killed:  # a killed node cannot release its shared memory; do it for it
            removed = shm.remove_orphans(self._shm_before)
            if removed:
                self.say('launch', f'removed {len(removed)} shared-memory files left by killed nodes')

    def run(self, duration: float | None = None,
            activate: Callable[[list[NodeProcess], Callable[[], bool]], list[str]] | None = None) -> int:
        """Start the graph, bring lifecycle nodes up, wait for a stop or a node exit; return the exit code."""
        self.start()
        try:
            code = self._watch(duration, activate)
        finally:
            self.shutdown()
        unclean = [f'{n.label}={n.proc.returncode}' for n in self.nodes
                   if n.proc is not None and n.proc.returncode not in (0, -signal.SIGINT)]
        if unclean and not self.failed:
            self.failed.append('unclean exit: ' + ', '.join(unclean))
            code = 1
        self.say('launch', 'all nodes stopped' + (f' ({"; ".join(self.failed)})' if self.failed else ''))
        return code

    def _watch(self, duration: float | None,
               activate: Callable[[list[NodeProcess], Callable[[], bool]], list[str]] | None) -> int:
        lifecycle = [n for n in self.nodes if n.transitions]
        if lifecycle:
            if activate is None:
                errors = run_transitions(lifecycle, self._stop.is_set, self.lifecycle_timeout)
            else:
                errors = activate(lifecycle, self._stop.is_set)
            for err in errors:
                self.say('launch', f'ERROR: {err}')
            if errors:
                self.failed.extend(errors)
                return 1
        deadline = time.monotonic() + duration if duration else None
        while not self._stop.is_set():
            for n in self.nodes:
                code = n.proc.poll() if n.proc else None
                if code is not None and n.respawn:
                    self._respawn(n, code)
                    continue
                if code is not None:
                    self.say('launch', f'{n.label} exited with code {code}; stopping the launch')
                    if code != 0:
                        self.failed.append(f'{n.label} exited with code {code}')
                    return 1 if code != 0 else 0
            if deadline is not None and time.monotonic() >= deadline:
                self.say('launch', f'duration of {duration:g} s reached; stopping')
                break
            self._stop.wait(0.1)
        return 0


def _signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_transitions(nodes: list[NodeProcess], stopped: Callable[[], bool], timeout: float = 300.0) -> list[str]:
    """Request each node's start transitions (configure, activate) through ``change_state``; return the errors."""
    from .lifecycle import LifecycleClient

    errors: list[str] = []
    with LifecycleClient() as client:
        for node in nodes:
            for transition in node.transitions or ['configure', 'activate']:
                if stopped():
                    return errors
                ok, why = client.change_state(node.fqn, transition, timeout=timeout)
                if not ok:
                    errors.append(f'{node.fqn}: {transition} failed: {why}')
                    break
    return errors


#: the name callers used before transitions came from the launch file
activate_lifecycle_nodes = run_transitions


def launch(path: str | os.PathLike, arguments: list[str] | dict[str, str] | None = None, *,
           duration: float | None = None, log_dir: str | os.PathLike | None = None, out: TextIO = sys.stdout,
           sigint_timeout: float = SIGINT_GRACE_S, sigterm_timeout: float = 5.0,
           transition_timeout: float = 300.0) -> int:
    """Run a launch file until Ctrl-C/SIGTERM, ``duration`` or a node's exit; return the exit code (see module doc)."""
    args = arguments if isinstance(arguments, dict) else parse_launch_arguments(list(arguments or []))
    stamp = time.strftime('%Y-%m-%d-%H-%M-%S')
    logs = pathlib.Path(log_dir) if log_dir else pathlib.Path(
        os.environ.get('ROS_LOG_DIR', pathlib.Path.home() / '.ros' / 'log')) / f'lightomni_launch_{stamp}'
    with tempfile.TemporaryDirectory(prefix='lightomni_launch_') as tmp:
        try:
            nodes, messages = plan(load_description(path), args, pathlib.Path(tmp))
        except shim.LaunchError as exc:
            out.write(f'[launch] ERROR: {exc}\n')
            return 2
        runner = Runner(nodes, log_dir=logs, out=out, sigint_timeout=sigint_timeout,
                        sigterm_timeout=sigterm_timeout, lifecycle_timeout=transition_timeout)
        for msg in messages:
            runner.say('launch', msg)
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        in_main = threading.current_thread() is threading.main_thread()
        if in_main:
            for sig in previous:
                signal.signal(sig, lambda *_: runner.stop())
        try:
            code = runner.run(duration)
        finally:
            if in_main:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        runner.say('launch', f'logs in {logs}')
        return code
