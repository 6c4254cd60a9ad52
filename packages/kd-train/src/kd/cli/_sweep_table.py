"""The summary at the end of a sweep: each item's final losses and metrics, as a table that fits a terminal
and, whole, as `<base>/sweep_summary.csv` and `<base>/sweep_summary.jsonl`.

    print(sweep_summary([("lr=0.1", "/tmp/run/lr=0.1"), ("lr=0.3", "/tmp/run/lr=0.3")], base="/tmp/run"))

An item's values are the last logged value of each name in its `metrics.jsonl` (and `eval_metrics.jsonl`,
from `kd-train eval`): the training loop's `losses/*` and `metrics/*` and its evaluators' (`val/losses/*`),
not `perf/*` or `schedules/*`. A value logged as `null` (NaN or infinite when written) reads `nan`. The
table shows at most six of them, as many as fit in 100 columns, in this order: evaluators' metrics, their
losses, training losses, training metrics; the files hold all. Long item names are clipped in the middle
(`lr=0.001,..,seed=1`); long value names lose their `losses/` or `metrics/` part, then are clipped. An item
with no workdir, no metrics file or no values is listed with a note saying so, as is one that did not
reach its last step (no `DONE` in its workdir) or whose final value is not finite.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import pathlib
import re
from collections.abc import Iterable, Sequence

from kd._atomic import write_text_atomic

from ._plot import EVAL_METRICS_FILE, METRICS_FILE, TRAIN, split_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

__all__ = ["ItemResult", "final_values", "sweep_summary"]

SUMMARY_CSV = "sweep_summary.csv"
SUMMARY_JSONL = "sweep_summary.jsonl"
DONE_FILE = "DONE"  # kd.train.DONE_FILE, written when a run reached its last step
TABLE_WIDTH = 100
MAX_VALUE_COLUMNS = 6
_GROUPS = ("metrics", "losses")  # the values summarised; perf/*, schedules/* are left out
_MAX_ITEM_WIDTH = 32
_MAX_HEADER_WIDTH = 16
_MAX_NOTE_WIDTH = 30  # room kept for a note beside values ("not finite: losses/total"); longer ones clip
_CLIP = ".."
_GAP = "  "


@dataclasses.dataclass(frozen=True, kw_only=True)
class ItemResult:
    """One sweep item's outcome: the step of its last logged row, its final values, and what went wrong.

    `values` maps logged names (`"losses/total"`, `"val/metrics/accuracy"`) to floats, NaN for a value
    logged as `null`; `step` is None when nothing was logged; `note` is empty for a finished run.
    """

    name: str
    workdir: str
    step: int | None
    done: bool
    values: dict[str, float]
    note: str


def final_values(workdir: str | os.PathLike[str]) -> tuple[int | None, dict[str, float]]:
    """`(step of the last row, {name: last logged value})` of the losses and metrics in a run's
    `metrics.jsonl` and `eval_metrics.jsonl`; `(None, {})` when neither holds a row.

    Lines that are not whole JSON rows with a numeric `step` (a run killed mid-line) are skipped.

    Usage: `step, values = final_values("/tmp/run/lr=0.1")`; `values["losses/total"]`.
    """
    folder = pathlib.Path(workdir)
    step, values = _last_values(folder / METRICS_FILE)
    eval_step, eval_values = _last_values(folder / EVAL_METRICS_FILE)
    values.update(eval_values)
    return (step if step is not None else eval_step), values


def sweep_summary(
    items: Sequence[tuple[str, str | os.PathLike[str] | None]], base: str | os.PathLike[str]
) -> str:
    """Writes `<base>/sweep_summary.csv` and `.jsonl` (one row per item: item, workdir, step, done, note,
    then every final loss and metric) and returns a table of them, lines at most 100 characters wide.

    `items` are `(sweep item name, its workdir)`, in sweep order (the table's `#`); a workdir of None
    reads as an item not run. Reading never fails:
    an item that was not run, or failed before logging, gets a row with a note. The table ends with the
    files' paths, each on a line of its own (only a path longer than the width makes a longer line), or
    why they could not be written.

    Usage: `print(sweep_summary([("lr=0.1", "/tmp/run/lr=0.1")], base="/tmp/run"))`.
    """
    results = [_item_result(name, None if w is None else os.fspath(w)) for name, w in items]
    names = _ordered_names(results)
    problem = _write_files(pathlib.Path(base), results, names)
    rows, headers = _table(results, names)
    finished = sum(r.done for r in results)
    lines = [f"sweep summary: {finished} of {len(results)} items finished; final values:", *rows]
    if any(h != n for h, n in zip(headers, names)):
        clipped = f"; {_CLIP} marks a clipped one" if any(_CLIP in h for h in headers) else ""
        lines.append(f"(column names without losses/ or metrics/{clipped})")
    if problem is not None:
        lines += ["could not write the summary files into:", f"  {base}: {problem}"]
        return "\n".join(lines)
    if len(headers) < len(names):
        lines.append(f"{len(headers)} of {len(names)} values shown; all of them are in:")
    else:
        lines.append("also in:")
    lines += [f"  {pathlib.Path(base) / SUMMARY_CSV}", f"  {pathlib.Path(base) / SUMMARY_JSONL}"]
    return "\n".join(lines)


def _item_result(name: str, workdir: str | None) -> ItemResult:
    folder = pathlib.Path(workdir or "")
    if workdir is None or not folder.is_dir():
        return ItemResult(
            name=name, workdir=workdir or "", step=None, done=False, values={}, note="not run (no workdir)"
        )
    done = (folder / DONE_FILE).is_file()
    step, values = final_values(folder)
    if not (folder / METRICS_FILE).is_file():
        note = f"no {METRICS_FILE}: stopped before logging?"
    elif not values:
        note = "no losses or metrics logged"
    else:
        notes = []
        not_finite = [n for n, v in values.items() if not math.isfinite(v)]
        if not_finite:
            more = f" (+{len(not_finite) - 1} more)" if len(not_finite) > 1 else ""
            notes.append(f"not finite: {not_finite[0]}{more}")
        if not done:
            notes.append("unfinished")  # no DONE: stopped before its last step
        note = "; ".join(notes)
    return ItemResult(name=name, workdir=workdir, step=step, done=done, values=values, note=note)


def _last_values(path: pathlib.Path) -> tuple[int | None, dict[str, float]]:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None, {}
    step: int | None = None
    values: dict[str, float] = {}
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        row_step = row.get("step") if isinstance(row, dict) else None
        if not _is_number(row_step) or not math.isfinite(row_step):
            continue
        step = int(row_step)
        for name, value in row.items():
            if split_name(name)[1].split("/")[0] not in _GROUPS:
                continue
            if value is None:
                values[name] = math.nan
            elif _is_number(value):
                values[name] = float(value)
    return step, values


def _ordered_names(results: Iterable[ItemResult]) -> list[str]:
    """Every value name, in the table's order of preference: evaluators' metrics, evaluators' losses,
    training losses, training metrics; `losses/total` first among its split's losses, and last when it
    only repeats a split's one loss (their sum)."""
    logged = list(dict.fromkeys(name for result in results for name in result.values))

    def rank(name: str) -> tuple[int, int]:
        split, metric = split_name(name)
        group = metric.split("/")[0]
        evaluator = split != TRAIN
        order = (0 if group == "metrics" else 1) if evaluator else (2 if group == "losses" else 3)
        if metric == "losses/total":
            losses = [
                n for n in logged if split_name(n)[0] == split and split_name(n)[1].startswith("losses/")
            ]
            return order, (2 if len(losses) == 2 else 0)
        return order, 1

    return sorted(logged, key=rank)


def _write_files(base: pathlib.Path, results: Sequence[ItemResult], names: Sequence[str]) -> str | None:
    """Writes the CSV and JSON-lines summaries; returns None, or why they could not be written."""
    header = ["item", "workdir", "step", "done", "note", *names]
    rows: list[str] = []
    csv_text = io.StringIO()
    writer = csv.writer(csv_text, lineterminator="\n")
    writer.writerow(header)
    for r in results:
        row: dict[str, object] = {"item": r.name, "workdir": r.workdir, "step": r.step, "done": r.done}
        row["note"] = r.note
        row.update({n: (r.values[n] if math.isfinite(r.values[n]) else None) for n in names if n in r.values})
        rows.append(json.dumps(row, allow_nan=False) + "\n")
        writer.writerow(
            [r.name, r.workdir, "" if r.step is None else r.step, r.done, r.note]
            + [repr(r.values[n]) if n in r.values else "" for n in names]
        )
    try:
        base.mkdir(parents=True, exist_ok=True)
        write_text_atomic(base / SUMMARY_CSV, csv_text.getvalue())
        write_text_atomic(base / SUMMARY_JSONL, "".join(rows))
    except OSError as e:
        return e.strerror or str(e)
    return None


def _table(results: Sequence[ItemResult], names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The table's lines (header first), each at most `TABLE_WIDTH` characters, and the headers of its
    value columns, which are for the first of `names`: as many (up to `MAX_VALUE_COLUMNS`) as fit. A last
    line names the `key=value` parts of the item names that every item has, left out of the table."""
    labels, common = _item_labels([r.name for r in results])
    fixed = [
        _Column("#", [str(i) for i in range(1, len(results) + 1)]),
        _Column("item", labels, left=True),
        _Column("step", ["-" if r.step is None else str(r.step) for r in results]),
    ]
    notes = [
        len(r.note) for r in results if r.values and r.note
    ]  # a row without values has room for its note
    note_width = max(len("note"), min(max(notes), _MAX_NOTE_WIDTH)) if notes else 0
    room = TABLE_WIDTH - sum(c.width + len(_GAP) for c in fixed) - (len(_GAP) + note_width if notes else 0)
    cells = {n: ["-" if n not in r.values else _number(r.values[n]) for r in results] for n in names}
    values: list[_Column] = []
    for count in range(min(MAX_VALUE_COLUMNS, len(names)), 0, -1):
        for level in range(3):
            values = [_Column(h, cells[n]) for h, n in zip(_headers(names[:count], level), names)]
            if sum(c.width + len(_GAP) for c in values) <= room:
                break
            values = []
        if values:
            break
    lines = []
    for row in range(-1, len(results)):
        parts = [c.text(row) for c in fixed]
        if row >= 0 and not results[row].values:
            parts.append(results[row].note)  # nothing in the value columns: the note takes their place
        else:
            parts += [c.text(row) for c in values]
            if notes:
                parts.append("note" if row < 0 else results[row].note)
        lines.append(_fit(_GAP.join(parts).rstrip()))
    if common:
        lines.append(_fit(f"(every item also has {','.join(common)}", end=")"))
    return lines, [c.header for c in values]


@dataclasses.dataclass(frozen=True)
class _Column:
    header: str
    cells: list[str]
    left: bool = False

    @property
    def width(self) -> int:
        return max([len(self.header), *map(len, self.cells)])

    def text(self, row: int) -> str:
        """Row `row`'s cell, padded to the column's width; the header for row -1."""
        text = self.header if row < 0 else self.cells[row]
        return text.ljust(self.width) if self.left else text.rjust(self.width)


def _fit(line: str, end: str = "") -> str:
    """`line + end`, clipped (`..`) before `end` to `TABLE_WIDTH` characters."""
    if len(line) + len(end) <= TABLE_WIDTH:
        return line + end
    return line[: TABLE_WIDTH - len(_CLIP) - len(end)] + _CLIP + end


def _headers(names: Sequence[str], level: int) -> list[str]:
    """Column headers, shorter at each `level`: 0 the names; 1 without their `losses/` or `metrics/` part
    (`val/accuracy`) where that leaves them distinct; 2 those clipped to `_MAX_HEADER_WIDTH`."""
    if level == 0:
        return list(names)
    short = []
    for name in names:
        split, metric = split_name(name)
        rest = metric.partition("/")[2]
        short.append(rest if split == TRAIN else f"{split}/{rest}")
    short = [s if short.count(s) == 1 else n for s, n in zip(short, names)]
    return short if level == 1 else [_clip_middle(s, _MAX_HEADER_WIDTH) for s in short]


_NEXT_KEY = re.compile(r",(?=[A-Za-z_][\w.\[\]'\"]*=)")
"""The commas of an item name that start its next `key=value` part (not those inside a value)."""


def _parts(name: str) -> list[str]:
    """`name`'s `key=value` parts: split at the commas that start a key, outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for index, char in enumerate(name):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0 and _NEXT_KEY.match(name, index):
            parts.append(name[start:index])
            start = index + 1
    parts.append(name[start:])
    return parts


def _item_labels(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The item names as the table shows them, and the `key=value` parts left out because every item has
    them, when some name is longer than `_MAX_ITEM_WIDTH` (`lr=0.1,seed=0`, `lr=0.3,seed=0` -> `lr=0.1`,
    `lr=0.3`; `seed=0`). Names still longer are clipped in the middle (the `#` column tells them apart)."""
    split = [_parts(n) for n in names]  # a value's own commas stay inside its part
    common = [p for p in split[0] if all(p in parts for parts in split[1:])] if len(names) > 1 else []
    kept = [",".join(p for p in parts if p not in common) for parts in split]
    if all(len(n) <= _MAX_ITEM_WIDTH for n in names) or not all(kept):  # whole names, where they fit
        kept, common = list(names), []
    return [_clip_middle(n, _MAX_ITEM_WIDTH) for n in kept], common


def _clip_middle(text: str, limit: int) -> str:
    """`text`, or its head and tail around `..` when longer than `limit` (sweep items differ at the end)."""
    if len(text) <= limit:
        return text
    tail = (limit - len(_CLIP) + 1) // 2
    return text[: limit - len(_CLIP) - tail] + _CLIP + text[-tail:]


def _number(value: float) -> str:
    return f"{value:.4g}"


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
