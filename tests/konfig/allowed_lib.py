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
