"""Which examples make up each batch of each epoch, on this host: the order InMemory and Grain share.

    order = EpochOrder(num_examples=10, batch_size=4, shuffle=True, seed=0, drop_remainder=True,
                       process_index=0, process_count=2, owner="InMemoryPipeline")
    order.batches_per_epoch          # 2
    order.host_indices(epoch=0, index=1)  # this host's 2 example indices of global batch 1 of epoch 0

Epoch `e` is Kauldron's order: `np.arange(n)` shuffled by a Philox generator keyed by `seed` and
jumped `e` times (the identity without shuffle), cut into global batches of `batch_size`; host i
takes rows [i*b/n, (i+1)*b/n) of each. A run ported from Kauldron sees the same batches.
Any position is computed from `(epoch, index)` alone, which is what makes a two-int state enough.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from kd.data import _errors, _hosts


@dataclasses.dataclass(frozen=True, kw_only=True)
class EpochOrder:
    """The batches of every epoch, as positions into the epoch's order and as example indices."""

    num_examples: int
    batch_size: int
    shuffle: bool
    seed: int | None
    drop_remainder: bool
    process_index: int
    process_count: int
    owner: str = "pipeline"

    def __post_init__(self) -> None:
        _hosts.host_batch_size(self.batch_size, self.process_count, owner=self.owner)
        if self.batches_per_epoch == 0:
            raise _errors.BatchSizeError(
                f"{self.owner}: batch_size={self.batch_size} is larger than the data set "
                f"({self.num_examples} examples) and drop_remainder=True, so no batch would be yielded; "
                f"use batch_size <= {self.num_examples} or drop_remainder=False"
            )

    @property
    def batches_per_epoch(self) -> int:
        full, rest = divmod(self.num_examples, self.batch_size)
        return full + (1 if rest and not self.drop_remainder else 0)

    @property
    def examples_per_epoch(self) -> int:
        """The examples an epoch uses: all of them, less the remainder that `drop_remainder` drops."""
        if self.drop_remainder:
            return self.num_examples - self.num_examples % self.batch_size
        return self.num_examples

    def host_positions(self, index: int) -> range:
        """Positions in the epoch's order of this host's rows of global batch `index`."""
        start = index * self.batch_size
        rows = _hosts.host_rows(
            min(self.batch_size, self.num_examples - start),
            process_index=self.process_index,
            process_count=self.process_count,
        )
        return range(start + rows.start, start + rows.stop)

    def example_indices(self, epoch: int, positions: range | np.ndarray) -> np.ndarray:
        """The example indices at `positions` of epoch `epoch`'s order."""
        positions = np.asarray(positions, dtype=np.int64)
        if not self.shuffle:
            return positions
        assert self.seed is not None, "a shuffling EpochOrder is built with a seed"
        return _permutation(self.num_examples, self.seed, epoch)[positions]

    def example_index(self, epoch: int, position: int) -> int:
        """The example index at `position` of epoch `epoch`'s order."""
        if not self.shuffle:
            return position
        assert self.seed is not None, "a shuffling EpochOrder is built with a seed"
        return int(_permutation(self.num_examples, self.seed, epoch)[position])

    def host_indices(self, epoch: int, index: int) -> np.ndarray:
        """The example indices of this host's rows of batch `index` of epoch `epoch`."""
        return self.example_indices(epoch, self.host_positions(index))


@functools.lru_cache(maxsize=4)
def _permutation(num_examples: int, seed: int, epoch: int) -> np.ndarray:
    # Cached: every batch of an epoch reads the same permutation (threads too: lru_cache is safe there).
    # Kauldron's sampler (`BatchedIndexSampler`): the same seed gives the same order as there.
    generator = np.random.Generator(np.random.Philox(key=seed).jumped(epoch))
    permutation = np.arange(num_examples)
    generator.shuffle(permutation)
    permutation.flags.writeable = False
    return permutation
