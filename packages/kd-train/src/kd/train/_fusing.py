"""Fused steps: how many updates one compiled call runs, and the stacked batches it takes.

    size = fused_size(trainer.steps_per_call, period=100, bytes_per_batch=4096)   # 100
    n = steps_until_boundary(step, stop=1000, limit=size, is_boundary=lambda s: s % 100 == 0)
    stacked = stack_batches([next(data) for _ in range(n)], size)   # [size, ...] per leaf

Small models are dispatch-bound: one call of K updates (a loop compiled once) costs about one dispatch. The
Trainer still logs, evaluates and checkpoints at the exact steps asked for: a call ends at the next such
step (a boundary), and a step that must return metrics or summaries runs on its own (a logging step that
logs only losses is the last update of its call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

MAX_STEPS_PER_CALL = 128
# Stacked batches of one call stay within this many bytes when the Trainer chooses the size itself. On CPU
# smaller: a larger buffer is a fresh mapping each call, whose page faults cost more than the fused dispatch
# saves (a 40 MB stack: ~25 ms to fill, ~30 ms more for the call to copy).
STACKED_BYTES_BUDGET = 64 << 20
CPU_STACKED_BYTES_BUDGET = 8 << 20
# Once an update's time is known (from a logging window), a call runs at most about this long.
CALL_SECONDS = 2.0


def batch_bytes(element_spec: Any) -> int:
    """Bytes of one batch of `element_spec`."""
    return sum(int(np.prod(s.shape)) * np.dtype(s.dtype).itemsize for s in jax.tree.leaves(element_spec))


def fused_size(
    steps_per_call: int | None, *, period: int, bytes_per_batch: int | None, logging_step_inside: bool = True
) -> int:
    """The K of the compiled fused call: `steps_per_call` when set; else chosen so that the updates of one
    logging period take as few calls as the limits allow, split evenly (100 -> one call of 100; 1000 -> 8 calls
    of 125). With `logging_step_inside=False` (a logging step returns metrics, so it runs on its own) the
    period's other `period - 1` updates are split instead. The limits: `MAX_STEPS_PER_CALL`, and with
    `bytes_per_batch` (host batches stacked per call; None when a call gets row indices only) the stacked
    bytes budget."""
    if steps_per_call is not None:
        return int(steps_per_call)
    limit = MAX_STEPS_PER_CALL
    if bytes_per_batch is not None:
        budget = CPU_STACKED_BYTES_BUDGET if jax.default_backend() == "cpu" else STACKED_BYTES_BUDGET
        limit = min(limit, budget // max(1, bytes_per_batch))
    updates = period if logging_step_inside else period - 1
    if limit <= 1 or updates <= 1:
        return 1
    calls = -(-updates // limit)
    return -(-updates // calls)


def time_capped(size: int, seconds_per_update: float | None) -> int:
    """At most `size` updates, and no more than take about `CALL_SECONDS` (at `seconds_per_update`, measured
    over the last logging window): the loop sees a SIGTERM, and the progress bar moves, between calls, so a
    model whose update takes seconds gets short calls (fusing buys it nothing anyway)."""
    if not seconds_per_update or seconds_per_update <= 0:
        return size
    return max(1, min(size, int(CALL_SECONDS / seconds_per_update)))


def steps_until_boundary(step: int, *, stop: int, limit: int, is_boundary: Callable[[int], bool]) -> int:
    """How many steps the next call group runs from `step`: up to and including the first boundary step
    (or `stop`), at most `limit`."""
    for n in range(1, limit + 1):
        if step + n >= stop or is_boundary(step + n):
            return n
    return limit


def stack_batches(batches: Sequence[Any], size: int) -> Any:
    """The batches stacked on a new first axis, padded to `size` with the last one (padding is not trained on)."""
    padded = list(batches) + [batches[-1]] * (size - len(batches))

    def stack(*leaves: Any) -> Any:
        if all(isinstance(leaf, np.ndarray) for leaf in leaves):
            return np.stack(leaves)
        return jnp.stack([jnp.asarray(leaf) for leaf in leaves])

    return jax.tree.map(stack, *padded)
