"""`kd.data.FromIterable`: any Python iterable of batches as a resumable pipeline.

Usage:

    pipeline = kd.data.FromIterable(iterable=[{"x": np.zeros((4, 2))}] * 10)
    pipeline = kd.data.FromIterable(iterable=functools.partial(my_batches, batch_size=64), batch_size=64)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar

import jax
import kontext

from kd.data import _base, _errors, _hosts, _iterator

_HANDED_OUT = "_kd_one_shot_handed_out"


@dataclasses.dataclass(frozen=True, kw_only=True)
class FromIterable(_base.Pipeline):
    """Batches from a Python iterable, resumable by counting.

    The state is `{"epoch": e, "index": i}`: `i` batches of pass `e` consumed. `set_state` gets
    there by skipping batches: forward from the current position when it is ahead, otherwise by
    iterating the iterable again from its start (a re-iterable one: a list, an object whose
    `__iter__` starts over, or a function returning a new iterable). Skipping costs the time of
    making the skipped batches, and gives the same batches only if the iterable yields the same
    sequence each time it is iterated.

    A one-shot iterator (a generator object, as a konfig config's `my_batches(...)` resolves to)
    works for one pass: resuming after a restart is forward, from a fresh one, so it works too;
    `num_epochs` must be 1 and the pipeline can be iterated once.

    `element_spec` pulls the first batch once and keeps it for the first `next`; read after
    iterating, it is the shapes of the first batch yielded (nothing more is pulled).

    Attributes:
      iterable: the batches, or a function of no arguments returning them (called each pass).
      batch_size: None: the iterable yields this host's batches already, passed through as they are.
        An int: it yields global batches of exactly `batch_size` rows (checked), of which this host
        takes rows [i*b/n, (i+1)*b/n).
      num_epochs: passes over the iterable (default 1; None repeats forever). An endless iterable
        is one endless pass. A pass that yields nothing ends the iteration.
    """

    # A one-shot iterable shared with the Trainer's copy: the copy knows it was handed out / started.
    __kd_keep_on_fill__: ClassVar[tuple[str, ...]] = (_base._KEPT_ITERATOR, _HANDED_OUT)

    iterable: Iterable[Any] | Callable[[], Iterable[Any]]
    num_epochs: int | None = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.iterable, Iterable) and not callable(self.iterable):
            raise TypeError(
                "FromIterable: iterable must be an iterable of batches or a function returning one; "
                f"got {type(self.iterable).__name__}"
            )
        if self.is_one_shot and self.num_epochs != 1:
            raise ValueError(
                f"FromIterable: iterable is a one-shot iterator ({type(self.iterable).__name__}), which "
                f"can be passed over once, so num_epochs must be 1; got num_epochs={self.num_epochs!r}. "
                "Pass a list, or a function returning a new iterator, to repeat it"
            )

    @property
    def is_one_shot(self) -> bool:
        """Whether `iterable` is an iterator (iterating it again continues instead of starting over)."""
        return isinstance(self.iterable, Iterator)

    @property
    def batches_per_epoch(self) -> int:
        """Batches per pass: `len(iterable)` when it has one (TypeError otherwise)."""
        if isinstance(self.iterable, Iterable) and hasattr(self.iterable, "__len__"):
            return len(self.iterable)  # type: ignore[arg-type]
        raise TypeError(
            f"FromIterable: the iterable ({type(self.iterable).__name__}) has no len(), so the number of "
            "batches per epoch is unknown"
        )

    def _new_iterator(self) -> _IterableIterator:
        if self.is_one_shot:
            if self.__dict__.get(_HANDED_OUT):
                raise RuntimeError(
                    "FromIterable over a one-shot iterator can be iterated once; pass a list or a function "
                    "returning a new iterator to iterate it again"
                )
            self.__dict__[_HANDED_OUT] = True
        return _IterableIterator(self)

    def _open(self) -> Iterator[Any]:
        source = self.iterable
        if not isinstance(source, Iterable):
            source = source()
        return iter(source)

    def _host_rows(self) -> slice | None:
        """This host's rows of each global batch; None when batches pass through as they are."""
        if self.batch_size is None:
            return None
        process_index, process_count = self.process
        _hosts.host_batch_size(self.batch_size, process_count, owner="FromIterable")
        return _hosts.host_rows(self.batch_size, process_index=process_index, process_count=process_count)

    def _host_batch(self, batch: Any, rows: slice, position: tuple[int, int]) -> Any:
        wrong = {path: _num_rows(x) for path, x in kontext.flatten_with_path(batch).items()}
        wrong = {path: n for path, n in wrong.items() if n != self.batch_size}
        if wrong:
            found = ", ".join(f"{path!r}: {n}" for path, n in wrong.items())
            raise _errors.BatchSizeError(
                f"FromIterable(batch_size={self.batch_size}): batch {position[1]} of epoch {position[0]} "
                f"should have {self.batch_size} rows in every array; got {found}"
            )
        return jax.tree.map(lambda x: x[rows], batch)


def _num_rows(x: Any) -> int | None:
    shape = getattr(x, "shape", ())
    return shape[0] if shape else None


class _IterableIterator:
    """Counts batches per pass; restores a count by skipping batches."""

    def __init__(self, pipeline: FromIterable) -> None:
        self._pipeline = pipeline
        self._iterator: Iterator[Any] | None = None
        self._epoch = 0
        self._index = 0
        self._done = False
        self._rows = pipeline._host_rows()
        self._spec_known = "element_spec" in pipeline.__dict__

    def __iter__(self) -> _IterableIterator:
        return self

    def __next__(self) -> Any:
        batch = self._next_raw()
        position = (self._epoch, self._index)
        self._index += 1
        if self._rows is not None:
            batch = self._pipeline._host_batch(batch, self._rows, position)
        if (
            not self._spec_known
        ):  # Shapes for free: element_spec then pulls nothing (a one-shot source could not).
            self._pipeline.__dict__.setdefault("element_spec", _base.spec_of(batch))
            self._spec_known = True
        return batch

    def _next_raw(self) -> Any:
        num_epochs = self._pipeline.num_epochs
        while not self._done:
            if num_epochs is not None and self._epoch >= num_epochs:
                break
            if self._iterator is None:
                self._iterator = self._pipeline._open()
            try:
                return next(self._iterator)
            except StopIteration:
                if self._index == 0:  # An empty pass: repeating it would loop forever.
                    break
                self._iterator, self._epoch, self._index = None, self._epoch + 1, 0
        self._done = True
        raise StopIteration

    def get_state(self) -> dict[str, int]:
        return _iterator.epoch_state(self._epoch, self._index)

    def set_state(self, state: Mapping[str, Any]) -> None:
        epoch, index = _iterator.read_epoch_state(state, owner="FromIterable")
        num_epochs = self._pipeline.num_epochs
        if num_epochs is not None and (epoch, index) > (num_epochs, 0):
            raise _errors.StateError(
                f"FromIterable iterator state {dict(state)!r} is past the end: num_epochs={num_epochs}"
            )
        if not (epoch == self._epoch and index >= self._index):
            if self._pipeline.is_one_shot:
                raise _errors.StateError(
                    f"FromIterable iterator state {dict(state)!r} is behind the current position "
                    f"{self.get_state()!r} of a one-shot iterator, which cannot go back; pass a list or a "
                    "function returning a new iterator to resume anywhere"
                )
            self._iterator, self._epoch, self._index = None, epoch, 0
        self._done = False
        while self._index < index:
            if self._iterator is None:
                self._iterator = self._pipeline._open()
            try:
                next(self._iterator)
            except StopIteration:
                raise _errors.StateError(
                    f"FromIterable iterator state {dict(state)!r} is past the end of epoch {epoch}, which "
                    f"has {self._index} batches"
                ) from None
            self._index += 1
