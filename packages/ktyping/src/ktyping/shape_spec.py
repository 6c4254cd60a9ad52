"""Kauldron's `ktyping.shape_spec`: a parsed spec is ktyping's `Spec`; Kauldron's dim classes build ktyping's dims.

    spec = ShapeSpec(NamedDims("b", length=None), BinaryOpDim(SYMBOL_2_OPERATOR["+"], NamedDims("n"), IntDim(1)))
    repr(spec)                                                  # '*b n+1'
    spec.evaluate(DimValues({"b": (4,), "n": (2,)}))            # (4, 3)
    spec.match((4, 3), frozenset([DimValues()]))                # frozenset({DimValues({'b': (4,), 'n': (2,)})})

`ShapeSpec` is our `Spec` (same dims, search and generated matcher) with Kauldron's constructor, equality,
repr, and `match` / `evaluate` over Kauldron's candidates (`DimValues`, translated by `_dim_values`). Kauldron's
dim classes (`NamedDims`, `BinaryOpDim`, ...) are constructors of ktyping's `SingleDim` / `VariadicDim`: each
writes the dim in Kauldron's notation and our parser builds it, so `DimSpec` is our `Dim`. A constraint ktyping
cannot solve yet (`a//b = 2` with `a` unbound) is no match here, as Kauldron decides each dim when matching it.
An axis of unknown (None) or `jax.export` symbolic size matches any dim, as in `ArraySpec`; a symbolic size
evaluates to jax's expression (`H+1`, `min(H, 128)`), an unknown one to 1.
"""

from __future__ import annotations

import dataclasses
import types

from . import _parser
from ._array_types import _with_unknowns
from ._dim_search import _expr_keys
from ._dim_values import UNKNOWN_DIM, DimValues, SpecReads, from_assignment, to_assignment
from ._errors import ValueTooLargeError
from ._spec import Spec
from ._spec_tree import _FUNCS, _OPS, PENDING, BinOp, Dim, Neg, SingleDim, UnknownDim, VariadicDim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

__all__ = [
    "NAME_2_FUNC",
    "SYMBOL_2_OPERATOR",
    "UNKNOWN_DIM",
    "AnonDims",
    "BinaryOpDim",
    "ChoiceDim",
    "DimSpec",
    "DimValues",
    "FunctionDim",
    "IntDim",
    "NamedDims",
    "NegatedDim",
    "Operator",
    "OptionalDim",
    "ShapeError",
    "ShapeSpec",
]

DimSpec = Dim
"""One element of a spec (ktyping's `Dim`): a `SingleDim` or a `VariadicDim`."""


class ShapeError(ValueError):
    """A spec cannot be evaluated to one shape: a dim is unbound, anonymous, broadcastable, optional or a choice."""


# Binding strength, weakest first: a sub-expression is written in parentheses unless it binds more
# strongly than the operator around it (Kauldron's notation).
_CHOICE, _SUM, _PRODUCT, _POWER, _UNARY, _ATOM = range(1, 7)
_STRENGTH = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT, "//": _PRODUCT, "%": _PRODUCT, "**": _POWER}


@dataclasses.dataclass(frozen=True)
class Operator:
    """A binary operator of the spec language: its symbol, ktyping's function for it, its binding strength."""

    symbol: str
    fn: Callable[[Any, Any], Any]
    priority: int


SYMBOL_2_OPERATOR: Mapping[str, Operator] = types.MappingProxyType(
    {symbol: Operator(symbol, fn, _STRENGTH[symbol]) for symbol, fn in _OPS.items()}
)
NAME_2_FUNC: Mapping[str, Callable[[list[Any]], Any]] = types.MappingProxyType(_FUNCS)


