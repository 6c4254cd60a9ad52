"""`Writer`: where logged values go. The Trainer calls it only on logging steps.

writer = kd.writers.InMemoryWriter()
writer.write_scalars(100, {"losses/total": 0.3})
writer.scalars["losses/total"]   # [(100, 0.3)]
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

import numpy as np
from etils import epath

from kd._root_ref import ROOT_CFG_REF, RootRef


class Writer:
    """Base class: every method is optional (does nothing here)."""

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        pass

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None:
        """Images `(n, h, w, c)` arrays, histogram values, texts..."""

    def write_config(self, config_json: str) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.flush()


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


@dataclasses.dataclass(kw_only=True)
class PrintWriter(Writer):
    """One line per logging step: `step 100 | losses/total 0.0312 | metrics/accuracy 0.91`."""

    stream: TextIO | None = None
    max_values: int = 8

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
        shown = [f"{name} {_short(value)}" for name, value in list(scalars.items())[: self.max_values]]
        more = len(scalars) - len(shown)
        line = " | ".join([f"step {step}", *shown]) + (f" | (+{more} more)" if more > 0 else "")
        print(line, file=self.stream or sys.stdout, flush=True)


@dataclasses.dataclass(kw_only=True)
class JsonlWriter(Writer):
    """Appends `{"step": 100, "losses/total": 0.3, ...}` lines to `<workdir>/metrics.jsonl`.

    Arrays are left out (only scalars are written); NaN and infinities are written as `null`, so every
    line stays valid JSON for strict readers (`jq`, JavaScript).
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
        record = {"step": step, **{k: _finite_or_none(v) for k, v in scalars.items() if np.ndim(v) == 0}}
        with (folder / self.filename).open("a") as f:
            f.write(json.dumps(record, allow_nan=False) + "\n")

    def write_config(self, config_json: str) -> None:
        folder = self._folder()
        if folder is not None:
            (folder / "config.json").write_text(config_json)


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

    def flush(self) -> None:
        for w in self.writers:
            w.flush()

    def close(self) -> None:
        for w in self.writers:
            w.close()


def _short(value: Any) -> str:
    if np.ndim(value) != 0:
        return f"<array {np.shape(value)}>"
    return f"{float(value):.5g}"


def _finite_or_none(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
