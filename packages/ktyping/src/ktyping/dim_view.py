"""Kauldron's `ktyping.dim_view`: `DimView(scope)`, one scope's dims by name, and `dim`, the active scope's.

    with ktyping.typechecked():
        ktyping.check_type(np.zeros((2, 3)), Float["b n"])
        dims = dim_view.DimView(scope.get_current_scope(nested_ok=True))
        dims["n"], "b" in dims                    # (3, True)
        str(dims)                                 # 'dims = {\\n   b: 2\\n   n: 3\\n}\\n'

`DimView(scope)` is ktyping's dim view (`_dims.DimView`, what `scope.dim` returns) built from a scope as
Kauldron builds it: reading, setting an unbound dim, `in`, refusing `del`, and the errors are ktyping's
(`KeyError`, `AmbiguousDimensionError`, and `DimAssignmentError`, a `ValueError` as Kauldron raises).
What it adds is Kauldron's `str`: the dims every candidate agrees on under `dims = {...}`, the others under
`ambiguous_dims = {...}`, tree structures (`$S`) left out; a `jax.export` symbolic size prints as `&B`, an
unknown one as `#`. `dim` is `ktyping.dim`: the same object, whose `str` stays ktyping's.
"""

from __future__ import annotations

from ._dims import DimView as _ScopeDims
from ._dims import to_public
from ._in_scope import dim as dim
from ._spec_tree import UnknownDim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._scope import Scope

__all__ = ["DimView", "dim"]

_UNBOUND = "-"


class DimView(_ScopeDims):
    """The dims of `scope`: `DimView(scope)["n"]`, `DimView(scope)["*b"] = (2, 3)`, `"n" in DimView(scope)`."""

    __slots__ = ("scope",)

    def __init__(self, scope: Scope) -> None:
        super().__init__(lambda: scope.cands, lambda cands: setattr(scope, "cands", cands))
        self.scope = scope

    def __str__(self) -> str:
        candidates = [to_public(a) for a in self.scope.cands]
        names = {name: None for a in candidates for name in a if name[:1] != "$"}
        agreed: list[tuple[str, Any]] = []
        ambiguous: list[tuple[str, list[Any]]] = []
        for name in names:
            values = [a.get(name) for a in candidates]
            # Compared as printed, since an unknown size (`UnknownDim`) equals every size.
            printed = {_UNBOUND if v is None else _format_dim_value(v) for v in values}
            if len(printed) == 1 and _UNBOUND not in printed:
                agreed.append((name, values[0]))
            else:
                ambiguous.append((name, values))
        width = min(max((len(n) + 1 for n in names), default=1), 8)
        text = "dims = {\n" + "".join(
            f"  {_label(name, [value], width)}: {_format_dim_value(value)}\n" for name, value in agreed
        )
        text += "}\n"
        if ambiguous:
            text += "ambiguous_dims = {\n"
            for name, values in ambiguous:
                shown = " | ".join(_UNBOUND if v is None else _format_dim_value(v) for v in values)
                text += f"  {_label(name, values, width)}: {shown}\n"
            text += "}\n"
        return text


def _label(name: str, values: list[Any], width: int) -> str:
    """The dim's name right-aligned to `width`, `*name` when it has other than one axis."""
    several = any(v is not None and len(v) != 1 for v in values)
    return ("*" + name if several else name).rjust(width)


def _format_dim_value(value: tuple[Any, ...]) -> str:
    """A dim's axes as Kauldron writes them: `128`, `(&B, 128)`, `#` for an unknown size, `&B + 1` for a
    symbolic one."""
    shown = [_format_size(v) for v in value]
    return shown[0] if len(shown) == 1 else f"({', '.join(shown)})"


def _format_size(size: Any) -> str:
    if type(size) is UnknownDim:
        size = size.value
    if size is None:
        return "#"
    if hasattr(type(size), "__index__"):
        return str(int(size))
    return f"&{size}"
