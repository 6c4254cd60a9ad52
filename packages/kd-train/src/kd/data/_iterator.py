"""The iterator protocol that the Trainer relies on: batches, plus a small JSON state to resume from.

Usage:

    it = iter(pipeline)
    batch = next(it)
    state = it.get_state()      # JSON-serialisable, e.g. {"epoch": 0, "index": 1}
    it2 = pipeline.iter_from_state(json.loads(json.dumps(state)))
    # next(it2) is next(it): the batch that followed the point where `state` was taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from kd.data import _checks, _errors


@runtime_checkable
class CheckpointableIterator(Protocol):
    """An iterator of batches whose position can be saved and restored (Kauldron: `kd.data.iters.Iterator`).

    `get_state()` returns a small JSON-serialisable dict; after `set_state(s)` the iterator yields the
    batches that followed the point where `s` was taken. grain's `DatasetIterator` has this shape too.
    """

    def __iter__(self) -> CheckpointableIterator: ...

    def __next__(self) -> Any: ...

    def get_state(self) -> dict[str, Any]: ...

    def set_state(self, state: Mapping[str, Any]) -> None: ...


@runtime_checkable
class RowsIterator(CheckpointableIterator, Protocol):
    """An iterator over examples held in memory that can say which rows its next batch takes (kd's
    `InMemoryPipeline` has it). The Trainer then places `examples` on the device once and gathers each
    batch there, instead of copying every batch from the host.

    `examples[next_rows()]` (per leaf) is the batch `next()` would have returned, and both move the
    position alike; `gather_on_device` says whether the Trainer may do so (every batch must have the same
    number of rows).
    """

    @property
    def examples(self) -> Any: ...

    @property
    def gather_on_device(self) -> bool: ...

    def next_rows(self) -> Any: ...


class FirstBatchKept:
    """An iterator whose first batch was already pulled (to read its shapes) and is handed out first.

    Its state is the one from before that pull until the batch is taken, so reading a pipeline's
    `element_spec` costs no batch and moves no position.
    """

    def __init__(self, iterator: CheckpointableIterator, first: Any, state_before: dict[str, Any]) -> None:
        self._iterator = iterator
        self._first = first
        self._pending = True
        self._state_before = state_before

    def __iter__(self) -> FirstBatchKept:
        return self

    def __next__(self) -> Any:
        if self._pending:
            self._pending = False
            first, self._first = self._first, None
            return first
        return next(self._iterator)

    def get_state(self) -> dict[str, Any]:
        return dict(self._state_before) if self._pending else self._iterator.get_state()

    def set_state(self, state: Mapping[str, Any]) -> None:
        if self._pending and dict(state) == self._state_before:
            return  # Already there: keep the pulled batch (a one-shot source could not yield it again).
        self._pending = False
        self._first = None
        self._iterator.set_state(state)


def epoch_state(epoch: int, index: int) -> dict[str, int]:
    """The state of the pipelines that count batches: `index` batches of epoch `epoch` consumed."""
    return {"epoch": epoch, "index": index}


def read_epoch_state(state: Mapping[str, Any], *, owner: str) -> tuple[int, int]:
    """`(epoch, index)` from an `epoch_state` dict; StateError naming what arrived otherwise."""
    if (
        not isinstance(state, Mapping)
        or set(state) != {"epoch", "index"}
        or not all(_checks.is_int(state[k], at_least=0) for k in ("epoch", "index"))
    ):
        raise _errors.StateError(
            f"{owner} iterator state must be {{'epoch': int >= 0, 'index': int >= 0}} "
            f"(from its get_state()); got {state!r}"
        )
    return int(state["epoch"]), int(state["index"])
