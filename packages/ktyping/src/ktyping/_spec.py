"""`Spec`: a parsed shape spec, the root of its tree, ready to be matched and evaluated.

    >>> from ktyping._spec_cache import parse_spec
    >>> spec = parse_spec("*b n n+1")
    >>> spec.match((4, 2, 3), [{}], None)
    [{'*b': (4,), 'n': 2}]
    >>> spec.evaluate({"*b": (4,), "n": 2}, None)
    (4, 2, 3)

The dims come from `_spec_tree`; `_parser` builds a `Spec` from text and
`_spec_cache.parse_spec` parses each string once. A spec is matched by its `DimSearch`
(`_dim_search`), or by straight-line code (`_codegen`) when it is plain.
"""

from __future__ import annotations

from ._codegen import MAX_GENERATED_DIMS, generate_function
from ._dim_search import DimSearch
from ._errors import KTypeCheckError, ValueTooLargeError
from ._spec_tree import UNKNOWN, Const, Name, SingleDim, VariadicDim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._spec_tree import Assignment, Dim

__all__ = ["Spec"]


class Spec:
    """A parsed shape spec. Build with `_spec_cache.parse_spec` (cached)."""

    __slots__ = (
        "dims",
        "fixed",
        "has_pyexpr",
        "matcher",
        "named",
        "ndim",
        "search",
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
        self.search = DimSearch(source, dims, has_pyexpr)
        # Generated code grows with the spec: a spec of thousands of dims is matched by the
        # general algorithm instead.
        self.straight_line = self.simple and len(dims) <= MAX_GENERATED_DIMS
        self.matcher = (
            self.generate("match(shape, cands, scope)", (), {}) if self.straight_line else self.search.match
        )

    def __repr__(self) -> str:
        return f"Spec({self.source!r})"

    def match(self, shape: tuple[Any, ...], cands: list[Assignment], scope: Any) -> list[Assignment]:
        """Every extension of every candidate under which `shape` matches this spec.

        The general algorithm (`DimSearch.match`); `matcher` is the same function,
        generated straight-line code for plain specs. Raises `KTypeCheckError` when the
        spec splits `shape` in too many ways to try or a value is beyond `MAX_VALUE`.
        """
        return self.search.match(shape, cands, scope)

    def generate(self, signature: str, prelude: tuple[str, ...], namespace: dict[str, Any]) -> Any:
        """Straight-line code matching this plain spec, after `prelude` (`_codegen.generate_function`)."""
        return generate_function(self, signature, prelude, namespace)

    def evaluate_dim(self, d: Dim, a: Assignment, scope: Any) -> Any:
        """The value of one single-axis dim under `a`, or `None` when unknown."""
        if not isinstance(d, SingleDim) or len(d.options) != 1:
            return None
        got = d.options[0].evaluate(a, scope)
        return None if got is UNKNOWN else got

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
            if got is UNKNOWN:
                if d.min_len == 0:
                    continue
                return None
            out.append(got)
        return tuple(out)
