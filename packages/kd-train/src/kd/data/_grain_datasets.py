"""The grain `MapDataset`s behind `kd.data.GrainPipeline` (this module imports grain: load it lazily).

Usage:

    examples = OrderedExamples(source, order=order, num_epochs=2)  # element g: position g of all epochs
    batches = HostBatches(examples, order=order, num_epochs=2)     # element t: this host's rows of batch t
"""

from __future__ import annotations

import sys
from typing import Any

import grain
import jax
import numpy as np

from kd.data import _order


def _length(per_epoch: int, num_epochs: int | None) -> int:
    return sys.maxsize if num_epochs is None else per_epoch * num_epochs  # grain's `repeat()` convention


class OrderedExamples(grain.MapDataset):
    """All epochs' examples one after the other, each epoch in its `EpochOrder`.

    Element `g` is position `g % examples_per_epoch` of epoch `g // examples_per_epoch`, so random
    transforms applied after it (seeded by `g`) differ between epochs and between hosts.
    """

    def __init__(self, parent: grain.MapDataset, *, order: _order.EpochOrder, num_epochs: int | None) -> None:
        super().__init__(parent)
        self._order = order
        self._length = _length(order.examples_per_epoch, num_epochs)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.slice(index)
        epoch, position = divmod(index, self._order.examples_per_epoch)
        return self._parent[self._order.example_index(epoch, position)]

    def __str__(self) -> str:
        return f"OrderedExamples(examples_per_epoch={self._order.examples_per_epoch}, length={self._length})"


class HostBatches(grain.MapDataset):
    """Element `t`: this host's rows of global batch `t` (batches never straddle two epochs), stacked."""

    def __init__(self, parent: OrderedExamples, *, order: _order.EpochOrder, num_epochs: int | None) -> None:
        super().__init__(parent)
        self._order = order
        self._length = _length(order.batches_per_epoch, num_epochs)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.slice(index)
        epoch, batch = divmod(index, self._order.batches_per_epoch)
        offset = epoch * self._order.examples_per_epoch
        positions = self._order.host_positions(batch)
        if not positions:  # A last batch too small to give this host a row: an empty batch, same structure.
            return jax.tree.map(
                lambda x: np.stack([x])[:0], self._parent[offset + batch * self._order.batch_size]
            )
        examples = [self._parent[offset + position] for position in positions]
        return jax.tree.map(lambda *leaves: np.stack(leaves), *examples)

    def __str__(self) -> str:
        return f"HostBatches(batches_per_epoch={self._order.batches_per_epoch}, length={self._length})"
