"""Reading and setting the dims of a scope by name (`dim["b"]`), and candidates as Kauldron writes them.

    >>> view = DimView(lambda: [{"b": 2, "*batch": (4, 5)}], None)
    >>> view["b"], view["*batch"], "batch" in view, "n" in view
    (2, (4, 5), True, False)

A scope stores a single dim as `{"b": 2}` and a variadic one as `{"*batch": (4, 5)}`. Kauldron's
public form (`ShapeScope.candidates`) gives every dim as a tuple under its bare name:
`{"b": (2,), "batch": (4, 5)}`; `to_public` / `from_public` convert. Structure keys (`"$S"`, bound
by `PyTree[T, "$S"]`) are kept as they are in both.
"""

from __future__ import annotations

from ._errors import AmbiguousDimensionError, DimAssignmentError
from ._spec_tree import PENDING, UnknownDim, is_symbolic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    Assignment = dict[str, Any]

__all__ = ["DimView", "from_public", "lookup", "plain", "to_public"]

_MISSING: Any = object()


def to_public(a: Assignment) -> Assignment:
    """`{"b": 2, "*batch": (4, 5)}` -> `{"b": (2,), "batch": (4, 5)}` (what `ShapeScope.candidates` gives)."""
    out: Assignment = {}
    for key, value in a.items():
        if key == PENDING:
            continue
        if key[0] == "*":
            out[key[1:]] = tuple(value)
        elif key[0] == "$":
            out[key] = value
        else:
            out[key] = (value,)
    return out


def from_public(a: Any) -> Assignment:
    """The inverse of `to_public`: a 1-tuple becomes a single dim; ints are accepted as they are.

    Raises `TypeError` for a key that is not a non-empty string.
    """
    out: Assignment = {}
    for key, value in dict(a).items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"candidate dim names must be non-empty strings, got {key!r} in {a!r}")
        if key[0] == "$":
            out[key] = value
            continue
        starred = key[0] in "*+"
        name = key.lstrip("*+#")
        sizes = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        bad = [v for v in sizes if not _is_size(v) and type(v) is not UnknownDim]
        if bad or not name:
            raise TypeError(
                f"candidate dim {key!r} = {value!r}: a dim value is an int or a tuple of ints"
                + (f" ({bad[0]!r} is a {type(bad[0]).__name__})" if bad else "")
            )
        if isinstance(value, (tuple, list)):
            value = tuple(value)
            if len(value) == 1 and not starred:
                out[name] = value[0]
            else:
                out["*" + name] = value
        else:
            out[name] = value
    return out


def _value(a: Assignment, base: str) -> Any:
    """The dim's axes under `a` as a tuple, whichever way it is stored, or `_MISSING`."""
    if base in a:
        return (a[base],)
    return a.get("*" + base, _MISSING)


def lookup(cands: list[Assignment], name: str) -> Any:
    """`dim[name]`: an int for `"b"`, a tuple for `"*b"` / `"+b"`; the same in every candidate.

    Raises `KeyError` (unbound), `AmbiguousDimensionError` (candidates disagree, or bind it in
    some only) and `DimAssignmentError` (a multi-axis dim read as `"b"`, an empty one as `"+b"`).
    """
    kind, base = _split(name)
    values = [_value(a, base) for a in cands]
    present = [v for v in values if v is not _MISSING]
    if not present:
        raise KeyError(_unknown(cands, base))
    first = present[0]
    if len(present) < len(values) or any(v != first for v in present[1:]):
        shown = sorted({_show(v) for v in present}) + (["<unbound>"] if len(present) < len(values) else [])
        raise AmbiguousDimensionError(
            f"Dimension {base!r} is ambiguous within the current scope: the {len(cands)} candidate "
            f"assignments give {', '.join(shown)}"
        )
    if kind == "":
        if len(first) != 1:
            raise DimAssignmentError(
                f"dim {base!r} has {len(first)} axes {_show(first)}: read it as dim['*{base}'] "
                "(a single dim must have length 1)"
            )
        return plain(first[0])
    if kind == "+" and not first:
        raise DimAssignmentError(f"dim '+{base}' must have at least one axis, it has none")
    return tuple(plain(v) for v in first)


