"""Kauldron's legacy shape helpers, read from ktyping's active scope: `Shape`, `Dim`, `Memo`, `set_shape`.

Usage (inside a `@kd.typing.typechecked` function):

    out = np.zeros(Shape("b h//2 c"))  # the concrete shape the spec gives with this call's dims
    n = Dim("n+1")
    set_shape("t", 7)  # binds t=7 for the rest of the call
"""

from __future__ import annotations

import dataclasses

import ktyping
import numpy as np

__all__ = ["Dim", "Memo", "Shape", "set_shape"]


class Shape(tuple):
    """`Shape("b h w")`: the tuple of ints a spec gives under the caller's dims; `Shape["b h"]` annotates one.

    Calling it is `ktyping.shape(spec)` (Kauldron's spelling); subscribing it is `ktyping.Shape[spec]`,
    the annotation of a shape tuple.

    Attributes:
      (none): `Shape(spec)` returns a plain `tuple[int, ...]`, not a `Shape`.
    """

    def __new__(cls, spec_str: str) -> tuple[int, ...]:  # type: ignore[misc]
        if not isinstance(spec_str, str):
            raise TypeError(f"Shape: spec_str must be a shape spec str such as 'b h w'; got {spec_str!r}")
        return ktyping.shape(spec_str, stacklevel=1)

    def __class_getitem__(cls, spec: object) -> object:
        return ktyping.Shape[spec]


def Dim(spec_str: str) -> int:
    """The one size a single-axis spec gives under the caller's dims: `Dim("n")`, `Dim("h//2")`."""
    if not isinstance(spec_str, str):
        raise TypeError(f"Dim: spec_str must be a one-axis spec str such as 'n' or 'h//2'; got {spec_str!r}")
    sizes = ktyping.shape(spec_str, stacklevel=1)
    if len(sizes) != 1:
        raise ValueError(
            f"Dim: spec_str must give exactly one axis; {spec_str!r} gives {sizes} (use Shape for several)"
        )
    return sizes[0]


@dataclasses.dataclass
class Memo:
    """The dims bound in the active scope, split as Kauldron's memo was: single dims and variadic ones.

    Only the dims that every remaining candidate assignment agrees on are listed.

    Attributes:
      single: One-axis dims by name (`{"h": 32}`).
      variadic: Many-axis dims by name, without the `*` (`{"b": (2, 3)}`).
    """

    single: dict[str, int]
    variadic: dict[str, tuple[int, ...]]

    @classmethod
    def from_current_context(cls) -> Memo:
        """The dims of the caller's `@typechecked` scope (any active scope, also from a helper it calls)."""
        cands = ktyping.get_current_scope(nested_ok=True).cands
        agreed = {k: v for k, v in cands[0].items() if all(k in c and c[k] == v for c in cands[1:])}
        return cls(
            single={k: v for k, v in agreed.items() if not k.startswith("*")},
            variadic={k[1:]: tuple(v) for k, v in agreed.items() if k.startswith("*")},
        )

    def __repr__(self) -> str:
        return repr({**self.single, **{f"*{k}": v for k, v in self.variadic.items()}})


def set_shape(pattern: str, shape: int | tuple[int, ...] | list[int]) -> None:
    """Checks `shape` against `pattern` in the caller's scope, binding its unbound dims (`set_shape("b n", (2, 5))`)."""
    sizes = (shape,) if isinstance(shape, int) else tuple(shape)
    # A zero-byte stand-in array of that shape: ktyping reads only `.shape` and `.dtype`.
    ktyping.check_type(np.broadcast_to(np.empty((), np.float32), sizes), ktyping.Array[pattern], stacklevel=1)
