"""Fused steps: how many updates one compiled call runs, and the stacked batches it takes.

    size = fused_size(trainer.steps_per_call, element_spec, log_metrics_every=100)   # e.g. 64
    n = steps_until_boundary(step, stop=1000, limit=size, is_boundary=lambda s: s % 100 == 0)
    stacked = stack_batches([next(data) for _ in range(n)], size)   # [size, ...] per leaf

Small models are dispatch-bound: one call of K updates (a `lax.scan`) costs about one dispatch. The
Trainer still logs, evaluates and checkpoints at the exact steps asked for: a call ends at the next such
step (a boundary), and a step that must return metrics or summaries runs on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

MAX_STEPS_PER_CALL = 128
# Stacked batches of one call stay within this many bytes when the Trainer chooses the size itself.
STACKED_BYTES_BUDGET = 64 << 20


def batch_bytes(element_spec: Any) -> int:
    """Bytes of one batch of `element_spec`."""
    return sum(int(np.prod(s.shape)) * np.dtype(s.dtype).itemsize for s in jax.tree.leaves(element_spec))


def fused_size(steps_per_call: int | None, element_spec: Any, *, log_metrics_every: int) -> int:
    """The K of the compiled fused call: `steps_per_call` when set; else 1 on CPU, and on accelerators chosen
    from the logging period and the batch size (at most `MAX_STEPS_PER_CALL`, stacked batches within
    `STACKED_BYTES_BUDGET`)."""
    if steps_per_call is not None:
        return int(steps_per_call)
    if jax.default_backend() == "cpu":
        # XLA:CPU runs a scan body slower than the same update jitted on its own (a step there costs ~1 ms,
        # more than the dispatch a fused call saves): measured 0.8x on a 784-128-10 MLP, benchmarks/trainer_bench.py.
        return 1
    by_memory = STACKED_BYTES_BUDGET // max(1, batch_bytes(element_spec))
    return int(max(1, min(MAX_STEPS_PER_CALL, log_metrics_every, by_memory)))


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
