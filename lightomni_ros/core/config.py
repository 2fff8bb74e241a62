# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""One dataclass config per subsystem, mirrored 1:1 by ROS parameters and config/*.yaml.

A config field is declared with :func:`param`, which records its documentation and bounds once; the nodes declare
ROS parameters from the same fields (name, default, description), the YAML files list the same keys, and
``docs/CONFIG.md`` is generated from them (a test keeps all four in step).

A *bundle* groups the section configs one node (one runtime) reads: a dataclass whose fields are declared with
:func:`section` (the config class and its parameter prefix). Nodes declare a bundle's parameters in one call and the
offline facade builds the same bundles from defaults, so both read exactly the same typed configuration.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Iterator, Mapping, Sequence, TypeVar

C = TypeVar('C')


class ConfigError(ValueError):
    """A configuration value is missing, unknown, of the wrong type or out of range."""


def param(default: Any, doc: str, *, choices: Sequence[Any] | None = None,
          min: float | None = None, max: float | None = None) -> Any:  # noqa: A002 - names read as in the docs
    """Declare a config field with its documentation and optional bounds (checked by :func:`validate`)."""
    meta = {'doc': doc, 'choices': tuple(choices) if choices is not None else None, 'min': min, 'max': max}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def fields(cls_or_obj: Any) -> Iterator[dataclasses.Field]:
    """Yield the documented fields of a config class or instance."""
    for f in dataclasses.fields(cls_or_obj):
        if 'doc' in f.metadata:
            yield f


def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(name: str, value: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f'{name}: expected true/false, got {value!r}')
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f'{name}: expected an integer, got {value!r}')
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f'{name}: expected a number, got {value!r}')
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f'{name}: expected a string, got {value!r}')
        return value
    if hint in (list, tuple) or origin in (list, Sequence, tuple):
        (item,) = typing.get_args(hint)[:1] or (Any,)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f'{name}: expected a list, got {value!r}')
        return [v if item is Any else _coerce(f'{name}[{i}]', v, item) for i, v in enumerate(value)]
    return value


def validate(cfg: C) -> C:
    """Check types, choices and bounds of every field; raise :class:`ConfigError` naming the first bad one."""
    hints = _field_types(type(cfg))
    for f in fields(cfg):
        value = _coerce(f.name, getattr(cfg, f.name), hints[f.name])
        object.__setattr__(cfg, f.name, value)
        meta = f.metadata
        if meta['choices'] is not None and value not in meta['choices']:
            raise ConfigError(f'{f.name}: {value!r} is not one of {list(meta["choices"])}')
        if meta['min'] is not None and value < meta['min']:
            raise ConfigError(f'{f.name}: {value!r} is below the minimum {meta["min"]}')
        if meta['max'] is not None and value > meta['max']:
            raise ConfigError(f'{f.name}: {value!r} is above the maximum {meta["max"]}')
    check = getattr(cfg, 'check', None)
    if callable(check):
        check()  # cross-field rules of the subsystem
    return cfg


def from_dict(cls: type[C], values: Mapping[str, Any] | None = None) -> C:
    """Build and validate a config from a mapping; unknown keys are an error (typos must not pass silently)."""
    values = dict(values or {})
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f'{cls.__name__}: unknown parameter(s) {unknown}; known: {sorted(known)}')
    return validate(cls(**values))


def section(cls: type, prefix: str) -> Any:
    """Declare a bundle field holding the config ``cls`` whose parameters carry ``prefix`` (``''``: top level)."""
    return dataclasses.field(default_factory=cls, metadata={'prefix': prefix})


def sections(bundle: Any) -> dict[str, tuple[str, type]]:
    """Map prefix -> (field name, config class) of a bundle class or instance, in declaration order."""
    hints = typing.get_type_hints(bundle if isinstance(bundle, type) else type(bundle))
    return {f.metadata['prefix']: (f.name, hints[f.name]) for f in dataclasses.fields(bundle)
            if 'prefix' in f.metadata}


def section_classes(bundle: Any) -> dict[str, type]:
    """Map prefix -> config class (what docs and parameter declaration iterate over)."""
    return {prefix: cls for prefix, (_, cls) in sections(bundle).items()}


def bundle_from(bundle_cls: type[C], values: Mapping[str, Mapping[str, Any]] | None = None) -> C:
    """Build a bundle from ``{prefix: {field: value}}`` (missing sections take their defaults), each validated."""
    values = dict(values or {})
    unknown = sorted(set(values) - set(sections(bundle_cls)))
    if unknown:
        raise ConfigError(f'{bundle_cls.__name__}: unknown section(s) {unknown}')
    return bundle_cls(**{name: from_dict(cls, values.get(prefix)) for prefix, (name, cls)
                         in sections(bundle_cls).items()})


def check_bundle(bundle: Any) -> None:
    """Validate every section of a bundle (types, bounds and each section's cross-field rules)."""
    for _, (name, _cls) in sections(bundle).items():
        validate(getattr(bundle, name))


def to_dict(cfg: Any) -> dict[str, Any]:
    """Return the config's documented fields as a plain mapping (YAML/ROS-parameter ready)."""
    return {f.name: getattr(cfg, f.name) for f in fields(cfg)}


def describe(cls: type) -> list[dict[str, Any]]:
    """Return one row per field: name, type, default, documentation and bounds (for docs and ROS descriptors)."""
    hints = _field_types(cls)
    rows = []
    default = cls()
    for f in fields(cls):
        hint = hints[f.name]
        rows.append({
            'name': f.name,
            'type': getattr(hint, '__name__', str(hint).replace('typing.', '')),
            'default': getattr(default, f.name),
            'doc': f.metadata['doc'],
            'choices': f.metadata['choices'],
            'min': f.metadata['min'],
            'max': f.metadata['max'],
        })
    return rows
