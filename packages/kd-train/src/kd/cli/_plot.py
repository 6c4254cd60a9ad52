"""`kd-train plot`: the curves logged in runs' `metrics.jsonl` (and `eval_metrics.jsonl`), one panel per
metric, train and evaluator values of a metric on the same axes, runs overlaid.

    path = plot_runs(["/tmp/run_a", "/tmp/run_b"], metrics=["losses/*"])  # /tmp/run_a/metrics.png

`losses/xent` and an evaluator's `val/losses/xent` share the panel `losses/xent` (lines `train` and `val`),
so a widening gap (overfitting) shows. `perf/*` panels (steps per second, ...) are drawn only when asked
for (`metrics=["perf/*"]` or `perf=True`). `plot_panels` gives the layout as data, `metrics_figure` draws it.

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

__all__ = [
    "Line",
    "Panel",
    "RunCurves",
    "metrics_figure",
    "plot_panels",
    "plot_runs",
    "read_metrics",
    "split_name",
]

METRICS_FILE = "metrics.jsonl"
EVAL_METRICS_FILE = "eval_metrics.jsonl"  # kd-train eval's (kd.evals.EVAL_METRICS_FILE)
DEFAULT_PLOT_NAME = "metrics.png"
_NOT_METRICS = frozenset({"step", "wall_time"})
_INSTALL_HINT = "pip install 'kd-train[plot]'"
_MAX_COLUMNS = 3
_LOG_SPAN = 100.0  # more than two decades between the smallest and largest value: log scale
TRAIN = "train"  # the split of the values the training loop logs itself (kd.writers' TensorBoard folder)
PERF_PATTERN = "perf/*"
_VALUE_GROUPS = frozenset({"losses", "metrics"})  # what an evaluator logs under its prefix
_TRAIN_GROUPS = _VALUE_GROUPS | {"perf", "schedules", "summaries"}  # never an evaluator's prefix
_LINESTYLES = ("-", "--", ":", "-.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunCurves:
    """One run's logged curves: `curves[name] == (steps, values)`, in the order the run logged them."""

    label: str
    workdir: pathlib.Path
    curves: dict[str, tuple[list[float], list[float]]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Line:
    """One curve of a panel: the logged `name` (`"val/losses/xent"`) of one run, and how it is drawn.

    `label` is its legend text: the run (when several are plotted) and the split (when the panel has
    more than one); `color` and `linestyle` are matplotlib's (`"C0"`, `"--"`).
    """

    label: str
    name: str
    run: str
    split: str
    steps: list[float]
    values: list[float]
    color: str
    linestyle: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Panel:
    """One set of axes: a metric (`losses/xent`) with its train and evaluator lines, of every run."""

    title: str
    ylabel: str
    lines: tuple[Line, ...]
    log_scale: bool

    @property
    def legend(self) -> bool:
        """Whether the panel has a legend: only when it has more than one line to tell apart."""
        return len(self.lines) > 1


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


def split_name(name: str) -> tuple[str, str]:
    """`(split, metric)` of a logged name: `"val/losses/xent"` -> `("val", "losses/xent")` for an
    evaluator `val` (its prefix may hold slashes: `"val/hard/metrics/accuracy"`), `"losses/xent"` ->
    `("train", "losses/xent")`. A name is an evaluator's when a later part is `losses` or `metrics` and no
    earlier one is a training group (`losses`, `metrics`, `perf`, `schedules`, `summaries`).
    """
    parts = name.split("/")
    for index, part in enumerate(parts):
        if part in _TRAIN_GROUPS:
            if index > 0 and part in _VALUE_GROUPS and index < len(parts) - 1:
                return "/".join(parts[:index]), "/".join(parts[index:])
            break
    return TRAIN, name


def plot_panels(
    workdirs: Sequence[str | os.PathLike[str]],
    metrics: Sequence[str] | None = None,
    *,
    perf: bool = False,
) -> list[Panel]:
    """The panels `metrics_figure` draws, as data: which metric each shows, its lines, its y scale.

    `metrics` are glob patterns (`"losses/*"`, `"val/*"`, `"perf/*"`) choosing the panels, in pattern
    order; a pattern matching a panel's metric (`losses/xent`) brings all its lines (train and `val`), one
    matching only a logged name (`val/losses/xent`) brings that line. By default every metric any run
    logged except `perf/*`, which `perf=True` (or a pattern naming them) adds. A panel whose positive
    values span more than two decades has a log y axis.

    Usage: `[p.title for p in plot_panels(["/tmp/run"])]` -> `["losses/xent", "metrics/accuracy"]`.
    """
    runs = _read_runs(workdirs)
    chosen = _select(runs, metrics, perf=perf)
    several_runs = len(runs) > 1
    panels = []
    for metric, names in chosen.items():
        found = [(r, run, n) for r, run in enumerate(runs) for n in names if n in run.curves]
        splits = list(dict.fromkeys(split_name(n)[0] for _, _, n in found))
        lines = []
        for r, run, name in found:
            split = split_name(name)[0]
            shown = [run.label] if several_runs else []
            if len(splits) > 1:
                shown.append(split)
            steps, values = run.curves[name]
            lines.append(
                Line(
                    label=": ".join(shown) or split,
                    name=name,
                    run=run.label,
                    split=split,
                    steps=steps,
                    values=values,
                    color=f"C{r if several_runs else splits.index(split)}",
                    linestyle=_LINESTYLES[splits.index(split) % len(_LINESTYLES)],
                )
            )
        drawn = [v for line in lines for v in line.values]
        only = splits[0] if len(splits) == 1 else TRAIN
        panels.append(
            Panel(
                title=metric if only == TRAIN else f"{metric} ({only})",
                ylabel=metric,
                lines=tuple(lines),
                log_scale=bool(drawn) and min(drawn) > 0 and max(drawn) / min(drawn) > _LOG_SPAN,
            )
        )
    return panels


def metrics_figure(
    workdirs: Sequence[str | os.PathLike[str]],
    metrics: Sequence[str] | None = None,
    *,
    perf: bool = False,
) -> Figure:
    """Draws `plot_panels(workdirs, metrics, perf=perf)`: one panel per metric, titled and y-labelled by
    it, x labelled `step`; a legend only where a panel has more than one line. The figure is drawn on
    matplotlib's Agg canvas (pyplot is not used).

    Usage: `fig = metrics_figure(["/tmp/a", "/tmp/b"]); [ax.get_title() for ax in fig.axes]`.
    """
    figure_cls, canvas_cls = _import_matplotlib()
    panels = plot_panels(workdirs, metrics, perf=perf)
    columns = min(_MAX_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig = figure_cls(figsize=(4.8 * columns, 3.4 * rows), layout="constrained")
    canvas_cls(fig)
    for index, panel in enumerate(panels):
        ax = fig.add_subplot(rows, columns, index + 1)
        ax.set_title(panel.title, fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.set_ylabel(panel.ylabel, fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)
        for line in panel.lines:
            ax.plot(
                line.steps,
                line.values,
                label=line.label,
                color=line.color,
                linestyle=line.linestyle,
                marker="." if len(line.steps) < 50 else None,
                linewidth=1.2,
            )
        if panel.log_scale:
            ax.set_yscale("log")
        if panel.legend:
            ax.legend(fontsize=7)
    return fig


def plot_runs(
    workdirs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    metrics: Sequence[str] | None = None,
    *,
    perf: bool = False,
) -> pathlib.Path:
    """Saves `metrics_figure(workdirs, metrics, perf=perf)` as a PNG and returns its path.

    `out` is a `.png` file or an existing directory (then `<out>/metrics.png`); by default
    `<first workdir>/metrics.png`. Missing parent directories of `out` are created.

    Usage: `plot_runs(["/tmp/run_a", "/tmp/run_b"], out="/tmp/compare.png", metrics=["losses/*"])`;
    `plot_runs(["/tmp/run"], metrics=["perf/*"])` draws the throughput panels the default leaves out.
    """
    path = _output_path(_workdir_paths(workdirs)[0], out)
    fig = metrics_figure(workdirs, metrics, perf=perf)
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


def _select(runs: Sequence[RunCurves], patterns: Sequence[str] | None, *, perf: bool) -> dict[str, list[str]]:
    """`{metric: the logged names drawn in its panel}`, panels in pattern order (by default, in the order
    the runs logged them), a panel's train line before its evaluators' lines."""
    logged = list(dict.fromkeys(name for run in runs for name in run.curves))
    by_metric: dict[str, list[str]] = {}
    for name in sorted(
        logged, key=lambda n: split_name(n)[0] != TRAIN
    ):  # train lines first, then evaluators'
        by_metric.setdefault(split_name(name)[1], []).append(name)
    if isinstance(patterns, str):  # one pattern given bare, not a one-letter-per-pattern sequence
        patterns = [patterns]
    if patterns is not None and not patterns:
        raise CliError(f"--metrics: expected at least one pattern, found none. Logged metrics: {logged}.")
    if patterns is None:
        kept = {
            m: names for m, names in by_metric.items() if perf or not fnmatch.fnmatchcase(m, PERF_PATTERN)
        }
        return kept or by_metric  # a run that logged only perf/*: those rather than an empty figure
    if perf:
        patterns = [*patterns, PERF_PATTERN]
    selected: dict[str, list[str]] = {}
    for pattern in patterns:
        matched = False
        for metric, names in by_metric.items():
            whole = fnmatch.fnmatchcase(metric, pattern)
            picked = [n for n in names if whole or fnmatch.fnmatchcase(n, pattern)]
            if picked:
                matched = True
                panel = selected.setdefault(metric, [])
                panel.extend(n for n in picked if n not in panel)
        if not matched and not (perf and pattern == PERF_PATTERN):
            raise CliError(
                f"--metrics {pattern!r}: matches none of the logged metrics {logged} "
                f'(patterns are globs such as "losses/*" or "val/*").'
            )
    return {metric: [n for n in by_metric[metric] if n in names] for metric, names in selected.items()}


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
