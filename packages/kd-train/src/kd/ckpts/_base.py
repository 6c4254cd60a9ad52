"""The checkpointer interface the trainer calls, and what a restore gives back."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, Generic, NamedTuple, TypeVar

StateT = TypeVar("StateT")


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
    def restore(self, state: StateT, *, step: int) -> Restored[StateT]:
        """`state, data_state = ckpt.restore(state, step=100)`: a given step."""

    @abc.abstractmethod
    def should_save(self, step: int) -> bool:
        """`ckpt.should_save(100)`: whether `maybe_save` at this step (unforced) writes."""

    @abc.abstractmethod
    def maybe_save(
        self,
        step: int,
        *,
        state: Any,
        data_state: Mapping[str, Any] | None = None,
        metrics: Mapping[str, Any] | None = None,
        info: Mapping[str, Any] | None = None,
        force: bool = False,
    ) -> bool:
        """`ckpt.maybe_save(step, state=state, data_state=it.get_state(), metrics=logged)`: True when it saved.

        `metrics` are the values logged at `step` (to keep the best checkpoint); `info` is JSON saved beside
        the state (the Trainer's seed and elapsed time), read back with `info(step)`.
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

    @abc.abstractmethod
    def all_steps(self) -> tuple[int, ...]:
        """`ckpt.all_steps()`: the checkpointed steps, oldest first."""

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
