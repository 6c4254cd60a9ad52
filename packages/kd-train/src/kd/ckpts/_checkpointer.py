"""`Checkpointer`: the train state and the data iterator state, saved with orbax under the workdir."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import orbax.checkpoint as ocp
from etils import epath

from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.ckpts import _base, _quiet, _structure

CHECKPOINT_FOLDER_NAME = "checkpoints"
"""Checkpoints live in `<workdir>/checkpoints/ckpt_<step>/{state,data}`."""

_STATE = "state"
_DATA = "data"


def _positive_or_none(owner: str, name: str, value: Any, *, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        expected = "a positive int" + (" or None" if allow_none else "")
        raise ValueError(f"{owner}.{name}: expected {expected}, got {value!r}.")


def _restore_target(leaf: Any) -> Any:
    """What orbax restores a template leaf into: a device array keeps its shape, dtype and sharding."""
    if isinstance(leaf, jax.Array):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=leaf.sharding)
    return leaf  # ShapeDtypeStructs, numpy arrays and Python scalars restore as themselves.


@dataclasses.dataclass(frozen=True, kw_only=True)
class Checkpointer(_base.BaseCheckpointer):
    """Saves the train state and the data iterator state in `<workdir>/checkpoints/`, with orbax.

        ckpt = kd.ckpts.Checkpointer(workdir="/tmp/run", save_interval_steps=1000, max_to_keep=3)
        restored = ckpt.restore_latest(state)  # None in a new workdir
        if restored is not None:
            state, data_state = restored
        ckpt.maybe_save(step, state=state, data_state=data_state)  # every 1000 steps
        ckpt.close()

    In a config, leave `workdir` out: the Trainer fills it with `trainer.workdir`.
    A checkpoint is written to a temporary directory and renamed once complete, so one that was
    being written when the process died is never listed or restored. Saves run in the background
    (`enable_async_checkpointing`); `restore*`, `wait_until_finished` and `close` wait for them.

    Attributes:
      workdir: The run's directory; checkpoints go to `<workdir>/checkpoints/`.
      save_interval_steps: `maybe_save` writes at the steps that are multiples of this.
      max_to_keep: How many checkpoints to keep (the newest); None keeps all.
      keep_period: Also keep, forever, every checkpoint whose step is a multiple of this.
      save_on_steps: Also write at these steps.
      never_save_step_zero: Skip step 0 unless forced (it is the initial state).
      enable_async_checkpointing: Write in a background thread (the arrays are copied to host first,
        so the next train step may donate them).
    """

    workdir: epath.PathLike | RootRef = ROOT_CFG_REF.workdir
    save_interval_steps: int
    max_to_keep: int | None = 3
    keep_period: int | None = None
    save_on_steps: Sequence[int] | None = None
    never_save_step_zero: bool = False
    enable_async_checkpointing: bool = True

    def __post_init__(self) -> None:
        _positive_or_none("Checkpointer", "save_interval_steps", self.save_interval_steps, allow_none=False)
        _positive_or_none("Checkpointer", "max_to_keep", self.max_to_keep, allow_none=True)
        _positive_or_none("Checkpointer", "keep_period", self.keep_period, allow_none=True)
        if self.save_on_steps is not None:  # a tuple, so the Checkpointer stays hashable
            object.__setattr__(self, "save_on_steps", tuple(int(s) for s in self.save_on_steps))

    @property
    def directory(self) -> epath.Path:
        """`ckpt.directory`: `<workdir>/checkpoints`."""
        if isinstance(self.workdir, RootRef):
            raise ValueError(
                f"Checkpointer.workdir is still {self.workdir!r}: build the Checkpointer inside a "
                "kd.train.Trainer (which fills it with trainer.workdir) or pass workdir=..."
            )
        return epath.Path(self.workdir) / CHECKPOINT_FOLDER_NAME

    @functools.cached_property
    def _manager(self) -> ocp.CheckpointManager:
        options = ocp.CheckpointManagerOptions(
            max_to_keep=self.max_to_keep,
            keep_period=self.keep_period,
            step_prefix="ckpt",
            enable_async_checkpointing=self.enable_async_checkpointing,
            create=True,
        )
        directory = self.directory
        _quiet.hold()
        try:
            return ocp.CheckpointManager(
                directory,
                options=options,
                item_handlers={_STATE: ocp.StandardCheckpointHandler(), _DATA: ocp.JsonCheckpointHandler()},
            )
        except BaseException:
            _quiet.release()
            raise

    def restore_latest(self, state: _base.StateT) -> _base.Restored[_base.StateT] | None:
        """`state, data_state = ckpt.restore_latest(state)`, or None when no checkpoint exists.

        `state` is the template (arrays or `jax.ShapeDtypeStruct`s): the result has its pytree
        structure and types, and each array its shape, dtype and sharding. A checkpoint whose tree
        differs raises `CheckpointStructureError` naming the first differing path.
        """
        self.wait_until_finished()
        step = self._manager.latest_step()
        if step is None:
            return None
        return self.restore(state, step=step)

    def restore(self, state: _base.StateT, *, step: int) -> _base.Restored[_base.StateT]:
        """`state, data_state = ckpt.restore(state, step=1000)`; FileNotFoundError when it is not saved."""
        manager = self._manager
        manager.wait_until_finished()
        step = int(step)
        steps = manager.all_steps()
        if step not in steps:
            available = ", ".join(map(str, sorted(steps))) or "none"
            raise FileNotFoundError(
                f"Checkpointer.restore(step={step}): no checkpoint for step {step} in {self.directory} "
                f"(available steps: {available})."
            )
        metadata = manager.item_metadata(step)
        _structure.check_matches(state, metadata[_STATE].tree, where=f"step {step} in {self.directory}")
        items = {_STATE: ocp.args.StandardRestore(jax.tree.map(_restore_target, state))}
        has_data = _DATA in metadata.keys()
        if has_data:
            items[_DATA] = ocp.args.JsonRestore()
        restored = manager.restore(step, args=ocp.args.Composite(**items))
        return _base.Restored(restored[_STATE], restored[_DATA] if has_data else None)

    def should_save(self, step: int) -> bool:
        """`ckpt.should_save(step)`: a multiple of `save_interval_steps` or one of `save_on_steps`."""
        step = int(step)
        if step == 0 and self.never_save_step_zero:
            return False
        return step % self.save_interval_steps == 0 or step in (self.save_on_steps or ())

    def maybe_save(
        self, step: int, *, state: Any, data_state: Mapping[str, Any] | None = None, force: bool = False
    ) -> bool:
        """`ckpt.maybe_save(step, state=state, data_state=it.get_state())`: True when it saved.

        Saves when `should_save(step)` or `force`. A step already saved is skipped (False), forced
        or not. `data_state` must be JSON (it comes back with lists for tuples); None saves none.
        """
        step = int(step)
        manager = self._manager
        if step in manager.all_steps() or not (force or self.should_save(step)):
            return False
        items = {_STATE: ocp.args.StandardSave(state)}
        if data_state is not None:
            items[_DATA] = ocp.args.JsonSave(_checked_json(data_state))
        with jax.transfer_guard("allow"):  # Saving copies the arrays to host on purpose.
            return manager.save(step, args=ocp.args.Composite(**items), force=True)

    @property
    def latest_step(self) -> int | None:
        """`ckpt.latest_step`: the newest step saved (including one this process is still writing)."""
        return self._manager.latest_step()

    def all_steps(self) -> tuple[int, ...]:
        """`ckpt.all_steps()`: the saved steps, oldest first."""
        return tuple(sorted(self._manager.all_steps()))

    def wait_until_finished(self) -> None:
        """`ckpt.wait_until_finished()`: block until the saves in flight are complete on disk."""
        if "_manager" in self.__dict__:
            self._manager.wait_until_finished()

    def close(self) -> None:
        """`ckpt.close()`: finish the saves in flight and release orbax (using it again reopens it)."""
        manager = self.__dict__.pop("_manager", None)
        if manager is None:
            return
        try:
            manager.wait_until_finished()
            manager.close()
        finally:
            _quiet.release()

    def __getstate__(self) -> dict[str, Any]:
        # A copy (deepcopy, pickle) is a fresh Checkpointer: the open orbax manager stays with this one.
        return {k: v for k, v in self.__dict__.items() if k != "_manager"}


def _checked_json(data_state: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(data_state, Mapping):
        raise TypeError(
            f"Checkpointer.maybe_save(data_state=...): expected a JSON dict, got {type(data_state).__name__}."
        )
    try:
        json.dumps(data_state)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Checkpointer.maybe_save(data_state=...): expected a JSON dict; {e}.") from None
    return dict(data_state)
