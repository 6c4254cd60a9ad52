"""`kd.data.Pipeline`: the fields and the protocol every pipeline shares.

Usage:

    pipeline = kd.data.InMemoryPipeline(loader=..., batch_size=64, seed=0)
    pipeline.element_spec   # {"x": ShapeDtypeStruct((64, 2), float32), ...}: one host-local batch
    len(pipeline)           # batches over all epochs (Kauldron's; TypeError when endless or unknown)
    pipeline.batches_per_epoch
    it = iter(pipeline)     # a CheckpointableIterator
    it = pipeline.iter_from_state(saved_state)  # resumes exactly where `saved_state` was taken
"""

from __future__ import annotations

import abc
import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, ClassVar

from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.data import _checks, _errors, _hosts, _iterable, _iterator, _order
from kd.data._spec import spec_of

# Where a pipeline keeps the iterator that `element_spec` pulled one batch from, for the next `iter`.
_KEPT_ITERATOR = "_kd_kept_iterator"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Pipeline(_iterable.IterableDataset):
    """Base class of kd pipelines: batches of this host, resumable, with shapes known up front.

    Subclasses implement `_new_iterator()` (and `__len__` when they know it); they do their own
    batching, shuffling and host slicing.

    Attributes:
      batch_size: the global batch size (all hosts together); each host yields `batch_size /
        process_count` rows of it. Must be divisible by the number of processes.
      seed: seeds shuffling and random transforms; defaults to the Trainer's seed
        (`ROOT_CFG_REF.seed`, filled by the Trainer). The same seed gives the same batches.
      num_epochs: passes over the data; None repeats forever.
      process_index, process_count: this host and the number of hosts; None asks JAX
        (`jax.process_index()`, `jax.process_count()`). Set both to simulate one host of many.
    """

    # Kept by the copy the Trainer makes to fill `seed`: the iterator `element_spec` started (its first batch).
    __kd_keep_on_fill__: ClassVar[tuple[str, ...]] = (_KEPT_ITERATOR,)

    batch_size: int | None = None
    seed: int | RootRef = ROOT_CFG_REF.seed
    num_epochs: int | None = None
    process_index: int | None = None
    process_count: int | None = None

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if self.batch_size is not None and not _checks.is_int(self.batch_size, at_least=1):
            raise _errors.BatchSizeError(f"{owner}: batch_size must be an int >= 1; got {self.batch_size!r}")
        if self.num_epochs is not None and not _checks.is_int(self.num_epochs, at_least=1):
            raise ValueError(
                f"{owner}: num_epochs must be an int >= 1 or None (forever); got {self.num_epochs!r}"
            )
        if not isinstance(self.seed, RootRef) and not _checks.is_int(self.seed, at_least=0):
            raise ValueError(f"{owner}: seed must be an int >= 0; got {self.seed!r}")
        if self.process_index is not None or self.process_count is not None:
            index, count = _hosts.current_process(self.process_index, self.process_count)
            _hosts.check_process(index, count)

    # ---- the protocol the Trainer relies on ----

    def __iter__(self) -> _iterator.CheckpointableIterator:
        """A new iterator from the first batch (the one `element_spec` pulled, if it did)."""
        kept = self.__dict__.pop(_KEPT_ITERATOR, None)
        return kept if kept is not None else self._new_iterator()

    def iter_from_state(self, state: Mapping[str, Any]) -> _iterator.CheckpointableIterator:
        """An iterator yielding the batches that followed the point where `state` was taken."""
        iterator = iter(self)
        iterator.set_state(state)
        return iterator

    def __len__(self) -> int:
        """Batches over all `num_epochs` (Kauldron's meaning); TypeError when endless or not known."""
        per_epoch = self.batches_per_epoch
        if self.num_epochs is None:
            raise TypeError(
                f"{type(self).__name__} repeats forever (num_epochs=None), so it has no length; "
                f"an epoch has {per_epoch} batches (batches_per_epoch)"
            )
        return per_epoch * self.num_epochs

    @property
    def batches_per_epoch(self) -> int:
        """Batches of one epoch; TypeError when not known."""
        raise TypeError(f"{type(self).__name__} does not know how many batches an epoch has")

    @functools.cached_property
    def element_spec(self) -> Any:
        """A tree of `jax.ShapeDtypeStruct`: one host-local batch, read once and cached.

        This default pulls the first batch from a new iterator and keeps both for the next `iter`,
        so no batch is made twice and no position moves.
        """
        iterator = self._new_iterator()
        state = iterator.get_state()
        try:
            first = next(iterator)
        except StopIteration:
            raise ValueError(f"{type(self).__name__} yields no batch: it has no element_spec") from None
        self.__dict__[_KEPT_ITERATOR] = _iterator.FirstBatchKept(iterator, first, state)
        return spec_of(first)

    @abc.abstractmethod
    def _new_iterator(self) -> _iterator.CheckpointableIterator:
        """A fresh iterator at the first batch."""

    # ---- helpers for subclasses ----

    @property
    def process(self) -> tuple[int, int]:
        """`(process_index, process_count)` of this host (the fields, or JAX's)."""
        return _hosts.current_process(self.process_index, self.process_count)

    @property
    def host_batch_size(self) -> int:
        """The rows each host yields per (full) batch: `batch_size / process_count`."""
        if self.batch_size is None:
            raise TypeError(f"{type(self).__name__} has no batch_size")
        return _hosts.host_batch_size(self.batch_size, self.process[1], owner=type(self).__name__)

    def _make_epoch_order(
        self, num_examples: int, *, shuffle: bool, drop_remainder: bool
    ) -> _order.EpochOrder:
        """Which examples make each batch of each epoch on this host (shuffled from `seed` per epoch)."""
        process_index, process_count = self.process
        return _order.EpochOrder(
            num_examples=num_examples,
            batch_size=self.batch_size,
            shuffle=shuffle,
            seed=self._seed_for("shuffling") if shuffle else None,
            drop_remainder=drop_remainder,
            process_index=process_index,
            process_count=process_count,
            owner=type(self).__name__,
        )

    def _seed_for(self, purpose: str) -> int:
        """The seed as an int; SeedNotSetError while it is still `ROOT_CFG_REF.seed`."""
        if isinstance(self.seed, RootRef):
            raise _errors.SeedNotSetError(
                f"{type(self).__name__} needs its seed for {purpose} but seed is still {self.seed!r}, "
                "which a Trainer fills with trainer.seed; outside a Trainer pass seed=<int>"
            )
        return int(self.seed)
