"""`kd.train.EarlyStopping`: stops a run whose monitored value stopped improving (Keras' and Lightning's
EarlyStopping, as a `kd.train.Hook`).

    cfg.hooks = [kd.train.EarlyStopping(monitor="val/losses/l2", patience=3)]

A check is a step where `monitor` was logged (the training's logging steps for `losses/...`, an evaluator's
steps for `val/...`). After `patience` checks in a row without improvement (by more than `min_delta`) the run
stops: the checkpoint of that step is saved, the loop prints `early stopping at step 900: val/losses/l2 did not
improve by min_delta=0 for 3 checks (best 0.123 at step 400)`, and the run is complete (`kd-train` says so).
Each check logs `early_stopping/best` and `early_stopping/wait`; the best value, its step and the wait are
saved with every checkpoint, so a resumed run stops where an uninterrupted one would.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from kd.runtime import ConfigError
from kd.train._hook import Hook

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.runtime import TrainState
    from kd.train._trainer import Trainer
    from kd.train._types import LoggedValue

# Logged values that a run's first logging step does not have yet (the first window has no rate).
_LOGGED_LATER = ("perf/steps_per_sec",)
_MODES = ("min", "max")


@dataclasses.dataclass
class EarlyStopping(Hook):
    """Stops the run once `monitor` has not improved for `patience` checks (see the module docstring).

    Usage: `kd.train.Trainer(..., hooks=[kd.train.EarlyStopping(monitor="val/losses/l2", patience=3)])`; in a
    config `cfg.hooks = [kd.train.EarlyStopping(...)]`, on the command line
    `'--cfg.hooks=py::[kd.train.EarlyStopping(monitor="losses/l2")]'`.

    Attributes:
      monitor: the logged value to watch, named as in metrics.jsonl: `val/losses/l2` (evaluator `val`),
        `losses/l2`, `metrics/accuracy`. A name the run does not log is an error at the first step where it
        should have been (the evaluator's first values, or the first logging step), with the close names.
      mode: `"min"` (a loss: lower is better) or `"max"` (an accuracy).
      patience: checks in a row without improvement after which the run stops (0 and 1 stop at the first).
      min_delta: an improvement is a value better than the best by more than this.
      baseline: a value the monitor must beat (by more than `min_delta`): checks that do not beat it count
        as checks without improvement, even while the monitor improves; None: no baseline.
      start_from_step: checks at steps before this are left out (a warm-up whose values say little).
      best: the best value so far (None before the first check), `best_step` its step, `wait` the checks since
        the last improvement: the run's state, reset by `on_train_start` and restored on resume.
    """

    monitor: str = "val/losses/l2"
    mode: str = "min"
    patience: int = 3
    min_delta: float = 0.0
    baseline: float | None = None
    start_from_step: int = 0
    best: float | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    best_step: int | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    wait: int = dataclasses.field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.monitor, str) or not self.monitor:
            problems.append(f"monitor={self.monitor!r}: expected a logged value's name, e.g. 'val/losses/l2'")
        if self.mode not in _MODES:
            problems.append(
                f"mode={self.mode!r}: expected 'min' (the monitor should fall: a loss) or 'max' (it should rise)"
            )
        for name in ("patience", "start_from_step"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                problems.append(f"{name}={value!r}: expected a non-negative int")
        if not _is_number(self.min_delta) or self.min_delta < 0:
            problems.append(f"min_delta={self.min_delta!r}: expected a non-negative number")
        if self.baseline is not None and not _is_number(self.baseline):
            problems.append(f"baseline={self.baseline!r}: expected a number or None")
        if problems:
            raise ConfigError("kd.train.EarlyStopping: " + "; ".join(problems))
        self._evaluators: tuple[str, ...] = ()
        self._logged_keys: set[str] = set()
        self._found = False

    @property
    def state_key(self) -> str:
        """`EarlyStopping[val/losses/l2]`: one per monitored value."""
        return f"EarlyStopping[{self.monitor}]"

    def on_train_start(self, trainer: Trainer, state: TrainState) -> None:
        self.best, self.best_step, self.wait = None, None, 0
        self._evaluators = tuple(
            sorted({str(getattr(e, "name", None) or name) for name, e in dict(trainer.evals).items()})
        )
        self._logged_keys, self._found = set(), False

    def after_step(self, step: int, state: TrainState, values: Mapping[str, LoggedValue]) -> str | None:
        if self.monitor not in values:
            self._require_monitor(step, values)
            return None
        self._found = True
        if step < self.start_from_step:
            return None
        value = _scalar(self.monitor, values[self.monitor])
        improved = math.isfinite(value) and (self.best is None or self._better(value, self.best))
        if improved:
            self.best, self.best_step = value, step
        if improved and (self.baseline is None or self._better(value, self.baseline)):
            self.wait = 0
        else:
            self.wait += 1
        if self.best is not None:
            self.log("early_stopping/best", self.best)
        self.log("early_stopping/wait", self.wait)
        if self.wait > 0 and self.wait >= self.patience:
            return self._reason()
        return None

    def state_dict(self) -> dict[str, float | int | None]:
        return {"best": self.best, "best_step": self.best_step, "wait": self.wait}

    def load_state_dict(self, saved: Mapping[str, Any]) -> None:
        self.best, self.best_step = saved.get("best"), saved.get("best_step")
        self.wait = int(saved.get("wait", 0))

    def _better(self, value: float, than: float) -> bool:
        if self.mode == "min":
            return value < than - self.min_delta
        return value > than + self.min_delta

    def _reason(self) -> str:
        """`val/losses/l2 did not improve by min_delta=0 for 3 checks (best 0.123 at step 400)`."""
        checks = f"{self.wait} check{'s' if self.wait != 1 else ''}"
        best = "no finite value" if self.best is None else f"best {self.best:.4g} at step {self.best_step}"
        by = f"by min_delta={self.min_delta:g}"
        if self.baseline is not None and (self.best is None or not self._better(self.best, self.baseline)):
            return f"{self.monitor} did not beat the baseline {self.baseline:g} {by} in {checks} ({best})"
        return f"{self.monitor} did not improve {by} for {checks} ({best})"

    def _require_monitor(self, step: int, values: Mapping[str, LoggedValue]) -> None:
        """Raises ConfigError at the first step whose values come from the monitor's source without it: the
        evaluator's first values for `<evaluator>/...`, the first logging step (losses logged) otherwise."""
        self._logged_keys.update(values)
        if self._found or self.monitor in _LOGGED_LATER:
            return
        source = self.monitor.split("/", 1)[0]
        if source in self._evaluators:
            due = any(key.startswith(source + "/") for key in values)
        else:
            due = any(key.startswith("losses/") for key in values)
        if due:
            raise ConfigError(self._missing(step))

    def _missing(self, step: int) -> str:
        logged = sorted(self._logged_keys)
        # An evaluator's values are the training's names under its own: suggested before it has run.
        candidates = set(logged) | {
            f"{name}/{key}"
            for name in self._evaluators
            for key in logged
            if key.startswith(("losses/", "metrics/"))
        }
        close = difflib.get_close_matches(self.monitor, sorted(candidates), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else "."
        evaluators = f" The run's evaluators: {', '.join(self._evaluators)}." if self._evaluators else ""
        return (
            f"kd.train.EarlyStopping(monitor={self.monitor!r}): the run logs no value of that name (none at step "
            f"{step}){hint} Logged so far: {', '.join(logged)}.{evaluators}"
        )


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scalar(name: str, value: LoggedValue) -> float:
    array = np.asarray(value)
    if array.ndim != 0 or not np.issubdtype(array.dtype, np.number):
        raise ConfigError(
            f"kd.train.EarlyStopping(monitor={name!r}): expected a number, got a value of shape {array.shape} "
            f"and dtype {array.dtype}"
        )
    return float(array)
