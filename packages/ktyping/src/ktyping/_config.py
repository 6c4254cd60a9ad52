"""Switching checks off globally, per block or per module (Kauldron's names).

    ktyping.CONFIG.typechecking_enabled = False           # globally
    with ktyping.Config(typechecking_enabled=False): ...  # for a block
    ktyping.add_config_override(r"mylib\\..*", ktyping.Config(typechecking_enabled=False))
    ktyping.Config(jaxtyping_annotations="warn")  # jaxtyping annotations in a checked function: warn

    >>> with Config(typechecking_enabled=False):
    ...     get_config("mylib").typechecking_enabled
    False

Decorated functions cache their resolved config and re-resolve only when `VERSION`
changes, so the hot path pays one integer comparison.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONFIG",
    "MISSING",
    "REPORTING_POLICIES",
    "Config",
    "add_config_override",
    "get_config",
    "remove_config_override",
]


class _Missing:
    """The type of `MISSING`: a value not given (an unset Config field, the structure key of a plain
    `PyTree[T]`). Falsy, so `if tree.structure_spec:` reads naturally."""

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

# What to do about a reported issue (Kauldron's `ReportingPolicy` values; `ktyping.config` has the enum).
REPORTING_POLICIES = ("ignore", "log_info", "warn", "error")

# Bumped by every change to CONFIG or to the overrides: a cheap cache key.
VERSION = [0]

_FIELDS = ("typechecking_enabled", "jaxtyping_annotations")


class Config:
    """ktyping settings; unset fields (MISSING) defer to the config below it.

    Args:
      typechecking_enabled: Whether `@typechecked` functions and `check_type` check anything.
      jaxtyping_annotations: What a checked function whose annotations use jaxtyping types does when
        called: one of `REPORTING_POLICIES` ("ignore", "log_info", "warn", "error"; the default is
        "error", since jaxtyping's dims are not shared with the function's ktyping scope).

    Used as a context manager it overrides the config for every module inside the block.
    Configs compare equal when their fields are equal.
    """

    __slots__ = ("_tokens", "jaxtyping_annotations", "typechecking_enabled")
    _tokens: list[int]
    typechecking_enabled: bool | Any
    jaxtyping_annotations: str | Any

    def __init__(
        self, *, typechecking_enabled: bool | Any = MISSING, jaxtyping_annotations: str | Any = MISSING
    ) -> None:
        # A new Config is in force nowhere yet: no VERSION bump (get_config builds them).
        object.__setattr__(self, "_tokens", [])
        object.__setattr__(self, "typechecking_enabled", typechecking_enabled)
        object.__setattr__(self, "jaxtyping_annotations", _policy(jaxtyping_annotations))

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "jaxtyping_annotations":
            value = _policy(value)
        object.__setattr__(self, name, value)
        VERSION[0] += 1

    def __eq__(self, other: object) -> bool:
        if type(other) is not Config:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def replace(self, **changes: Any) -> Config:
        fields = {f: getattr(self, f) for f in _FIELDS}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Config has no field(s) {sorted(unknown)}; fields: {list(_FIELDS)}")
        fields.update(changes)
        return Config(**fields)

    def update(self, other: Config) -> Config:
        """A new Config with the fields `other` sets taking precedence."""
        return self.replace(**{f: getattr(other, f) for f in _FIELDS if getattr(other, f) is not MISSING})

    def __enter__(self) -> Config:
        self._tokens.append(add_config_override(r".*", self))
        return self

    def __exit__(self, *exc: object) -> None:
        remove_config_override(self._tokens.pop())

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS if getattr(self, f) is not MISSING)
        return f"Config({fields})"


def _policy(value: Any) -> Any:
    """`value` checked against `REPORTING_POLICIES` (an enum member of `ktyping.config.ReportingPolicy`
    is one of those strings)."""
    if value is MISSING or value in REPORTING_POLICIES:
        return value
    raise ValueError(f"jaxtyping_annotations must be one of {list(REPORTING_POLICIES)}, got {value!r}")


CONFIG = Config(typechecking_enabled=True, jaxtyping_annotations="error")
"""The global switch (Kauldron's): `ktyping.CONFIG.typechecking_enabled = False` turns every check off."""

# id -> (compiled module regex, config); insertion ordered, later overrides win.
_OVERRIDES: dict[int, tuple[Any, Config]] = {}
_NEXT_ID = [0]


def add_config_override(module_regex: str, config: Config) -> int:
    """Overrides the config for modules whose name `re.match`es `module_regex`.

    Returns an id for `remove_config_override`.
    """
    import re

    _NEXT_ID[0] += 1
    _OVERRIDES[_NEXT_ID[0]] = (re.compile(module_regex), config)
    VERSION[0] += 1
    return _NEXT_ID[0]


def remove_config_override(override_id: int, missing_ok: bool = False) -> None:
    """Removes an override added by `add_config_override`."""
    if override_id in _OVERRIDES:
        del _OVERRIDES[override_id]
        VERSION[0] += 1
    elif not missing_ok:
        raise KeyError(f"no config override with id {override_id}; active ids: {list(_OVERRIDES)}")


def get_config(module_name: str | Any = None) -> Config:
    """The config in force for code in `module_name`.

    `module_name` may also be a code location with a `module_name` attribute (a scope's `source`,
    Kauldron's `CodeLocation`); None stands for code of no known module.
    """
    config = CONFIG
    if module_name is not None and not isinstance(module_name, str):
        module_name = getattr(module_name, "module_name", None)
    name = module_name or ""
    for regex, override in _OVERRIDES.values():
        if regex.match(name):
            config = config.update(override)
    return config


def enabled_for(module_name: str | None) -> bool:
    if not _OVERRIDES:
        return CONFIG.typechecking_enabled is not False
    return get_config(module_name).typechecking_enabled is not False


def enabled_for_caller(depth: int) -> bool:
    """`enabled_for` the module of the frame `depth` levels above the caller (looked up only
    when overrides exist)."""
    if not _OVERRIDES:
        return CONFIG.typechecking_enabled is not False
    return enabled_for(caller_module(depth + 1))


def caller_module(depth: int) -> str | None:
    """Module name of the frame `depth` levels above the caller."""
    try:
        return sys._getframe(depth + 1).f_globals.get("__name__")
    except ValueError:
        return None
