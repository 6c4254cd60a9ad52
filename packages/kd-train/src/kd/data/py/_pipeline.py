"""`kd.data.py.PyGrainPipeline`: Kauldron's grain pipeline (a source, transforms, a batch size, workers).

Usage:

    ds = kd.data.py.DataSource(my_source, shuffle=True, batch_size=64, num_workers=0,
                               transforms=[kd.data.ValueRange(key="image", vrange=(0, 1))])
    it = iter(ds)               # a kd.data.iters.PyGrainIterator
    state = it.get_state()      # grain's state, saved with the Trainer's checkpoints

How a pipeline is built (Kauldron's order, so the same seed gives Kauldron's examples): a key
`fold_in_str(PRNGKey(seed), "kmix")` seeds `ds_with_transforms` (the source for this process, shuffled,
then the transforms, each random one seeded by grain from the dataset's seed and the element's index),
then `repeat(num_epochs)`, then grain's iterator, batched per host (batches run across epoch ends), and
with `num_workers > 0` made in that many worker processes.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import os
import sys
from collections.abc import Callable
from typing import Any

import grain
import jax

from kd import random as kd_random
from kd._root_ref import RootRef
from kd.data import _base, _checks, _errors, _example_transforms, _iters
from kd.data.py import _apply


class DropRemainder(enum.StrEnum):
    """What to do with a last batch smaller than the batch size (`True` is DROP, `False` is KEEP).

    Attributes:
      DROP: leave it out.
      KEEP: yield it smaller.
      PAD: pad it with zeros to the batch size.
    """

    DROP = enum.auto()
    KEEP = enum.auto()
    PAD = enum.auto()


@dataclasses.dataclass(frozen=True, kw_only=True)
class PyGrainPipeline(_base.Pipeline):
    """The base of grain pipelines: subclasses define `ds_for_current_process(rng)`.

    Attributes:
      transforms: applied to each example in order (a list, or a dict whose values are applied in
        order): kd.data transforms, grain transforms, `SliceDataset`, or functions of an example.
      num_epochs: passes over the data; None repeats forever.
      batch_drop_remainder: a `DropRemainder` (or its name), True (DROP) or False (KEEP).
      num_workers: processes making batches (0: in this process). Kauldron's default, 16; in a
        notebook it is 0.
      read_options: `grain.ReadOptions` for the read threads; None reads in the calling thread.
      enable_profiling: profile worker 0 (grain's option).
      per_worker_buffer_size: batches each worker makes ahead.
      shard_by_process: each process reads its own `1/process_count` of the examples.
      worker_init_fn: called as `fn(worker_index, worker_count)` in each worker at its start.
    """

    transforms: Any = ()
    batch_drop_remainder: bool | str | DropRemainder = True
    num_workers: int = 16
    read_options: grain.ReadOptions | None = None
    enable_profiling: bool = False
    per_worker_buffer_size: int = 1
    shard_by_process: bool = True
    worker_init_fn: Callable[[int, int], None] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "batch_drop_remainder", _drop_remainder(self.batch_drop_remainder))
        owner = type(self).__name__
        _example_transforms.transform_list(self.transforms, owner=owner)  # A list or a dict, checked now.
        if not _checks.is_int(self.num_workers, at_least=0):
            raise ValueError(f"{owner}: num_workers must be an int >= 0; got {self.num_workers!r}")
        if not _checks.is_int(self.per_worker_buffer_size, at_least=1):
            raise ValueError(
                f"{owner}: per_worker_buffer_size must be an int >= 1; got {self.per_worker_buffer_size!r}"
            )

    # ---- what subclasses define ----

    def ds_for_current_process(self, rng: jax.Array) -> grain.MapDataset:
        """This process's examples, before the transforms (shuffled if the pipeline shuffles)."""
        raise NotImplementedError(f"{type(self).__name__} must define ds_for_current_process(rng)")

    def uses_randomness(self) -> bool:
        """Whether the examples depend on the seed (shuffling, random transforms)."""
        items = _example_transforms.transform_list(self.transforms, owner=type(self).__name__)
        return any(_example_transforms.is_random(t) for _, t in items)

    # ---- the pipeline ----

    def ds_with_transforms(self, rng: jax.Array) -> grain.MapDataset:
        """`ds_for_current_process(rng)` with the transforms applied."""
        return _apply.apply_transforms(
            self.ds_for_current_process(rng), self.transforms, owner=type(self).__name__
        )

    @functools.cached_property
    def _epoch_map_ds(self) -> grain.MapDataset:
        """One epoch of this process's examples, transformed."""
        with jax.transfer_guard("allow"):
            rng = kd_random.fold_in_str(jax.random.PRNGKey(self._seed()), "kmix")
            ds = self.ds_with_transforms(rng)
        if len(ds) == 0:
            raise ValueError(f"{type(self).__name__} has no examples (its source or slice is empty)")
        return ds

    @functools.cached_property
    def _root_map_ds(self) -> grain.MapDataset:
        ds = self._epoch_map_ds.repeat(self.num_epochs)
        if (
            self.batch_size
            and self.batch_drop_remainder == DropRemainder.DROP
            and self.num_epochs is not None
        ):
            if len(ds) < self.host_batch_size:
                raise _errors.BatchSizeError(
                    f"{type(self).__name__}: batch_size={self.batch_size} ({self.host_batch_size} per process) "
                    f"is larger than the {len(ds)} examples of this process over num_epochs={self.num_epochs}, "
                    "and batch_drop_remainder drops the short batch: no batch would be yielded; use a smaller "
                    "batch_size or batch_drop_remainder='keep'"
                )
        return ds

    def _make_root_ds(self, *, num_workers: int) -> grain.IterDataset:
        read_options = self.read_options
        if num_workers == 0 or read_options is None:
            read_options = grain.ReadOptions(num_threads=0, prefetch_buffer_size=0)
        ds = self._root_map_ds.to_iter_dataset(read_options=read_options)
        if self.batch_size:
            ds = self._batch(ds)
        if num_workers > 0:
            _allow_grain_flags()
            options = grain.MultiprocessingOptions(
                num_workers=num_workers,
                enable_profiling=self.enable_profiling,
                per_worker_buffer_size=self.per_worker_buffer_size,
            )
            ds = ds.mp_prefetch(
                options, worker_init_fn=functools.partial(_worker_init, user_fn=self.worker_init_fn)
            )
        return ds

    def _batch(self, ds: Any) -> Any:
        """`ds` (a grain `MapDataset` or `IterDataset`) batched per host as `batch_drop_remainder` says."""
        size = self.host_batch_size
        if self.batch_drop_remainder == DropRemainder.PAD:
            return ds.batch(
                size,
                drop_remainder=False,
                batch_fn=functools.partial(grain.experimental.batch_and_pad, batch_size=size),
            )
        return ds.batch(size, drop_remainder=self.batch_drop_remainder == DropRemainder.DROP)

    def _new_iterator(self) -> _iters.PyGrainIterator:
        return _iters.PyGrainIterator(
            source=self, iter=iter(self._make_root_ds(num_workers=_num_workers(self.num_workers)))
        )

    @functools.cached_property
    def element_spec(self) -> Any:
        """The shapes of the first batch, made in this process (no worker is started)."""
        iterator = iter(self._make_root_ds(num_workers=0))
        try:
            first = next(iterator)
        except StopIteration:
            raise ValueError(f"{type(self).__name__} yields no batch: it has no element_spec") from None
        return _base.spec_of(first)

    @property
    def batches_per_epoch(self) -> int:
        """Batches of one epoch's examples (batches run across epoch ends, so this is a count, not a cut)."""
        return self._batches_of(len(self._epoch_map_ds))

    def __len__(self) -> int:
        """Batches over all epochs (Kauldron's); TypeError when endless."""
        if self.num_epochs is None:
            raise TypeError(f"{type(self).__name__} repeats forever (num_epochs=None), so it has no length")
        return self._batches_of(len(self._root_map_ds))

    def _batches_of(self, num_examples: int) -> int:
        if not self.batch_size:
            return num_examples
        if self.batch_drop_remainder == DropRemainder.DROP:
            return num_examples // self.host_batch_size
        return math.ceil(num_examples / self.host_batch_size)

    def __getitem__(self, index: int) -> Any:
        """Batch (or example, without batch_size) `index`, read directly (random access)."""
        ds = self._batch(self._root_map_ds) if self.batch_size else self._root_map_ds
        return ds[index]

    # ---- seeds ----

    def _seed(self) -> int:
        """The seed; 0 when none is set and nothing depends on it, SeedNotSetError when something does."""
        if isinstance(self.seed, RootRef):
            if self.uses_randomness():
                return self._seed_for("shuffling and random transforms")
            return 0
        return int(self.seed)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DataSourceBase(PyGrainPipeline):
    """A pipeline over one random-access source: subclasses give it as `data_source` (a field or a
    cached property: `__len__` and `__getitem__`).

    Attributes:
      shuffle: shuffle the examples (one global shuffle, seeded; grain reshuffles every epoch).
    """

    shuffle: bool

    def uses_randomness(self) -> bool:
        return bool(self.shuffle) or super().uses_randomness()

    def random_access_source(self) -> Any:
        """The source grain reads (`data_source`, or what wraps it)."""
        return self.data_source

    def ds_for_current_process(self, rng: jax.Array) -> grain.MapDataset:
        ds = grain.MapDataset.source(self.random_access_source()).seed(kd_random.random_seed(rng))
        if self.shard_by_process:
            process_index, process_count = self.process
            # Equal shards (up to process_count - 1 examples left out): every host makes as many batches, so
            # none waits for the others at a collective (Kauldron's `ds[i::n]` can differ by one example).
            ds = ds[: len(ds) - len(ds) % process_count][process_index::process_count]
        if self.shuffle:
            # Seeded on its own, so the order of the examples does not change with the transforms.
            ds = ds.shuffle(seed=kd_random.random_seed(kd_random.fold_in_str(rng, "shuffle")))
        return ds


def _drop_remainder(value: bool | str | DropRemainder) -> DropRemainder:
    if value is True:
        return DropRemainder.DROP
    if value is False:
        return DropRemainder.KEEP
    try:
        return DropRemainder(value)
    except ValueError:
        import difflib

        near = difflib.get_close_matches(str(value), [m.value for m in DropRemainder], n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ValueError(
            f"batch_drop_remainder={value!r} is not a valid DropRemainder: expected True, False, "
            f"{', '.join(repr(m.value) for m in DropRemainder)}{hint}"
        ) from None


def _num_workers(num_workers: int) -> int:
    """No worker processes in a notebook (grain's processes cannot start from one), as in Kauldron."""
    if num_workers and "ipykernel" in sys.modules:
        print(
            f"kd.data.py: num_workers={num_workers} ignored in a notebook; batches are made in this process"
        )
        return 0
    return num_workers


def _allow_grain_flags() -> None:
    # grain's worker processes read absl flags; outside an absl app nothing parsed them (defaults apply).
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


def _worker_init(worker_index: int, worker_count: int, *, user_fn: Callable[[int, int], None] | None) -> None:
    # A data worker never holds accelerator memory: JAX there stays on the CPU.
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if user_fn is not None:
        user_fn(worker_index, worker_count)
