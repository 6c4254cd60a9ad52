"""Switching checks off globally, per block or per module (Kauldron's names).

    ktyping.CONFIG.typechecking_enabled = False           # globally
    with ktyping.Config(typechecking_enabled=False): ...  # for a block
    ktyping.add_config_override(r"mylib\\..*", ktyping.Config(typechecking_enabled=False))

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

__all__ = ["CONFIG", "Config", "add_config_override", "get_config", "remove_config_override"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

# Bumped by every change to CONFIG or to the overrides: a cheap cache key.
VERSION = [0]

_FIELDS = ("typechecking_enabled",)


class Config:
    """ktyping settings; unset fields (MISSING) defer to the config below it.

    Args:
      typechecking_enabled: Whether `@typechecked` functions and `check_type` check anything.

    Used as a context manager it overrides the config for every module inside the block.
    """

    __slots__ = ("_tokens", "typechecking_enabled")
    _tokens: list[int]
    typechecking_enabled: bool | Any

    def __init__(self, *, typechecking_enabled: bool | Any = MISSING) -> None:
        # A new Config is in force nowhere yet: no VERSION bump (get_config builds them).
        object.__setattr__(self, "_tokens", [])
        object.__setattr__(self, "typechecking_enabled", typechecking_enabled)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        VERSION[0] += 1

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


CONFIG = Config(typechecking_enabled=True)
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


def get_config(module_name: str | None = None) -> Config:
    """The config in force for code in `module_name`."""
    config = CONFIG
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
