"""The one module that calls orbax-checkpoint: open a checkpoint folder, save, read, list, delete.

    manager = _orbax.open_manager(directory, asynchronous=True)
    _orbax.save(manager, 100, state=state, json_items={"data": {...}, "info": {...}})
    tree = _orbax.state_metadata(manager, 100)        # orbax's metadata tree of the state
    state, items = _orbax.restore(manager, 100, template=abstract_state, json_names=("data",))

Everything else in kd.ckpts works on steps, paths and pytrees, so an orbax API change is fixed here.
Checkpoints are folders `<directory>/ckpt_<step>/` holding one orbax item per name: `state` (the arrays,
orbax's standard handler), small JSON items, and `digests` (kd's handler below: a digest of each array and
JSON item, computed in orbax's background save thread). orbax writes each into a temporary folder and
renames it once every item is complete, so a listed step is always whole, digests included.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
from etils import epath

from kd import _interrupts
from kd.ckpts import _digests

if TYPE_CHECKING:
    import orbax.checkpoint as ocp


@functools.cache
def _ocp() -> Any:
    """orbax.checkpoint, imported on first use: `import kd.train` does not pay for it (~230 modules)."""
    import orbax.checkpoint

    return orbax.checkpoint


STEP_PREFIX = "ckpt"
STATE = "state"
DIGESTS = "digests"
_DIGESTS_FILE = "digests.json"
_TMP_MARK = ".orbax-checkpoint-tmp"
_TREE_METADATA = "_METADATA"


@functools.cache
def _digest_item() -> tuple[type, type, type]:
    """`(handler, save args, restore args)` of the `digests` item (defined on first use, as orbax is)."""
    ocp = _ocp()

    class DigestsHandler(ocp.AsyncCheckpointHandler):
        """Writes `digests.json`: the digests of the state's arrays and of the JSON items saved with it.

        The blocking part (on the caller's thread) only takes host views of the arrays; hashing and
        writing run in a commit future, a thread of orbax's, before the checkpoint's folder is renamed.
        """

        def _write(self, directory: epath.Path, args: Any, leaves: list[Any]) -> None:
            if jax.process_index() == 0:
                record = _digests.digest_record(leaves, args.json_items, algorithm=args.algorithm)
                (directory / _DIGESTS_FILE).write_text(json.dumps(record))

        async def async_save(self, directory: epath.Path, args: Any) -> list[Any]:
            leaves = _digests.host_leaves(args.state)

            async def write() -> None:
                self._write(directory, args, leaves)

            return [ocp.future.CommitFutureAwaitingContractedSignals(write(), name="kd_digests")]

        def save(self, directory: epath.Path, args: Any) -> None:
            self._write(directory, args, _digests.host_leaves(args.state))

        def restore(self, directory: epath.Path, args: Any = None) -> Any:
            return json.loads((directory / _DIGESTS_FILE).read_text())

    @ocp.args.register_with_handler(DigestsHandler, for_save=True)
    class DigestsSave(ocp.args.CheckpointArgs):
        def __init__(self, state: Any, json_items: Mapping[str, Any], algorithm: str) -> None:
            self.state, self.json_items, self.algorithm = state, json_items, algorithm

    @ocp.args.register_with_handler(DigestsHandler, for_restore=True)
    class DigestsRestore(ocp.args.CheckpointArgs):
        pass

    return DigestsHandler, DigestsSave, DigestsRestore


def step_directory(directory: epath.Path, step: int) -> epath.Path:
    """`<directory>/ckpt_<step>`: where orbax keeps that step."""
    return directory / f"{STEP_PREFIX}_{int(step)}"


def incomplete_directories(directory: epath.Path) -> list[epath.Path]:
    """The temporary folders of saves that never completed (their process died while writing)."""
    if not directory.exists():
        return []
    return sorted(p for p in directory.iterdir() if _TMP_MARK in p.name)


def what_is_missing(folder: epath.PathLike) -> str | None:
    """Why the step folder `folder` cannot be a checkpoint orbax completed, in words; None when it looks whole.

        what_is_missing(directory / "ckpt_100")  # None, "it holds no saved item (an empty folder)", ...

    A save orbax completed holds a folder per item, and its `state` item the tree's metadata (`_METADATA`,
    which a restore reads first). A folder without them (made by hand, emptied, a file deleted since) is no
    checkpoint to restore: kd.ckpts sets it aside as damaged, and `kd-train` does not count it as saved.
    """
    folder = epath.Path(folder)
    try:
        items = [path for path in folder.iterdir() if path.is_dir()]
    except FileNotFoundError:
        return "its folder is gone"
    if not items:
        return "it holds no saved item (an empty folder, not a complete checkpoint)"
    state = folder / STATE
    if state.is_dir() and not (state / _TREE_METADATA).exists():
        return f"its file {STATE}/{_TREE_METADATA} (the saved tree's description) is missing"
    return None


def barrier(name: str) -> None:
    """Waits until every process reaches the barrier `name` (nothing to wait for in a single process)."""
    if jax.process_count() > 1:
        _ocp().multihost.sync_global_processes(name)


def remove_directory(path: epath.Path) -> None:
    """Deletes a folder and what it holds (a leftover of an incomplete save)."""
    path.rmtree(missing_ok=True)


def open_manager(
    directory: epath.Path, *, json_names: Iterable[str], asynchronous: bool, read_only: bool = False
) -> ocp.CheckpointManager:
    """An orbax CheckpointManager over `directory` that keeps every step (kd.ckpts decides deletions)."""
    options = _ocp().CheckpointManagerOptions(
        max_to_keep=None,
        step_prefix=STEP_PREFIX,
        enable_async_checkpointing=asynchronous,
        create=not read_only,
        read_only=read_only,
    )
    # The arrays are written uncompressed: zstd saves ~15% of the disk for float weights and costs ~40% more
    # CPU per save, taken from the training step while an asynchronous save runs.
    ocp = _ocp()
    # A registry rather than fixed `item_handlers`: `add_item` can give a Kauldron CheckpointItem with its own
    # handler (e.g. a JSON timer) an item of its own later.
    registry = ocp.handlers.DefaultCheckpointHandlerRegistry()
    pytree = ocp.PyTreeCheckpointHandler(use_compression=False)
    registry.add(STATE, ocp.args.PyTreeSave, pytree)
    registry.add(STATE, ocp.args.PyTreeRestore, pytree)
    for name in json_names:
        json_handler = ocp.JsonCheckpointHandler()
        registry.add(name, ocp.args.JsonSave, json_handler)
        registry.add(name, ocp.args.JsonRestore, json_handler)
    handler, save_args, restore_args = _digest_item()
    digests = handler()
    registry.add(DIGESTS, save_args, digests)
    registry.add(DIGESTS, restore_args, digests)
    manager = ocp.CheckpointManager(directory, options=options, handler_registry=registry)
    manager._kd_registry = registry
    return manager


def add_item(manager: ocp.CheckpointManager, name: str, handler: Any, *args_types: type) -> None:
    """Lets `manager` save and restore the item `name` with `handler`, given its save and restore args types.

    orbax's CompositeCheckpointHandler copies the registry it was built with, so the entry goes into the
    copy it reads (and into ours, for a manager that rebuilds its handler).
    """
    registries = [manager._kd_registry, _live_registry(manager)]
    for registry in registries:
        if registry is None:
            continue
        for args_type in args_types:
            if not registry.has(name, args_type):
                registry.add(name, args_type, handler)


def _live_registry(manager: ocp.CheckpointManager) -> Any:
    """The handler registry orbax's composite handler reads (orbax 0.11-0.12: a copy of the one given)."""
    handler = getattr(getattr(manager, "_checkpointer", None), "_handler", None)
    registry = getattr(handler, "_handler_registry", None)
    return registry if callable(getattr(registry, "add", None)) else None


