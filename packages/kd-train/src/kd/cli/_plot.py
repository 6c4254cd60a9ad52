"""`kd-train plot`: the curves logged in runs' `metrics.jsonl` (and `eval_metrics.jsonl`), one panel per
metric, runs overlaid.

    path = plot_runs(["/tmp/run_a", "/tmp/run_b"], metrics=["losses/*"])  # /tmp/run_a/metrics.png

matplotlib is an optional extra (`pip install 'kd-train[plot]'`), imported only here, and drawn
through its Agg canvas directly so the user's pyplot backend is left as it is.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import math
import os
import pathlib
import sys
from collections.abc import Sequence

from ._errors import CliError
from ._workdirs import run_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

    from matplotlib.figure import Figure

__all__ = ["RunCurves", "metrics_figure", "plot_runs", "read_metrics"]

METRICS_FILE = "metrics.jsonl"
EVAL_METRICS_FILE = "eval_metrics.jsonl"  # kd-train eval's (kd.evals.EVAL_METRICS_FILE)
DEFAULT_PLOT_NAME = "metrics.png"
_NOT_METRICS = frozenset({"step", "wall_time"})
_INSTALL_HINT = "pip install 'kd-train[plot]'"
_MAX_COLUMNS = 3
_LOG_SPAN = 100.0  # more than two decades between the smallest and largest value: log scale


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunCurves:
    """One run's logged curves: `curves[name] == (steps, values)`, in the order the run logged them."""

    label: str
    workdir: pathlib.Path
    curves: dict[str, tuple[list[float], list[float]]]


def read_metrics(workdir: str | os.PathLike[str]) -> dict[str, tuple[list[float], list[float]]]:
    """Reads a run's curves into `{metric: (steps, values)}`, steps ascending.

    They come from `<workdir>/metrics.jsonl`, then from `eval_metrics.jsonl` beside it when present
    (written by `kd-train eval`). Every numeric key except `step` and `wall_time` is a metric; `null`
    (NaN when written) and non-numeric values are skipped. A step logged twice (a resumed run) keeps its
    last value. A truncated last line (a killed run) is skipped with a warning on stderr; any other line
    that is not a JSON object with a numeric `step` is a `CliError` naming `file:line`.

    Usage: `steps, values = read_metrics("/tmp/run")["losses/total"]`.
    """
    path = _metrics_path(workdir)
    by_metric: dict[str, dict[float, float]] = {}
    last = _read_jsonl(path, by_metric)
    eval_path = path.with_name(EVAL_METRICS_FILE)
    if eval_path.is_file():
        _read_jsonl(eval_path, by_metric)
    if not by_metric:
        found = "an empty file" if last < 0 else "lines holding only step, wall_time, nulls or non-numbers"
        raise CliError(
            f'{path}: expected numeric metrics to plot (such as "losses/total": 0.3), found {found} '
            f"(has the run logged a step yet?)."
        )
    return {name: _sorted_curve(points) for name, points in by_metric.items()}


