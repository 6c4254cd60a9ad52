"""`Checkpointer`: the train state, the data position and run info, saved with orbax under the workdir."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import jax
from etils import epath

from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.ckpts import _base, _digests, _errors, _kauldron, _orbax, _quiet, _retention, _structure, items

CHECKPOINT_FOLDER_NAME = "checkpoints"
"""Checkpoints live in `<workdir>/checkpoints/ckpt_<step>/{state,data,info}`."""

UNREADABLE_FOLDER_NAME = "checkpoints.unreadable"
"""Damaged checkpoints are moved to `<workdir>/checkpoints.unreadable/` (kept, never deleted)."""

_DATA = "data"
_INFO = "info"
_JSON_ITEMS = (_DATA, _INFO)


def _positive_or_none(owner: str, name: str, value: Any, *, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        expected = "a positive int" + (" or None" if allow_none else "")
        raise ValueError(f"{owner}.{name}: expected {expected}, got {value!r}.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Checkpointer(_kauldron.KauldronCheckpointer, _base.BaseCheckpointer):
    """Saves the train state, the data iterator position and run info in `<workdir>/checkpoints/`, with orbax.

        ckpt = kd.ckpts.Checkpointer(workdir="/tmp/run", save_interval_steps=1000, max_to_keep=3)
        restored = ckpt.restore_latest(state)  # None in a new workdir
        if restored is not None:
            state, data_state = restored
        ckpt.maybe_save(step, state=state, data_state=data_state)  # every 1000 steps
        ckpt.close()

    In a config, leave `workdir` out: the Trainer fills it with `trainer.workdir`.

    Kauldron's calls work too (`kd.ckpts._kauldron`): `ckpt.save(state, step=100)`, `ckpt.maybe_save(state,
    step=step)`, `state = ckpt.restore(state)` (the latest; the state alone, not `Restored`), `ckpt.all_steps`
    (a property as well as a method), `delete`, `item_metadata`, `iter_new_checkpoints`. Kauldron's
    fields `keep_time_interval`, `preservation_policy`, `multiprocessing_options`,
    `lightweight_initialize`, `cleanup_orphaned_snapshots`, `fast` and `create` are not taken.

    Every save is atomic: orbax writes it to a temporary folder renamed once complete, so a save cut
    short by the process dying is never listed (the next start warns about it and removes the
    leftover). Each checkpoint holds a digest of every array, of the data iterator state and of the
    run info, computed in the background save thread and committed with it; a restore checks them.
    A damaged checkpoint (a digest that differs, a truncated or missing file, undecodable metadata, a
    `ckpt_<N>` folder that is not a whole checkpoint: empty, or its `state/_METADATA` gone) is moved to
    `<workdir>/checkpoints.unreadable/` by `restore_latest`, with a one-line warning, and the previous
    one is restored. Other errors (PermissionError, an I/O error such as EIO, MemoryError)
    are raised and nothing is set aside. A checkpoint without digests (written by an older kd, or with
    `digest_algorithm=None`) restores unverified. Saves run in the background
    (`enable_async_checkpointing`); `restore*`, `wait_until_finished` and `close` wait for them.

    Attributes:
      workdir: The run's directory; checkpoints go to `<workdir>/checkpoints/`.
      save_interval_steps: `maybe_save` writes at the steps that are multiples of this.
      max_to_keep: How many of the newest checkpoints to keep; None keeps all.
      keep_period: Also keep, forever, every checkpoint whose step is a multiple of this.
      save_on_steps: Also write at these steps.
      best_metric_path: Also keep the checkpoint with the best value of this logged value, e.g.
        `"eval/metrics/accuracy"` (an evaluator's name, then the name it logs; Kauldron's dotted
        `"eval.accuracy"` works too). Evaluate at the checkpoint steps for it to have values.
      best_mode: `"max"` or `"min"`: which value of `best_metric_path` is best.
      never_save_step_zero: Skip step 0 unless forced (it is the initial state).
      enable_async_checkpointing: Write in a background thread (the arrays are copied to host first,
        so the next train step may donate them).
      read_only: Only read (another process's checkpoints, e.g. a running job's): nothing is saved,
        deleted or cleaned up, and the folder is not created.
      digest_algorithm: How the digests saved with each checkpoint are computed: `"crc32"` (the
        default: ~2 GB/s, catches damage such as flipped bits and cut files, not deliberate edits),
        `"sha256"` or `"blake2b"` (cryptographic, about half as fast: ~8% of the time of 50 training
        steps of `benchmarks/checkpoint_bench.py`'s 50M-parameter model, against ~4% for crc32); None
        saves none (restores still check the digests a checkpoint has).
    """

    workdir: epath.PathLike | RootRef = ROOT_CFG_REF.workdir
    save_interval_steps: int
    max_to_keep: int | None = 3
    keep_period: int | None = None
    save_on_steps: Sequence[int] | None = None
    best_metric_path: str | None = None
    best_mode: str = "max"
    never_save_step_zero: bool = False
    enable_async_checkpointing: bool = True
    read_only: bool = False
    digest_algorithm: str | None = "crc32"

    def __post_init__(self) -> None:
        _positive_or_none("Checkpointer", "save_interval_steps", self.save_interval_steps, allow_none=False)
        _positive_or_none("Checkpointer", "max_to_keep", self.max_to_keep, allow_none=True)
        _positive_or_none("Checkpointer", "keep_period", self.keep_period, allow_none=True)
        if self.save_on_steps is not None:  # a tuple, so the Checkpointer stays hashable
            object.__setattr__(self, "save_on_steps", tuple(int(s) for s in self.save_on_steps))
        _digests.check_algorithm("Checkpointer", self.digest_algorithm)
        if self.best_mode not in _retention.BEST_MODES:
            raise ValueError(f"Checkpointer.best_mode: expected 'max' or 'min', got {self.best_mode!r}.")
        if self.best_metric_path is not None and not (
            isinstance(self.best_metric_path, str) and self.best_metric_path
        ):
            raise ValueError(
                f"Checkpointer.best_metric_path: expected a logged value's name such as "
                f"'eval/metrics/accuracy', got {self.best_metric_path!r}."
            )

    @property
    def directory(self) -> epath.Path:
        """`ckpt.directory`: `<workdir>/checkpoints`."""
        if isinstance(self.workdir, RootRef):
            raise ValueError(
                f"Checkpointer.workdir is still {self.workdir!r}: build the Checkpointer inside a "
                "kd.train.Trainer (which fills it with trainer.workdir) or pass workdir=..."
            )
        workdir = str(self.workdir)
        if "://" not in workdir:  # a local path: orbax takes absolute ones only (`--cfg.workdir=runs/a`)
            workdir = os.path.abspath(workdir)
        return epath.Path(workdir) / CHECKPOINT_FOLDER_NAME

    def step_directory(self, step: int) -> epath.Path:
        """`ckpt.step_directory(100)`: `<workdir>/checkpoints/ckpt_100`, where the checkpoint of that step is
        (or would be) kept."""
        return _orbax.step_directory(self.directory, step)

    @functools.cached_property
    def _manager(self) -> Any:
        directory = self.directory
        if self.read_only and not directory.exists():
            raise FileNotFoundError(
                f"Checkpointer(read_only=True): there is no checkpoint folder {directory}."
            )
        leftovers = [] if self.read_only else _orbax.incomplete_directories(directory)
        if not self.read_only:
            _orbax.barrier("kd_ckpts_listed")  # every host has looked before one removes anything
        for leftover in leftovers:
            warnings.warn(
                f"Ignoring the incomplete checkpoint {leftover}: its save never completed (the process "
                "writing it stopped first); it is removed and the newest complete checkpoint is used.",
                _errors.CheckpointWarning,
                stacklevel=3,
            )
            if jax.process_index() == 0:  # one host changes the shared folder, the others wait for it
                _orbax.remove_directory(leftover)
        if not self.read_only:
            _orbax.barrier("kd_ckpts_open")
        _quiet.hold()
        try:
            return _orbax.open_manager(
                directory,
                json_names=_JSON_ITEMS,
                asynchronous=self.enable_async_checkpointing,
                read_only=self.read_only,
            )
        except BaseException:
            _quiet.release()
            raise

    @functools.cached_property
    def _metric_by_step(self) -> dict[int, float]:
        """step -> value of `best_metric_path`, read from the kept checkpoints' info once, then kept up to date."""
        values = {}
        for step in _orbax.steps(self._manager):
            value = self._best_value((self._read_info(step) or {}).get("metrics", {}))
            if value is not None:
                values[step] = value
        return values

    # ---------------------------------------------------------------- restore

    def restore_latest(self, state: _base.StateT) -> _base.Restored[_base.StateT] | None:
        """`state, data_state = ckpt.restore_latest(state)`, or None when no checkpoint exists.

        `state` is the template (arrays or `jax.ShapeDtypeStruct`s): the result has its pytree
        structure and types, and each array its shape, dtype and sharding. A checkpoint whose tree
        differs raises `CheckpointStructureError` naming the differing paths. A damaged one
        (`CheckpointDamagedError`: a digest that differs, a truncated or missing file, a folder that is
        not a whole checkpoint, such as an empty `ckpt_<N>`) is moved to
        `<workdir>/checkpoints.unreadable/` with a one-line `CheckpointWarning`, and the one before it is
        restored; when every one is damaged, a last line says so and None is returned (a fresh start:
        the damaged ones are kept aside, never deleted). Any other error is raised, nothing set aside.
        """
        # The saves in flight complete; retention waits for the next save (it would count the folders that
        # are about to be set aside, and delete good checkpoints instead).
        _orbax.wait(self._manager)
        set_aside = []
        try:
            for step in reversed(_orbax.steps(self._manager)):
                try:
                    return self._restore_step(state, step=step)
                except _errors.CheckpointDamagedError as e:
                    set_aside.append(self._set_aside(step, e))
        finally:
            if set_aside:  # the failed reads orbax left unfinished go now, while their reports are dropped
                _quiet.collect_failed_reads()
        if set_aside:
            where = "kept in place (read_only)" if self.read_only else f"moved to {set_aside[0].parent}"
            _warn_one_line(
                f"Every checkpoint in {self.directory} was damaged ({len(set_aside)}, {where}, none "
                "deleted): there is no checkpoint to restore, so the run starts from step 0."
            )
        return None

    def restore(
        self, state: Any = None, *, step: int = -1, noop_if_missing: bool = False, donate: bool = False
    ) -> Any:
        """`state, data_state = ckpt.restore(state, step=1000)`: that step onto the template `state`.

        A plain state (the template) and a step >= 0 return `Restored(state, data_state)`, checked against
        the digests saved with it. Any other call is Kauldron's `state = ckpt.restore(state)`, which
        returns the restored state alone: a `kd.ckpts.items` item as the state, no step or `step=-1` (the
        latest), or `noop_if_missing=` / `donate=` passed (`KauldronCheckpointer._restore_kauldron`):
        `noop_if_missing=True` returns `state` unchanged when there is no checkpoint at all, `donate=True`
        frees `state`'s device arrays before reading. A damaged step is never skipped here (`restore_latest`
        does that).

        FileNotFoundError when the step is not saved; `CheckpointDamagedError` (`CheckpointDigestError`
        for a digest that differs) when it is damaged; other errors met reading it (PermissionError,
        OSError, MemoryError, `CheckpointReadError` of an unknown cause) as they are.
        """
        if _kauldron.is_kauldron_restore(state, step=step, noop_if_missing=noop_if_missing, donate=donate):
            return self._restore_kauldron(state, step=step, noop_if_missing=noop_if_missing, donate=donate)
        return self._restore_step(state, step=step)

    def _restore_step(self, state: _base.StateT, *, step: int) -> _base.Restored[_base.StateT]:
        """kd's `restore`: the given step onto the template `state`, digests checked."""
        return self._read_step(state, step=step, extras={})[0]

    def _read_step(
        self, state: Any, *, step: int, extras: Mapping[str, items.CheckpointItem]
    ) -> tuple[_base.Restored[Any], dict[str, Any]]:
        """`(Restored(state, data_state), {extra item name: what orbax read})`; `state=None` reads no state."""
        manager = self._manager
        _orbax.wait(manager)
        step = self._known_step(step, "restore")
        self._check_whole(step)
        where = f"step {step} in {self.directory}"
        with _quiet.restoring():
            missing = sorted(set(extras) - _orbax.item_names(manager, step))
            if missing:
                raise FileNotFoundError(
                    f"Checkpointer.restore: {where} has no item {missing} (it holds "
                    f"{sorted(_orbax.item_names(manager, step))}); it was saved without them."
                )
            restore_args = {}
            for name, item in extras.items():
                restore_args[name] = item.__kd_ocp_restore_args__()
                _orbax.add_item(manager, name, item.__kd_ocp_handlers__(), type(restore_args[name]))
            if state is not None:
                try:
                    on_disk = _orbax.state_metadata(manager, step)
                except Exception as e:
                    self._raise_read_error(step, e)
                _structure.check_matches(state, on_disk, where=where)
            try:
                restored, read = _orbax.restore(
                    manager, step, template=state, json_names=_JSON_ITEMS, extra_items=restore_args
                )
                record = _orbax.restore_digests(manager, step) if state is not None else None
            except Exception as e:
                self._raise_read_error(step, e)
            if record is not None:
                self._check_digests(step, record, restored, {name: read.get(name) for name in _JSON_ITEMS})
        return _base.Restored(restored, read.get(_DATA)), {name: read[name] for name in extras}

    def restore_raw(self, *, step: int | None = None) -> Any:
        """`tree = ckpt.restore_raw(step=100)`: the saved state as orbax stores it, without a template.

        Dataclasses and named tuples come back as dicts of their fields, tuples as lists, each leaf as
        an array of its saved shape and dtype. `step=None` reads the latest checkpoint; FileNotFoundError
        when there is none (or not that step).
        """
        manager = self._manager
        _orbax.wait(manager)
        if step is None:
            step = max(_orbax.steps(manager), default=None)
        step = self._known_step(step, "restore_raw")
        self._check_whole(step)
        with _quiet.restoring():
            try:
                raw = _orbax.restore_raw(manager, step)
                record = _orbax.restore_digests(manager, step)
            except Exception as e:
                self._raise_read_error(step, e)
            if record is not None:
                self._check_digests(step, record, raw, {})
        return raw

    def info(self, step: int) -> dict[str, Any]:
        """`ckpt.info(100)`: what was saved with step 100 besides the state: `metrics` and the caller's `info`."""
        _orbax.wait(self._manager)
        return self._read_info(self._known_step(step, "info")) or {}

    # ---------------------------------------------------------------- save

    def should_save(self, step: int) -> bool:
        """`ckpt.should_save(step)`: a multiple of `save_interval_steps` or one of `save_on_steps`."""
        step = int(step)
        if step == 0 and self.never_save_step_zero:
            return False
        return self._on_schedule(step)

    def _on_schedule(self, step: int) -> bool:
        return step % self.save_interval_steps == 0 or step in (self.save_on_steps or ())

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
        """`ckpt.maybe_save(step, state=state, data_state=it.get_state())`: True when it saved.

        Kauldron's spelling `ckpt.maybe_save(state, step=step, force=False)` is the same call. Saves
        when `should_save(step)` or `force`. A step already saved is skipped (False), forced
        or not. `data_state` and `info` must be JSON (they come back with lists for tuples); `metrics`
        are the values logged at this step (numbers by name), kept to choose the best checkpoint.
        Older checkpoints beyond `max_to_keep` (except `keep_period` multiples and the best) are deleted
        once a newer one is complete. `state` may be a `kd.ckpts.items.StandardCheckpointItem`.
        """
        step, state = _base.saving_call("Checkpointer.maybe_save", step_or_state, step, state)
        return self._save(
            step,
            state,
            data_state=data_state,
            metrics=metrics,
            info=info,
            force=force,
            chosen=self.should_save(step),
            method="maybe_save",
        )

    def _save(
        self,
        step: int,
        state: Any,
        *,
        data_state: Mapping[str, Any] | None,
        metrics: Mapping[str, Any] | None,
        info: Mapping[str, Any] | None,
        force: bool,
        chosen: bool,
        method: str,
    ) -> bool:
        """Writes `step` when forced or `chosen` (by the caller's rule: `should_save` for `maybe_save`).
        `state` is split into the checkpoint's state and its items with their own handlers (`items.split`)."""
        state, extras = items.split(state, method=method)
        if self.read_only:
            raise PermissionError(f"Checkpointer.{method}(step={step}): this Checkpointer is read_only.")
        manager = self._manager
        if step in manager.all_steps() or not (force or chosen):
            return False
        numbers = _numbers(metrics or {})
        json_items = {_INFO: {"metrics": numbers, **_checked_json(info or {}, "info")}}
        if data_state is not None:
            json_items[_DATA] = _checked_json(data_state, "data_state")
        _orbax.wait(manager)  # the previous save is complete: older ones may now go
        self._apply_retention(upcoming=step)
        extra_items = {}
        for name, item in extras.items():
            extra_items[name] = item.__kd_ocp_save_args__()
            _orbax.add_item(manager, name, item.__kd_ocp_handlers__(), type(extra_items[name]))
        saved = _orbax.save(
            manager,
            step,
            state=state,
            json_items=json_items,
            digest_algorithm=self.digest_algorithm,
            extra_items=extra_items,
        )
        if saved and self.best_metric_path is not None:
            value = self._best_value(numbers)
            if value is not None:
                self._metric_by_step[step] = value
        return saved

    @property
    def best_step(self) -> int | None:
        """`ckpt.best_step`: the kept step with the best `best_metric_path` value (None without one)."""
        if self.best_metric_path is None:
            return None
        _orbax.wait(self._manager)
        kept = set(_orbax.steps(self._manager))
        metric = {s: v for s, v in self._metric_by_step.items() if s in kept}
        return _retention.best_step(metric, best_mode=self.best_mode)

    # ---------------------------------------------------------------- listing and lifetime

    @property
    def latest_step(self) -> int | None:
        """`ckpt.latest_step`: the newest step saved (including one this process is still writing)."""
        return self._manager.latest_step()

    @property
    def all_steps(self) -> _base.Steps:
        """`ckpt.all_steps` (Kauldron) or `ckpt.all_steps()` (kd): the saved steps, oldest first."""
        return _base.Steps(lambda: _orbax.steps(self._manager))

    def reload(self) -> None:
        """`ckpt.reload()`: read the list of checkpoints from disk again (another process may have saved)."""
        if "_manager" in self.__dict__:
            _orbax.reload(self._manager)

    def wait_until_finished(self) -> None:
        """`ckpt.wait_until_finished()`: block until the saves in flight are complete on disk."""
        if "_manager" in self.__dict__:
            _orbax.wait(self._manager)
            self._apply_retention(upcoming=None)

    def close(self) -> None:
        """`ckpt.close()`: finish the saves in flight and release orbax (using it again reopens it)."""
        if "_manager" not in self.__dict__:
            return
        try:
            self.wait_until_finished()
        finally:
            manager = self.__dict__.pop("_manager")
            self.__dict__.pop("_metric_by_step", None)
            try:
                _orbax.close(manager)
            finally:
                _quiet.release()

    def __getstate__(self) -> dict[str, Any]:
        # A copy (deepcopy, pickle) is a fresh Checkpointer: the open orbax manager stays with this one.
        return {k: v for k, v in self.__dict__.items() if k not in ("_manager", "_metric_by_step")}

    # ---------------------------------------------------------------- helpers

    def _known_step(self, step: int | None, method: str) -> int:
        steps = _orbax.steps(self._manager)
        if step is None or int(step) not in steps:
            available = ", ".join(map(str, steps)) or "none"
            raise FileNotFoundError(
                f"Checkpointer.{method}(step={step}): no checkpoint for step {step} in {self.directory} "
                f"(available steps: {available})."
            )
        return int(step)

    def _check_whole(self, step: int) -> None:
        """CheckpointDamagedError when the folder of `step` lacks what every complete save holds (an empty
        folder, a `ckpt_<N>` made by hand, `state/_METADATA` deleted): no read of it could succeed."""
        directory = _orbax.step_directory(self.directory, step)
        missing = _orbax.what_is_missing(directory)
        if missing is not None and directory.exists():
            raise _errors.CheckpointDamagedError(
                f"The checkpoint {directory} cannot be read: {missing}.", step=step
            )

    def _check_digests(self, step: int, record: Any, restored: Any, json_items: Mapping[str, Any]) -> None:
        where = str(_orbax.step_directory(self.directory, step))
        _digests.check(record, restored, json_items, step=step, where=where)

    def _raise_read_error(self, step: int, error: Exception) -> NoReturn:
        """Raises for `error`, met reading `step`: a CheckpointDamagedError when it proves the checkpoint
        damaged; else the OSError or MemoryError behind it (with a note naming the checkpoint), or a
        CheckpointReadError; FileNotFoundError as is when the step's folder itself is gone."""
        directory = _orbax.step_directory(self.directory, step)
        if isinstance(error, _errors.CheckpointReadError) or (
            isinstance(error, FileNotFoundError) and not directory.exists()
        ):
            raise error
        cause = _cause(error)
        detail = _detail(cause)
        if _errors.proves_damage(error):
            array = _errors.tensorstore_array(cause)
            what = f": its array '{array}' is missing or cut short" if array else ""
            raise _errors.CheckpointDamagedError(
                f"The checkpoint {directory} cannot be read{what} ({type(cause).__name__}: {detail}).",
                step=step,
                path=array,
            ) from error
        for e in _errors.chain(error):
            if isinstance(e, (OSError, MemoryError)):
                e.add_note(
                    f"(reading the checkpoint {directory}: it was not set aside, as this error does not "
                    "show it damaged)"
                )
                if e is error:
                    raise error
                raise e from None  # the error itself, not orbax's wrappers of it
        raise _errors.CheckpointReadError(
            f"The checkpoint {directory} cannot be read ({type(cause).__name__}: {detail}); it was not set "
            "aside, as this error does not show it damaged.",
            step=step,
        ) from error

    def _set_aside(self, step: int, error: _errors.CheckpointDamagedError) -> epath.Path:
        """Moves a damaged checkpoint out of the way (kept for inspection), warns in one line, and returns
        where it went."""
        source = _orbax.step_directory(self.directory, step)
        if self.read_only:
            _warn_one_line(
                f"Step {step}: {error} It was left in place (read_only); restoring the checkpoint before it."
            )
            return source
        target_folder = epath.Path(self.workdir) / UNREADABLE_FOLDER_NAME
        target = target_folder / source.name
        suffix = 1
        while target.exists():
            target, suffix = target_folder / f"{source.name}.{suffix}", suffix + 1
        if jax.process_index() == 0:  # every host found it unreadable; one moves it
            target_folder.mkdir(parents=True, exist_ok=True)
            source.rename(target)
        _orbax.barrier(f"kd_ckpts_set_aside_{step}")
        _orbax.reload(self._manager)
        self.__dict__.pop("_metric_by_step", None)
        _warn_one_line(
            f"Step {step}: {error} It was moved to {target}; restoring the checkpoint before it instead."
        )
        return target

    def _read_info(self, step: int) -> dict[str, Any] | None:
        try:
            return _orbax.restore_json(self._manager, step, _INFO)
        except Exception:
            return None

    def _best_value(self, numbers: Mapping[str, Any]) -> float | None:
        """The value of `best_metric_path` among `numbers` (logged name -> number), None when absent."""
        value = numbers.get(self._best_key(numbers))
        return float(value) if isinstance(value, (int, float)) else None

    def _best_key(self, numbers: Mapping[str, Any]) -> str | None:
        """The logged name `best_metric_path` stands for: itself, or Kauldron's dotted form."""
        path = self.best_metric_path
        if path is None or path in numbers:
            return path
        dotted = _kauldron.dotted_metric_name(path, numbers)
        if dotted is not None:
            return dotted
        if numbers and not self.__dict__.get("_warned_best_key"):
            self.__dict__["_warned_best_key"] = True
            close = difflib.get_close_matches(path.replace(".", "/"), list(numbers), n=3, cutoff=0.5)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            warnings.warn(
                f"Checkpointer.best_metric_path={path!r} is not among the values logged with the checkpoint "
                f"({', '.join(sorted(numbers)[:12])}).{hint}",
                _errors.CheckpointWarning,
                stacklevel=4,
            )
        return path

    def _apply_retention(self, *, upcoming: int | None) -> None:
        """Deletes the complete checkpoints retention no longer keeps, counting `upcoming` as the newest;
        the newest complete one always stays until `upcoming` is complete too."""
        if self.max_to_keep is None or self.read_only:
            return
        manager = self._manager
        complete = _orbax.steps(manager)
        if not complete:
            return
        candidates = complete + ([upcoming] if upcoming is not None else [])
        metric = self._metric_by_step if self.best_metric_path is not None else None
        kept = _retention.steps_to_keep(
            candidates,
            max_to_keep=self.max_to_keep,
            keep_period=self.keep_period,
            metric=metric,
            best_mode=self.best_mode,
        )
        if upcoming is not None:
            kept.add(complete[-1])
        for step in complete:
            if step not in kept:
                _orbax.delete(manager, step)


def _cause(error: BaseException) -> BaseException:
    """The innermost error of a chain that says something (orbax wraps tensorstore's errors in bare ones)."""
    chain = _errors.chain(error)
    for e in reversed(chain):
        if str(e):
            return e
    return error


def _detail(error: BaseException) -> str:
    """An error's text on one line, without the tensorstore spec dumps that follow its message."""
    text = " ".join(str(error).split())
    for tail in (" [tensorstore_spec=", " See full TensorStore details"):
        text = text.split(tail)[0]
    return text if len(text) <= 240 else text[:239] + "…"


def _warn_one_line(message: str) -> None:
    """A CheckpointWarning that takes one line on stderr: `kd.ckpts: CheckpointWarning: <message>`.

    warnings.warn would add the source line of the caller; an explicit location without source leaves it out.
    """
    warnings.warn_explicit(
        " ".join(message.split()), _errors.CheckpointWarning, "kd.ckpts", 0, module="kd.ckpts"
    )


def _numbers(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The finite scalar values of `metrics` as floats (arrays and non-numbers are left out)."""
    out = {}
    for name, value in metrics.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            out[str(name)] = number
    return out


def _checked_json(value: Mapping[str, Any], argument: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"Checkpointer.maybe_save({argument}=...): expected a JSON dict, got {type(value).__name__}."
        )
    try:
        json.dumps(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Checkpointer.maybe_save({argument}=...): expected a JSON dict; {e}.") from None
    return dict(value)
