# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The subset of ``launch`` and ``launch_ros`` that our launch files use, with the same class names and arguments.

Only description objects live here; :mod:`.runner` interprets them. Substitutions resolve against a
:class:`LaunchContext` holding the launch arguments.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import sys
import types
from typing import Any, Iterable, Iterator


class LaunchError(RuntimeError):
    """The launch description is invalid (unknown argument, bad choice, missing package or executable)."""


class LaunchContext:
    """Resolved launch arguments (``launch_configurations`` as in ``launch.LaunchContext``)."""

    def __init__(self, launch_configurations: dict[str, str] | None = None) -> None:
        self.launch_configurations = dict(launch_configurations or {})


def perform(value: Any, context: LaunchContext) -> Any:
    """Resolve a substitution, a list of substitutions (concatenated) or a plain value."""
    if isinstance(value, Substitution):
        return value.perform(context)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, Substitution)) for v in value) \
            and any(isinstance(v, Substitution) for v in value):
        return ''.join(perform(v, context) for v in value)
    return value


def perform_deep(value: Any, context: LaunchContext) -> Any:
    """Resolve substitutions inside dicts and lists too (parameter dicts, remap pairs)."""
    if isinstance(value, dict):
        return {perform_deep(k, context): perform_deep(v, context) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not any(isinstance(v, Substitution) for v in value):
        return type(value)(perform_deep(v, context) for v in value)
    return perform(value, context)


# --- launch.substitutions -----------------------------------------------------------------------------------------
class Substitution:
    """Base of substitutions."""

    def perform(self, context: LaunchContext) -> str:  # pragma: no cover - interface
        """Return the substituted text."""
        raise NotImplementedError


class TextSubstitution(Substitution):
    """A literal text."""

    def __init__(self, *, text: str) -> None:
        self.text = text

    def perform(self, context: LaunchContext) -> str:
        """Return the text."""
        return self.text


class LaunchConfiguration(Substitution):
    """The value of a launch argument."""

    def __init__(self, variable_name: str, *, default: Any = None) -> None:
        self.variable_name = variable_name
        self.default = default

    def perform(self, context: LaunchContext) -> str:
        """Look the argument up; its default when given; else an error naming it."""
        if self.variable_name in context.launch_configurations:
            return context.launch_configurations[self.variable_name]
        if self.default is not None:
            return str(perform(self.default, context))
        raise LaunchError(f'launch configuration {self.variable_name!r} is not set')


class EnvironmentVariable(Substitution):
    """The value of an environment variable."""

    def __init__(self, name: str, *, default_value: str = '') -> None:
        self.name = name
        self.default_value = default_value

    def perform(self, context: LaunchContext) -> str:
        """Return the variable or its default."""
        return os.environ.get(self.name, self.default_value)


class PathJoinSubstitution(Substitution):
    """Join path parts (each a text or a substitution)."""

    def __init__(self, substitutions: Iterable[Any]) -> None:
        self.substitutions = list(substitutions)

    def perform(self, context: LaunchContext) -> str:
        """Return the joined path."""
        return os.path.join(*[str(perform(s, context)) for s in self.substitutions])


class FindPackageShare(Substitution):
    """``<prefix>/share/<package>`` of the first prefix on ``AMENT_PREFIX_PATH`` that has the package."""

    def __init__(self, package: Any) -> None:
        self.package = package

    def perform(self, context: LaunchContext) -> str:
        """Look the package up in the ament resource index."""
        return str(package_share(perform(self.package, context)))


class FindExecutable(Substitution):
    """Full path of a program on PATH."""

    def __init__(self, *, name: str) -> None:
        self.name = name

    def perform(self, context: LaunchContext) -> str:
        """Return the path or raise."""
        import shutil
        found = shutil.which(self.name)
        if not found:
            raise LaunchError(f'executable {self.name!r} not found on PATH')
        return found


def ament_prefixes() -> list[pathlib.Path]:
    """Prefixes of AMENT_PREFIX_PATH, in order."""
    return [pathlib.Path(p) for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]


def package_prefix(package: str) -> pathlib.Path:
    """Install prefix of a package registered in the ament resource index.

    ``lightomni_ros`` is also found in the prefix it was installed into when AMENT_PREFIX_PATH misses it (a script
    calling the library without the ``lightomni`` entry point, which would have added it).
    """
    from .. import env

    own = env.own_prefixes() if package == env.PACKAGE else []
    for prefix in ament_prefixes() + own:
        if env.registered(prefix, package):
            return prefix
    raise LaunchError(f'package {package!r} not found in the ament index (AMENT_PREFIX_PATH='
                      f'{os.environ.get("AMENT_PREFIX_PATH", "")!r})')


def package_share(package: str) -> pathlib.Path:
    """``share/<package>`` of an installed package."""
    return package_prefix(package) / 'share' / package


# --- launch.conditions -------------------------------------------------------------------------------------------
_TRUE = {'true', '1', 'yes', 'on'}
_FALSE = {'false', '0', 'no', 'off'}


def _truth(text: str) -> bool:
    low = str(text).strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise LaunchError(f'expected a boolean, got {text!r}')


class IfCondition:
    """True when the expression evaluates to a true boolean text."""

    def __init__(self, predicate_expression: Any) -> None:
        self.expr = predicate_expression

    def evaluate(self, context: LaunchContext) -> bool:
        """Evaluate the condition."""
        return _truth(perform(self.expr, context))


class UnlessCondition(IfCondition):
    """True when the expression evaluates to a false boolean text."""

    def evaluate(self, context: LaunchContext) -> bool:
        """Evaluate the condition."""
        return not super().evaluate(context)


# --- launch / launch.actions ---------------------------------------------------------------------------------------
class Action:
    """Base of actions; ``condition`` decides whether it takes part."""

    def __init__(self, *, condition: IfCondition | None = None) -> None:
        self.condition = condition

    def enabled(self, context: LaunchContext) -> bool:
        """Whether the action's condition holds."""
        return self.condition is None or self.condition.evaluate(context)


class LaunchDescription:
    """An ordered list of actions."""

    def __init__(self, initial_entities: Iterable[Action] | None = None) -> None:
        self.entities = list(initial_entities or [])

    def add_action(self, action: Action) -> None:
        """Append an action."""
        self.entities.append(action)


class DeclareLaunchArgument(Action):
    """A launch argument with a default and optional choices."""

    def __init__(self, name: str, *, default_value: Any = None, description: str = '',
                 choices: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.name = name
        self.default_value = default_value
        self.description = description
        self.choices = choices


class SetEnvironmentVariable(Action):
    """Set an environment variable for the processes started after it."""

    def __init__(self, name: Any, value: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.name = name
        self.value = value


class LogInfo(Action):
    """Print a message when the description is executed."""

    def __init__(self, *, msg: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.msg = msg


class GroupAction(Action):
    """A group of actions sharing a condition."""

    def __init__(self, actions: Iterable[Action], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.actions = list(actions)


# --- launch_ros.actions ----------------------------------------------------------------------------------------------
class Node(Action):
    """A ROS node process (``launch_ros.actions.Node``)."""

    def __init__(self, *, executable: Any, package: Any = None, name: Any = None, namespace: Any = None,
                 parameters: list[Any] | None = None, remappings: list[tuple[Any, Any]] | None = None,
                 arguments: list[Any] | None = None, ros_arguments: list[Any] | None = None,
                 output: str = 'screen', additional_env: dict[str, Any] | None = None, respawn: Any = False,
                 respawn_delay: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.respawn = respawn                  # bool or a substitution that gives "true"/"false"
        self.respawn_delay = respawn_delay      # seconds (number, text or substitution); None: at once
        self.package = package
        self.executable = executable
        self.name = name
        self.namespace = namespace
        self.parameters = list(parameters or [])
        self.remappings = list(remappings or [])
        self.arguments = list(arguments or [])
        self.ros_arguments = list(ros_arguments or [])
        self.output = output
        self.additional_env = dict(additional_env or {})
        self.autostart: Any = False
        self.is_lifecycle = False


class LifecycleNode(Node):
    """A lifecycle node; with ``autostart`` it is configured and activated once it is up."""

    def __init__(self, *, name: Any, namespace: Any, autostart: Any = False, **kwargs: Any) -> None:
        super().__init__(name=name, namespace=namespace, **kwargs)
        self.autostart = autostart
        self.is_lifecycle = True


# --- events: the lifecycle pattern of launch_ros (configure on every process start, activate once inactive) ------
class RegisterEventHandler(Action):
    """Register an event handler (``launch.actions.RegisterEventHandler``)."""

    def __init__(self, event_handler: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.event_handler = event_handler


class EmitEvent(Action):
    """Emit an event (``launch.actions.EmitEvent``); only lifecycle ChangeState events are understood here."""

    def __init__(self, *, event: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.event = event


class OnProcessStart:
    """Run ``on_start`` each time ``target_action``'s process starts (respawns included)."""

    def __init__(self, *, target_action: Any, on_start: Any) -> None:
        self.target_action = target_action
        self.on_start = list(on_start) if isinstance(on_start, (list, tuple)) else [on_start]


class OnStateTransition:
    """Run ``entities`` when ``target_lifecycle_node`` reaches ``goal_state`` (``launch_ros.event_handlers``)."""

    def __init__(self, *, target_lifecycle_node: Any, goal_state: str | None = None, start_state: str | None = None,
                 entities: Any = None, **kwargs: Any) -> None:
        self.target_lifecycle_node = target_lifecycle_node
        self.goal_state = goal_state
        self.start_state = start_state
        self.entities = list(entities or [])


class ChangeState:
    """Ask lifecycle nodes for a transition (``launch_ros.events.lifecycle.ChangeState``)."""

    def __init__(self, *, lifecycle_node_matcher: Any, transition_id: int) -> None:
        self.lifecycle_node_matcher = lifecycle_node_matcher
        self.transition_id = transition_id


def matches_action(action: Any) -> Any:
    """A matcher for one action (``launch.events.matches_action``): the action itself, compared by identity."""
    return action


# --- module injection ------------------------------------------------------------------------------------------------
def _module(name: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


def shim_modules() -> dict[str, types.ModuleType]:
    """The ``launch`` and ``launch_ros`` module tree a launch file imports from."""
    subs = dict(LaunchConfiguration=LaunchConfiguration, TextSubstitution=TextSubstitution,
                PathJoinSubstitution=PathJoinSubstitution, EnvironmentVariable=EnvironmentVariable,
                FindExecutable=FindExecutable)
    actions = dict(DeclareLaunchArgument=DeclareLaunchArgument, SetEnvironmentVariable=SetEnvironmentVariable,
                   LogInfo=LogInfo, GroupAction=GroupAction, RegisterEventHandler=RegisterEventHandler,
                   EmitEvent=EmitEvent)
    mods = {
        'launch': _module('launch', LaunchDescription=LaunchDescription, LaunchContext=LaunchContext),
        'launch.actions': _module('launch.actions', **actions),
        'launch.substitutions': _module('launch.substitutions', **subs),
        'launch.conditions': _module('launch.conditions', IfCondition=IfCondition, UnlessCondition=UnlessCondition),
        'launch.events': _module('launch.events', matches_action=matches_action),
        'launch.event_handlers': _module('launch.event_handlers', OnProcessStart=OnProcessStart),
        'launch_ros.event_handlers': _module('launch_ros.event_handlers', OnStateTransition=OnStateTransition),
        'launch_ros.events': _module('launch_ros.events'),
        'launch_ros.events.lifecycle': _module('launch_ros.events.lifecycle', ChangeState=ChangeState),
        'launch_ros': _module('launch_ros'),
        'launch_ros.actions': _module('launch_ros.actions', Node=Node, LifecycleNode=LifecycleNode),
        'launch_ros.substitutions': _module('launch_ros.substitutions', FindPackageShare=FindPackageShare),
    }
    for full, mod in mods.items():
        if '.' in full:
            parent, child = full.rsplit('.', 1)
            setattr(mods[parent], child, mod)
    return mods


@contextlib.contextmanager
def injected() -> Iterator[None]:
    """Make ``import launch`` / ``import launch_ros`` resolve to the shim while a launch file is loaded."""
    mods = shim_modules()
    saved = {name: sys.modules.get(name) for name in mods}
    sys.modules.update(mods)
    try:
        yield
    finally:
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod
