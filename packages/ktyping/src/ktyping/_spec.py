"""The shape spec language: the dims a spec such as `"*b h w c+1"` is made of, and matching shapes.

    >>> from ktyping._spec_cache import parse_spec
    >>> spec = parse_spec("*b n n+1")
    >>> spec.match((4, 2, 3), [{}], None)
    [{'*b': (4,), 'n': 2}]

A spec is a whitespace separated list of dims:

- `n` named, `3` fixed, `_` / `_n` anonymous, `#n` / `#3` broadcastable (may be 1),
- `*b` (0 or more axes), `+b` (1 or more), `*_`, `+_`, `...` anonymous, `*#b` broadcastable,
- `t?` optional (0 or 1 axis), `3|4` / `3|c` choices,
- expressions `h*w`, `c+1`, `(c+1)//2`, `min(h,w)`, `prod(*b)`, `2**k`,
- `{self.hidden}`: a Python expression over the call's bound arguments.

`_parser` builds a `Spec` from text; `_spec_cache.parse_spec` parses each string once.
"""

from __future__ import annotations

from ._errors import KTypeCheckError, ValueTooLargeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["MAX_VALUE", "PENDING", "STEP_BUDGET", "Spec", "UnknownDim", "generate_function", "size_text"]

# Key of an assignment holding constraints that could not be solved yet:
# a tuple of (expression, axis size) pairs re-checked as more dims get bound.
PENDING = "?pending"

_UNKNOWN: Any = object()
_DEFER: Any = object()
_INF = 1 << 30

# The value of an expression that divides by zero: like NaN it propagates through the
# arithmetic and equals no axis size, so such a dim never matches (and is never deferred).
_UNDEFINED: Any = float("nan")

# Dim values are axis sizes: products and powers beyond this are errors, not numbers to
# compute (`9**9**8` would take hours, `2**k` with a huge `k` all the memory).
MAX_VALUE = 1 << 64

Assignment = dict  # dim name -> size; "*name" -> tuple of sizes


# ----------------------------------------------------------------------------- expressions


