"""The checkpointer interface the trainer calls, and what a restore gives back."""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

StateT = TypeVar("StateT")


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()
"""The default of `maybe_save`'s `step` and `state`: which one the positional argument is depends on the other."""


def saving_call(owner: str, step_or_state: Any, step: Any, state: Any) -> tuple[int, Any]:
    """`(step, state)` of a `maybe_save` call in either form: kd's `(step, state=...)` or Kauldron's
    `(state, step=...)`; TypeError naming both forms for anything else."""
    if step is UNSET and state is not UNSET and step_or_state is not UNSET:
        step = step_or_state  # kd: maybe_save(step, state=state)
    elif state is UNSET and step is not UNSET and step_or_state is not UNSET:
        state = step_or_state  # Kauldron: maybe_save(state, step=step)
    elif step_or_state is not UNSET or step is UNSET or state is UNSET:
        raise TypeError(
            f"{owner}: call it as maybe_save(step, state=state) (kd) or maybe_save(state, step=step) "
            "(Kauldron): one of step / state positional, the other by keyword."
        )
    if isinstance(step, bool) or (not isinstance(step, int) and not hasattr(step, "__index__")):
        raise TypeError(f"{owner}: step must be an int, got {type(step).__name__} ({step!r}).")
    return int(step), state


class Steps(Sequence):
    """The checkpointed steps, oldest first, for both spellings: Kauldron's property and kd's method.

    ckpt.all_steps    # Steps: a sequence (1, 2), read from the checkpointer when first used
    ckpt.all_steps()  # (1, 2): a tuple, read now

    Reading `ckpt.all_steps` alone (`callable(getattr(ckpt, "all_steps"))`) opens nothing.
    """

    __slots__ = ("_read", "_steps")

    def __init__(self, read: Callable[[], Iterable[int]]) -> None:
        self._read = read
        self._steps: tuple[int, ...] | None = None

    def _values(self) -> tuple[int, ...]:
        if self._steps is None:
            self._steps = tuple(self._read())
        return self._steps

    def __call__(self) -> tuple[int, ...]:
        return tuple(self._read())

    def __getitem__(self, index: Any) -> Any:
        return self._values()[index]

    def __len__(self) -> int:
        return len(self._values())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Steps, tuple, list)):
            return self._values() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Steps({self._values()!r})"


class Restored(NamedTuple, Generic[StateT]):
    """What `restore_latest` gives back: `state, data_state = ckpt.restore_latest(state)`.

    `state` has the template's pytree structure and types; `data_state` is the data iterator
    state saved with it (a JSON dict), or None when none was saved.
    """

    state: StateT
    data_state: dict[str, Any] | None


class BaseCheckpointer(abc.ABC):
    """Saves and restores the train state and the data iterator state.

        ckpt = kd.ckpts.Checkpointer(workdir="/tmp/run", save_interval_steps=100)
        restored = ckpt.restore_latest(state)
        if restored is not None:
            state, data_state = restored
        for step in range(int(state.step), num_steps):
            ...
            ckpt.maybe_save(step, state=state, data_state=data_state)
        ckpt.close()

    Implementations: `Checkpointer` (orbax, on disk) and `NoopCheckpointer` (does nothing).
    Use as a context manager to close it at the end.
    """

    @abc.abstractmethod
    def restore_latest(self, state: StateT) -> Restored[StateT] | None:
        """`state, data_state = ckpt.restore_latest(state)`; None when there is no checkpoint."""

    @abc.abstractmethod
    def restore(
        self, state: Any = None, *, step: int = -1, noop_if_missing: bool = False, donate: bool = False
    ) -> Any:
        """`state, data_state = ckpt.restore(state, step=100)`: a given step; Kauldron's form gives the state.

        kd's form (a plain state and an explicit step >= 0) returns `Restored(state, data_state)`.
        Kauldron's form returns the restored state alone: a `kd.ckpts.items` item as the state, no step
        or `step=-1` (the latest), or `noop_if_missing=` / `donate=` passed.
        """

    @abc.abstractmethod
    def should_save(self, step: int) -> bool:
        """`ckpt.should_save(100)`: whether `maybe_save` at this step (unforced) writes."""

    @abc.abstractmethod
    def maybe_save(
        self,
        step_or_state: Any = UNSET,
        /,
        *,
        step: Any = UNSET,
        state: Any = UNSET,
        data_state: Mapping[str, Any] | None = None,
        metrics: Mapping[str, Any] | None = None,
        info: Mapping[str, Any] | None = None,
        force: bool = False,
    ) -> bool:
        """`ckpt.maybe_save(step, state=state, data_state=it.get_state(), metrics=logged)`: True when it saved.

        Kauldron's spelling `ckpt.maybe_save(state, step=step)` is the same call (`saving_call` tells
        them apart). `metrics` are the values logged at `step` (to keep the best checkpoint); `info` is
        JSON saved beside the state (the Trainer's seed and elapsed time), read back with `info(step)`.
        """

    @abc.abstractmethod
    def info(self, step: int) -> dict[str, Any]:
        """`ckpt.info(100)`: `{"metrics": {...}, **info}` saved with step 100."""

    @abc.abstractmethod
    def reload(self) -> None:
        """`ckpt.reload()`: see checkpoints other processes saved since this one looked."""

    @property
    @abc.abstractmethod
    def latest_step(self) -> int | None:
        """`ckpt.latest_step`: the newest checkpointed step, None when there is none."""

    @property
    @abc.abstractmethod
    def all_steps(self) -> Steps:
        """`ckpt.all_steps` or `ckpt.all_steps()`: the checkpointed steps, oldest first (a `Steps` tuple)."""

    def save(self, state: Any, *, step: int, force: bool = False, metrics: Any = None, **items: Any) -> bool:
        """Kauldron's `ckpt.save(state, step=100)`: True when it saved (see the implementation)."""
        return self.maybe_save(int(step), state=state, metrics=metrics, force=force, **items)

    def delete(self, step: int) -> None:
        """`ckpt.delete(100)`: remove that checkpoint."""
        raise FileNotFoundError(f"{type(self).__name__}.delete(step={step}): there is no checkpoint {step}.")

    def item_metadata(self, step: int = -1) -> dict[str, Any]:
        """`ckpt.item_metadata(100)`: the saved items' metadata (tree, shapes, dtypes) of that step."""
        raise FileNotFoundError(f"{type(self).__name__}.item_metadata(step={step}): there is no checkpoint.")

    def iter_new_checkpoints(
        self,
        *,
        min_interval_secs: float = 0,
        seconds_to_sleep: float = 1,
        timeout: float | None = None,
        timeout_fn: Any = None,
    ) -> Iterator[int]:
        """`for step in ckpt.iter_new_checkpoints(timeout=600): ...`: each new step once it is complete."""
        del min_interval_secs, seconds_to_sleep, timeout, timeout_fn
        yield from ()

    @abc.abstractmethod
    def wait_until_finished(self) -> None:
        """`ckpt.wait_until_finished()`: block until saves in flight are on disk."""

    @abc.abstractmethod
    def close(self) -> None:
        """`ckpt.close()`: finish saves in flight and release resources."""

    def __enter__(self) -> BaseCheckpointer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __contextmanager__(self) -> Iterator[BaseCheckpointer]:
        """Kauldron's (`epy.ContextManager`) spelling of `with ckpt: ...`: yields it, closes it at the end."""
        try:
            yield self
        finally:
            self.close()
