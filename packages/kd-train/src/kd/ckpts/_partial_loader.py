"""`PartialLoader`: start a run from another run's checkpoint, all of its params or chosen parts (warm start).

    cfg.init_transform = kd.ckpts.PartialLoader(
        workdir="/runs/pretrain", new_to_old={"params.decoder": "params.encoder"}
    )

The loaders (`PartialLoader`, Kauldron's `PartialKauldronLoader`, `SimpleCheckpointLoader`) are
`InitTransform`s that read the other run's checkpoint (`read_checkpoint`, without a template and without
changing anything there) and hand it to `_new_to_old.load_partial`, which matches its leaves to the state's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import jax
from etils import epath

from kd.ckpts import _checkpointer, _init_transform, _new_to_old

_T = TypeVar("_T")

_LATEST = -1


class _ClosingLoader:
    """Kauldron's loaders are context managers (they hold a checkpointer); kd's open one per read, so
    `close` has nothing to release. Both spellings of `with loader:` work."""

    _complete_in_transform = True  # `transform` loads the optimizer state too when asked

    def close(self) -> None:
        """`loader.close()`: nothing stays open between reads."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __contextmanager__(self) -> Any:
        try:
            yield self
        finally:
            self.close()


@dataclasses.dataclass(frozen=True, kw_only=True)
class PartialLoader(_ClosingLoader, _init_transform.InitTransform):
    """Loads chosen parts of the state from another run's checkpoint (Kauldron's `PartialKauldronLoader`).

        cfg.init_transform = kd.ckpts.PartialLoader(
            workdir="/runs/pretrain",  # or "/runs/pretrain/checkpoints"
            new_to_old={"params.decoder": "params.encoder", "params.head.**.kernel": "params.head.**.kernel"},
            ignore_model_keys=("params.decoder.extra.**",),  # keep their init values
        )
        state = konfig.resolve(cfg).init_state()  # the decoder holds the pretrained encoder

    Each entry of `new_to_old` maps a path of the new state (a sub-tree or a leaf) to a path of the
    checkpoint; every leaf below the new path is read from the same relative path below the old one,
    converted to the state leaf's dtype and placed like it (its sharding). Everything else keeps its
    value. A new path may be a kontext glob (`"params.**.kernel"`: the leaves it selects); the old path
    then has the same wildcards after its own fixed prefix (`"params.encoder.**.kernel"`), which the
    new path's fixed prefix replaces. Later entries override earlier ones where they overlap.

    The optimizer state is loaded only when mapped (`{"opt_state": "opt_state"}`), the step likewise.
    Every problem is reported at once in a `PartialLoadError` (a ValueError): a shape that differs,
    a model leaf the checkpoint lacks (with the closest checkpoint path), a checkpoint leaf below a
    mapped path that nothing loads, a `new_to_old` path that matches nothing in the model. No
    checkpoint there raises FileNotFoundError. The checkpoints are only read: none is deleted.

    Attributes:
      workdir: The run to load from: its workdir (holding `checkpoints/`) or its `checkpoints` folder.
      step: Which checkpoint; -1 (the default) loads the latest.
      new_to_old: New-state path (or glob) -> checkpoint path. Default: all `params` and `collections`.
      ignore_model_keys: Globs of new-state leaves that may be absent from the checkpoint (they keep
        their init values). A glob matches a leaf's full path (`"params.head.**"`) or its path below
        the `new_to_old` key that selected it (`"head.**"`, Kauldron's way).
      ignore_restored_keys: Globs of checkpoint leaves below a mapped path that may stay unused, matched
        the same way (full path, or the path below the `new_to_old` value).
    """

    workdir: epath.PathLike
    step: int = _LATEST
    new_to_old: Mapping[str, str] = dataclasses.field(
        default_factory=lambda: dict(_new_to_old.DEFAULT_NEW_TO_OLD)
    )
    ignore_model_keys: Sequence[str] = ()
    ignore_restored_keys: Sequence[str] = ()

    def __post_init__(self) -> None:
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < _LATEST:
            raise ValueError(
                f"PartialLoader.step: expected a checkpointed step (an int >= 0) or -1 for the latest, "
                f"got {self.step!r}."
            )
        # Frozen, hashable forms: the loader is a config value (konfig resolves it, the Trainer hashes it).
        object.__setattr__(self, "new_to_old", _new_to_old.checked_new_to_old(self.new_to_old))
        for name in ("ignore_model_keys", "ignore_restored_keys"):
            object.__setattr__(self, name, _new_to_old.checked_globs(name, getattr(self, name)))

    def transform(self, state: _T) -> _T:
        """`state = loader.transform(state)`: a new state with the mapped leaves read from the checkpoint."""
        return self._load(state, self.new_to_old)

    def transform_after_optimizer(self, state: _T) -> _T:
        """Kauldron's hook: loads again only the `opt_state` entries of `new_to_old` (none: unchanged)."""
        opt_state = {new: old for new, old in self.new_to_old.items() if _is_opt_state(new)}
        return self._load(state, opt_state) if opt_state else state

    def _load(self, state: _T, new_to_old: Mapping[str, str]) -> _T:
        restored, source = read_checkpoint(self.workdir, self.step, owner="PartialLoader")
        return _new_to_old.load_partial(
            state,
            restored,
            new_to_old=new_to_old,
            ignore_model_keys=self.ignore_model_keys,
            ignore_restored_keys=self.ignore_restored_keys,
            source=source,
        )


