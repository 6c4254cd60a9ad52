"""`get_batch_stats`: a batch at a glance, one row of numbers per leaf (Kauldron's `kd.inspect` function).

    rows = kd.train.get_batch_stats(next(iter(trainer.train_ds)))  # [{"Name": "batch.image", "Min": 0.0, ...}]

Also `kd.inspect.get_batch_stats`; here, below the Trainer, so `kd-train inspect` and the Trainer can use it.
"""

from __future__ import annotations

from typing import Any

import kontext
import numpy as np


class BatchStats(list):
    """The rows of `get_batch_stats` (a list of dicts), also read by column as Kauldron's DataFrame is:
    `stats["Name"]` is the list of names, `stats.columns` the column names."""

    columns = ("Name", "Dtype", "Shape", "Min", "Max", "Mean", "StdDev")

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            if key not in self.columns:
                raise KeyError(
                    f"get_batch_stats has no column {key!r}; the columns: {', '.join(self.columns)}"
                )
            return [row[key] for row in self]
        return super().__getitem__(key)


def get_batch_stats(batch: Any) -> BatchStats:
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

        def stat(fn: Any, values: Any = values) -> Any:
            return float(fn(values)) if values is not None else "-"

        rows.append(
            {
                "Name": f"batch.{path}",
                "Dtype": str(array.dtype),
                "Shape": tuple(array.shape),
                "Min": stat(np.min),
                "Max": stat(np.max),
                "Mean": stat(np.mean),
                "StdDev": stat(np.std),
            }
        )
    return rows
