"""Kauldron's iterator wrappers (`kd.data.iters`): an iterator that knows its source, its length and shapes.

Usage:

    it = kd.data.iters.PyGrainIterator(source=pipeline, iter=iter(grain_dataset))
    state = it.get_state()       # grain's own state: JSON, saved with the Trainer's checkpoints
    it.set_state(state)

kd's Trainer saves any iterator's `get_state()` with the checkpoint (kd.data's iterators all have it), so
these are for code written against Kauldron's names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator as _PyIterator
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(kw_only=True)
class Iterator:
    """An iterator over `source`'s batches, with `len` and `element_spec` read from it."""

    source: Any

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __next__")

    def __len__(self) -> int:
        return len(self.source)

    @property
    def element_spec(self) -> Any:
        return self.source.element_spec

    def get_state(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must define get_state")

    def set_state(self, state: Mapping[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define set_state")

    # Kauldron's checkpoint-item protocol: `kd.ckpts.Checkpointer.save(it, step=...)` / `.restore(it)` keep
    # the iterator's state as a JSON item.

    def __kd_ocp_handlers__(self) -> Any:
        import orbax.checkpoint as ocp

        return ocp.JsonCheckpointHandler()

    def __kd_ocp_save_args__(self) -> Any:
        import orbax.checkpoint as ocp

        return ocp.args.JsonSave(self.get_state())

    def __kd_ocp_restore_args__(self) -> Any:
        import orbax.checkpoint as ocp

        return ocp.args.JsonRestore()

    def __kd_ocp_restore_post__(self, value: Mapping[str, Any]) -> Iterator:
        self.set_state(value)
        return self


@dataclasses.dataclass(kw_only=True)
class PyGrainIterator(Iterator):
    """A grain `DatasetIterator`; its state is grain's (`get_state()` / `set_state()`), JSON-serialisable."""

    iter: Any

    def __next__(self) -> Any:
        return next(self.iter)

    def get_state(self) -> dict[str, Any]:
        return self.iter.get_state()

    def set_state(self, state: Mapping[str, Any]) -> None:
        try:
            self.iter.set_state(dict(state))
        except (KeyError, TypeError, ValueError, IndexError) as e:
            from kd.data._errors import StateError

            raise StateError(
                f"{type(self.source).__name__}: grain cannot resume from the saved iterator state {dict(state)!r}: "
                "it was saved by a pipeline built otherwise (another num_workers, batch size or transforms); "
                "resume with the same data settings, or start the data from the beginning"
            ) from e

    def close(self) -> None:
        """Stops grain's worker processes and prefetch threads, if any."""
        close = getattr(self.iter, "close", None)
        if close is not None:
            close()


@dataclasses.dataclass(kw_only=True)
class NonCheckpointableIterator(Iterator):
    """A plain Python iterator: `get_state()` counts batches, `set_state()` can only stay where it is.

    A run resumed from a checkpoint refuses to continue from one (it cannot reach the saved position).
    """

    iter: _PyIterator[Any]
    _consumed: int = dataclasses.field(default=0, init=False, repr=False)

    def __next__(self) -> Any:
        batch = next(self.iter)
        self._consumed += 1
        return batch

    def get_state(self) -> dict[str, Any]:
        return {"consumed": self._consumed}

    def set_state(self, state: Mapping[str, Any]) -> None:
        if dict(state) != {"consumed": self._consumed}:
            from kd.data._errors import StateError

            raise StateError(
                f"NonCheckpointableIterator over {type(self.iter).__name__} cannot move to {dict(state)!r} "
                f"(it is at {self.get_state()!r} and a plain iterator cannot seek); use a kd.data pipeline "
                "to resume mid-run"
            )