def plain(v: Any) -> Any:
    """A dim value as given: an axis of unknown size is the `None` or symbolic dim it was read from."""
    return v.value if type(v) is UnknownDim else v


def _show(v: tuple[Any, ...]) -> str:
    return str(v[0]) if len(v) == 1 else str(v)


def _unknown(cands: list[Assignment], base: str) -> str:
    import difflib

    known = sorted({k.lstrip("*") for a in cands for k in a if k != PENDING and k[0] != "$"})
    near = difflib.get_close_matches(base, known, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"Unknown dimension: {base} (bound in the active scope: {', '.join(known) or 'none'}){hint}"


def _split(name: Any) -> tuple[str, str]:
    if not isinstance(name, str) or not name.lstrip("*+"):
        raise KeyError(f"a dim name is a non-empty string such as 'b' or '*batch', got {name!r}")
    if name[0] in "*+":
        return name[0], name[1:]
    return "", name


def _is_size(value: Any) -> bool:
    if type(value) is int:
        return True
    if isinstance(value, (bool, float, complex, str, bytes)) or value is None:
        return False
    return hasattr(type(value), "__index__") or is_symbolic(value)


def assign(cands: list[Assignment], name: str, value: Any) -> list[Assignment]:
    """`dim[name] = value`: the candidates with the new dim; it must be unbound in all of them."""
    kind, base = _split(name)
    if kind == "":
        if not _is_size(value):
            raise DimAssignmentError(
                f"a single dim ({base!r}) must be assigned an int, got {value!r}"
                + (f"; for several axes write dim['*{base}']" if isinstance(value, (tuple, list)) else "")
            )
        key = base
    else:
        if not isinstance(value, tuple) or not all(_is_size(v) for v in value):
            raise DimAssignmentError(
                f"a multi-axis dim ('{kind}{base}') must be assigned a tuple of ints, got {value!r}"
            )
        if kind == "+" and not value:
            raise DimAssignmentError(f"dim '+{base}' must be assigned a non-empty tuple, got ()")
        key = "*" + base
    current = [v for v in (_value(a, base) for a in cands) if v is not _MISSING]
    if current:
        shown = ", ".join(sorted({_show(v) for v in current}))
        raise DimAssignmentError(
            f"Dimension {base!r} already exists in some candidates with values {shown}. Cannot be changed."
        )
    return [{**a, key: value} for a in cands]


class DimView:
    """`dim["n"]`, `dim["*b"] = (2, 3)`, `"n" in dim`: the dims of one scope (or of the active one).

    `get_cands` returns the candidate list; `set_cands` stores a new one (None: read-only).
    Deleting a dim is refused (`TypeError`): dims are bound by checks, not removed.
    """

    __slots__ = ("_get", "_set")

    def __init__(
        self, get_cands: Callable[[], list[Assignment]], set_cands: Callable[[list], None] | None
    ) -> None:
        self._get = get_cands
        self._set = set_cands

    def __getitem__(self, name: str) -> Any:
        return lookup(self._get(), name)

    def __setitem__(self, name: str, value: Any) -> None:
        new = assign(self._get(), name, value)
        if self._set is None:
            raise TypeError("this dim view is read-only")
        self._set(new)

    def __delitem__(self, name: str) -> None:
        raise TypeError(f"Deleting dimensions is not supported (tried to delete {name!r}): dims stay bound")

    def __contains__(self, name: str) -> bool:
        """True when the dim is bound in every candidate."""
        _, base = _split(name)
        cands = self._get()
        return bool(cands) and all(_value(a, base) is not _MISSING for a in cands)

    def __iter__(self) -> Iterator[str]:
        return iter(names(self._get()))

    def __repr__(self) -> str:
        from ._format import format_candidates

        try:
            cands = self._get()
        except Exception:
            return "dims = <no active scope>"
        if len(cands) == 1:
            body = "".join(f"  {k}: {v}\n" for k, v in cands[0].items() if k != PENDING)
            return "dims = {\n" + body + "}"
        return "dims (candidates):\n" + format_candidates(cands)


def names(cands: Iterable[Assignment]) -> list[str]:
    """The dim keys bound in any candidate, in order of first appearance."""
    seen: dict[str, None] = {}
    for a in cands:
        for k in a:
            if k != PENDING:
                seen[k] = None
    return list(seen)
