"""When an evaluator runs: `EveryNSteps(100)`, `Once(step=500)`, `Final()` inside the training job;
`StandaloneEveryCheckpoint()`, `StandaloneLastCheckpoint()` in a job of their own (`kd-train eval`), as in
Kauldron.

    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.StandaloneEveryCheckpoint())}
    # kd-train eval --workdir=RUN  evaluates each checkpoint of RUN as it appears; training never runs it
"""

from __future__ import annotations

import dataclasses
from typing import Any


class RunStrategy:
    """`should_run(step, *, last_step)`: whether to evaluate after the update that reached `step`."""

    def should_run(self, step: int, *, last_step: int) -> bool:
        raise NotImplementedError

    def should_eval_in_train(self, step: int) -> bool:
        """Kauldron's spelling, without the run's length (so `Final` and `EveryNSteps`'s last step are not
        known here): whether the training job evaluates after `step`."""
        return self.should_run(step, last_step=-1)


@dataclasses.dataclass(frozen=True)
class EveryNSteps(RunStrategy):
    """Every `n` steps (step 0, before training, included unless `skip_first`), and after the last one.

    Usage: `kd.evals.EveryNSteps(100)`, `kd.evals.EveryNSteps(1000, skip_first=True)`.
    """

    n: int
    _: dataclasses.KW_ONLY
    skip_first: bool = False
    offset: int = 0
    skip_last: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or isinstance(self.n, bool) or self.n <= 0:
            raise ValueError(f"EveryNSteps.n: expected a positive int, got {self.n!r}")

    def should_run(self, step: int, *, last_step: int) -> bool:
        if step == last_step and not self.skip_last:
            return True
        if step == 0 and self.skip_first:
            return False
        return step >= self.offset and (step - self.offset) % self.n == 0


@dataclasses.dataclass(frozen=True)
class Once(RunStrategy):
    """Once, after `step`. Usage: `kd.evals.Once(step=500)`."""

    step: int

    def should_run(self, step: int, *, last_step: int) -> bool:
        return step == self.step


@dataclasses.dataclass(frozen=True)
class Final(RunStrategy):
    """After the last step only. Usage: `kd.evals.Final()`."""

    def should_run(self, step: int, *, last_step: int) -> bool:
        return step == last_step


@dataclasses.dataclass(frozen=True, kw_only=True)
class Standalone(RunStrategy):
    """Evaluated by a job of its own (`kd-train eval --workdir=RUN`), never inside training.

    `job_group` (Kauldron's) names the evaluators one job runs together; kd's `eval` command runs those asked
    for with `--evals`. Kauldron's XManager job fields (`platform="a100=1"`, `requirements`, `args`,
    `env_vars`, `target`, `priority`, `cell`; also in `job`) are kept as the evaluator job's description
    and not acted on: `kd-train eval --workdir=RUN` runs where it is started (`kd-train launch` starts
    training jobs only).
    """

    job_group: str | None = None
    job: dict = dataclasses.field(default_factory=dict)
    platform: str | None = None
    requirements: Any = None
    args: dict = dataclasses.field(default_factory=dict)
    env_vars: dict = dataclasses.field(default_factory=dict)
    target: str | None = None
    priority: int | None = None
    cell: str | None = None

    def should_run(self, step: int, *, last_step: int) -> bool:
        return False  # the training job never runs it

    def wants(self, step: int, *, done: bool, last_step: int | None) -> bool:
        """Whether the standalone job evaluates the checkpoint of `step` (`done`: the run is complete)."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True, kw_only=True)
class StandaloneEveryCheckpoint(Standalone):
    """Each checkpoint, as it appears (one the job falls behind on is still evaluated, in order)."""

    def wants(self, step: int, *, done: bool, last_step: int | None) -> bool:
        return True


@dataclasses.dataclass(frozen=True, kw_only=True)
class StandaloneLastCheckpoint(Standalone):
    """Once, the last checkpoint, when the run is complete."""

    def wants(self, step: int, *, done: bool, last_step: int | None) -> bool:
        return done and step == last_step
