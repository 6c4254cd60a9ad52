"""How batches reach the compiled step: copied from the host per call, or gathered from examples on the device.

    feed, size = make_feed(data, sharding=trainer.sharding, element_spec=spec, steps_per_call=None, period=100)
    batch = feed.next_batch(step)                    # one step's input
    inputs = feed.next_group(step, 7, size=size)     # a fused call's: 7 batches (padded to `size`)
    state, losses = trainstep.fused_steps(state, inputs, 7, source=feed.source)

`HostFeed` (any pipeline) hands the host batches to the call, which copies them to the devices; a fused call
gets them stacked. `DeviceRowsFeed` (an iterator that is a `kd.data.RowsIterator`, e.g. `InMemoryPipeline`'s,
on one device, examples within `device_budget()`) places every example on the device once; a fused call
then gets only the row indices of its batches and gathers them there, so no batch is copied per step. Both
move the iterator alike: its saved position is the same either way.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from kd.data._iterator import RowsIterator
from kd.train._errors import ConfigError
from kd.train._fusing import batch_bytes, fused_size, stack_batches

# Examples are kept on a CPU "device" within this many bytes: there they are a second copy in host memory.
CPU_RESIDENT_BYTES = 256 << 20
# On an accelerator, within this fraction of its memory (the rest is the model's and XLA's).
ACCELERATOR_RESIDENT_FRACTION = 1 / 8


def device_budget() -> int:
    """Bytes of examples a `DeviceRowsFeed` may place on the (single) device."""
    device = jax.devices()[0]
    if device.platform == "cpu":
        return CPU_RESIDENT_BYTES
    stats = device.memory_stats() or {}
    limit = stats.get("bytes_limit")
    return int(limit * ACCELERATOR_RESIDENT_FRACTION) if limit else CPU_RESIDENT_BYTES


class HostFeed:
    """Batches as the iterator yields them; the call copies them to the devices (split per `sharding`)."""

    source = None

    def __init__(self, data: Any, *, sharding: Any, element_spec: Any) -> None:
        self._data = data
        self._sharding = sharding
        self.bytes_per_batch = batch_bytes(element_spec)

    def next_batch(self, step: int) -> Any:
        return self._sharding.step_input(next_batch(self._data, step))

    def next_group(self, step: int, num_steps: int, *, size: int) -> Any:
        """`num_steps` batches stacked on a new first axis, padded to `size` (the padding is not trained on)."""
        batches = [next_batch(self._data, step + i) for i in range(num_steps)]
        return self._sharding.step_inputs(stack_batches(batches, size))


class DeviceRowsFeed:
    """Every example on the device (`source`); a fused call gets the rows of its batches (`int32[size, rows]`)
    and gathers each batch there. A single step still gets the host batch (the call copies it)."""

    def __init__(self, data: RowsIterator) -> None:
        self._data = data
        self.source = jax.device_put(data.examples)

    def next_batch(self, step: int) -> Any:
        return next_batch(self._data, step)

    def next_group(self, step: int, num_steps: int, *, size: int) -> np.ndarray:
        rows = [_next_rows(self._data, step + i) for i in range(num_steps)]
        rows += [rows[-1]] * (size - num_steps)  # padding: never trained on
        return np.stack(rows).astype(np.int32, copy=False)


def make_feed(
    data: Any, *, sharding: Any, element_spec: Any, steps_per_call: int | None, period: int
) -> tuple[HostFeed | DeviceRowsFeed, int]:
    """`(feed, updates per call)`: `DeviceRowsFeed` where it applies (fused calls, one device and one process,
    a `RowsIterator` with full batches whose examples fit `device_budget()`), else `HostFeed`; the size from
    `fused_size` (`period`: the logging period)."""
    size = fused_size(steps_per_call, period=period, bytes_per_batch=None)
    if (
        size > 1
        and jax.device_count() == 1
        and isinstance(data, RowsIterator)
        and data.full_batches
        and _fits(data.examples)
    ):
        return DeviceRowsFeed(data), size
    feed = HostFeed(data, sharding=sharding, element_spec=element_spec)
    return feed, fused_size(steps_per_call, period=period, bytes_per_batch=feed.bytes_per_batch)


def next_batch(data: Any, step: int) -> Any:
    """The iterator's next batch; a ConfigError naming the step when it has run out."""
    try:
        return next(data)
    except StopIteration:
        raise _ran_out(step) from None


def _next_rows(data: RowsIterator, step: int) -> np.ndarray:
    try:
        return data.next_rows()
    except StopIteration:
        raise _ran_out(step) from None


def _ran_out(step: int) -> ConfigError:
    return ConfigError(
        f"Trainer.train_ds ran out of batches after {step} steps; give it more epochs (num_epochs=None "
        "repeats forever) or lower num_train_steps."
    )


def _fits(examples: Any) -> bool:
    """Whether the examples fit `device_budget()`, and their rows int32 indices."""
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(examples)]
    return (
        bool(leaves) and leaves[0].shape[0] < 2**31 and sum(leaf.nbytes for leaf in leaves) <= device_budget()
    )