def _read_jsonl(path: pathlib.Path, by_metric: dict[str, dict[float, float]]) -> int:
    """Adds the metrics of the JSON-lines file `path` to `by_metric`; returns the index of its last line."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as e:
        raise CliError(f"{path}: cannot read the run's metrics ({e.strerror or e}).") from e
    lines = text.splitlines()
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"{path}:{index + 1}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if index == last:
                print(
                    f"warning: {where}: skipping the truncated last line (a run stopped while writing it?).",
                    file=sys.stderr,
                )
                continue
            raise CliError(
                f"{where}: expected one JSON object per line (as kd.writers.JsonlWriter writes), "
                f"found text that is not JSON ({e.msg}): {_clip(line)}"
            ) from None
        if not isinstance(record, dict):
            raise CliError(
                f'{where}: expected a JSON object such as {{"step": 100, "losses/total": 0.3}}, '
                f"found {type(record).__name__} {_clip(line)}"
            )
        step = record.get("step")
        if not _is_number(step) or not math.isfinite(step):
            raise CliError(
                f'{where}: expected a numeric "step" in every line, found '
                f"{'no step' if 'step' not in record else repr(step)}: {_clip(line)}"
            )
        for name, value in record.items():
            if name in _NOT_METRICS or not _is_number(value) or not math.isfinite(value):
                continue
            by_metric.setdefault(name, {})[step] = float(value)
    return last


def metrics_figure(
    workdirs: Sequence[str | os.PathLike[str]], metrics: Sequence[str] | None = None
) -> Figure:
    """Draws the runs' curves: one panel (titled by the metric) per metric, one line per run.

    `metrics` are glob patterns (`"losses/*"`, `"eval/*accuracy"`) choosing the panels, in pattern
    order; by default every metric any run logged. A panel whose positive values span more than two
    decades has a log y axis. The figure is drawn on matplotlib's Agg canvas (pyplot is not used).

    Usage: `fig = metrics_figure(["/tmp/a", "/tmp/b"]); [ax.get_title() for ax in fig.axes]`.
    """
    figure_cls, canvas_cls = _import_matplotlib()
    runs = _read_runs(workdirs)
    names = _select(runs, metrics)
    columns = min(_MAX_COLUMNS, len(names))
    rows = math.ceil(len(names) / columns)
    fig = figure_cls(figsize=(4.8 * columns, 3.4 * rows), layout="constrained")
    canvas_cls(fig)
    for index, name in enumerate(names):
        ax = fig.add_subplot(rows, columns, index + 1)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)
        drawn: list[float] = []
        for run in runs:
            if name not in run.curves:
                continue
            steps, values = run.curves[name]
            ax.plot(steps, values, label=run.label, marker="." if len(steps) < 50 else None, linewidth=1.2)
            drawn.extend(values)
        if drawn and min(drawn) > 0 and max(drawn) / min(drawn) > _LOG_SPAN:
            ax.set_yscale("log")
        ax.legend(fontsize=7)
    return fig


def plot_runs(
    workdirs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pathlib.Path:
    """Saves `metrics_figure(workdirs, metrics)` as a PNG and returns its path.

    `out` is a `.png` file or an existing directory (then `<out>/metrics.png`); by default
    `<first workdir>/metrics.png`. Missing parent directories of `out` are created.

    Usage: `plot_runs(["/tmp/run_a", "/tmp/run_b"], out="/tmp/compare.png", metrics=["losses/*"])`.
    """
    path = _output_path(_workdir_paths(workdirs)[0], out)
    fig = metrics_figure(workdirs, metrics)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=100)
    except OSError as e:
        raise CliError(f"--out {path}: cannot write the plot there ({e.strerror or e}).") from e
    return path


def _import_matplotlib() -> tuple[type, type]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise CliError(
            f"plot: drawing the curves needs matplotlib, which is not installed here ({e}). "
            f"Install the plot extra: {_INSTALL_HINT}"
        ) from e
    return Figure, FigureCanvasAgg


def _metrics_path(workdir: str | os.PathLike[str]) -> pathlib.Path:
    return run_file(
        workdir, METRICS_FILE, "was the run trained with this workdir, and has it logged a step yet?"
    )


def _workdir_paths(workdirs: Sequence[str | os.PathLike[str]]) -> list[pathlib.Path]:
    if isinstance(workdirs, (str, os.PathLike)):  # one workdir given bare
        workdirs = [workdirs]
    if not workdirs:
        raise CliError(
            f"plot: expected at least one run workdir (a directory holding {METRICS_FILE}), found none."
        )
    return [pathlib.Path(w) for w in workdirs]


def _read_runs(workdirs: Sequence[str | os.PathLike[str]]) -> list[RunCurves]:
    paths = _workdir_paths(workdirs)
    curves = [read_metrics(p) for p in paths]
    labels = _labels(paths)
    return [RunCurves(label=lb, workdir=p, curves=c) for lb, p, c in zip(labels, paths, curves, strict=True)]


def _labels(paths: Sequence[pathlib.Path]) -> list[str]:
    """The workdirs' basenames, with parent folders prepended (then `(2)`, ...) until they differ."""
    parts = [pathlib.Path(os.path.abspath(p)).parts for p in paths]
    distinct = len(set(parts))
    depth = 1
    labels = [str(pathlib.PurePath(*p[-depth:])) for p in parts]
    while len(set(labels)) < distinct and any(len(p) > depth for p in parts):
        depth += 1
        labels = [str(pathlib.PurePath(*p[-depth:])) for p in parts]
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return unique


def _select(runs: Sequence[RunCurves], patterns: Sequence[str] | None) -> list[str]:
    available = list(dict.fromkeys(name for run in runs for name in run.curves))
    if patterns is None:
        return available
    if isinstance(patterns, str):  # one pattern given bare, not a one-letter-per-pattern sequence
        patterns = [patterns]
    if not patterns:
        raise CliError(f"--metrics: expected at least one pattern, found none. Logged metrics: {available}.")
    chosen: list[str] = []
    for pattern in patterns:
        matched = [name for name in available if fnmatch.fnmatchcase(name, pattern)]
        if not matched:
            raise CliError(
                f"--metrics {pattern!r}: matches none of the logged metrics {available} "
                f'(patterns are globs such as "losses/*").'
            )
        chosen.extend(name for name in matched if name not in chosen)
    return chosen


def _output_path(first_workdir: str | os.PathLike[str], out: str | os.PathLike[str] | None) -> pathlib.Path:
    if out is None:
        return pathlib.Path(first_workdir) / DEFAULT_PLOT_NAME
    path = pathlib.Path(out)
    if path.is_dir():
        return path / DEFAULT_PLOT_NAME
    if path.suffix.lower() != ".png":
        raise CliError(
            f"--out {path}: expected a .png file or an existing directory, found "
            f"{'no suffix' if not path.suffix else f'the suffix {path.suffix!r}'} (the plot is a PNG)."
        )
    return path


def _sorted_curve(points: dict[float, float]) -> tuple[list[float], list[float]]:
    steps = sorted(points)
    return steps, [points[s] for s in steps]


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _clip(line: str, limit: int = 80) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[: limit - 3] + "..."
