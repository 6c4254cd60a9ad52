"""Numbers and tables as text for a person: sizes, FLOPs and counts in short units, columns lined up, and the
arrays of a tree described (shape and dtype, values and bytes counted, leaves grouped by module).

    human_bytes(19240) == "18.8 KB"; human_flops(1_230_000) == "1.23 MFLOP"; human_count(2500) == "2.5 K"
    print("\n".join(aligned([("Name", "Size"), ("params", "18.8 KB")])))
    shape_dtype(np.zeros((2, 3), np.float32)) == "(2, 3) float32"; counted(1, "devices") == "1 device"
    leaves_by_module({"dense0": {"bias": b, "kernel": k}}) == {"dense0": [("bias", b), ("kernel", k)]}

Shared by `kd.runtime.parameter_table` (the table a run prints and keeps in params.txt) and `kd.inspect`'s
reports (`kd-train inspect`, `show_trainer_info`). Works on arrays and on `jax.ShapeDtypeStruct` alike.
"""

from __future__ import annotations

import math

import kontext
import numpy as np

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

ROOT_MODULE = "(root)"
"""The module name of a leaf that sits at the top of its tree (`leaves_by_module`)."""


def human_bytes(n: float) -> str:
    """`human_bytes(19240) == "18.8 KB"` (1 KB = 1024 bytes)."""
    return _human(n, 1024, ("B", "KB", "MB", "GB", "TB", "PB"), exact_first=True)


def human_flops(n: float) -> str:
    """`human_flops(1_230_000) == "1.23 MFLOP"`."""
    return _human(n, 1000, ("FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"))


def human_count(n: float) -> str:
    """`human_count(2500) == "2.5 K"`."""
    return _human(n, 1000, ("", "K", "M", "G", "T", "P")).rstrip()


def _human(n: float, base: int, units: Sequence[str], exact_first: bool = False) -> str:
    if exact_first and abs(n) < base:
        return f"{int(n)} {units[0]}"
    value, unit = float(n), units[0]
    for unit in units:
        if abs(value) < 999.5 or unit == units[-1]:
            break
        value /= base
    return f"{value:.3g} {unit}"


def aligned(rows: Sequence[tuple[str, ...]], right: Sequence[int] = ()) -> list[str]:
    """Rows as lines with each column padded to its widest cell (columns in `right` right-aligned)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def counted(n: int, plural: str) -> str:
    """`counted(1, "devices") == "1 device"`, `counted(1200, "devices") == "1,200 devices"`."""
    return f"{n:,} {plural.removesuffix('s') if n == 1 else plural}"


# ---------------------------------------------------------------------------------------------- arrays


def leaves_by_module(tree: object, prefix: str = "") -> dict[str, list[tuple[str, object]]]:
    """`{module path: [(last key, leaf), ...]}` in the tree's order (paths start with `prefix`). A module is a
    leaf's path without its last key (`dense0` for `dense0.kernel`); top-level leaves are under `ROOT_MODULE`."""
    modules: dict[str, list[tuple[str, object]]] = {}
    for text, leaf in kontext.flatten_with_path(tree, prefix=prefix).items():
        path = kontext.Path.from_str(text)
        module = str(path[:-1]) if len(path) > 1 else ROOT_MODULE
        modules.setdefault(module, []).append((str(path[-1:]), leaf))  # `kernel`, `[0]`, `['a.b']`
    return modules


def shape_dtype(leaf: object) -> str:
    """`(2, 3) float32` for an array (or a `jax.ShapeDtypeStruct`), `() int32` for a number; else its type."""
    if leaf is None:
        return "None"
    if not hasattr(leaf, "shape") and not isinstance(leaf, (int, float, complex, bool, np.generic)):
        return type(leaf).__name__
    return f"{tuple(np.shape(leaf))} {dtype_text(leaf)}"


def dtype_text(leaf: object) -> str:
    """The leaf's dtype as numpy names it (`float32`, `bfloat16`, `key<fry>`)."""
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:
        dtype = np.asarray(leaf).dtype if leaf is not None else None
    return str(dtype)


def value_count(leaves: Iterable[object]) -> int:
    """How many numbers the array leaves hold (a scalar counts one; other leaves none)."""
    return sum(math.prod(np.shape(leaf)) for leaf in leaves if _is_array(leaf))


def byte_count(leaves: Iterable[object]) -> int:
    """How many bytes the array leaves hold."""
    return sum(math.prod(np.shape(leaf)) * itemsize(leaf) for leaf in leaves if _is_array(leaf))


def itemsize(leaf: object) -> int:
    """Bytes per value of the leaf's dtype (a JAX extended dtype's own itemsize, 0 when it has none)."""
    dtype = getattr(leaf, "dtype", None)
    try:
        return np.dtype(dtype).itemsize if dtype is not None else np.asarray(leaf).dtype.itemsize
    except TypeError:  # a JAX extended dtype (PRNG keys): its own itemsize when it has one
        return int(getattr(dtype, "itemsize", 0) or 0)


def _is_array(leaf: object) -> bool:
    return hasattr(leaf, "shape") or isinstance(leaf, (int, float, complex, bool, np.generic))