def _is_opt_state(path: str) -> bool:
    return path == "opt_state" or path.startswith(("opt_state.", "opt_state["))


@dataclasses.dataclass(frozen=True, kw_only=True)
class SimpleCheckpointLoader(_ClosingLoader, _init_transform.InitTransform):
    """Loads `params` and `collections` (and, asked, `opt_state`) as they are from another run's checkpoint.

        cfg.init_transform = kd.ckpts.SimpleCheckpointLoader(workdir="/runs/pretrain", load_opt_state=True)

    The model must be the one that wrote the checkpoint (same paths and shapes); to load parts of it,
    or under other names, use `PartialLoader`. Each value takes the dtype and sharding of the leaf it
    replaces. kd's Trainer calls `transform` only, with the optimizer state already built, so
    `transform` loads `opt_state` too when `load_opt_state`; `transform_after_optimizer` (Kauldron's
    second hook) loads `opt_state` alone when `load_opt_state`.

    Attributes:
      workdir: The run to load from: its workdir (holding `checkpoints/`) or its `checkpoints` folder.
      step: Which checkpoint; -1 (the default) loads the latest.
      load_opt_state: Load the optimizer state as well.
    """

    workdir: epath.PathLike
    step: int = _LATEST
    load_opt_state: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < _LATEST:
            raise ValueError(
                f"SimpleCheckpointLoader.step: expected a checkpointed step (an int >= 0) or -1 for the "
                f"latest, got {self.step!r}."
            )

    def transform(self, state: _T) -> _T:
        """`state = loader.transform(state)`: params and collections (and opt_state, when asked) loaded."""
        keys = ("params", "collections", "opt_state") if self.load_opt_state else ("params", "collections")
        return self._load(state, keys)

    def transform_after_optimizer(self, state: _T) -> _T:
        """`state = loader.transform_after_optimizer(state)`: opt_state loaded when `load_opt_state`."""
        return self._load(state, ("opt_state",)) if self.load_opt_state else state

    def _load(self, state: _T, keys: Sequence[str]) -> _T:
        present = [key for key in keys if jax.tree.leaves(_field(state, key))]
        if not present:
            return state
        restored, source = read_checkpoint(self.workdir, self.step, owner="SimpleCheckpointLoader")
        new_to_old = {key: key for key in present}
        return _new_to_old.load_partial(state, restored, new_to_old=new_to_old, source=source)


def _field(state: Any, key: str) -> Any:
    return state.get(key) if isinstance(state, Mapping) else getattr(state, key, None)


PartialKauldronLoader = PartialLoader
"""Kauldron's name for `PartialLoader`."""


def read_checkpoint(workdir: epath.PathLike, step: int, *, owner: str) -> tuple[Any, str]:
    """`(tree, "step 100 of /runs/a/checkpoints")`: a step (-1: the latest) of another run, read without a
    template and without changing anything there (the run may still be training)."""
    folder = _checkpoints_folder(workdir)
    with _checkpointer.Checkpointer(
        workdir=folder.parent, save_interval_steps=1, read_only=True, enable_async_checkpointing=False
    ) as source:
        steps = source.all_steps()
        if not steps:
            raise FileNotFoundError(f"{owner}(workdir={workdir!r}): no checkpoint in {folder}.")
        chosen = steps[-1] if step == _LATEST else step
        if chosen not in steps:
            raise FileNotFoundError(
                f"{owner}(step={chosen}): no checkpoint for step {chosen} in {folder} "
                f"(available steps: {', '.join(map(str, steps))})."
            )
        return source.restore_raw(step=chosen), f"step {chosen} of {folder}"


def _checkpoints_folder(workdir: epath.PathLike) -> epath.Path:
    """`_checkpoints_folder("/runs/pretrain")` -> `/runs/pretrain/checkpoints`; FileNotFoundError if absent.

    A path that is itself a `checkpoints` folder is returned as is.
    """
    path = epath.Path(workdir)
    if (path / _checkpointer.CHECKPOINT_FOLDER_NAME).is_dir():
        return path / _checkpointer.CHECKPOINT_FOLDER_NAME
    if path.name == _checkpointer.CHECKPOINT_FOLDER_NAME and path.is_dir():
        return path
    raise FileNotFoundError(
        f"PartialLoader(workdir={str(workdir)!r}): no checkpoint folder: "
        f"{path / _checkpointer.CHECKPOINT_FOLDER_NAME} does not exist. Pass the workdir of the run to load "
        f"from (the folder holding `{_checkpointer.CHECKPOINT_FOLDER_NAME}/`) or that folder itself."
    )


def workdir_from_xid(xid: int, wid: int = 1) -> epath.Path:
    """Kauldron's XManager look-up of a run's workdir: there is no XManager here, so it always raises.

    Pass the run's workdir itself instead: `kd.ckpts.PartialLoader(workdir="/runs/pretrain", ...)`.
    """
    raise NotImplementedError(
        f"kd.ckpts.workdir_from_xid(xid={xid!r}, wid={wid!r}): kd has no XManager to ask for an "
        "experiment's workdir. Pass the workdir path of the run to load from instead, e.g. "
        "PartialLoader(workdir='/runs/pretrain') (the folder holding checkpoints/)."
    )
