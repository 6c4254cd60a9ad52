"""How batches reach the compiled step: copied from the host per call, or gathered from examples on the device.

    feed, size = make_feed(data, sharding=trainer.sharding, element_spec=spec, steps_per_call=None, period=100)
    batch = feed.next_batch(step)                    # one step's input
    taken, inputs = feed.next_group(step, 7, size=size)   # a fused call's: 7 batches (padded to `size`)
    state, losses = trainstep.fused_steps(state, inputs, taken, source=feed.source)

`HostFeed` (any pipeline) hands the host batches to the call, which copies them to the devices; a fused call
gets them stacked (a batch of other shapes, like an epoch's short last batch, runs on its own). `DeviceRowsFeed`
(an iterator that is a `kd.data.RowsIterator`, e.g. `InMemoryPipeline`'s, on one device, examples within
`device_budget()`) places every example on the device once; a call, fused or single, then gets only the row
indices of its batches and gathers them there, so no batch is copied per step. Both move the iterator alike:
its saved position is the same either way.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from kd._phase import during
from kd.data import RowsIterator
from kd.runtime import ConfigError
from kd.train._plan import MAX_STEPS_PER_CALL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from kd._interfaces import PyTree
    from kd.sharding import ShardingStrategy

# Stacked batches of one call stay within this many bytes when the Trainer chooses the size itself. On CPU
# smaller: a larger buffer is a fresh mapping each call, whose page faults cost more than the fused dispatch
# saves (a 40 MB stack: ~25 ms to fill, ~30 ms more for the call to copy).
STACKED_BYTES_BUDGET = 64 << 20
CPU_STACKED_BYTES_BUDGET = 8 << 20
# Examples are kept on a CPU "device" within this many bytes: there they are a second copy in host memory.
CPU_RESIDENT_BYTES = 256 << 20
# On an accelerator, within this fraction of its memory (the rest is the model's and XLA's).
ACCELERATOR_RESIDENT_FRACTION = 1 / 8
# Single updates in a row take their rows from one block of this many updates' rows (one host-to-device copy).
ROWS_BLOCK = 128


def device_budget() -> int:
    """Bytes of examples a `DeviceRowsFeed` may place on the (single) device."""
    memory = device_memory()
    return int(memory[0] * ACCELERATOR_RESIDENT_FRACTION) if memory else CPU_RESIDENT_BYTES


def device_memory() -> tuple[int, int] | None:
    """`(bytes_limit, bytes_in_use)` of the first device; None on a CPU or a backend that does not say."""
    device = jax.devices()[0]
    stats = (device.memory_stats() if device.platform != "cpu" else None) or {}
    limit = stats.get("bytes_limit")
    return (int(limit), int(stats.get("bytes_in_use", 0))) if limit else None


class HostFeed:
    """Batches as the iterator yields them; the call copies them to the devices (split per `sharding`)."""

    source = None

    def __init__(self, data: Iterator[PyTree], *, sharding: ShardingStrategy, element_spec: PyTree) -> None:
        self._data = data
        self._sharding = sharding
        self._shapes = _leaf_shapes(element_spec)
        self._pending: PyTree | None = None  # a batch pulled for a group that it could not join
        self.bytes_per_batch = batch_bytes(element_spec)

    def next_batch(self, step: int) -> PyTree:
        return self._sharding.step_input(self._pull(step))

    def next_group(self, step: int, num_steps: int, *, size: int) -> tuple[int, PyTree | None]:
        """`(taken, stacked)`: up to `num_steps` batches stacked on a new first axis, padded to `size` (the
        padding is not trained on). A batch of other shapes than `element_spec` (an epoch's short last batch)
        cannot be stacked: the group ends before it (`taken < num_steps`; `stacked` None when `taken` is 0)
        and it is the next `next_batch`."""
        batches = self._pull_group(step, num_steps)
        if not batches:
            return 0, None
        return len(batches), stacked_input(self._sharding, stack_batches(batches, size))

    def next_group_and_singles(
        self, step: int, num_steps: int, *, size: int
    ) -> tuple[int, PyTree | None, list[PyTree]]:
        """`next_group`'s `(taken, stacked)` and the same batches one per update, as `next_batch` gives them
        (to check a grouped call against single updates from the same batches)."""
        batches = self._pull_group(step, num_steps)
        if not batches:
            return 0, None, []
        stacked = stacked_input(self._sharding, stack_batches(batches, size))
        return len(batches), stacked, [self._sharding.step_input(batch) for batch in batches]

    def _pull_group(self, step: int, num_steps: int) -> list[PyTree]:
        """Up to `num_steps` batches of `element_spec`'s shapes (one of others is kept for `next_batch`)."""
        batches: list[PyTree] = []
        while len(batches) < num_steps:
            with during(f"training, step {step + len(batches) + 1}"):  # a crash in the data names its update
                batch = self._pull(step + len(batches))
            if _leaf_shapes(batch) != self._shapes:
                self._pending = batch
                break
            batches.append(batch)
        return batches

    def _pull(self, step: int) -> PyTree:
        if self._pending is not None:
            batch, self._pending = self._pending, None
            return batch
        return next_batch(self._data, step)


class DeviceRowsFeed:
    """Every example on the device (`source`); a fused call gets the rows of its batches (`int32[size, rows]`),
    a single step the rows of its batch (`int32[rows]`), or single steps in a row a block holding the rows of
    up to `ROWS_BLOCK` of them (one transfer), and gathers each batch there."""

    def __init__(self, data: RowsIterator) -> None:
        self._data = data
        self.source = jax.device_put(data.examples)

    def next_batch(self, step: int) -> np.ndarray:
        return _next_rows(self._data, step).astype(np.int32, copy=False)

    def next_block(self, step: int, num_steps: int) -> jax.Array:
        """The rows of updates `step .. step + num_steps - 1` (at most `ROWS_BLOCK`) in one `int32[ROWS_BLOCK,
        rows]` block on the device, update s's at `s % ROWS_BLOCK` (`TrainStep.step` picks them there)."""
        return _block(step, [_next_rows(self._data, step + i) for i in range(num_steps)])

    def next_group(self, step: int, num_steps: int, *, size: int) -> tuple[int, np.ndarray]:
        """`(num_steps, rows)`: every batch is full (`gather_on_device`), so all `num_steps` are taken."""
        return num_steps, _stacked_rows([_next_rows(self._data, step + i) for i in range(num_steps)], size)

    def next_group_and_singles(
        self, step: int, num_steps: int, *, size: int
    ) -> tuple[int, np.ndarray, list[jax.Array]]:
        """`next_group`'s `(taken, rows)` and, per update, the block single updates read the same rows from
        (one block for all of them, as `next_block` gives it)."""
        rows = [_next_rows(self._data, step + i) for i in range(num_steps)]
        return num_steps, _stacked_rows(rows, size), [_block(step, rows)] * num_steps


def _block(step: int, rows: list[np.ndarray]) -> jax.Array:
    """The rows of updates `step ..` in one `int32[ROWS_BLOCK, rows]` block on the device, update s's at
    `s % ROWS_BLOCK`."""
    block = np.empty((ROWS_BLOCK, *np.shape(rows[0])), np.int32)
    block[:] = rows[-1]  # padding: never trained on
    for i, taken in enumerate(rows):
        block[(step + i) % ROWS_BLOCK] = taken
    return jax.device_put(block)


def _stacked_rows(rows: list[np.ndarray], size: int) -> np.ndarray:
    """The rows of a group's batches stacked (`int32[size, rows]`), padded with the last (never trained on)."""
    rows = rows + [rows[-1]] * (size - len(rows))
    return np.stack(rows).astype(np.int32, copy=False)


def make_feed(
    data: Iterator[PyTree],
    *,
    sharding: ShardingStrategy,
    element_spec: PyTree,
    steps_per_call: int | None,
    period: int,
    logging_step_inside: bool = True,
) -> tuple[HostFeed | DeviceRowsFeed, int]:
    """`(feed, updates per call)`: `DeviceRowsFeed` where it applies (one device and one process, a
    `RowsIterator` that allows it, examples within `device_budget()`), else `HostFeed`; the size from
    `fused_size` (`period`: the logging period). On several devices a batch sharding that is not a
    NamedSharding cannot be stacked: the chosen size is then 1."""
    size = functools.partial(
        fused_size, steps_per_call, period=period, logging_step_inside=logging_step_inside
    )
    if (
        jax.device_count() == 1
        and isinstance(data, RowsIterator)
        and data.gather_on_device
        and _fits(data.examples)
    ):
        return DeviceRowsFeed(data), size(bytes_per_batch=None)
    feed = HostFeed(data, sharding=sharding, element_spec=element_spec)
    if steps_per_call is None and not stacks_batches(sharding):
        return feed, 1
    return feed, size(bytes_per_batch=feed.bytes_per_batch)


def batch_bytes(element_spec: PyTree) -> int:
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


def stack_batches(batches: list[PyTree], size: int) -> PyTree:
    """The batches stacked on a new first axis, padded to `size` with the last one (padding is not trained on)."""
    padded = list(batches) + [batches[-1]] * (size - len(batches))

    def stack(*leaves: np.ndarray | jax.Array) -> np.ndarray | jax.Array:
        if all(isinstance(leaf, np.ndarray) for leaf in leaves):
            return np.stack(leaves)
        return jnp.stack([jnp.asarray(leaf) for leaf in leaves])

    return jax.tree.map(stack, *padded)


def stacks_batches(strategy: ShardingStrategy) -> bool:
    """Whether fused calls can take stacked batches under a `ShardingStrategy`: on one device always, on
    several with a NamedSharding batch (the stack is split like one batch, along its second axis)."""
    return jax.device_count() == 1 or isinstance(strategy.batch_sharding, NamedSharding)


def stacked_input(strategy: ShardingStrategy, stacked: PyTree) -> PyTree:
    """What a fused call should receive: batches stacked on a new first axis, each split like one batch."""
    if jax.device_count() == 1:
        if jax.devices()[0].platform == "cpu":
            return stacked  # the call copies host arrays itself, cheaper than device_put on CPU
        return jax.device_put(stacked)  # starts the transfer now, while the previous call runs
    sharding = strategy.batch_sharding
    if not isinstance(sharding, NamedSharding):
        raise ValueError(
            f"ShardingStrategy.batch={strategy.batch!r}: fused steps need a NamedSharding for batches on "
            "several devices; set Trainer.steps_per_call=1"
        )
    stacked_sharding = NamedSharding(sharding.mesh, PartitionSpec(None, *sharding.spec))
    if jax.process_count() == 1:
        return jax.device_put(stacked, stacked_sharding)
    return jax.tree.map(
        lambda x: jax.make_array_from_process_local_data(stacked_sharding, np.asarray(x)), stacked
    )


def next_batch(data: Iterator[PyTree], step: int) -> PyTree:
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


def _leaf_shapes(batch: PyTree) -> tuple[tuple[int, ...], ...]:
    """The shapes of a batch's arrays, in order: batches that agree on them stack (the spec's dtype and
    container type need not match a batch's)."""
    return tuple(np.shape(x) for x in jax.tree.leaves(batch))


def _fits(examples: PyTree) -> bool:
    """Whether the examples fit `device_budget()`, and their rows int32 indices."""
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(examples)]
    return (
        bool(leaves) and leaves[0].shape[0] < 2**31 and sum(leaf.nbytes for leaf in leaves) <= device_budget()
    )
