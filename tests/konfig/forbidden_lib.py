"""Stands in for `os`/`subprocess` in safe-mode tests: everything here records that it ran.

No test may ever find `CALLS` non-empty after a safe resolve that did not allow this module.
"""

from __future__ import annotations

from typing import Any

CALLS: list[str] = []


def run(*args: Any, **kwargs: Any) -> str:
    CALLS.append(f"run{args}")
    return "ran"


class Evil:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        CALLS.append("Evil()")

    def method(self, *args: Any) -> str:
        CALLS.append("Evil.method")
        return "ran"


class CallableThing:
    def __call__(self, *args: Any) -> str:
        CALLS.append("CallableThing()")
        return "ran"


SECRET = {"token": "s3cret"}


class Wrapper:
    """A callable object of a forbidden class that claims to wrap an allowed function."""

    def __init__(self, fn: Any) -> None:
        self.__wrapped__ = fn

    def __call__(self, *args: Any) -> str:
        CALLS.append("Wrapper()")
        return "ran"