class ShapeSpec(Spec):
    """A parsed spec (ktyping's `Spec`) built from its dims: `ShapeSpec(NamedDims("b"), IntDim(3))`.

    Specs with the same dims are equal (anonymous dims' names aside); `repr` is the spec text.
    """

    __slots__ = ("reads",)

    def __init__(self, *dim_specs: Dim) -> None:
        parsed = _parser.parse(" ".join(d.text for d in dim_specs))
        super().__init__(parsed.source, parsed.dims, parsed.has_pyexpr)
        self.reads = SpecReads(self.dims)

    @property
    def dim_specs(self) -> tuple[Dim, ...]:
        return self.dims

    def _key(self) -> tuple[Any, ...]:
        return tuple(
            (d.name, d.min_len, d.broadcast)
            if isinstance(d, VariadicDim)
            else (tuple(map(str, d.options)), d.min_len, d.broadcast)  # type: ignore[attr-defined]
            for d in self.dims
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShapeSpec):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return self.source

    def match(self, shape: Iterable[Any], candidates: Iterable[Mapping[str, Any]]) -> frozenset[DimValues]:  # type: ignore[override]
        """Every extension of every candidate under which `shape` fits this spec (Kauldron's `match`).

        An axis of unknown size (None) or symbolic size (`jax.export`) matches any dim, as in `ArraySpec`.
        """
        shape = _with_unknowns(tuple(shape))
        found: set[DimValues] = set()
        for values in candidates:
            for a in self.matcher(shape, [to_assignment(values, self.reads)], None):
                if PENDING not in a:
                    result = from_assignment(a, values, self.reads)
                    if result is not None:
                        found.add(result)
        return frozenset(found)

    def evaluate(self, dim_values: Mapping[str, Any]) -> tuple[Any, ...]:  # type: ignore[override]
        """The shape this spec describes under one candidate; `ShapeError` says which dim has no single value."""
        a = to_assignment(dim_values, self.reads)
        shape: list[Any] = []
        for d in self.dims:
            _refuse_unevaluable(d)
            if isinstance(d, VariadicDim):
                axes = a.get(d.key)  # type: ignore[arg-type]
                if axes is None:
                    raise _unknown(d.text, dim_values)
                if len(axes) < d.min_len:
                    raise ShapeError(f"{d.text!r} needs at least one axis (its length spec), but it has none")
                shape.extend(axes)
                continue
            keys: set[str] = set()
            _expr_keys(d.options[0], keys)  # type: ignore[attr-defined]
            for key in sorted(keys):
                if key not in a:
                    raise _unknown(key, dim_values)
                if a[key] != a[key]:
                    raise ShapeError(
                        f"{key!r} in {d.text!r} is one axis, but its value {dim_values[key]} has "
                        f"{len(dim_values[key])} (its length spec is 1)"
                    )
            try:
                shape.append(self.evaluate_dim(d, a, None))
            except ValueTooLargeError as e:
                raise ShapeError(f"{d.text!r}: {e}") from None
        return tuple(_size(v) for v in shape)


def _size(v: Any) -> Any:
    """An evaluated axis as Kauldron gives it: an unknown size is 1 (what a broadcastable dim refines),
    a symbolic one (`min(B, 128)`) the jax expression."""
    if type(v) is UnknownDim:
        return 1 if v.value is None else v.value
    return v


def _refuse_unevaluable(d: Dim) -> None:
    if isinstance(d, VariadicDim):
        if d.name is None:
            raise ShapeError(f"Cannot evaluate anonymous dimension {d.text!r}")
        if d.broadcast:
            raise ShapeError(f"Cannot evaluate a broadcastable dim: {d.text!r} (each axis may be 1)")
        return
    assert isinstance(d, SingleDim)
    if not d.options:
        raise ShapeError(f"Cannot evaluate anonymous dimension {d.text!r}")
    if d.broadcast:
        raise ShapeError(f"Cannot evaluate a broadcastable dim: {d.text!r} (it may be 1)")
    if d.min_len == 0:
        raise ShapeError(f"Cannot evaluate optional dimension {d.text!r} ('?': present or not)")
    if len(d.options) > 1:
        raise ShapeError(f"Cannot evaluate a choice of dimensions {d.text!r} ('|')")