def steps(manager: ocp.CheckpointManager) -> list[int]:
    """The complete steps the manager knows of, oldest first (`reload` to see other processes' saves)."""
    return sorted(manager.all_steps())


def reload(manager: ocp.CheckpointManager) -> None:
    manager.reload()


def save(
    manager: ocp.CheckpointManager,
    step: int,
    *,
    state: Any,
    json_items: Mapping[str, Mapping[str, Any]],
    digest_algorithm: str | None,
    extra_items: Mapping[str, Any] | None = None,
) -> bool:
    """Starts writing `step` (in the background when the manager is asynchronous); waits for the previous save.

    With a `digest_algorithm`, the `digests` item is written too (see `_digests`); None leaves it out.
    `state=None` writes no `state` item; `extra_items` are orbax save args by item name (see `add_item`).
    """
    items: dict[str, Any] = {} if state is None else {STATE: _ocp().args.PyTreeSave(state)}
    items.update(extra_items or {})
    items.update({name: _ocp().args.JsonSave(dict(value)) for name, value in json_items.items()})
    if digest_algorithm is not None:
        items[DIGESTS] = _digest_item()[1](state, dict(json_items), digest_algorithm)
    complete = [s for s in steps(manager) if s != int(step)]
    folder = str(step_directory(epath.Path(manager.directory), step))
    started = _interrupts.Save(
        step=int(step), resumes_from=max(complete, default=None), partial=folder + _TMP_MARK, folder=folder
    )
    with _interrupts.writing(started):  # a Ctrl-C meanwhile: see kd._interrupts
        try:
            with jax.transfer_guard("allow"):  # saving copies the arrays to host on purpose
                saved = bool(manager.save(int(step), args=_ocp().args.Composite(**items), force=True))
        except BaseException:
            _interrupts.saved()
            raise
        if not saved:
            _interrupts.saved()
        if _interrupts.pending():  # its KeyboardInterrupt comes once the save is complete
            wait(manager)
    return saved


