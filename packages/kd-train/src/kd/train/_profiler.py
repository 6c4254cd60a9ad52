"""`Profiler`: a JAX profiler trace of a few training steps, only when asked for.

    trainer = kd.train.Trainer(..., profiler=kd.train.Profiler(first_step=10, num_steps=5))
    # -> <workdir>/profile/ (open with TensorBoard's profile plugin or Perfetto); `kd-train --profile` sets it

Nothing is profiled by default: a trace slows the traced steps and writes megabytes.
"""

from __future__ import annotations

import dataclasses
import os

from kd._root_ref import ROOT_CFG_REF, RootRef


@dataclasses.dataclass(frozen=True, kw_only=True)
class Profiler:
    """Traces steps `first_step + 1 ... first_step + num_steps` into `<workdir>/profile`, again every
    `every_steps` steps when set. Every process traces its own part (`all_host=True`, the default here);
    `all_host=False` traces process 0 only.

    Kauldron's spelling works too: `kd.inspect.Profiler(first_profile=10, num_profile_steps=5,
    every_steps=1000, all_host=True)`. Its time-based fields (`profile_duration_ms`, `every_secs`) and
    `on_colab` are accepted for its configs and not used: kd traces whole steps, chosen by step number,
    so a trace never cuts a fused call in two.

    Attributes:
      first_step: the step after which tracing starts (after the compiles of the first steps, by default).
      num_steps: how many steps are traced (bounded: traces grow with every step).
      every_steps: trace again every this many steps after `first_step` (None: once).
      workdir: the Trainer's.
    """

    first_step: int = 10
    num_steps: int = 5
    every_steps: int | None = None
    workdir: str | RootRef | None = ROOT_CFG_REF.workdir
    # Kauldron's names (`first_profile`, `num_profile_steps` set the two above) and its accepted fields.
    first_profile: int | None = None
    num_profile_steps: int | None = None
    all_host: bool = True
    profile_duration_ms: int | None = None
    every_secs: float | None = None
    on_colab: bool = False

    def __post_init__(self) -> None:
        for kauldron, ours in (("first_profile", "first_step"), ("num_profile_steps", "num_steps")):
            if getattr(self, kauldron) is not None:  # taken once: a later `replace(first_step=...)` holds
                object.__setattr__(self, ours, getattr(self, kauldron))
                object.__setattr__(self, kauldron, None)
        for name in ("first_step", "num_steps"):
            value = getattr(self, name)
            if type(value) is not int or value < (0 if name == "first_step" else 1):
                raise ValueError(
                    f"Profiler.{name}: expected an int >= {0 if name == 'first_step' else 1}, got {value!r}"
                )
        every = self.every_steps
        if every is not None and (type(every) is not int or every <= self.num_steps):
            raise ValueError(
                f"Profiler.every_steps: expected None or an int > num_steps ({self.num_steps}): a trace ends "
                f"before the next starts; got {every!r}"
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
        first, every = self.first_step, self.every_steps
        starts = step == first or (every is not None and step > first and (step - first) % every == 0)
        stops = step - self.num_steps >= first and (
            step - self.num_steps == first
            or (every is not None and (step - self.num_steps - first) % every == 0)
        )
        return starts or stops
