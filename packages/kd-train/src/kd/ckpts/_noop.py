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

    def restore(self, state: _base.StateT, *, step: int) -> _base.Restored[_base.StateT]:
        """`ckpt.restore(state, step=10)` raises FileNotFoundError: nothing is ever saved."""
        raise FileNotFoundError(f"NoopCheckpointer.restore(step={step}): a NoopCheckpointer saves nothing.")

    def should_save(self, step: int) -> bool:
        """`ckpt.should_save(step)` -> False, always."""
        return False

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
        """`ckpt.maybe_save(step, state=state)` -> False, even forced (the end of a run forces a save)."""
        return False

    @property
    def latest_step(self) -> int | None:
        """`ckpt.latest_step` -> None, always."""
        return None

    def all_steps(self) -> tuple[int, ...]:
        """`ckpt.all_steps()` -> (), always."""
        return ()

    def info(self, step: int) -> dict[str, Any]:
        """`ckpt.info(step)` raises FileNotFoundError: nothing is ever saved."""
        raise FileNotFoundError(f"NoopCheckpointer.info(step={step}): a NoopCheckpointer saves nothing.")

    def reload(self) -> None:
        """`ckpt.reload()`: nothing to read."""

    def wait_until_finished(self) -> None:
        """`ckpt.wait_until_finished()`: nothing to wait for."""

    def close(self) -> None:
        """`ckpt.close()`: nothing to close."""
