"""`NpzWriter`: the default writers, plus the array summaries of each summary step in a NumPy `.npz` file.

trainer = kd.train.Trainer(..., writer=kd.contrib.train.NpzWriter(key_patterns=[r"summaries/logits"]))
np.load(f"{workdir}/array_dumps/train/000001000.npz")["summaries/logits"]
"""

from __future__ import annotations

import dataclasses
import io
import logging
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from etils import epath

from kd._atomic import write_bytes_atomic
from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.utils import status
from kd.writers import KDMetricWriter, Writer

_LOG = logging.getLogger("kd")

FOLDER = "array_dumps"
"""The folder under the workdir holding one folder of `.npz` files per collection (`train`, each evaluator)."""

TRAIN_COLLECTION = "train"
"""The collection of the values no evaluator logged, when the writer names none."""

_STEP_FILE = re.compile(r"^(\d+)\.npz$")
_SAVED_SCALARS = ("losses/", "metrics/")


@dataclasses.dataclass(kw_only=True)
class NpzWriter(KDMetricWriter):
    """Writes what `KDMetricWriter` writes and saves the array summaries of each summary step to
    `<folder>/<step, 9 digits>.npz` (Kauldron's `contrib.train.NpzWriter`).

    Usage: `kd.train.Trainer(..., writer=kd.contrib.train.NpzWriter(save_scalars=True))`, then
    `np.load("<workdir>/array_dumps/train/000000100.npz")["summaries/embedding"]`.

    The folder of the training's values is `output_dir`, else `<workdir>/array_dumps/<collection>`
    (`collection` None: `train`). An evaluator's values (logged as `<evaluator>/summaries/...`) go to
    `<workdir>/array_dumps/<evaluator>` (with `output_dir`: `<output_dir>/<evaluator>`), named without the
    prefix. Only numeric and string arrays are saved (texts, histograms and other objects are not), on the
    lead process only. With neither `output_dir` nor a workdir nothing is saved (a warning says so once).

    Attributes:
      key_patterns: regular expressions; a summary is saved when one of them matches part of its name
        (`re.search`). None: every array summary.
      save_scalars: also save the losses and metrics logged at the same step (as 0-d arrays).
      output_dir: the folder of the `.npz` files; None: under the workdir.
      workdir: the Trainer's.
      evals: the Trainer's evaluators (or their names): which name prefixes are an evaluator's.
    """

    key_patterns: Sequence[str] | None = None
    save_scalars: bool = False
    output_dir: epath.PathLike | None = None
    workdir: Any = ROOT_CFG_REF.workdir
    evals: Any = dataclasses.field(default=ROOT_CFG_REF.evals, repr=False)  # the Trainer shows them already
    _step: int | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    _arrays: dict[str, dict[str, np.ndarray]] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )  # collection -> the arrays saved so far at `_step` (a step's file is rewritten as more arrive)
    _scalars: dict[str, dict[str, Any]] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )  # collection -> the scalars logged at `_step`
    _warned: bool = dataclasses.field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.default_set and not isinstance(self.workdir, RootRef):  # a workdir given here: theirs too
            self.writers = [_with_workdir(writer, self.workdir) for writer in self.writers or ()]
        self.default_set = False  # the Trainer keeps this writer (it replaces a plain default KDMetricWriter)

    def write_scalars(self, step: int, scalars: Mapping[str, Any]) -> None:
        super().write_scalars(step, scalars)
        if self.save_scalars:
            self._start_step(step)
            for name, value in scalars.items():
                collection, key = self._route(name)
                if key.startswith(_SAVED_SCALARS):  # not the schedules' values nor `perf/...`
                    self._scalars.setdefault(collection, {})[key] = value

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        super().write_summaries(step, summaries)
        if not status.is_lead_host:
            return
        if not self._has_destination():
            self._warn_nowhere()
            return
        self._start_step(step)
        by_collection: dict[str, dict[str, Any]] = {}
        for name, value in summaries.items():
            collection, key = self._route(name)
            by_collection.setdefault(collection, {})[key] = value
        if not by_collection:  # a summary step of the training with no summaries: its scalars still count
            by_collection[self.collection or TRAIN_COLLECTION] = {}
        for collection, values in by_collection.items():
            saved = self._arrays.setdefault(collection, {})
            saved.update(_filter_arrays(values, self.key_patterns))
            arrays = dict(saved)
            if self.save_scalars:
                arrays.update(_scalars_as_arrays(self._scalars.get(collection, {})))
            if arrays:
                self._save_npz(step, arrays, collection=collection)

    def resume_from(self, step: int) -> None:
        """Also deletes the `.npz` files of steps after `step` (the run logs them again)."""
        super().resume_from(step)
        self._step, self._arrays, self._scalars = None, {}, {}
        if not self._has_destination() or not status.is_lead_host:
            return
        root = self._root()
        folders = [root, *(path for path in root.iterdir() if path.is_dir())] if root.exists() else []
        for folder in folders:
            for path in folder.iterdir():
                match = _STEP_FILE.match(path.name)
                if match and int(match.group(1)) > step:
                    path.unlink()

    def _save_npz(self, step: int, arrays: Mapping[str, np.ndarray], collection: str | None = None) -> None:
        """Writes `arrays` to `<folder of collection>/<step:09d>.npz`, replacing it whole."""
        folder = self._get_output_dir(collection)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{step:09d}.npz"
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        write_bytes_atomic(path, buffer.getvalue())
        _LOG.info("NpzWriter: saved %d arrays to %s", len(arrays), path)

    def _get_output_dir(self, collection: str | None = None) -> epath.Path:
        """The folder of `collection`'s files (None: this writer's own collection)."""
        own = self.collection or TRAIN_COLLECTION
        collection = collection or own
        if self.output_dir is not None:
            folder = epath.Path(self.output_dir)
            return folder if collection == own else folder / collection
        return self._root() / collection

    def _root(self) -> epath.Path:
        """The folder holding every collection's files: `output_dir`, else `<workdir>/array_dumps`."""
        if self.output_dir is not None:
            return epath.Path(self.output_dir)
        if not self._has_destination():
            raise ValueError(
                "NpzWriter: no folder to save to: output_dir is None and there is no workdir (got "
                f"{self.workdir!r}); set NpzWriter(output_dir=...) or the Trainer's workdir"
            )
        return epath.Path(self.workdir) / FOLDER

    def _has_destination(self) -> bool:
        return self.output_dir is not None or not (self.workdir is None or isinstance(self.workdir, RootRef))

    def _warn_nowhere(self) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(
                "NpzWriter: output_dir is None and there is no workdir: array summaries are not saved",
                stacklevel=3,
            )

    def _start_step(self, step: int) -> None:
        """Forgets what was kept for an earlier step."""
        if step != self._step:
            self._step, self._arrays, self._scalars = step, {}, {}

    def _route(self, name: str) -> tuple[str, str]:
        """`(collection, key)` of a logged name: `"val/summaries/x"` -> `("val", "summaries/x")` for an
        evaluator `val`; any other name is this writer's own collection's, unchanged."""
        for evaluator in sorted(self._evaluator_names(), key=len, reverse=True):
            if name.startswith(evaluator + "/"):
                return evaluator, name[len(evaluator) + 1 :]
        return self.collection or TRAIN_COLLECTION, name

    def _evaluator_names(self) -> set[str]:
        evals = self.evals
        if evals is None or isinstance(evals, RootRef):
            return set()
        if isinstance(evals, Mapping):
            return {str(getattr(evaluator, "name", None) or key) for key, evaluator in evals.items()}
        return {str(name) for name in evals}


