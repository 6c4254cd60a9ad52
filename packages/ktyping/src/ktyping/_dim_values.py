"""Kauldron's form of a candidate, `DimValues`, and its translation to and from one spec's assignments.

    >>> from ktyping._spec_cache import parse_spec
    >>> reads = SpecReads(parse_spec("*b n").dims)
    >>> to_assignment(DimValues({"b": (4,), "n": (2,)}), reads)
    {'*b': (4,), 'n': 2}
    >>> from_assignment({"*b": (4,), "n": 2, "m": 3}, DimValues(), reads)
    DimValues({'b': (4,), 'n': (2,), 'm': (3,)})

Kauldron gives every dim as a tuple under its bare name, and a name is one dim whether a spec reads it as
`b` or `*b`; ktyping keys `b` and `*b` apart (`_dims.to_public` / `from_public`). So the translation asks
the spec which way it reads each name (`SpecReads`). Kauldron's unknown axis, `UNKNOWN_DIM`, is ktyping's
`UnknownDim`: a single dim of unknown size is left unbound (the match binds it), and in a broadcastable
variadic it is written 1, the size such a dim refines (`_dim_search._broadcast_equal`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ._dim_search import _expr_keys
from ._spec_tree import PENDING, Name, SingleDim, UnknownDim, VariadicDim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ._spec_tree import Assignment, Dim

__all__ = ["UNKNOWN_DIM", "DimValues", "SpecReads", "from_assignment", "to_assignment"]

UNKNOWN_DIM: Any = UnknownDim(None)
"""An axis of unknown size (Kauldron's `UNKNOWN_DIM`): ktyping's `UnknownDim`, which equals every size."""

# The value of a name the spec reads as one axis while its candidate gives it several: like a
# division by zero it equals no axis size, so no dim reading it matches (except through `min` / `max`,
# which may pass a NaN over).
_NO_SINGLE_AXIS: Any = float("nan")


class DimValues(Mapping):
    """A candidate as Kauldron writes it: dim name -> tuple of sizes; immutable and hashable.

    DimValues({"b": (2,), "batch": (4, 5)})
    """

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any] | Any = (), /, **more: Any) -> None:
        self._values = dict(values, **more)

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        return hash(frozenset(self._values.items()))

    def __or__(self, other: Mapping[str, Any]) -> DimValues:
        return DimValues({**self._values, **other})

    def __repr__(self) -> str:
        return f"DimValues({self._values!r})"


class SpecReads:
    """The names a spec's dims read: as one axis (`n`, `#n`, `n+1`), as several (`*b`, `prod(*b)`), and
    which of them are broadcastable (`*#b`, and `#n` standing alone)."""

    __slots__ = ("broadcast_singles", "broadcast_variadics", "singles", "variadics")

    def __init__(self, dims: tuple[Dim, ...]) -> None:
        keys: set[str] = set()
        self.broadcast_singles: set[str] = set()
        self.broadcast_variadics: set[str] = set()
        for d in dims:
            if isinstance(d, VariadicDim):
                if d.name is not None:
                    keys.add("*" + d.name)
                    if d.broadcast:
                        self.broadcast_variadics.add(d.name)
                continue
            assert isinstance(d, SingleDim)
            for expr in d.options:
                _expr_keys(expr, keys)
            if d.broadcast and d.min_len == 1 and len(d.options) == 1 and isinstance(d.options[0], Name):
                self.broadcast_singles.add(d.options[0].name)
        self.singles = {k for k in keys if k[0] != "*"}
        self.variadics = {k[1:] for k in keys if k[0] == "*"}


def to_assignment(values: Mapping[str, Any], reads: SpecReads) -> Assignment:
    """Kauldron's candidate as the assignment a spec reading `reads` is matched under."""
    a: Assignment = {}
    for name, value in values.items():
        if name[:1] == "$":  # a PyTree structure key
            a[name] = value
            continue
        value = tuple(value)
        if name in reads.variadics:
            if name in reads.broadcast_variadics:
                value = tuple(1 if type(v) is UnknownDim else v for v in value)
            a["*" + name] = value
            if name not in reads.singles:
                continue
        if len(value) == 1:
            if type(value[0]) is not UnknownDim:  # unknown: left unbound, for the match to bind
                a[name] = value[0]
        elif name in reads.singles:
            a[name] = _NO_SINGLE_AXIS
        else:
            a["*" + name] = value
    return a


def from_assignment(a: Assignment, before: Mapping[str, Any], reads: SpecReads) -> DimValues | None:
    """The candidate `before`, with what a match under it bound (`a`) in Kauldron's form.

    None when `a` gives one name different axes as `n` and as `*n`: Kauldron's single namespace has
    no such candidate.
    """
    out = dict(before)
    for key, value in a.items():
        if key == PENDING:
            continue
        if key[0] == "$":
            out[key] = value
        elif key[0] == "*":
            name = key[1:]
            value = tuple(value)
            if name in reads.broadcast_variadics:
                value = _unknown_where_one(value, before.get(name))
            out[name] = value
        elif value == value:  # not `_NO_SINGLE_AXIS`, which keeps `before`'s value
            star = a.get("*" + key)
            if star is not None and tuple(star) != (value,):
                return None
            out[key] = (value,)
    for name in reads.broadcast_singles:
        out.setdefault(name, (UNKNOWN_DIM,))  # `#n` took an axis of size 1: its size is unknown
    return DimValues(out)


def _unknown_where_one(value: tuple[Any, ...], before: Any) -> tuple[Any, ...]:
    """A broadcastable variadic's axes: a 1 that was not known before is an unknown size."""
    fresh = before is None or len(before) != len(value)
    return tuple(
        UNKNOWN_DIM if v == 1 and (fresh or type(before[i]) is UnknownDim) else v for i, v in enumerate(value)
    )