def item_names(manager: ocp.CheckpointManager, step: int) -> set[str]:
    """The items saved at `step` (e.g. {"state", "data", "info"}): its folder's subfolders."""
    folder = step_directory(epath.Path(manager.directory), step)
    return {path.name for path in folder.iterdir() if path.is_dir()}


def state_metadata(manager: ocp.CheckpointManager, step: int) -> Any:
    """orbax's metadata tree of the saved state: nested dicts and lists of array metadata (shape, dtype)."""
    return manager.item_metadata(int(step))[STATE].tree


def _restore_target(leaf: Any) -> Any:
    """What orbax restores a template leaf into: a device array keeps its shape, dtype and sharding."""
    if isinstance(leaf, jax.Array):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=leaf.sharding)
    return leaf  # ShapeDtypeStructs, numpy arrays and Python scalars restore as themselves.


def restore(
    manager: ocp.CheckpointManager,
    step: int,
    *,
    template: Any,
    json_names: Iterable[str],
    extra_items: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """`(state, {json name or extra item name: value})` of `step`: the state has the template's tree, shapes,
    dtypes and shardings; `template=None` reads no state (None). `extra_items`: restore args by item name."""
    present = item_names(manager, step)
    names = [name for name in json_names if name in present]
    items: dict[str, Any] = {}
    if template is not None:
        target = jax.tree.map(_restore_target, template)
        restore_args = _ocp().checkpoint_utils.construct_restore_args(target)
        items[STATE] = _ocp().args.PyTreeRestore(item=target, restore_args=restore_args)
    items.update({name: _ocp().args.JsonRestore() for name in names})
    items.update(extra_items or {})
    restored = manager.restore(int(step), args=_ocp().args.Composite(**items))
    others = [*names, *(extra_items or {})]
    return (restored[STATE] if template is not None else None), {name: restored[name] for name in others}


def restore_digests(manager: ocp.CheckpointManager, step: int) -> Any:
    """The digest record saved with `step` (a JSON dict), or None when it has none (an older checkpoint)."""
    if DIGESTS not in item_names(manager, step):
        return None
    args = _ocp().args.Composite(**{DIGESTS: _digest_item()[2]()})
    return manager.restore(int(step), args=args)[DIGESTS]


def restore_json(manager: ocp.CheckpointManager, step: int, name: str) -> dict[str, Any] | None:
    """One JSON item of `step`, or None when that step has none."""
    if name not in item_names(manager, step):
        return None
    return manager.restore(int(step), args=_ocp().args.Composite(**{name: _ocp().args.JsonRestore()}))[name]


def restore_raw(manager: ocp.CheckpointManager, step: int) -> Any:
    """The saved state without a template: dataclasses and named tuples as dicts, tuples as lists, each leaf a
    numpy array."""
    as_numpy = jax.tree.map(
        lambda _: _ocp().RestoreArgs(restore_type=np.ndarray), state_metadata(manager, step)
    )
    raw = _ocp().args.PyTreeRestore(restore_args=as_numpy)  # host arrays: no device placement to guess
    return manager.restore(int(step), args=_ocp().args.Composite(**{STATE: raw}))[STATE]


def delete(manager: ocp.CheckpointManager, step: int) -> None:
    with _interrupts.writing():  # a Ctrl-C waits until the folder is gone, not half of it
        manager.delete(int(step))


def wait(manager: ocp.CheckpointManager) -> None:
    with _interrupts.writing():
        try:
            manager.wait_until_finished()
        finally:
            _interrupts.saved()


def close(manager: ocp.CheckpointManager) -> None:
    with _interrupts.writing():
        try:
            manager.wait_until_finished()
        finally:
            _interrupts.saved()
        manager.close()


def source_directory() -> str:
    """orbax's installed folder (its log records are recognised by their file paths), found without importing it."""
    spec = importlib.util.find_spec("orbax.checkpoint")
    if spec is None or not spec.submodule_search_locations:
        return os.sep + "orbax-checkpoint-not-installed" + os.sep
    return os.path.join(next(iter(spec.submodule_search_locations)), "")
