"""The allowed module of safe-mode tests; its attributes lead to `forbidden_lib` by many routes."""

from __future__ import annotations

import functools
from typing import Any

import forbidden_lib
import forbidden_lib as sub  # a module reached by attribute: `allowed_lib:sub.run`
from forbidden_lib import Evil as EvilAlias  # re-exported class: `allowed_lib:EvilAlias`
from forbidden_lib import run as run_alias  # re-exported function: `allowed_lib:run_alias`

partial_run = functools.partial(forbidden_lib.run, "partial")  # a callable object
thing = forbidden_lib.CallableThing()


class Box:
    evil = forbidden_lib.run  # a function stored on an allowed class
    label = "box"

    def __init__(self, value: Any = 0) -> None:
        self.value = value
        self.inner = forbidden_lib.Evil.__new__(forbidden_lib.Evil)  # an instance of a forbidden class

    def double(self) -> Any:
        return self.value * 2


def add(a: Any = 0, b: Any = 0) -> Any:
    return a + b


def give_run() -> Any:
    """An allowed function returning a forbidden one (allowed callables are trusted)."""
    return forbidden_lib.run


__all__ = ["Box", "EvilAlias", "add", "give_run", "partial_run", "run_alias", "sub", "thing"]


partial_add = functools.partial(add, 1)  # a partial of an allowed function: allowed without `functools`


def give_runs() -> Any:
    """A container holding a forbidden function (read from it by a reference, it is refused)."""
    return {"run": forbidden_lib.run, "numbers": [3, 1, 2]}


class Nested:
    """Resolves the sub-config it is given unresolved while it is being built (as kd's Trainer does)."""

    __konfig_resolve_exclude_fields__ = ("sub",)

    def __init__(self, sub: Any = None, allowed: Any = None) -> None:
        import konfig

        self.sub = sub
        self.value = konfig.resolve(sub) if allowed is None else konfig.resolve(sub, allowed=allowed)


class Later:
    """Keeps its sub-config unresolved; `build()` resolves it later (after the outer resolve returned)."""

    __konfig_resolve_exclude_fields__ = ("sub",)

    def __init__(self, sub: Any = None) -> None:
        self.sub = sub

    def build(self) -> Any:
        import konfig

        return konfig.resolve(self.sub)


def import_by_name(qualname: str) -> Any:
    """A library function that turns names into objects through konfig's importer."""
    import konfig

    return konfig.import_object(qualname)


def resolve_named(qualname: str, allowed: Any = None) -> Any:
    """Builds and resolves a config of its own from a name it is given (its check sees only a string)."""
    import konfig

    return konfig.resolve({"__qualname__": qualname}, allowed=allowed)
