"""Matching a shape against a spec's dims: every assignment under which the shape fits.

    >>> from ktyping._spec_cache import parse_spec
    >>> parse_spec("*b n n+1").search.match((4, 2, 3), [{}], None)
    [{'*b': (4,), 'n': 2}]

`DimSearch.match_from` walks the dims left to right, binding names and solving expressions
axis by axis (`match_axis`), and branches where a dim can take several ways: a variadic,
optional or `|` dim. Specs that branch a lot are matched by `_MemoisedRun`, which solves
each state once and counts its steps. Plain specs skip all this: `_codegen` writes them
straight-line code.
"""

from __future__ import annotations

from ._errors import KTypeCheckError, ValueTooLargeError
from ._spec_tree import (
    DEFER,
    INF,
    PENDING,
    UNKNOWN,
    BinOp,
    Call,
    Dim,
    Name,
    Neg,
    SingleDim,
    VariadicDim,
    VarRef,
    dedup,
    size_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ._spec_tree import Assignment, Expr

    Axes = tuple[Any, ...]
    Found = list[Assignment]
    # How `match_from` takes a branch: itself, or `_MemoisedRun.descend`; called with
    # the arguments of `match_from`, this function last.
    Descend = Callable[..., None]

__all__ = ["STEP_BUDGET", "DimSearch", "match_axis"]

# Specs with two or more branching dims (variadic, optional, `|`) are matched by plain
# backtracking while it has at most this many paths; past that by `_MemoisedRun`.
_PLAIN_PATHS = 10_000

# The most steps `_MemoisedRun` takes for one match before it gives up with
# `DimSearch.too_ambiguous`: a fraction of a second. Real specs take tens of steps.
STEP_BUDGET = 100_000

# A spec whose dims after a branch use more keys than this is not memoised (the memo key
# of each visit would cost as much as the visit).
_MAX_MEMO_KEYS = 32


def match_axis(d: SingleDim, v: Any, a: Assignment, scope: Any, out: Found) -> None:
    """Appends to `out` every extension of `a` in which dim `d` equals axis size `v`."""
    if not d.options or (d.broadcast and v == 1):
        out.append(a)
        return
    for expr in d.options:
        got = expr.evaluate(a, scope)
        if got is not UNKNOWN:
            if got == v:  # a broadcastable axis of size 1 was accepted above
                out.append(a)
            continue
        new = expr.solve(v, a, scope)
        if new is None:
            continue
        if new is DEFER:
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


def _recheck_pending(a: Assignment, scope: Any) -> Assignment | None:
    """Re-evaluates deferred constraints; drops those now satisfied, `None` if one fails."""
    keep = []
    for expr, v in a[PENDING]:
        got = expr.evaluate(a, scope)
        if got is UNKNOWN:
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


class DimSearch:
    """How to match a shape against one spec's dims, worked out once per spec (`Spec.search`)."""

    __slots__ = ("_branching", "dims", "max_after", "min_after", "source", "step_cost", "used_after")

    def __init__(self, source: str, dims: tuple[Dim, ...], has_pyexpr: bool) -> None:
        self.source = source
        # `dims` with each run of anonymous variadics merged into one (`... *_ +_` takes the
        # same axes as one `+_`): the same matches without the ways of splitting axes among
        # dims that bind nothing.
        dims = self.dims = _merge_anonymous_variadics(dims)
        n = len(dims)
        self.min_after = [0] * (n + 1)
        self.max_after = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.min_after[i] = self.min_after[i + 1] + dims[i].min_len
            self.max_after[i] = min(INF, self.max_after[i + 1] + dims[i].max_len)
        self._branching = _branching(dims)
        self.used_after: list[tuple[str, ...] | None] | None = None
        self.step_cost: list[int] = []
        if self._branching is not None:
            if not has_pyexpr:  # `{...}` values are not memoised
                self.used_after = _keys_used_after(dims)
            self.step_cost = _step_costs(dims, self.used_after)

    def match(self, shape: tuple[Any, ...], cands: list[Assignment], scope: Any) -> list[Assignment]:
        """Every extension of every candidate under which `shape` matches the dims.

        Raises `KTypeCheckError` when the dims split `shape` in too many ways to try
        (`_MemoisedRun`) or a value is beyond `MAX_VALUE`.
        """
        shape = tuple(shape)
        if not self.min_after[0] <= len(shape) <= self.max_after[0]:
            return []
        out: list[Assignment] = []
        try:
            if self._branching is None or _few_paths(self._branching, len(cands), len(shape)):
                match_from = self.match_from
                for a in cands:
                    match_from(0, shape, 0, a, scope, out, match_from)
            else:
                _MemoisedRun(self, shape, len(cands)).run(cands, scope, out)
        except ValueTooLargeError as e:
            raise KTypeCheckError(f"shape spec {self.source!r}: {e} (dim values are axis sizes)") from None
        except RecursionError:  # one level per variadic or optional dim on the path
            raise self.too_ambiguous(
                shape, "more variadic, optional and '|' dims than fit the stack"
            ) from None
        return out if len(out) < 2 else dedup(out)

    def match_from(
        self,
        i: int,
        shape: Axes,
        j: int,
        a: Assignment,
        scope: Any,
        out: Found,
        descend: Descend | None = None,
    ) -> None:
        """Appends to `out` the extensions of `a` matching `shape[j:]` to the dims from `i` on.

        `descend` is called (with the same arguments) for each branch: this method, or
        `_MemoisedRun.descend`, which memoises and counts.
        """
        if descend is None:
            descend = self.match_from
        dims = self.dims
        n = len(shape)
        while i < len(dims):
            d = dims[i]
            rest = n - j
            if rest < self.min_after[i] or rest > self.max_after[i]:
                return
            if isinstance(d, SingleDim):
                if d.min_len == 0:  # optional: try absent, then present
                    descend(i + 1, shape, j, a, scope, out, descend)
                    if rest == 0:
                        return
                if d.max_len == 1 and len(d.options) == 1 and not d.broadcast and d.min_len == 1:
                    got = d.options[0].evaluate(a, scope)
                    if got is not UNKNOWN:
                        if got != shape[j]:
                            return
                        i += 1
                        j += 1
                        continue
                nexts: list[Assignment] = []
                match_axis(d, shape[j], a, scope, nexts)
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
            for k in self._lengths(d, i, rest):  # a branch per number of axes it takes
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

    def _lengths(self, d: VariadicDim, i: int, rest: int) -> range:
        """The numbers of axes that `d = dims[i]`, a variadic dim not bound yet, can take of the `rest` left:
        each that leaves the dims after it enough, fewest first (all of them when `d` is the last dim).
        """
        lo = d.min_len
        hi = rest - self.min_after[i + 1]
        if i + 1 == len(self.dims):
            lo = max(lo, rest)
        return range(lo, hi + 1)

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
    """The work of one `_MemoisedRun` visit at each position: the dims walked up to the next
    branch, and the keys read for the memo."""
    costs = [1] * (len(dims) + 1)
    walk = 0
    for i in range(len(dims) - 1, -1, -1):
        walk = 1 if _is_branching(dims[i]) else walk + 1
        costs[i] = walk + (len(used[i] or ()) if used is not None else 0)
    return costs


class _MemoisedRun:
    """One match by `DimSearch.match_from`, memoised and counted, for specs that branch a lot.

    The matches of the dims from `i` on against `shape[j:]` depend only on `i`, `j` and
    the values the candidate gives to the keys those dims use (`DimSearch.used_after[i]`).
    Each such state is solved once; a later visit replays its results: the same dicts
    for the same candidate (`_same`), else the bindings they added, applied to the new one.
    Every visit and replayed result is a step; past `STEP_BUDGET` steps the match raises
    `DimSearch.too_ambiguous`.

    The results are those of plain backtracking after `dedup`, in the same order: a
    replay gives the results that backtracking would find again, minus repeats.
    """

    __slots__ = ("budget", "cost", "memo", "search", "shape", "steps", "used")

    def __init__(self, search: DimSearch, shape: tuple[Any, ...], n_cands: int) -> None:
        self.search = search
        self.cost = search.step_cost
        self.shape = shape
        self.steps = 0
        # A few plain passes over the spec per candidate are always allowed.
        self.budget = STEP_BUDGET + 4 * n_cands * len(search.step_cost)
        self.used = search.used_after  # None: not memoised (a spec with `{...}` values)
        # state -> [the candidate it was solved for, its results, the bindings they add]
        self.memo: dict[tuple[Any, ...], list[Any]] = {}

    def run(self, cands: list[Assignment], scope: Any, out: list[Assignment]) -> None:
        descend = self.descend
        for a in cands:
            descend(0, self.shape, 0, a, scope, out, descend)

    def count(self, steps: int) -> None:
        self.steps += steps
        if self.steps > self.budget:
            raise self.search.too_ambiguous(self.shape)

    def descend(
        self, i: int, shape: Axes, j: int, a: Assignment, scope: Any, out: Found, descend: Descend
    ) -> None:
        """`match_from`, memoised and counted: the `descend` of each branch of this run."""
        self.count(self.cost[i])
        used = self.used
        if used is None or PENDING in a:  # deferred constraints may read any key
            self.search.match_from(i, shape, j, a, scope, out, descend)
            return
        key = (i, j, *[a.get(k, UNKNOWN) for k in used[i]])  # type: ignore[union-attr]
        try:
            done = self.memo.get(key)
        except TypeError:  # an unhashable axis size
            self.search.match_from(i, shape, j, a, scope, out, descend)
            return
        if done is None:
            found: list[Assignment] = []
            self.search.match_from(i, shape, j, a, scope, found, descend)
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
                self.search.match_from(i, shape, j, a, scope, out, descend)
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
