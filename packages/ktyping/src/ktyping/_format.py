"""Printing values, dim values and candidate dim assignments for error messages.

    >>> compact((1, "ab", [2.5, None]))
    "(1, 'ab', [2.5, None])"
    >>> print(format_candidates([{"b": 2, "*batch": (4, 5)}, {"b": 3}]))
     - {b: 2, *batch: (4, 5)}
     - {b: 3}

An array prints as its library, dtype and shape: `compact(np.zeros((2, 3), np.float32))` is
`'np.f32[2 3]'`. Annotations print with `_describe.describe`; why a value fails one is
`_explain.explain`. Loaded with the first error message or repr, not by `import ktyping`.
"""

from __future__ import annotations

from . import _dtypes
from ._spec_tree import PENDING, size_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["candidates_block", "compact", "expr_text", "format_candidates"]

_LIBS = {"numpy": "np", "jax": "jax", "jaxlib": "jax", "torch": "torch", "tensorflow": "tf"}


def compact(value: Any, depth: int = 0) -> str:
    """A short rendering of a value: `np.f32[2 3]`, `jax.i32[4](traced)`, `3`, `'abc'`,
    `(np.f32[2], 3)`; containers show their first few items."""
    try:
        shape = value.shape
        dtype = value.dtype
    except AttributeError:
        if type(value) in (tuple, list, dict):
            if depth < 2:
                return _compact_container(value, depth)
            n = len(value)
            opening, closing = _BRACKETS[type(value)]
            return f"{opening}...{n} item{'' if n == 1 else 's'}{closing}"
        text = size_text(value) if type(value) is int else repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    cls = type(value)
    lib = _LIBS.get(cls.__module__.split(".")[0], cls.__name__)
    dims = " ".join(_text(d) for d in shape) if isinstance(shape, (tuple, list)) else str(shape)
    text = f"{lib}.{_dtypes.short_dtype_name(_dtypes.dtype_name(dtype))}[{dims}]"
    if "Tracer" in cls.__name__:
        text += "(traced)"
    return text


def _text(v: Any) -> str:
    """`str(v)` for a size, shape or dim value, with ints too long to print abbreviated."""
    if type(v) is int:
        return size_text(v)
    if type(v) is tuple:
        inner = ", ".join(size_text(x) if type(x) is int else repr(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return str(v)


_BRACKETS: dict[type, tuple[str, str]] = {tuple: ("(", ")"), list: ("[", "]"), dict: ("{", "}")}


def _compact_container(value: Any, depth: int) -> str:
    items = list(value.items()) if isinstance(value, dict) else list(value)
    shown = items[:4]
    if isinstance(value, dict):
        parts = [f"{k!r}: {compact(v, depth + 1)}" for k, v in shown]
    else:
        parts = [compact(v, depth + 1) for v in shown]
    if len(items) > len(shown):
        parts.append(f"... {len(items) - len(shown)} more")
    body = ", ".join(parts)
    if isinstance(value, dict):
        return "{" + body + "}"
    if isinstance(value, list):
        return "[" + body + "]"
    return "(" + body + ("," if len(items) == 1 else "") + ")"


def format_candidates(cands: list[dict[str, Any]]) -> str:
    """`{b: 2, *batch: (4, 5)}` per candidate, one per line when there are several.

    Tree structures bound by `PyTree[T, "$S"]` follow under `Tree Structures:`, once per key.
    """
    structures: dict[str, list[str]] = {}

    def one(a: dict[str, Any]) -> str:
        items = []
        for k, v in a.items():
            if k == PENDING:
                continue
            if k[:1] == "$":
                shown = structures.setdefault(k, [])
                text = _short(repr(v))
                if text not in shown:
                    shown.append(text)
                continue
            items.append(f"{k}: {_text(v)}")
        for expr, v in a.get(PENDING, ()):
            items.append(f"{expr_text(expr)} = {_text(v)} (unresolved)")
        return "{" + ", ".join(items) + "}"

    text = "\n".join(" - " + one(a) for a in cands)
    if structures:
        text += "\nTree Structures:" + "".join(f"\n  {k}: {' | '.join(v)}" for k, v in structures.items())
    return text


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:197] + "..."


def candidates_block(cands: list[dict[str, Any]]) -> str:
    """The `Dim assignments:` section of an error message (`KTypeCheckError.candidates_block`)."""
    noun = "Dim assignments" if len(cands) <= 1 else f"Dim assignments ({len(cands)} candidates)"
    return f"{noun}:\n{format_candidates(cands)}"


def expr_text(expr: Any) -> str:
    """A spec expression as written: `h*w`, not the fully parenthesised `(h*w)`."""
    text = str(expr)
    return text[1:-1] if type(expr).__name__ == "BinOp" else text
