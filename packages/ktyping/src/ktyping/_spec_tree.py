"""The shape spec language's tree: the expressions and dims a spec such as `"*b h w c+1"` is made of.

    >>> from ktyping._spec_cache import parse_spec
    >>> [type(d).__name__ for d in parse_spec("*b n n+1").dims]
    ['VariadicDim', 'SingleDim', 'SingleDim']
    >>> str(parse_spec("n+1").dims[0].options[0].evaluate({"n": 2}, None))
    '3'

A spec is a whitespace separated list of dims:

- `n` named, `3` fixed, `_` / `_n` anonymous, `#n` / `#3` broadcastable (may be 1),
- `*b` (0 or more axes), `+b` (1 or more), `*_`, `+_`, `...` anonymous, `*#b` broadcastable,
- `t?` optional (0 or 1 axis), `3|4` / `3|c` choices,
- expressions `h*w`, `c+1`, `(c+1)//2`, `min(h,w)`, `prod(*b)`, `2**k`,
- `{self.hidden}`: a Python expression over the call's bound arguments.

Expressions are evaluated (and solved) under an assignment: dim name -> size, `"*name"` ->
tuple of sizes. `_parser` builds the tree from text; `_spec.Spec` is its root, matched
against shapes by `_dim_search` (or code from `_codegen`).
"""

from __future__ import annotations

import sys

from ._errors import KTypeCheckError, ValueTooLargeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "DEFER",
    "INF",
    "MAX_VALUE",
    "PENDING",
    "UNKNOWN",
    "Assignment",
    "BinOp",
    "Call",
    "Const",
    "Dim",
    "Expr",
    "Name",
    "Neg",
    "PyExpr",
    "SingleDim",
    "UnknownDim",
    "VarRef",
    "VariadicDim",
    "dedup",
    "is_symbolic",
    "size_text",
]

# Key of an assignment holding constraints that could not be solved yet:
# a tuple of (expression, axis size) pairs re-checked as more dims get bound.
PENDING = "?pending"

# What an expression evaluates to while a dim it reads is unbound.
UNKNOWN: Any = object()
# What `Expr.solve` returns when it cannot solve yet: the constraint is kept under `PENDING`.
DEFER: Any = object()
# The most axes a variadic dim takes.
INF = 1 << 30


# The value of an expression that divides by zero: like NaN it propagates through the
# arithmetic and equals no axis size, so such a dim never matches (and is never deferred).
_UNDEFINED: Any = float("nan")

# Dim values are axis sizes: products and powers beyond this are errors, not numbers to
# compute (`9**9**8` would take hours, `2**k` with a huge `k` all the memory).
MAX_VALUE = 1 << 64

Assignment = dict  # dim name -> size; "*name" -> tuple of sizes


# ----------------------------------------------------------------------------- expressions


class Expr:
    """A single-axis value: evaluates to an int (or a symbolic dim) or `UNKNOWN`."""

    __slots__ = ()

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        raise NotImplementedError

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        """New bindings making `self == value`, `None` if impossible, `DEFER` if unknown."""
        return DEFER


class Const(Expr):
    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        return self.value

    def __str__(self) -> str:
        return str(self.value)


class Name(Expr):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        return a.get(self.name, UNKNOWN)

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        if type(value) is int and value < 0:
            return None
        return {self.name: value}

    def __str__(self) -> str:
        return self.name


