"""When an evaluator runs: `EveryNSteps(100)`, `Once(step=500)`, `Final()` (Kauldron's names)."""

from __future__ import annotations

import dataclasses


class RunStrategy:
    """`should_run(step, *, last_step)`: whether to evaluate after the update that reached `step`."""

    def should_run(self, step: int, *, last_step: int) -> bool:
        raise NotImplementedError


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
