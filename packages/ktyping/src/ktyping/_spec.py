"""The shape spec language: parsing `"*b h w c+1"` into dims, once per string.

    >>> spec = parse_spec("*b n n+1")
    >>> spec.match((4, 2, 3), [{}], None)
    [{'*b': (4,), 'n': 2}]

A spec is a whitespace separated list of dims:

- `n` named, `3` fixed, `_` / `_n` anonymous, `#n` / `#3` broadcastable (may be 1),
- `*b` (0 or more axes), `+b` (1 or more), `*_`, `+_`, `...` anonymous, `*#b` broadcastable,
- `t?` optional (0 or 1 axis), `3|4` / `3|c` choices,
- expressions `h*w`, `c+1`, `(c+1)//2`, `min(h,w)`, `prod(*b)`, `2**k`,
- `{self.hidden}`: a Python expression over the call's bound arguments.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["PENDING", "Spec", "parse_spec"]


def parse_spec(source: str) -> Spec:
    """Parses (and caches) a shape spec string; raises `ShapeSpecSyntaxError`.

    The parser is imported on first use: importing ktyping does not compile it.
    """
    try:
        return _SPEC_CACHE[source]
    except KeyError:
        pass
    from ._parser import parse

    if len(_SPEC_CACHE) >= _SPEC_CACHE_SIZE:  # specs built with f-strings could grow it forever
        _SPEC_CACHE.clear()
    spec = _SPEC_CACHE[source] = parse(source)
    return spec


_SPEC_CACHE: dict[str, Spec] = {}
_SPEC_CACHE_SIZE = 4096

# Key of an assignment holding constraints that could not be solved yet:
# a tuple of (expression, axis size) pairs re-checked as more dims get bound.
PENDING = "?pending"

_UNKNOWN: Any = object()
_DEFER: Any = object()
_INF = 1 << 30

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
    "*": lambda x, y: x * y,
    "//": _floordiv,
    "/": _exact_div,
    "%": lambda x, y: x % y,
    "**": lambda x, y: x**y,
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
            return _UNKNOWN

    def solve(self, value: Any, a: Assignment, scope: Any) -> Any:
        x = self.left.evaluate(a, scope)
        y = self.right.evaluate(a, scope)
        if (x is _UNKNOWN) == (y is _UNKNOWN):
            return _DEFER  # both unknown (both known is handled by the caller)
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
            if type(value) is not int or type(known) is not int or known == 0:
                return _DEFER
            if value % known:
                return None
            return other.solve(value // known, a, scope)
        if op == "/":  # exact division
            known = y if y is not _UNKNOWN else x
            if type(value) is not int or type(known) is not int:
                return _DEFER
            if y is not _UNKNOWN:
                return self.left.solve(value * y, a, scope)
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
        out = out * v
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
            from ._errors import KTypeCheckError

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

        from ._errors import KTypeCheckError

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
    """A parsed shape spec. Build with `parse_spec` (cached)."""

    __slots__ = (
        "_max_after",
        "_min_after",
        "dims",
        "fixed",
        "has_pyexpr",
        "matcher",
        "named",
        "ndim",
        "simple",
        "source",
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
        n = len(dims)
        self._min_after = [0] * (n + 1)
        self._max_after = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            self._min_after[i] = self._min_after[i + 1] + dims[i].min_len
            self._max_after[i] = min(_INF, self._max_after[i + 1] + dims[i].max_len)
        self.matcher = _generate_simple_matcher(self) if self.simple else self.match

    def __repr__(self) -> str:
        return f"Spec({self.source!r})"

    def match(self, shape: tuple[Any, ...], cands: list[Assignment], scope: Any) -> list[Assignment]:
        """Every extension of every candidate under which `shape` matches this spec.

        The general algorithm; `matcher` is the same function, generated straight-line
        code for plain specs.
        """
        shape = tuple(shape)
        if not self._min_after[0] <= len(shape) <= self._max_after[0]:
            return []
        out: list[Assignment] = []
        for a in cands:
            self._match_from(0, shape, 0, a, scope, out)
        return out if len(out) < 2 else _dedup(out)

    def _match_from(
        self, i: int, shape: tuple[Any, ...], j: int, a: Assignment, scope: Any, out: list[Assignment]
    ) -> None:
        dims = self.dims
        n = len(shape)
        while i < len(dims):
            d = dims[i]
            rest = n - j
            if rest < self._min_after[i] or rest > self._max_after[i]:
                return
            if isinstance(d, SingleDim):
                if d.min_len == 0:  # optional: try absent, then present
                    self._match_from(i + 1, shape, j, a, scope, out)
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
                    self._match_from(i + 1, shape, j + 1, b, scope, out)
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
                self._match_from(i + 1, shape, j + k, c, scope, out)
            return
        if j == n:
            out.append(a)

    def evaluate_dim(self, d: Dim, a: Assignment, scope: Any) -> Any:
        """The value of one single-axis dim under `a`, or `None` when unknown."""
        if not isinstance(d, SingleDim) or len(d.options) != 1:
            return None
        got = d.options[0].evaluate(a, scope)
        return None if got is _UNKNOWN else got

    def evaluate(self, a: Assignment, scope: Any) -> tuple[Any, ...] | None:
        """The concrete shape this spec describes under `a`; `None` if some dim is unknown."""
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
    assert spec.simple
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
