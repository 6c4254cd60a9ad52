"""A checkpointer that keeps nothing: the default when a run has no workdir."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kd.ckpts import _base


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoopCheckpointer(_base.BaseCheckpointer):
    """Never saves; there is never anything to restore.

    ckpt = kd.ckpts.NoopCheckpointer()
    ckpt.restore_latest(state)  # -> None
    ckpt.maybe_save(10, state=state, force=True)  # -> False
    """

    def restore_latest(self, state: _base.StateT) -> _base.Restored[_base.StateT] | None:
        """`ckpt.restore_latest(state)` -> None, always."""
        return None

    def restore(
        self, state: Any = None, *, step: int = -1, noop_if_missing: bool = False, donate: bool = False
    ) -> Any:
        """`ckpt.restore(state, step=10)` raises FileNotFoundError: nothing is ever saved.

        Kauldron's form (no step, or `noop_if_missing=True`) returns `state` unchanged, as Kauldron's
        NoopCheckpointer does; ValueError without a state.
        """
        if state is None:
            raise ValueError("NoopCheckpointer.restore(state): a state is needed (it is returned unchanged).")
        if step == -1 or noop_if_missing:
            return state
        raise FileNotFoundError(f"NoopCheckpointer.restore(step={step}): a NoopCheckpointer saves nothing.")

    def should_save(self, step: int) -> bool:
        """`ckpt.should_save(step)` -> False, always."""
        return False

    def maybe_save(
        self,
        step_or_state: Any = _base.UNSET,
        /,
        *,
        step: Any = _base.UNSET,
        state: Any = _base.UNSET,
        data_state: Mapping[str, Any] | None = None,
        metrics: Mapping[str, Any] | None = None,
        info: Mapping[str, Any] | None = None,
        force: bool = False,
    ) -> bool:
        """`ckpt.maybe_save(step, state=state)` (or Kauldron's `maybe_save(state, step=step)`) -> False, even
        forced (the end of a run forces a save; Kauldron's NoopCheckpointer raises there instead)."""
        _base.saving_call("NoopCheckpointer.maybe_save", step_or_state, step, state)
        return False

    def save(self, state: Any, *, step: int, force: bool = False, metrics: Any = None, **items: Any) -> bool:
        """Kauldron's `ckpt.save(state, step=10)` -> False: nothing is saved."""
        return False

    @property
    def latest_step(self) -> int | None:
        """`ckpt.latest_step` -> None, always."""
        return None

    @property
    def all_steps(self) -> _base.Steps:
        """`ckpt.all_steps` or `ckpt.all_steps()` -> (), always."""
        return _base.Steps(tuple)

    def info(self, step: int) -> dict[str, Any]:
        """`ckpt.info(step)` raises FileNotFoundError: nothing is ever saved."""
        raise FileNotFoundError(f"NoopCheckpointer.info(step={step}): a NoopCheckpointer saves nothing.")

    def reload(self) -> None:
        """`ckpt.reload()`: nothing to read."""

    def wait_until_finished(self) -> None:
        """`ckpt.wait_until_finished()`: nothing to wait for."""

    def close(self) -> None:
        """`ckpt.close()`: nothing to close."""
