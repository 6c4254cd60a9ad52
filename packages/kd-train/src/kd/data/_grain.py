"""`kd.data.GrainPipeline`: a grain data source, batched and resumable from grain's own iterator state.

    pipeline = kd.data.GrainPipeline(source=my_array_record_source, batch_size=64, seed=0,
                                     transforms=[Decode(), RandomCrop()])

grain is an optional dependency (`pip install kd-train[grain]`), imported on first use.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kd.data import _base, _iterator, _order

if TYPE_CHECKING:
    import grain


def import_grain() -> Any:
    """grain, or an ImportError saying which extra to install."""
    try:
        import grain
    except ImportError as e:
        raise ImportError(
            "kd.data.GrainPipeline needs grain, which is not installed: pip install 'kd-train[grain]'"
        ) from e
    return grain


@dataclasses.dataclass(frozen=True, kw_only=True)
class GrainPipeline(_base.Pipeline):
    """Examples from a grain source, in `InMemoryPipeline`'s order, transformed and batched by grain.

    Epoch `e` visits the source in Kauldron's order (`np.arange(n)` shuffled by `np.random.Philox(key=seed).jumped(e)`)
    (in order without `shuffle`): over the same examples and seed, the batches equal
    `InMemoryPipeline`'s. Transforms run per example, on this host's rows only; a random transform
    is seeded by the example's global position (differs across epochs and hosts). Batches never
    straddle two epochs.

    `iter(pipeline)` is grain's `DatasetIterator`: its state is grain's own (`{"next_index": t}`:
    `t` batches consumed), and `set_state` jumps there at no cost (random access).

    Attributes:
      source: a `grain.MapDataset` (finite), or a random-access data source (`__len__` and
        `__getitem__`: a grain `RandomAccessDataSource`, a list of examples).
      shuffle: reshuffle every epoch (deterministically from `seed` and the epoch number).
      drop_remainder: drop the last batch of an epoch when it would be smaller than `batch_size`.
      transforms: applied per example in order: `grain.transforms.Map` (or a plain function of the
        example) and `grain.transforms.RandomMap` (or a `RandomMapTransform`).
      read_options: `grain.ReadOptions` for grain's read threads; None reads in the calling thread
        without prefetch (deterministic, light; Kauldron's default too).
    """

    source: Any
    batch_size: int
    shuffle: bool = True
    drop_remainder: bool = True
    transforms: Sequence[Any] = ()
    read_options: object | None = None  # a grain.ReadOptions (grain is optional: not imported to annotate)

    @functools.cached_property
    def _source_dataset(self) -> grain.MapDataset:
        grain = import_grain()
        if isinstance(self.source, grain.MapDataset):
            return self.source
        if isinstance(self.source, grain.IterDataset):
            raise TypeError(
                "GrainPipeline: source must support random access (a grain.MapDataset or a data source "
                "with __len__ and __getitem__); got a grain.IterDataset"
            )
        if not (hasattr(self.source, "__len__") and hasattr(self.source, "__getitem__")):
            raise TypeError(
                "GrainPipeline: source must be a grain.MapDataset or a random-access data source "
                f"(__len__ and __getitem__); got {type(self.source).__name__}"
            )
        return grain.MapDataset.source(self.source)

    @functools.cached_property
    def _epoch_order(self) -> _order.EpochOrder:
        """Which examples make each batch of each epoch on this host."""
        return self._make_epoch_order(
            len(self._source_dataset), shuffle=self.shuffle, drop_remainder=self.drop_remainder
        )

    @functools.cached_property
    def dataset(self) -> grain.MapDataset:
        """This host's batches as one grain `MapDataset` (`dataset[t]` is batch t)."""
        from kd.data import _grain_datasets  # Imports grain: only once grain is known to be there.

        grain = import_grain()
        examples = _grain_datasets.OrderedExamples(
            self._source_dataset, order=self._epoch_order, num_epochs=self.num_epochs
        )
        for position, transform in enumerate(self.transforms):
            if isinstance(transform, grain.transforms.Filter):
                raise TypeError(
                    f"GrainPipeline: transforms[{position}] is a Filter, which would change the number of "
                    "examples of each batch; filter the source instead"
                )
            if isinstance(transform, grain.transforms.RandomMap) or _is_random_map(transform):
                examples = examples.random_map(transform, seed=self._transform_seed(position))
            elif isinstance(transform, grain.transforms.Map) or callable(transform):
                examples = examples.map(transform)
            else:
                raise TypeError(
                    f"GrainPipeline: transforms[{position}] must be a grain Map or RandomMap transform or a "
                    f"function of an example; got {type(transform).__name__}"
                )
        return _grain_datasets.HostBatches(examples, order=self._epoch_order, num_epochs=self.num_epochs)

    @property
    def batches_per_epoch(self) -> int:
        """Batches of one epoch."""
        return self._epoch_order.batches_per_epoch

    def _new_iterator(self) -> _iterator.CheckpointableIterator:
        grain = import_grain()
        read_options = self.read_options
        if read_options is None:
            read_options = grain.ReadOptions(num_threads=0, prefetch_buffer_size=0)
        return iter(self.dataset.to_iter_dataset(read_options))

    def _transform_seed(self, position: int) -> int:
        seed = self._seed_for(f"transforms[{position}]")
        return int(np.random.SeedSequence([seed, position]).generate_state(1)[0])


def _is_random_map(transform: Any) -> bool:
    # Kauldron's and grain's older `RandomMapTransform` spell it as a `random_map` method.
    return callable(getattr(transform, "random_map", None))
