"""`Profiler`: a JAX profiler trace of a few training steps, only when asked for.

    trainer = kd.train.Trainer(..., profiler=kd.train.Profiler(first_step=10, num_steps=5))
    # -> <workdir>/profile/ (open with TensorBoard's profile plugin or Perfetto); `kd-train --profile` sets it

Nothing is profiled by default: a trace slows the traced steps and writes megabytes.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from kd._root_ref import ROOT_CFG_REF, RootRef


@dataclasses.dataclass(frozen=True, kw_only=True)
class Profiler:
    """Traces steps `first_step + 1 ... first_step + num_steps` into `<workdir>/profile`.

    Attributes:
      first_step: the step after which tracing starts (after the compiles of the first steps, by default).
      num_steps: how many steps are traced (bounded: traces grow with every step).
      workdir: the Trainer's.
    """

    first_step: int = 10
    num_steps: int = 5
    workdir: Any = ROOT_CFG_REF.workdir

    def __post_init__(self) -> None:
        for name in ("first_step", "num_steps"):
            value = getattr(self, name)
            if type(value) is not int or value < (0 if name == "first_step" else 1):
                raise ValueError(
                    f"Profiler.{name}: expected an int >= {0 if name == 'first_step' else 1}, got {value!r}"
                )

    @property
    def folder(self) -> str | None:
        if self.workdir is None or isinstance(self.workdir, RootRef):
            return None
        return os.path.join(str(self.workdir), "profile")

    def bounds(self, step: int) -> bool:
        """Whether a fused call must end at `step`: the step before the traced ones, or the last traced one
        (so that the trace holds exactly the steps asked for). The trace itself is started and stopped by the
        Trainer's `kd.train._hooks.ProfilerHook`."""
        return step in (self.first_step, self.first_step + self.num_steps)
