"""Numbers and tables as text for a person: sizes, FLOPs and counts in short units, columns lined up.

    human_bytes(19240) == "18.8 KB"; human_flops(1_230_000) == "1.23 MFLOP"; human_count(2500) == "2.5 K"
    print("\n".join(aligned([("Name", "Size"), ("params", "18.8 KB")])))

Shared by `kd.train`'s reports (`kd-train inspect`) and `kd.inspect.show_trainer_info`. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


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