class VarRef(Expr):
    """`*b` inside a function call such as `prod(*b)`: the tuple bound to `*b`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        return a.get("*" + self.name, UNKNOWN)

    def __str__(self) -> str:
        return "*" + self.name


def size_text(v: Any) -> str:
    """`str(v)`, except for ints too long to print (by default Python refuses past 4300 digits)."""
    try:
        return str(v)
    except ValueError:
        return f"<a {v.bit_length()}-bit number>"


def _times(x: Any, y: Any) -> Any:
    r = x * y
    if type(r) is int and not -MAX_VALUE <= r <= MAX_VALUE:
        raise ValueTooLargeError(f"{size_text(x)}*{size_text(y)} is beyond 2**64")
    return r


def _power(x: Any, y: Any) -> Any:
    if type(x) is int and type(y) is int and y > 0 and not -1 <= x <= 1:
        # |x| >= 2: past exponent 64 the result exceeds 2**64; decide before computing it.
        if y > 64 or not -MAX_VALUE <= x <= MAX_VALUE:
            raise ValueTooLargeError(f"{size_text(x)}**{size_text(y)} is beyond 2**64")
        r = x**y
        if not -MAX_VALUE <= r <= MAX_VALUE:
            raise ValueTooLargeError(f"{size_text(x)}**{size_text(y)} is beyond 2**64")
        return r
    try:
        r = x**y
    except OverflowError:  # a float power such as (7/2)**2000
        raise ValueTooLargeError(f"{size_text(x)}**{size_text(y)} is beyond 2**64") from None
    return _UNDEFINED if type(r) is complex else r  # (-8)**(1/3): no real value


def _floordiv(x: Any, y: Any) -> Any:
    return x // y


def _exact_div(x: Any, y: Any) -> Any:
    """`/` is exact division: `21/5` is 4.2, which no axis size equals."""
    if type(x) is int and type(y) is int and x % y:
        return x / y
    return x // y


_OPS = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": _times,
    "//": _floordiv,
    "/": _exact_div,
    "%": lambda x, y: x % y,
    "**": _power,
}


class BinOp(Expr):
    __slots__ = ("_fn", "left", "op", "right")

    def __init__(self, op: str, left: Expr, right: Expr) -> None:
        self.op = op
        self.left = left
        self.right = right
        self._fn = _OPS[op]

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        x = self.left.evaluate(a, scope)
        if x is UNKNOWN:
            return UNKNOWN
        y = self.right.evaluate(a, scope)
        if y is UNKNOWN:
            return UNKNOWN
        try:
            return self._fn(x, y)
        except ZeroDivisionError:
            return _UNDEFINED

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        x = self.left.evaluate(a, scope)
        y = self.right.evaluate(a, scope)
        if (x is UNKNOWN) == (y is UNKNOWN):
            return DEFER  # both unknown (both known is handled by the caller)
        known = y if x is UNKNOWN else x
        if type(known) is float and known != known:  # undefined: it divided by zero
            return None
        op = self.op
        if op == "+":
            return (
                self.left.solve(value - y, a, scope)
                if y is not UNKNOWN
                else self.right.solve(value - x, a, scope)
            )
        if op == "-":
            return (
                self.left.solve(value + y, a, scope)
                if y is not UNKNOWN
                else self.right.solve(x - value, a, scope)
            )
        if op == "*":
            known, other = (y, self.left) if y is not UNKNOWN else (x, self.right)
            if type(value) is not int or type(known) is not int:
                return DEFER
            if known == 0:  # n*0 is 0 for every n
                return DEFER if value == 0 else None
            if value % known:
                return None
            return other.solve(value // known, a, scope)
        if op == "/":  # exact division
            known = y if y is not UNKNOWN else x
            if type(value) is not int or type(known) is not int:
                return DEFER
            if y is not UNKNOWN:
                return None if y == 0 else self.left.solve(value * y, a, scope)
            if value == 0 or x % value:
                return None
            return self.right.solve(x // value, a, scope)
        return DEFER

    def __str__(self) -> str:
        return f"({self.left}{self.op}{self.right})"


class Neg(Expr):
    __slots__ = ("operand",)

    def __init__(self, operand: Expr) -> None:
        self.operand = operand

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        x = self.operand.evaluate(a, scope)
        return UNKNOWN if x is UNKNOWN else -x

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        return self.operand.solve(-value, a, scope)

    def __str__(self) -> str:
        return f"-{self.operand}"


def _prod(values: list[Any]) -> Any:
    out: Any = 1
    for v in values:
        out = _times(out, v)
    return out


def _smallest(values: list[Any]) -> Any:
    try:
        return min(values)
    except Exception:
        if not _any_undecided(values):
            raise
        return _undecided_extreme("min_dim", values)


def _largest(values: list[Any]) -> Any:
    try:
        return max(values)
    except Exception:
        if not _any_undecided(values):
            raise
        return _undecided_extreme("max_dim", values)


def _any_undecided(values: list[Any]) -> bool:
    """Whether a size is unknown or symbolic: Python cannot order it (jax raises
    `InconclusiveDimensionOperation` for `B < 128`)."""
    return any(type(v) is UnknownDim or is_symbolic(v) for v in values)


def _undecided_extreme(jax_function: str, values: list[Any]) -> UnknownDim:
    """`min` / `max` of sizes that cannot be ordered: an `UnknownDim`, which matches any axis. It holds
    jax's symbolic `min_dim` / `max_dim` of the sizes (`min(B, 128)`) when jax can write one, else None."""
    sizes = [v.value if type(v) is UnknownDim else v for v in values]
    jax = sys.modules.get("jax")  # a symbolic dim is a jax object: jax is imported already
    if jax is None or any(v is None for v in sizes):
        return UnknownDim(None)
    try:
        pick = getattr(jax.core, jax_function)
        out = sizes[0]
        for v in sizes[1:]:
            out = pick(out, v)
    except Exception:  # a jax without `core.min_dim`, or sizes it refuses
        return UnknownDim(None)
    return UnknownDim(out)


def is_symbolic(d: Any) -> bool:
    """Whether `d` is a `jax.export` symbolic dim (`B`, `2*B + 1`), recognised without importing jax."""
    t = type(d)
    return t.__name__ == "_DimExpr" and t.__module__.startswith("jax")


