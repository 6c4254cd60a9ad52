"""A batch at a glance: `get_batch_stats`, one row of numbers per leaf (Kauldron's `kd.inspect.get_batch_stats`).

    rows = get_batch_stats(next(iter(trainer.train_ds)))   # [{"Name": "batch.image", "Min": 0.0, ...}, ...]
    rows["Mean"]                                           # a column, as Kauldron's DataFrame reads

In kd.runtime (not kd.inspect) so that kd.train lists it too, as kd has from the start.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import SupportsIndex, overload

import kontext
import numpy as np

from kd._interfaces import PyTree

Cell = str | tuple[int, ...] | float
"""A value in a `get_batch_stats` row: a name, a dtype, a shape, a number (`"-"` for a leaf that is not numeric)."""
Row = dict[str, Cell]
"""One row of `get_batch_stats`: `{"Name": ..., "Dtype": ..., "Shape": ..., "Min": ..., ...}`."""

class BatchStats(list[Row]):
    """The rows of `get_batch_stats` (a list of dicts), also read by column as Kauldron's DataFrame is:
    `stats["Name"]` is the list of names, `stats.columns` the column names."""

    columns = ("Name", "Dtype", "Shape", "Min", "Max", "Mean", "StdDev")

    @overload
    def __getitem__(self, key: SupportsIndex) -> Row: ...

    @overload
    def __getitem__(self, key: slice) -> list[Row]: ...

    @overload
    def __getitem__(self, key: str) -> list[Cell]: ...

    def __getitem__(self, key: SupportsIndex | slice | str) -> Row | list[Row] | list[Cell]:
        if isinstance(key, str):
            if key not in self.columns:
                by_lower = {column.lower(): column for column in self.columns}
                near = by_lower.get(key.lower()) or next(iter(difflib.get_close_matches(key, self.columns, n=1)), None)
                hint = f"; did you mean {near!r}?" if near else ""
                raise KeyError(
                    f"get_batch_stats has no column {key!r}{hint} The columns: {', '.join(self.columns)}"
                )
            return [row[key] for row in self]
        return super().__getitem__(key)


def get_batch_stats(batch: PyTree) -> BatchStats:
    """One row per leaf: `Name` (`batch.<path>`), `Dtype`, `Shape`, `Min`, `Max`, `Mean`, `StdDev`.

    Usage: `get_batch_stats(batch)[0]["Mean"]`. The numbers are Python floats for numeric leaves (integers and
    floats) and `"-"` for the others (booleans, strings). Rows come in the batch's flattened order;
    `get_batch_stats(batch)["Mean"]` reads a column (the list of every row's value).
    """
    rows = BatchStats()
    for path, value in kontext.flatten_with_path(batch).items():
        array = np.asarray(value)
        numeric = array.dtype.kind in "iuf" or str(array.dtype) == "bfloat16"
        values = array.astype(np.float64) if numeric and array.size else None

        def stat(fn: Callable[[np.ndarray], np.floating], values: np.ndarray | None = values) -> float | str:
            return float(fn(values)) if values is not None else "-"

        row: Row = {
            "Name": f"batch.{path}",
            "Dtype": str(array.dtype),
            "Shape": tuple(array.shape),
            "Min": stat(np.min),
            "Max": stat(np.max),
            "Mean": stat(np.mean),
            "StdDev": stat(np.std),
        }
        rows.append(row)
    return rows