class Expr:
    """A single-axis value: evaluates to an int (or a symbolic dim) or `_UNKNOWN`."""

    __slots__ = ()

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        raise NotImplementedError

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        """New bindings making `self == value`, `None` if impossible, `_DEFER` if unknown."""
        return _DEFER


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
        return a.get(self.name, _UNKNOWN)

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
        return a.get("*" + self.name, _UNKNOWN)

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
        if x is _UNKNOWN:
            return _UNKNOWN
        y = self.right.evaluate(a, scope)
        if y is _UNKNOWN:
            return _UNKNOWN
        try:
            return self._fn(x, y)
        except ZeroDivisionError:
            return _UNDEFINED

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        x = self.left.evaluate(a, scope)
        y = self.right.evaluate(a, scope)
        if (x is _UNKNOWN) == (y is _UNKNOWN):
            return _DEFER  # both unknown (both known is handled by the caller)
        known = y if x is _UNKNOWN else x
        if type(known) is float and known != known:  # undefined: it divided by zero
            return None
        op = self.op
        if op == "+":
            return (
                self.left.solve(value - y, a, scope)
                if y is not _UNKNOWN
                else self.right.solve(value - x, a, scope)
            )
        if op == "-":
            return (
                self.left.solve(value + y, a, scope)
                if y is not _UNKNOWN
                else self.right.solve(x - value, a, scope)
            )
        if op == "*":
            known, other = (y, self.left) if y is not _UNKNOWN else (x, self.right)
            if type(value) is not int or type(known) is not int:
                return _DEFER
            if known == 0:  # n*0 is 0 for every n
                return _DEFER if value == 0 else None
            if value % known:
                return None
            return other.solve(value // known, a, scope)
        if op == "/":  # exact division
            known = y if y is not _UNKNOWN else x
            if type(value) is not int or type(known) is not int:
                return _DEFER
            if y is not _UNKNOWN:
                return None if y == 0 else self.left.solve(value * y, a, scope)
            if value == 0 or x % value:
                return None
            return self.right.solve(x // value, a, scope)
        return _DEFER

    def __str__(self) -> str:
        return f"({self.left}{self.op}{self.right})"


class Neg(Expr):
    __slots__ = ("operand",)

    def __init__(self, operand: Expr) -> None:
        self.operand = operand

    def evaluate(self, a: Assignment, scope: Any) -> Any:
        x = self.operand.evaluate(a, scope)
        return _UNKNOWN if x is _UNKNOWN else -x

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        return self.operand.solve(-value, a, scope)

    def __str__(self) -> str:
        return f"-{self.operand}"


def _prod(values: list[Any]) -> Any:
    out: Any = 1
    for v in values:
        out = _times(out, v)
    return out


_FUNCS: dict[str, Callable[[list[Any]], Any]] = {"min": min, "max": max, "sum": sum, "prod": _prod}


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
            if v is _UNKNOWN:
                return _UNKNOWN
            if isinstance(arg, VarRef):
                values.extend(v)
            else:
                values.append(v)
        if not values and self.func in ("min", "max"):
            return _UNKNOWN
        return _FUNCS[self.func](values)

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        if len(self.args) == 1 and not isinstance(self.args[0], VarRef):
            return self.args[0].solve(value, a, scope)
        return _DEFER

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

    def match_axis(self, v: Any, a: Assignment, scope: Any, out: list[Assignment]) -> None:
        """Appends to `out` every extension of `a` in which this dim equals axis size `v`."""
        if not self.options or (self.broadcast and v == 1):
            out.append(a)
            return
        for expr in self.options:
            got = expr.evaluate(a, scope)
            if got is not _UNKNOWN:
                if got == v:  # a broadcastable axis of size 1 was accepted above
                    out.append(a)
                continue
            new = expr.solve(v, a, scope)
            if new is None:
                continue
            if new is _DEFER:
                pending = (*a.get(PENDING, ()), (expr, v))
                out.append({**a, PENDING: pending})
                continue
            b = {**a, **new}
            if PENDING in a:
                checked = _recheck_pending(b, scope)
                if checked is not None:
                    out.append(checked)
                continue
            out.append(b)


class VariadicDim(Dim):
    """`*b`, `+b`, `*#b`, `*_`, `...`: any number of axes; `name` is None when anonymous."""

    __slots__ = ("broadcast", "key", "name")

    def __init__(self, text: str, name: str | None, min_len: int, broadcast: bool) -> None:
        self.text = text
        self.name = name
        self.key = None if name is None else "*" + name
        self.min_len = min_len
        self.max_len = _INF
        self.broadcast = broadcast


def _recheck_pending(a: Assignment, scope: Any) -> Assignment | None:
    """Re-evaluates deferred constraints; drops those now satisfied, `None` if one fails."""
    keep = []
    for expr, v in a[PENDING]:
        got = expr.evaluate(a, scope)
        if got is _UNKNOWN:
            keep.append((expr, v))
        elif got != v:
            return None
    a = dict(a)
    if keep:
        a[PENDING] = tuple(keep)
    else:
        del a[PENDING]
    return a


def _broadcast_equal(bound: tuple[Any, ...], axes: tuple[Any, ...]) -> tuple[Any, ...] | None:
    out = []
    for x, y in zip(bound, axes):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


# ----------------------------------------------------------------------------- specs


class Spec:
    """A parsed shape spec. Build with `_spec_cache.parse_spec` (cached)."""

    __slots__ = (
        "_branching",
        "_match_dims",
        "_max_after",
        "_min_after",
        "_step_cost",
        "_used_after",
        "dims",
        "fixed",
        "has_pyexpr",
        "matcher",
        "named",
        "ndim",
        "simple",
        "source",
        "straight_line",
    )

    def __init__(self, source: str, dims: tuple[Dim, ...], has_pyexpr: bool) -> None:
        self.source = source
        self.dims = dims
        self.ndim = len(dims)
        self.has_pyexpr = has_pyexpr
        # Fast path: every dim is one axis that is a plain name, a number or anonymous.
        self.simple = all(
            isinstance(d, SingleDim)
            and d.min_len == 1
            and not d.broadcast
            and len(d.options) <= 1
            and (not d.options or isinstance(d.options[0], (Name, Const)))
            for d in dims
        )
        self.fixed: tuple[tuple[int, int], ...] = ()
        self.named: tuple[tuple[int, str], ...] = ()
        if self.simple:
            fixed, named = [], []
            for i, d in enumerate(dims):
                assert isinstance(d, SingleDim)
                if d.options:
                    opt = d.options[0]
                    if isinstance(opt, Const):
                        fixed.append((i, opt.value))
                    else:
                        assert isinstance(opt, Name)
                        named.append((i, opt.name))
            self.fixed = tuple(fixed)
            self.named = tuple(named)
        # Matching walks `_match_dims`: `dims` with each run of anonymous variadics merged into
        # one (`... *_ +_` takes the same axes as one `+_`), the same matches without the
        # ways of splitting axes among dims that bind nothing.
        mdims = _merge_anonymous_variadics(dims)
        self._match_dims = mdims
        n = len(mdims)
        self._min_after = [0] * (n + 1)
        self._max_after = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            self._min_after[i] = self._min_after[i + 1] + mdims[i].min_len
            self._max_after[i] = min(_INF, self._max_after[i + 1] + mdims[i].max_len)
        self._branching = _branching(mdims)
        self._used_after: list[tuple[str, ...] | None] | None = None
        self._step_cost: list[int] = []
        if self._branching is not None:
            if not has_pyexpr:  # `{...}` values are not memoised
                self._used_after = _keys_used_after(mdims)
            self._step_cost = _step_costs(mdims, self._used_after)
        # Generated code grows with the spec (and takes ~1 ms per dim to compile): a spec
        # of thousands of dims is matched by the general algorithm instead.
        self.straight_line = self.simple and len(dims) <= _MAX_GENERATED_DIMS
        self.matcher = _generate_simple_matcher(self) if self.straight_line else self.match

    def __repr__(self) -> str:
        return f"Spec({self.source!r})"

    def match(self, shape: tuple[Any, ...], cands: list[Assignment], scope: Any) -> list[Assignment]:
        """Every extension of every candidate under which `shape` matches this spec.

        The general algorithm; `matcher` is the same function, generated straight-line
        code for plain specs. Raises `KTypeCheckError` when the spec splits `shape` in
        too many ways to try (`_Search`) or a value is beyond `MAX_VALUE`.
        """
        shape = tuple(shape)
        if not self._min_after[0] <= len(shape) <= self._max_after[0]:
            return []
        out: list[Assignment] = []
        try:
            if self._branching is None or _few_paths(self._branching, len(cands), len(shape)):
                match_from = self._match_from
                for a in cands:
                    match_from(0, shape, 0, a, scope, out, match_from)
            else:
                _Search(self, shape, len(cands)).run(cands, scope, out)
        except ValueTooLargeError as e:
            raise KTypeCheckError(f"shape spec {self.source!r}: {e} (dim values are axis sizes)") from None
        except RecursionError:  # one level per variadic or optional dim on the path
            raise self.too_ambiguous(
                shape, "more variadic, optional and '|' dims than fit the stack"
            ) from None
        return out if len(out) < 2 else _dedup(out)

    def _match_from(
        self,
        i: int,
        shape: tuple[Any, ...],
        j: int,
        a: Assignment,
        scope: Any,
        out: list[Assignment],
        descend: Any = None,
    ) -> None:
        """Appends to `out` the extensions of `a` matching `shape[j:]` to the dims from `i` on.

        `descend` is called (with the same arguments) for each branch: this method, or
        `_Search.descend`, which memoises and counts.
        """
        if descend is None:
            descend = self._match_from
        dims = self._match_dims
        n = len(shape)
        while i < len(dims):
            d = dims[i]
            rest = n - j
            if rest < self._min_after[i] or rest > self._max_after[i]:
                return
            if isinstance(d, SingleDim):
                if d.min_len == 0:  # optional: try absent, then present
                    descend(i + 1, shape, j, a, scope, out, descend)
                    if rest == 0:
                        return
                if d.max_len == 1 and len(d.options) == 1 and not d.broadcast and d.min_len == 1:
                    got = d.options[0].evaluate(a, scope)
                    if got is not _UNKNOWN:
                        if got != shape[j]:
                            return
                        i += 1
                        j += 1
                        continue
                nexts: list[Assignment] = []
                d.match_axis(shape[j], a, scope, nexts)
                if len(nexts) == 1:
                    a = nexts[0]
                    i += 1
                    j += 1
                    continue
                for b in nexts:
                    descend(i + 1, shape, j + 1, b, scope, out, descend)
                return
            assert isinstance(d, VariadicDim)
            key = d.key
            bound = a.get(key) if key is not None else None
            if bound is not None:
                k = len(bound)
                if k > rest:
                    return
                axes = shape[j : j + k]
                if d.broadcast:
                    merged = _broadcast_equal(bound, axes)
                    if merged is None:
                        return
                    if merged != bound:
                        a = {**a, key: merged}
                elif axes != bound:
                    return
                i += 1
                j += k
                continue
            lo = d.min_len
            hi = rest - self._min_after[i + 1]
            if i + 1 == len(dims):
                lo = max(lo, rest)
            for k in range(lo, hi + 1):
                c = a if key is None else {**a, key: shape[j : j + k]}
                if key is not None and PENDING in a:
                    checked = _recheck_pending(c, scope)
                    if checked is None:
                        continue
                    c = checked
                descend(i + 1, shape, j + k, c, scope, out, descend)
            return
        if j == n:
            out.append(a)

    def too_ambiguous(self, shape: tuple[Any, ...], why: str = "") -> KTypeCheckError:
        """The error for a match that would take more than its budget of steps."""
        shown = ", ".join(size_text(v) for v in shape[:8]) + (", ..." if len(shape) > 8 else "")
        why = why or (
            "its variadic, optional and '|' dims split the axes in more ways than ktyping "
            f"tries ({STEP_BUDGET} steps)"
        )
        source = self.source if len(self.source) <= 200 else self.source[:197] + "..."
        return KTypeCheckError(
            f"shape spec {source!r} is too ambiguous to match a shape of {len(shape)} axes "
            f"({shown}): {why}; bind its variadic dims with an earlier argument, or use fewer "
            "of them"
        )

    def evaluate_dim(self, d: Dim, a: Assignment, scope: Any) -> Any:
        """The value of one single-axis dim under `a`, or `None` when unknown."""
        if not isinstance(d, SingleDim) or len(d.options) != 1:
            return None
        got = d.options[0].evaluate(a, scope)
        return None if got is _UNKNOWN else got

    def evaluate(self, a: Assignment, scope: Any) -> tuple[Any, ...] | None:
        """The concrete shape this spec describes under `a`; `None` if some dim is unknown."""
        try:
            return self._evaluate(a, scope)
        except ValueTooLargeError as e:
            raise KTypeCheckError(f"shape spec {self.source!r}: {e} (dim values are axis sizes)") from None

    def _evaluate(self, a: Assignment, scope: Any) -> tuple[Any, ...] | None:
        out: list[Any] = []
        for d in self.dims:
            if isinstance(d, VariadicDim):
                bound = a.get(d.key) if d.key is not None else None
                if bound is None:
                    return None
                out.extend(bound)
                continue
            assert isinstance(d, SingleDim)
            if len(d.options) != 1:
                return None
            got = d.options[0].evaluate(a, scope)
            if got is _UNKNOWN:
                if d.min_len == 0:
                    continue
                return None
            out.append(got)
        return tuple(out)


_MAX_GENERATED_DIMS = 64

# Specs with two or more branching dims (variadic, optional, `|`) are matched by plain
# backtracking while it has at most this many paths; past that by `_Search`.
_PLAIN_PATHS = 10_000

# The most steps `_Search` takes for one match before it gives up with `Spec.too_ambiguous`:
# a fraction of a second. Real specs take tens of steps.
STEP_BUDGET = 100_000


def _merge_anonymous_variadics(dims: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """`dims` with each run of adjacent anonymous variadics (`...`, `*_`, `+_`) as one dim."""
    out: list[Dim] = []
    for d in dims:
        prev = out[-1] if out else None
        if (
            isinstance(d, VariadicDim)
            and d.key is None
            and isinstance(prev, VariadicDim)
            and prev.key is None
        ):
            out[-1] = VariadicDim(f"{prev} {d}", None, prev.min_len + d.min_len, False)
        else:
            out.append(d)
    return dims if len(out) == len(dims) else tuple(out)


def _is_branching(d: Dim) -> bool:
    """Whether matching tries several ways for `d`: a variadic, optional or `|` dim."""
    return isinstance(d, VariadicDim) or (isinstance(d, SingleDim) and (d.min_len == 0 or len(d.options) > 1))


def _branching(dims: tuple[Dim, ...]) -> tuple[int, int] | None:
    """`(variadics, product of the other dims' choices)`; `None` with at most one branching dim."""
    branching = [d for d in dims if _is_branching(d)]
    if len(branching) <= 1:
        return None
    variadics = 0
    product = 1
    for d in branching:
        if isinstance(d, VariadicDim):
            variadics += 1
        else:
            assert isinstance(d, SingleDim)
            ways = max(1, len(d.options)) * (2 if d.min_len == 0 else 1)
            product = min(product * ways, _PLAIN_PATHS + 1)
    return variadics, product


def _few_paths(branching: tuple[int, int], n_cands: int, n_axes: int) -> bool:
    """Whether backtracking tries at most `_PLAIN_PATHS` paths: per candidate, the ways to
    give `n_axes` or fewer axes to the variadics, `C(n_axes + variadics, variadics)`, times
    the choices of the other dims."""
    variadics, paths = branching
    paths *= n_cands
    for k in range(1, variadics + 1):
        paths = paths * (n_axes + k) // k
        if paths > _PLAIN_PATHS:
            return False
    return paths <= _PLAIN_PATHS


def _expr_keys(expr: Expr, out: set[str]) -> None:
    """Adds the assignment keys `expr` reads (`n`, `*b`) to `out`."""
    if isinstance(expr, Name):
        out.add(expr.name)
    elif isinstance(expr, VarRef):
        out.add("*" + expr.name)
    elif isinstance(expr, BinOp):
        _expr_keys(expr.left, out)
        _expr_keys(expr.right, out)
    elif isinstance(expr, Neg):
        _expr_keys(expr.operand, out)
    elif isinstance(expr, Call):
        for arg in expr.args:
            _expr_keys(arg, out)


# A spec whose dims after a branch use more keys than this is not memoised (the memo key
# of each visit would cost as much as the visit).
_MAX_MEMO_KEYS = 32


def _keys_used_after(dims: tuple[Dim, ...]) -> list[tuple[str, ...] | None] | None:
    """For each position a match can branch to (0, and each one after a branching dim),
    the assignment keys the dims from there on read or bind; `None` if too many."""
    keys: set[str] = set()
    out: list[tuple[str, ...] | None] = [None] * (len(dims) + 1)
    for i in range(len(dims), -1, -1):
        if i < len(dims):
            d = dims[i]
            if isinstance(d, VariadicDim):
                if d.key is not None:
                    keys.add(d.key)
            else:
                assert isinstance(d, SingleDim)
                for expr in d.options:
                    _expr_keys(expr, keys)
        if len(keys) > _MAX_MEMO_KEYS:
            return None
        if i == 0 or _is_branching(dims[i - 1]):
            out[i] = tuple(sorted(keys))
    return out


def _step_costs(dims: tuple[Dim, ...], used: list[tuple[str, ...] | None] | None) -> list[int]:
    """The work of one `_Search` visit at each position: the dims walked up to the next
    branch, and the keys read for the memo."""
    costs = [1] * (len(dims) + 1)
    walk = 0
    for i in range(len(dims) - 1, -1, -1):
        walk = 1 if _is_branching(dims[i]) else walk + 1
        costs[i] = walk + (len(used[i] or ()) if used is not None else 0)
    return costs


class _Search:
    """One match by `Spec._match_from`, memoised and counted, for specs that branch a lot.

    The matches of the dims from `i` on against `shape[j:]` depend only on `i`, `j` and
    the values the candidate gives to the keys those dims use (`Spec._used_after[i]`).
    Each such state is solved once; a later visit replays its results: the same dicts
    for the same candidate (`_same`), else the bindings they added, applied to the new one.
    Every visit and replayed result is a step; past `STEP_BUDGET` steps the match raises
    `Spec.too_ambiguous`.

    The results are those of plain backtracking after `_dedup`, in the same order: a
    replay gives the results that backtracking would find again, minus repeats.
    """

    __slots__ = ("budget", "cost", "memo", "shape", "spec", "steps", "used")

    def __init__(self, spec: Spec, shape: tuple[Any, ...], n_cands: int) -> None:
        self.spec = spec
        self.cost = spec._step_cost
        self.shape = shape
        self.steps = 0
        # A few plain passes over the spec per candidate are always allowed.
        self.budget = STEP_BUDGET + 4 * n_cands * len(spec._step_cost)
        self.used = spec._used_after  # None: not memoised (a spec with `{...}` values)
        # state -> [the candidate it was solved for, its results, the bindings they add]
        self.memo: dict[tuple[Any, ...], list[Any]] = {}

    def run(self, cands: list[Assignment], scope: Any, out: list[Assignment]) -> None:
        descend = self.descend
        for a in cands:
            descend(0, self.shape, 0, a, scope, out, descend)

    def count(self, steps: int) -> None:
        self.steps += steps
        if self.steps > self.budget:
            raise self.spec.too_ambiguous(self.shape)

    def descend(
        self,
        i: int,
        shape: tuple[Any, ...],
        j: int,
        a: Assignment,
        scope: Any,
        out: list[Assignment],
        descend: Any,
    ) -> None:
        self.count(self.cost[i])
        used = self.used
        if used is None or PENDING in a:  # deferred constraints may read any key
            self.spec._match_from(i, shape, j, a, scope, out, descend)
            return
        key = (i, j, *[a.get(k, _UNKNOWN) for k in used[i]])  # type: ignore[union-attr]
        try:
            done = self.memo.get(key)
        except TypeError:  # an unhashable axis size
            self.spec._match_from(i, shape, j, a, scope, out, descend)
            return
        if done is None:
            found: list[Assignment] = []
            self.spec._match_from(i, shape, j, a, scope, found, descend)
            if len(found) > 1:
                found = list({id(b): b for b in found}.values())  # replays of the same dicts
            self.memo[key] = [a, found, None]
            out.extend(found)
            return
        source, found, added = done
        if not found:
            return
        if source is a or _same(source, a):  # the same results: its dicts again
            self.count(len(found))
            out.extend(found)
            return
        if added is None:
            added = done[2] = _added_bindings(found, source)
            if added is None:  # an unhashable value: solve the state again
                self.spec._match_from(i, shape, j, a, scope, out, descend)
                return
        self.count(len(added))
        out.extend([{**a, **new} if new else a for new in added])


def _same(a: Assignment, b: Assignment) -> bool:
    """The same keys in the same order, bound to the same objects: the same candidate as
    far as any result or message can tell."""
    if len(a) != len(b):
        return False
    for (ka, va), (kb, vb) in zip(a.items(), b.items()):
        if va is not vb or ka != kb:
            return False
    return True


def _added_bindings(found: list[Assignment], a: Assignment) -> list[Assignment] | None:
    """What each of `found` adds to (or changes in) `a`, without repeats; `None` when a
    value is unhashable."""
    seen = set()
    added = []
    for b in found:
        new = {key: v for key, v in b.items() if key not in a or a[key] is not v}
        try:
            frozen = frozenset(new.items())
        except TypeError:
            return None
        if frozen not in seen:
            seen.add(frozen)
            added.append(new)
    return added


def _generate_simple_matcher(spec: Spec) -> Any:
    return generate_function(spec, "match(shape, cands, scope)", (), {})


def generate_function(spec: Spec, signature: str, prelude: tuple[str, ...], namespace: dict[str, Any]) -> Any:
    """Straight-line matching code for a plain spec (names, numbers and `_`: the common case).

    For `"b n 3"` the code unpacks the shape into locals, compares the fixed sizes, then
    looks each name up once in the candidate (one candidate is the usual case and gets
    its own branch). `prelude` lines run first and must bind `shape` (the array checks
    use it to read `.dtype` and `.shape` in the same function). Equivalent to
    `Spec.match`, about twice as fast.
    """
    assert spec.straight_line
    n = spec.ndim
    axes = ", ".join(f"s{i}" for i in range(n)) + ("," if n == 1 else "")
    lines = [f"def {signature}:", *prelude, f"    if len(shape) != {n}:", "        return _NO"]
    if n:
        lines.append(f"    {axes} = shape")
    for i, c in spec.fixed:
        lines += [f"    if s{i} != {c}:", "        return _NO"]
    first: dict[str, int] = {}
    for i, name in spec.named:
        if name in first:  # repeated name: the axes must agree with each other
            lines += [f"    if s{i} != s{first[name]}:", "        return _NO"]
        else:
            first[name] = i

    def bind(indent: str, on_conflict: str) -> list[str]:
        out = [f"{indent}new = None"]
        for name, i in first.items():
            out += [
                f"{indent}got = a.get({name!r})",
                f"{indent}if got is None:",
                f"{indent}    if new is None:",
                f"{indent}        new = {{{name!r}: s{i}}}",
                f"{indent}    else:",
                f"{indent}        new[{name!r}] = s{i}",
                f"{indent}elif got != s{i}:",
                f"{indent}    {on_conflict}",
            ]
        return out

    if not first:
        lines.append("    return cands")
    else:
        lines += [
            "    if len(cands) == 1:",
            "        a = cands[0]",
            "        if PENDING not in a:",
            *bind("            ", "return _NO"),
            "            if new is None:",
            "                return cands",
            "            return [{**a, **new}] if a else [new]",
            "    out = []",
            "    for a in cands:",
            "        if PENDING in a:",
            "            general(0, tuple(shape), 0, a, scope, out)",
            "            continue",
            *bind("        ", "continue"),
            "        if new is None:",
            "            out.append(a)",
            "        else:",
            "            out.append({**a, **new} if a else new)",
            "    return out if len(out) < 2 else dedup(out)",
        ]
    namespace = {**namespace, "_NO": [], "PENDING": PENDING, "general": spec._match_from, "dedup": _dedup}
    exec("\n".join(lines), namespace)  # code built from validated dim names and ints only
    return namespace[signature.split("(")[0]]


def _dedup(cands: list[Assignment]) -> list[Assignment]:
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
