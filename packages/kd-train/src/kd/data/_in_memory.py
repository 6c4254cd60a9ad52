"""`kd.data.InMemoryPipeline`: a data set that fits in memory, shuffled per epoch, resumable exactly.

Usage:

    pipeline = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=1024),
                                        batch_size=64, seed=0)
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import jax
import kontext
import numpy as np

from kd.data import _base, _errors, _example_transforms, _iterator, _order


@dataclasses.dataclass(frozen=True, kw_only=True)
class InMemoryPipeline(_base.Pipeline):
    """All examples in memory as one tree of arrays; batches are gathered rows of it.

    Epoch `e` visits the examples in Kauldron's order (`np.arange(n)` shuffled by `np.random.Philox(key=seed).jumped(e)`)
    (in order without `shuffle`), in global batches of `batch_size`, of which this host yields its
    rows. The iterator state is `{"epoch": e, "index": i}` (batches of epoch `e` consumed).

    Attributes:
      loader: a function of no arguments returning all examples: a tree (dict) of arrays sharing
        their leading dimension. Called once per pipeline, on first use.
      shuffle: reshuffle every epoch (deterministically from `seed` and the epoch number).
      num_epochs: passes over the data; None repeats forever.
      drop_remainder: drop the last batch of an epoch when it would be smaller than `batch_size`;
        with False it is yielded smaller (split as evenly as its rows allow between hosts).
      transforms: applied to each example (a list, or a dict applied in order): `kd.data` transforms or
        functions of an example. Those before the first random transform run once, at load (filters drop
        examples there); the rest run on each batch's examples, the random ones seeded by the seed, the
        transform's position, the epoch and the example's index (the same in a resumed run).
      on_device: let a Trainer on one device keep the examples there (within its budget: 256 MB on CPU,
        1/8 of an accelerator's memory) and gather its calls' batches there; False copies every
        batch from the host (for a device short of memory).
    """

    # The loaded examples do not depend on the seed: the Trainer's copy keeps them (the loader runs once).
    __kd_keep_on_fill__: ClassVar[tuple[str, ...]] = (_base._KEPT_ITERATOR, "examples")

    loader: Callable[[], Any]
    batch_size: int
    shuffle: bool = False  # Kauldron's default
    drop_remainder: bool = True
    on_device: bool = True
    transforms: Any = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        _ = self._split_transforms  # Bad transforms fail at construction, naming their position.

    @functools.cached_property
    def _split_transforms(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
        return _example_transforms.split_transforms(self.transforms, owner=type(self).__name__)

    @functools.cached_property
    def examples(self) -> Any:
        """The loader's tree of arrays (as numpy arrays), loaded once, checked, through the deterministic
        transforms."""
        examples = jax.tree.map(np.asarray, self.loader())
        self._check_lengths(examples)
        fixed, _ = self._split_transforms
        return _example_transforms.apply_once(examples, fixed, owner=type(self).__name__)

    @functools.cached_property
    def num_examples(self) -> int:
        return jax.tree.leaves(self.examples)[0].shape[0]

    @functools.cached_property
    def _epoch_order(self) -> _order.EpochOrder:
        """Which examples make each batch of each epoch on this host."""
        return self._make_epoch_order(
            self.num_examples, shuffle=self.shuffle, drop_remainder=self.drop_remainder
        )

    @property
    def batches_per_epoch(self) -> int:
        """Batches of one epoch."""
        return self._epoch_order.batches_per_epoch

    @functools.cached_property
    def element_spec(self) -> Any:
        """One full host-local batch, from the arrays' shapes (no batch is made unless transforms run per
        batch: then the first batch's shapes)."""
        rows = self._epoch_order.host_positions(0)
        if self._split_transforms[1]:
            return _base.spec_of(self._batch_of(0, self._epoch_order.host_indices(0, 0)))
        return jax.tree.map(
            lambda a: jax.ShapeDtypeStruct((len(rows), *a.shape[1:]), a.dtype),
            self.examples,
        )

    def _new_iterator(self) -> _InMemoryIterator:
        return _InMemoryIterator(self)

    def _batch_of(self, epoch: int, indices: np.ndarray) -> Any:
        """The batch of these example indices, through the per-batch transforms."""
        return _example_transforms.transform_rows(
            self.examples,
            indices,
            self._split_transforms[1],
            seed=self._seed_for("random transforms"),
            epoch=epoch,
            owner=type(self).__name__,
        )

    def _check_lengths(self, examples: Any) -> None:
        leaves = kontext.flatten_with_path(examples)
        owner = f"{type(self).__name__}.loader"
        if not leaves:
            raise ValueError(f"{owner} returned no arrays: {examples!r}")
        scalars = [path for path, a in leaves.items() if a.ndim == 0]
        if scalars:
            raise _errors.LengthMismatchError(
                f"{owner} must return arrays with a leading example dimension; "
                f"{', '.join(map(repr, scalars))} are scalars"
            )
        lengths = {path: a.shape[0] for path, a in leaves.items()}
        if len(set(lengths.values())) > 1:
            found = ", ".join(f"{path!r}: {n}" for path, n in lengths.items())
            raise _errors.LengthMismatchError(
                f"{owner} returned arrays of different lengths (leading dimension), expected one number "
                f"of examples for all; got {found}"
            )


class _InMemoryIterator:
    """Gathers batch `index` of epoch `epoch`; the state is that pair."""

    def __init__(self, pipeline: InMemoryPipeline) -> None:
        self._pipeline = pipeline
        self._examples = pipeline.examples
        self._leaves, self._treedef = jax.tree.flatten(self._examples)
        self._order = pipeline._epoch_order
        self._epoch = 0
        self._index = 0

    def __iter__(self) -> _InMemoryIterator:
        return self

    @property
    def examples(self) -> Any:
        """Every example: the tree of arrays that batches are rows of (`examples[rows]` is a batch)."""
        return self._examples

    @property
    def gather_on_device(self) -> bool:
        """Whether the Trainer may keep `examples` on the device and gather batches there: the pipeline's
        `on_device` is set and every batch has the same rows (an epoch's short last batch rules it out)."""
        order = self._order
        full = order.drop_remainder or order.num_examples % order.batch_size == 0
        per_batch = bool(self._pipeline._split_transforms[1])  # Batches are made on the host, per example.
        return self._pipeline.on_device and full and not per_batch

    def next_rows(self) -> np.ndarray:
        """The example indices of the next batch (this host's rows), moving the position as `next()` does:
        `examples[next_rows()]` is the batch `next()` would have returned. Lets the Trainer keep the
        examples on the device and gather batches there (no copy from the host per step)."""
        epoch, index = self._advance()
        return self._order.host_indices(epoch, index)

    def __next__(self) -> Any:
        epoch, index = self._advance()
        if self._pipeline._split_transforms[1]:
            return self._pipeline._batch_of(epoch, self._order.host_indices(epoch, index))
        if not self._order.shuffle:
            # In order, a batch is a run of rows: a read-only view, no copy (the step copies it to the device).
            rows = self._order.host_positions(index)
            return self._treedef.unflatten([_read_only(a[rows.start : rows.stop]) for a in self._leaves])
        indices = self._order.host_indices(epoch, index)
        return self._treedef.unflatten([a[indices] for a in self._leaves])

    def _advance(self) -> tuple[int, int]:
        """`(epoch, index)` of the next batch, then moves past it; StopIteration after the last epoch."""
        num_epochs = self._pipeline.num_epochs
        if num_epochs is not None and self._epoch >= num_epochs:
            raise StopIteration
        epoch, index = self._epoch, self._index
        self._index += 1
        if self._index == self._order.batches_per_epoch:
            self._epoch, self._index = self._epoch + 1, 0
        return epoch, index

    def get_state(self) -> dict[str, int]:
        return _iterator.epoch_state(self._epoch, self._index)

    def set_state(self, state: Mapping[str, Any]) -> None:
        owner = type(self._pipeline).__name__
        epoch, index = _iterator.read_epoch_state(state, owner=owner)
        num_epochs = self._pipeline.num_epochs
        per_epoch = self._order.batches_per_epoch
        if index >= per_epoch or (num_epochs is not None and (epoch, index) > (num_epochs, 0)):
            raise _errors.StateError(
                f"{owner} iterator state {dict(state)!r} is out of range: epochs have {per_epoch} batches "
                f"(index < {per_epoch}) and num_epochs={num_epochs}"
            )
        self._epoch, self._index = epoch, index


def _read_only(view: np.ndarray) -> np.ndarray:
    # A batch shares the examples' memory: writing into it would change the data set.
    view.flags.writeable = False
    return view