_FUNCS: dict[str, Callable[[list[Any]], Any]] = {"min": _smallest, "max": _largest, "sum": sum, "prod": _prod}


class Call(Expr):
    """`min(h,w)`, `max(...)`, `sum(*b)`, `prod(*b)`."""

    __slots__ = ("args", "func")

    def __init__(self, func: str, args: tuple[Expr, ...]) -> None:
        self.func = func
        self.args = args

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        values: list[Any] = []
        for arg in self.args:
            v = arg.evaluate(a, scope)
            if v is UNKNOWN:
                return UNKNOWN
            if isinstance(arg, VarRef):
                values.extend(v)
            else:
                values.append(v)
        if not values and self.func in ("min", "max"):
            return UNKNOWN
        return _FUNCS[self.func](values)

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        if len(self.args) == 1 and not isinstance(self.args[0], VarRef):
            return self.args[0].solve(value, a, scope)
        return DEFER

    def __str__(self) -> str:
        return f"{self.func}({','.join(map(str, self.args))})"


class PyExpr(Expr):
    """`{self.hidden}`: evaluated like an f-string field: the call's bound arguments (or a
    `with typechecked():` block's locals) and the module's globals."""

    __slots__ = ("code", "source")

    def __init__(self, source: str, code: Any) -> None:
        self.source = source
        self.code = code

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        arguments = scope.arguments if scope is not None else None
        if arguments is None:
            raise KTypeCheckError(
                f"shape spec value {{{self.source}}} needs the bound arguments of a "
                "@typechecked call, but none is active"
            )
        globals_ = getattr(scope, "globals", None) or {}
        try:
            return eval(self.code, globals_, arguments)
        except Exception as e:
            raise self._error(e, scope, arguments, globals_) from e

    def _error(self, e: Exception, scope: Any, arguments: Any, globals_: dict[str, Any]) -> Exception:
        import difflib

        name = getattr(e, "name", None)
        if isinstance(e, AttributeError) and getattr(e, "obj", None) is not None:
            known = [k for k in dir(e.obj) if not k.startswith("__")]
        else:
            known = [*arguments, *globals_]
        near = difflib.get_close_matches(name, known, n=1) if isinstance(name, str) else []
        plan: Any = getattr(scope, "plan", None)
        return KTypeCheckError(
            f"shape spec value {{{self.source}}} could not be evaluated: {type(e).__name__}: {e}"
            + (f"; did you mean {near[0]!r}?" if near else "")
            + f"\n  (arguments: {', '.join(arguments)})"
            + (f"\n\nOrigin: {plan.origin()}" if hasattr(plan, "origin") else "")
        )

    def __str__(self) -> str:
        return "{" + self.source + "}"


# ----------------------------------------------------------------------------- dims


class UnknownDim:
    """An axis of unknown size (`None` in a `jax.ShapeDtypeStruct`) or a symbolic one (`jax.export`):
    it matches any size, and a dim bound to it matches any size too.

    `value` is the axis as given (None or the symbolic dim); it prints as that, `#` for None.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "#" if self.value is None else str(self.value)

    def _any(self, *other: Any) -> UnknownDim:
        return UnknownDim(None)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _any
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = _any


class Dim:
    """One element of a spec; `min_len`/`max_len` is how many axes it can take."""

    __slots__ = ("max_len", "min_len", "text")
    text: str
    min_len: int
    max_len: int

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"


class SingleDim(Dim):
    """One axis: a choice among expressions (`n`, `3`, `c+1`, `3|4`), maybe broadcastable.

    `options` is empty for an anonymous dim (`_`, `_name`).
    """

    __slots__ = ("broadcast", "options")

    def __init__(self, text: str, options: tuple[Expr, ...], broadcast: bool, optional: bool) -> None:
        self.text = text
        self.options = options
        self.broadcast = broadcast
        self.min_len = 0 if optional else 1
        self.max_len = 1


class VariadicDim(Dim):
    """`*b`, `+b`, `*#b`, `*_`, `...`: any number of axes; `name` is None when anonymous."""

    __slots__ = ("broadcast", "key", "name")

    def __init__(self, text: str, name: str | None, min_len: int, broadcast: bool) -> None:
        self.text = text
        self.name = name
        self.key = None if name is None else "*" + name
        self.min_len = min_len
        self.max_len = INF
        self.broadcast = broadcast


def dedup(cands: list[Assignment]) -> list[Assignment]:
    """`cands` without repeated assignments, in order (unhashable ones are all kept)."""
    seen = set()
    out = []
    for a in cands:
        try:
            key = frozenset(a.items())
        except TypeError:
            out.append(a)
            continue
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out
