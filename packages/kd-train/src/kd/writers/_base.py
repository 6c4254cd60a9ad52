"""`Writer`: where logged values go. The Trainer calls it only on logging steps.

writer = kd.writers.InMemoryWriter()
writer.write_scalars(100, {"losses/total": 0.3})
writer.scalars["losses/total"]   # [(100, 0.3)]
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

import numpy as np
from etils import epath

from kd._atomic import write_text_atomic
from kd._root_ref import ROOT_CFG_REF, RootRef
from kd._terminal import print_line


class Writer:
    """Base class of writers: every method is optional (does nothing here); implement what you need.

    A writer of your own, e.g. posting the scalars to a tracking server:

        @dataclasses.dataclass
        class PostScalars(kd.writers.Writer):
            url: str

            def write_scalars(self, step, scalars):
                numbers = {k: float(v) for k, v in scalars.items() if np.ndim(v) == 0}
                requests.post(self.url, json={"step": step, **numbers})

        trainer = kd.train.Trainer(..., writer=PostScalars("https://tracker.example/runs/1"))

    What the Trainer calls: `write_config` once before training (when it was resolved from a config),
    `write_scalars` on metric logging steps (`losses/...`, `metrics/...`, `schedules/...`, `perf/...`,
    and `<evaluator name>/...` after each evaluation; a metric may also give a numpy array),
    `write_summaries` on summary logging steps (`summaries/...`, `<evaluator name>/summaries/...`), and
    `flush` when the run ends. A dataclass writer declaring `workdir: Any = kd.train.ROOT_CFG_REF.workdir`
    (or any other `ROOT_CFG_REF` field) gets the Trainer's value, also inside a `MultiWriter`.
    """

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        """Numbers by name (a metric may give an array) at training step `step`."""

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        """Images `(n, h, w, c)` arrays, `kd.summaries.HistogramValue`s, texts... by name."""

    def write_config(self, config_json: str) -> None:
        """The run's config, as `konfig.to_json` gives it."""

    def write_element_spec(self, step: int, element_spec: Any) -> None:
        """Kauldron's: the shapes and dtypes of one batch, written before training."""

    def write_param_overview(self, step: int, params: Any) -> None:
        """Kauldron's: the model's parameters (a table of shapes and sizes), written before training."""

    def write_context_structure(self, step: int, trainer: Any) -> None:
        """Kauldron's: the paths a key can name in the step's Context, written before training."""

    def resume_from(self, step: int) -> None:
        """The run continues after `step` (restored from its checkpoint; -1: from the start): what was
        written for later steps is dropped, since the run writes it again."""

    def flush(self) -> None:
        """Make what was written so far durable."""

    def close(self) -> None:
        self.flush()

    def collection_writer(self, collection: str) -> Writer:
        """This writer with every logged name prefixed by `collection/` (what an evaluator writes through).

        Usage: `writer.collection_writer("sampling").write_scalars(100, {"metrics/bleu": 0.3})` logs
        `sampling/metrics/bleu`.
        """
        return CollectionWriter(writer=self, collection=collection)

    def write_step_metrics(
        self,
        *,
        step: int,
        aux: Any,
        schedules: Mapping[str, Any] | None = None,
        log_summaries: bool = False,
        timer: Any = None,
    ) -> None:
        """Kauldron's: writes the computed values of `aux` (a `kd.train.AuxiliariesState`), the `schedules`
        values (as `schedules/<name>`) and, with `log_summaries`, the summaries.

        Usage: `self.writer.write_step_metrics(step=step, aux=aux_state, schedules={}, log_summaries=True)`.
        `timer` is accepted for Kauldron code (kd logs its performance values itself).
        """
        del timer
        scalars: dict[str, Any] = {}
        summaries: dict[str, Any] | None = None
        if aux is not None:
            computed = aux.compute()  # a dict (AuxState), or Kauldron's AuxiliariesOutput
            if isinstance(computed, Mapping):
                scalars.update(computed)
            else:
                scalars.update({**computed.loss_values, **computed.metric_values})
                summaries = computed.summary_values  # computed already: not twice
        for name, value in (schedules or {}).items():
            scalars[f"schedules/{name}"] = float(np.asarray(value))
        if scalars:
            self.write_scalars(step, scalars)
        if log_summaries and aux is not None:
            summaries = aux.compute_summaries() if summaries is None else summaries
            if summaries:
                self.write_summaries(step, summaries)