def _unknown(name: str, dim_values: Mapping[str, Any]) -> ShapeError:
    return ShapeError(f"No value known for {name!r}. Known values are: {sorted(dim_values)}")


# ----------------------------------------------------------------------------- Kauldron's dim classes


def NamedDims(
    name: str, *, length: int | tuple[int, int | None] | None = 1, broadcastable: bool = False
) -> Dim:
    """`n` (length 1), `*n` (length None: any number of axes), `+n` (length (1, None)); `#` if broadcastable."""
    return _dim(_length_prefix(length) + ("#" if broadcastable else "") + name)


def AnonDims(name: str | None = None, *, length: int | tuple[int, int | None] | None = 1) -> Dim:
    """`_`, `_n` (one axis), `...` / `*_n` (any number), `+_` / `+_n` (at least one) that bind nothing."""
    prefix = _length_prefix(length)
    return _dim("..." if prefix == "*" and not name else f"{prefix}_{name or ''}")


def IntDim(value: int, broadcastable: bool = False) -> Dim:
    """A fixed size, `3`; `#3` (3 or 1) if broadcastable."""
    return _dim(("#" if broadcastable else "") + str(value))


def BinaryOpDim(op: Operator | str, left: Dim, right: Dim) -> Dim:
    """`left op right`, an operator of `SYMBOL_2_OPERATOR` (or its symbol), as in `h//2`."""
    symbol = op if isinstance(op, str) else op.symbol
    strength = _STRENGTH[symbol]
    return _dim(_operand(left, strength) + symbol + _operand(right, strength))


def FunctionDim(name: str, fn: Callable[..., Any] | None, arguments: list[Dim]) -> Dim:
    """`min(h,w)`, `max(...)`, `sum(*b)`, `prod(*b)`: `fn` must be `NAME_2_FUNC[name]` (or None)."""
    if name not in _FUNCS or fn not in (None, _FUNCS[name]):
        raise ValueError(
            f"FunctionDim: the functions are NAME_2_FUNC's {sorted(_FUNCS)}, got {name!r} = {fn!r}"
        )
    return _dim(f"{name}({','.join(a.text for a in arguments)})")


def ChoiceDim(left: Dim, right: Dim) -> Dim:
    """`left|right`: either size. Choices are flat in ktyping (`a|b|c`): no parentheses."""
    return _dim(f"{left.text}|{right.text}")


def NegatedDim(child: Dim) -> Dim:
    """`-child`."""
    return _dim("-" + _operand(child, _UNARY))


def OptionalDim(child: Dim) -> Dim:
    """`child?`: the axis may be absent."""
    # `?` marks the whole dim, a choice included (`3|4?`): only an operator needs parentheses.
    return _dim((child.text if _strength(child) == _CHOICE else _operand(child, _UNARY - 1)) + "?")


def _dim(text: str) -> Dim:
    (dim,) = _parser.parse(text).dims
    return dim


def _length_prefix(length: int | tuple[int, int | None] | None) -> str:
    prefixes = {1: "", (1, 1): "", None: "*", (0, None): "*", (1, None): "+"}
    if length not in prefixes:
        raise ValueError(
            f"a dim takes 1 axis (1), any number (None) or at least one ((1, None)), not {length!r}"
        )
    return prefixes[length]


def _strength(d: Dim) -> int:
    if isinstance(d, SingleDim) and not d.broadcast:
        if d.min_len == 0:
            return _UNARY
        if len(d.options) > 1:
            return _CHOICE
        if len(d.options) == 1:
            expr = d.options[0]
            if isinstance(expr, BinOp):
                return _STRENGTH[expr.op]
            if isinstance(expr, Neg):
                return _UNARY
    return _ATOM


def _operand(d: Dim, strength: int) -> str:
    """`d`'s text as an operand of an operator of binding `strength`: in parentheses unless it binds more."""
    return d.text if _strength(d) > strength else f"({d.text})"
