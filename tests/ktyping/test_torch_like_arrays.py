# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""Torch-like arrays are recognised by duck typing (torch itself is never imported)."""

import ktyping
import pytest
from ktyping import Float, Int, KTypeCheckError
from ktyping._format import compact


class dtype:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    __str__ = __repr__


float32 = dtype("float32")
bfloat16 = dtype("bfloat16")
int64 = dtype("int64")


class Size(tuple):
    """Like torch.Size: a tuple subclass."""


class Tensor:
    def __init__(self, *shape: int, dtype: dtype = float32) -> None:
        self.shape = Size(shape)
        self.dtype = dtype


Tensor.__module__ = "torch"


def test_torch_like_tensor_matches_float_and_binds_dims() -> None:
    @ktyping.typechecked
    def f(x: Float["b n"], idx: Int["b"]) -> int:
        return ktyping.dim["n"]

    assert f(Tensor(2, 3), Tensor(2, dtype=int64)) == 3
    with pytest.raises(KTypeCheckError, match="argument idx"):
        f(Tensor(2, 3), Tensor(3, dtype=int64))


def test_torch_like_dtype_names_are_read_from_str() -> None:
    assert isinstance(Tensor(2, dtype=bfloat16), Float["n"])
    assert not isinstance(Tensor(2, dtype=int64), Float["n"])


def test_torch_like_tensor_is_printed_compactly() -> None:
    assert compact(Tensor(2, 3, dtype=bfloat16)) == "torch.bf16[2 3]"
