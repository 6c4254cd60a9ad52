"""Kauldron's orbax no-op item (`kd.data.iters.NoopArg`): saves nothing, and a restore hands back the value the
restore was given (an object that keeps its own state, like a live iterator mutated in place).

    manager.save(step, args=kd.data.iters.NoopArg(it)); manager.restore(step, args=kd.data.iters.NoopArg(it)) is it
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orbax.checkpoint as ocp


class NoopHandler(ocp.CheckpointHandler):
    """An orbax handler that writes no file and restores the argument's own value."""

    def save(self, directory: Any, args: NoopArg) -> None:
        del directory, args

    def restore(self, directory: Any, args: NoopArg | None = None) -> Any:
        del directory
        return None if args is None else args.value

    def metadata(self, directory: Any) -> None:
        del directory


@ocp.args.register_with_handler(NoopHandler, for_save=True, for_restore=True)
@dataclasses.dataclass
class NoopArg(ocp.args.CheckpointArgs):
    """The value a save ignores and a restore returns."""

    value: Any