def _with_workdir(writer: Writer, workdir: Any) -> Writer:
    """`writer` with `workdir` where its own is still to come from the Trainer (`ROOT_CFG_REF.workdir`)."""
    if isinstance(getattr(writer, "workdir", None), RootRef):
        return dataclasses.replace(writer, workdir=workdir)
    return writer


def _filter_arrays(values: Mapping[str, Any], patterns: Sequence[str] | None) -> dict[str, np.ndarray]:
    """The arrays among `values` (NumPy or JAX, not of objects) whose name one of `patterns` matches
    (`re.search`; None: all), as NumPy arrays."""
    compiled = [re.compile(pattern) for pattern in patterns] if patterns else None
    arrays = {}
    for name, value in values.items():
        if not _is_array(value):
            continue
        if compiled is not None and not any(pattern.search(name) for pattern in compiled):
            continue
        arrays[name] = np.asarray(value)
    return arrays


def _is_array(value: Any) -> bool:
    """A NumPy or JAX array that `np.load` reads back without pickle (not an array of objects)."""
    if isinstance(value, np.ndarray):
        return value.dtype != object
    # A JAX array exists only once JAX is imported (this writer does not import it).
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(value, jax.Array)


def _scalars_as_arrays(scalars: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Each scalar as a 0-d NumPy array (what `np.savez` stores)."""
    return {name: np.asarray(value) for name, value in scalars.items()}

