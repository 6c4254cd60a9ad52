"""Which host this process is, and which rows of a global batch it takes.

Usage:

    rows = host_rows(8, process_index=1, process_count=4)  # slice(2, 4)
"""

from __future__ import annotations

import jax

from kd.data import _errors


def current_process(process_index: int | None, process_count: int | None) -> tuple[int, int]:
    """`(process_index, process_count)`: the given pair, or JAX's when they are None."""
    if process_index is None and process_count is None:
        return jax.process_index(), jax.process_count()
    if process_index is None or process_count is None:
        raise ValueError(
            "process_index and process_count go together: give both (to simulate a host) or neither "
            f"(to ask JAX); got process_index={process_index!r}, process_count={process_count!r}"
        )
    return process_index, process_count


def check_process(process_index: int, process_count: int) -> None:
    """Raises ValueError unless `0 <= process_index < process_count`."""
    if not (isinstance(process_count, int) and process_count >= 1):
        raise ValueError(f"process_count must be an int >= 1; got {process_count!r}")
    if not (isinstance(process_index, int) and 0 <= process_index < process_count):
        raise ValueError(f"process_index must be an int in [0, {process_count}); got {process_index!r}")


def host_batch_size(batch_size: int, process_count: int, *, owner: str) -> int:
    """The rows of a global batch of `batch_size` that each of `process_count` hosts takes."""
    if batch_size % process_count:
        raise _errors.BatchSizeError(
            f"{owner}: batch_size={batch_size} is the global batch size and must be divisible by the "
            f"number of processes ({process_count}); use a multiple of {process_count}"
        )
    return batch_size // process_count


def host_rows(num_rows: int, *, process_index: int, process_count: int) -> slice:
    """Host i's rows `[i * num_rows // n, (i + 1) * num_rows // n)` of a batch of `num_rows` rows.

    Exact thirds, quarters, ... when `num_rows` is divisible by `n` (every full batch); a smaller last
    batch (`drop_remainder=False`) is split as evenly as its rows allow.
    """
    return slice(process_index * num_rows // process_count, (process_index + 1) * num_rows // process_count)
