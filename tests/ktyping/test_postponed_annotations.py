# ruff: noqa: F821, UP037 - shape specs like Float["n"] are strings, not forward references
"""Under `from __future__ import annotations` hints are strings; they are still checked."""

from __future__ import annotations

import dataclasses

import ktyping
import numpy as np
import pytest
from ktyping import Float, KTypeCheckError


@ktyping.typechecked
def module_level(x: Float["n"], y: Float["n"]) -> Float["n"]:
    return x


def test_string_hints_of_a_module_level_function_are_checked() -> None:
    assert module_level(np.zeros(2), np.zeros(2)).shape == (2,)
    with pytest.raises(KTypeCheckError, match="argument y"):
        module_level(np.zeros(2), np.zeros(3))


def test_string_hints_naming_a_local_class_are_resolved() -> None:
    @ktyping.typechecked
    @dataclasses.dataclass
    class Local:
        a: Float["n"]

    @ktyping.typechecked
    def use(obj: Local, b: Float["m"]) -> int:
        return 0

    assert use(Local(np.zeros(2)), np.zeros(3)) == 0
    with pytest.raises(KTypeCheckError, match="argument obj"):
        use("not a Local", np.zeros(3))  # type: ignore[arg-type]


def test_local_dataclass_fields_are_checked() -> None:
    Alias = Float["n 3"]

    @ktyping.typechecked
    @dataclasses.dataclass
    class Cloud:
        pos: Alias
        weight: Float["n"]

    Cloud(np.zeros((4, 3)), np.zeros(4))
    with pytest.raises(KTypeCheckError, match="field weight"):
        Cloud(np.zeros((4, 3)), np.zeros(5))


def test_invalid_dataclass_argument_explains_the_failing_field() -> None:
    @ktyping.typechecked
    @dataclasses.dataclass
    class Pair:
        a: Float["n"]
        b: Float["n"]

    @ktyping.typechecked
    def use(p: Pair) -> int:
        return 0

    p = Pair(np.zeros(2), np.zeros(2))
    p.b = np.zeros(3)
    with pytest.raises(KTypeCheckError, match=r"argument p = .* has field b = np.f64\[3\]"):
        use(p)