@dataclasses.dataclass(kw_only=True)
class CollectionWriter(Writer):
    """Writes to `writer` with every name prefixed by `collection/`; made by `writer.collection_writer(name)`.

    Usage: `kd.writers.CollectionWriter(writer=trainer.writer, collection="sampling")`. Only process 0
    writes (as the Trainer's own rows); closing it leaves `writer` open (it is shared).
    """

    writer: Writer
    collection: str

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        if _lead_process():
            self.writer.write_scalars(step, {f"{self.collection}/{k}": v for k, v in scalars.items()})

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        if _lead_process():
            self.writer.write_summaries(step, {f"{self.collection}/{k}": v for k, v in summaries.items()})

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.flush()

    def collection_writer(self, collection: str) -> Writer:
        return CollectionWriter(writer=self.writer, collection=collection)


def _lead_process() -> bool:
    import jax

    return jax.process_index() == 0


@dataclasses.dataclass(kw_only=True)
class NoopWriter(Writer):
    """Writes nothing (Kauldron's `NoopWriter`): `kd.train.Trainer(..., writer=kd.writers.NoopWriter())`."""


@dataclasses.dataclass(kw_only=True)
class InMemoryWriter(Writer):
    """Keeps everything: `scalars[name] == [(step, value), ...]`, `summaries[name] == [(step, value), ...]`."""

    scalars: dict[str, list[tuple[int, float]]] = dataclasses.field(default_factory=dict)
    summaries: dict[str, list[tuple[int, Any]]] = dataclasses.field(default_factory=dict)

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        for name, value in scalars.items():
            self.scalars.setdefault(name, []).append((step, value))

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        for name, value in summaries.items():
            self.summaries.setdefault(name, []).append((step, value))

    def resume_from(self, step: int) -> None:
        for table in (self.scalars, self.summaries):
            for rows in table.values():
                rows[:] = [(s, v) for s, v in rows if s <= step]


@dataclasses.dataclass(kw_only=True)
class PrintWriter(Writer):
    """One line per logging step, at most `max_width` columns: `step 100 | xent 0.0312 | accuracy 0.91`.

    Names are shortened where no two clash: `losses/xent` -> `xent`, `metrics/accuracy` -> `accuracy`,
    `schedules/lr` -> `lr`, `val/metrics/accuracy` -> `val/accuracy`, `perf/steps_per_sec` -> `step/s`; the
    other `perf/` values are left to the files. What does not fit ends the line as `(+N more)`.
    """

    stream: TextIO | None = None
    max_values: int = 8
    max_width: int = 100

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        named = [(name, value) for name, value in scalars.items() if not _files_only(name)]
        labels = short_labels([name for name, _ in named])
        line, shown = f"step {step}", 0
        for (name, value), label in zip(named, labels, strict=True):
            rate = name == "perf/steps_per_sec" and label == "step/s"
            part = f"{_rate(value)} {label}" if rate else f"{label} {_short(value)}"
            left = len(named) - shown - 1
            room = self.max_width - (len(f" | (+{left} more)") if left else 0)
            if shown == self.max_values or len(line) + 3 + len(part) > room:
                break
            line, shown = f"{line} | {part}", shown + 1
        if shown < len(named):
            line += f" | (+{len(named) - shown} more)"
        print_line(line, self.stream or sys.stdout)  # above the progress bar, when one is shown


# Logged for the files (metrics.jsonl, TensorBoard), not the terminal line.
_FILES_ONLY = ("perf/train_seconds", "perf/compile_seconds")


def _files_only(name: str) -> bool:
    return name in _FILES_ONLY


def _short_label(name: str) -> str:
    if name == "perf/steps_per_sec":
        return "step/s"
    parts = name.split("/")
    if len(parts) > 1 and parts[0] in ("losses", "metrics", "schedules"):
        return "/".join(parts[1:])
    if len(parts) > 2 and parts[1] in ("losses", "metrics"):  # an evaluator's: `val/metrics/accuracy`
        return "/".join([parts[0], *parts[2:]])
    return name


def short_labels(names: Sequence[str]) -> list[str]:
    """Each name's short label, or the name itself where two names would share one."""
    short = [_short_label(n) for n in names]
    counts: dict[str, int] = {}
    for label in short:
        counts[label] = counts.get(label, 0) + 1
    return [label if counts[label] == 1 else name for name, label in zip(names, short, strict=True)]


@dataclasses.dataclass(kw_only=True)
class JsonlWriter(Writer):
    """Appends `{"step": 100, "wall_time": 1.7e9, "losses/total": 0.3}` lines to `<workdir>/metrics.jsonl`.

    `wall_time` is `time.time()` (seconds since the epoch) when the line was written. Arrays are left
    out (only scalars are written); NaN and infinities are written as `null`, so every line stays
    valid JSON for strict readers (`jq`, JavaScript).

    Each line is written whole by one `os.write` on a file opened for appending, so a run killed
    mid-way leaves only whole lines. Should the file still end in a partial line (a machine crash, a
    full disk), the next write first repairs it: a partial line that parses as JSON gets its newline,
    any other is dropped, so the file stays valid JSON lines.
    """

    workdir: Any = ROOT_CFG_REF.workdir  # the Trainer's; None (or not in a Trainer) writes nothing
    filename: str = "metrics.jsonl"

    def _folder(self) -> epath.Path | None:
        if self.workdir is None or isinstance(self.workdir, RootRef):
            return None
        folder = epath.Path(self.workdir)  # local paths and the cloud paths the checkpointer takes
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        folder = self._folder()
        if folder is None:
            return
        values = {k: _finite_or_none(v) for k, v in scalars.items() if np.ndim(v) == 0}
        record = {"step": step, "wall_time": time.time(), **values}
        _append_line(folder / self.filename, json.dumps(record, allow_nan=False))

    def write_config(self, config_json: str) -> None:
        folder = self._folder()
        if folder is not None:
            write_text_atomic(folder / "config.json", config_json)

    def resume_from(self, step: int) -> None:
        """Drops the lines of steps after `step` (a new file replaces the old one in one rename)."""
        folder = self._folder()
        if folder is None or not (folder / self.filename).exists():
            return
        _drop_lines_after(folder / self.filename, step)


@dataclasses.dataclass(kw_only=True)
class MultiWriter(Writer):
    """Sends everything to each of `writers`."""

    writers: Sequence[Writer]

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        for w in self.writers:
            w.write_scalars(step, scalars)

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        for w in self.writers:
            w.write_summaries(step, summaries)

    def write_config(self, config_json: str) -> None:
        for w in self.writers:
            w.write_config(config_json)

    def write_element_spec(self, step: int, element_spec: Any) -> None:
        for w in self.writers:
            w.write_element_spec(step, element_spec)

    def write_param_overview(self, step: int, params: Any) -> None:
        for w in self.writers:
            w.write_param_overview(step, params)

    def write_context_structure(self, step: int, trainer: Any) -> None:
        for w in self.writers:
            w.write_context_structure(step, trainer)

    def resume_from(self, step: int) -> None:
        for w in self.writers:
            w.resume_from(step)

    def flush(self) -> None:
        for w in self.writers:
            w.flush()

    def close(self) -> None:
        for w in self.writers:
            w.close()


def _append_line(path: epath.Path, line: str) -> None:
    """Appends `line` and a newline to `path` in one write, first repairing a partial last line."""
    data = (line + "\n").encode()
    if "://" in str(path):  # a cloud path (etils.epath): no file descriptor, still one write per line
        with path.open("a") as f:
            f.write(line + "\n")
        return
    fd = os.open(os.fspath(path), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _repair_last_line(fd)
        while data:  # a regular file takes it all at once but for a full disk
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def _drop_lines_after(path: epath.Path, step: int) -> None:
    """Keeps the JSON lines whose `step` is at most `step` (and drops lines that do not parse)."""
    kept = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int) and record["step"] <= step:
            kept.append(line + "\n")
    write_text_atomic(path, "".join(kept))  # readers see the old file or the new one, never half of it


def _repair_last_line(fd: int) -> None:
    """Ends the file with a newline: a partial last line that is valid JSON keeps its data, another is cut."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    start, chunk = size, 1 << 16
    while start > 0:  # find where the partial line starts: after the last newline
        offset = max(0, start - chunk)
        newline = os.pread(fd, start - offset, offset).rfind(b"\n")
        if newline >= 0:
            start = offset + newline + 1
            break
        start = offset
    try:
        whole = isinstance(json.loads(os.pread(fd, size - start, start)), dict)
    except ValueError:
        whole = False
    if whole:
        os.write(fd, b"\n")
    else:
        os.ftruncate(fd, start)


def _short(value: Any) -> str:
    if np.ndim(value) != 0:
        return f"<array {np.shape(value)}>"
    return f"{float(value):.4g}"


def _rate(value: Any) -> str:
    """`28.5k`, `392`, `0.52`: a rate in 3 significant digits."""
    value = float(value)
    if abs(value) >= 1e6:
        return f"{value / 1e6:.3g}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.3g}"


def _finite_or_none(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
