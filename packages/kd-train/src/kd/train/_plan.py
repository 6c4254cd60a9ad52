"""The plan of a run: which compiled calls it makes, and what is due after each. Pure Python, no JAX.

    cadence = Cadence(log_metrics_every=100, log_summaries_every=None, evals_due=lambda s: (),
                      save_due=lambda s: s % 1000 == 0, profile=None, metrics_alone=False)
    for call in plan(start=0, stop=300, last_step=300, cadence=cadence, call_size=100):
        ...   # call.start, call.updates, call.last_alone, call.log_metrics, call.evals, call.save

Small models are dispatch-bound, so the Trainer fuses updates: one compiled call runs up to `call_size` of
them (a loop compiled once). It still logs, evaluates, checkpoints and profiles at exactly the steps asked
for: a call ends at the next step where anything is due (a boundary). A call whose last step must return
metrics or summaries runs that last update as its own compiled step (`last_alone`); a logging step that
logs only losses is the last update of its fused call (its losses come back from the call). The first call
of a fresh run is step 0's evaluations (no update). Every rule about where calls end lives here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

# Most updates one compiled call runs when the Trainer chooses the size itself.
MAX_STEPS_PER_CALL = 128
# Once an update's time is known (from a logging window), a call runs at most about this long.
CALL_SECONDS = 2.0
# steps_per_call=1 before a logging window has timed the updates: calls of at most this many (a SIGTERM, Ctrl-C
# or the non-finite check is seen within them, whatever one update takes).
UNMEASURED_SINGLE_CALL = 8


@dataclasses.dataclass(frozen=True)
class Cadence:
    """When things are due, by step (`state.step` after the update that reached it).

    Attributes:
      last_step: the run's `num_train_steps` (it logs, and evaluators may run, there).
      log_metrics_every: metrics are logged at step 1, every multiple of it, and the last step.
      log_summaries_every: the same for summaries; None when the run has none.
      evals_due: the names of the evaluators that run after `step`.
      save_due: whether a checkpoint is saved after `step` (beside the stop step, always saved).
      profile: `(first_step, num_steps)` or `(first_step, num_steps, every_steps)`: a trace of steps
        `first_step + 1 ... first_step + num_steps` (again every `every_steps` steps); None.
      metrics_alone: the train step returns metrics on logging steps (train metrics exist): such a step is
        its own compiled call.
    """

    last_step: int
    log_metrics_every: int
    log_summaries_every: int | None
    evals_due: Callable[[int], tuple[str, ...]]
    save_due: Callable[[int], bool]
    profile: tuple[int, int] | None = None
    metrics_alone: bool = False

    def logs_metrics(self, step: int) -> bool:
        return _due(step, self.log_metrics_every, self.last_step)

    def logs_summaries(self, step: int) -> bool:
        return self.log_summaries_every is not None and _due(step, self.log_summaries_every, self.last_step)

    def is_boundary(self, step: int) -> bool:
        """Whether anything is due at `step`: a call ends there."""
        return (
            self.logs_metrics(step)
            or self.logs_summaries(step)
            or bool(self.evals_due(step))
            or self.save_due(step)
            or self.trace_starts(step)
            or self.trace_stops(step)
        )

    def trace_starts(self, step: int) -> bool:
        """Whether a profile trace starts after `step` (the first one, then every `every` steps)."""
        if self.profile is None:
            return False
        first, _, every = (*self.profile, None)[:3]
        return step == first or (every is not None and step > first and (step - first) % every == 0)

    def trace_stops(self, step: int) -> bool:
        """Whether a profile trace ends at `step` (`num_steps` after one started)."""
        return self.profile is not None and self.profile[1] > 0 and self.trace_starts(step - self.profile[1])


@dataclasses.dataclass(frozen=True)
class Call:
    """One compiled call (or two: a fused part, then a lone last update) and what is due after it.

    Attributes:
      start: `state.step` before the call; `end` after it.
      updates: optimizer updates the call runs (0: step 0's evaluations of a fresh run).
      last_alone: the last update runs as its own compiled step (it returns metrics or summaries); the
        others, if any, are fused.
      log_metrics, log_summaries: due after the call.
      evals: names of the evaluators due after the call.
      save: a checkpoint is due after the call (the stop step, or the checkpointer's cadence).
      trace_start, trace_stop: a profile trace starts before the call / stops after it.
    """

    start: int
    updates: int
    last_alone: bool = False
    log_metrics: bool = False
    log_summaries: bool = False
    evals: tuple[str, ...] = ()
    save: bool = False
    trace_start: bool = False
    trace_stop: bool = False

    @property
    def end(self) -> int:
        return self.start + self.updates

    @property
    def fused_updates(self) -> int:
        """Updates run by the fused call (all but a lone last one)."""
        return self.updates - 1 if self.last_alone else self.updates

    @property
    def anything_due(self) -> bool:
        return self.log_metrics or self.log_summaries or bool(self.evals) or self.save


def plan(
    *,
    start: int,
    stop: int,
    cadence: Cadence,
    call_size: int,
    limit: Callable[[], int] | None = None,
    fresh: bool = True,
) -> Iterator[Call]:
    """The calls from `start` to `stop`, each ending at the next boundary (or `stop`), at most `call_size`
    updates (`limit()`, read before each call, caps it further: the time cap). `call_size` 1 runs every
    update as its own call. A fresh run (`start == 0`, `fresh`: not restored) begins with step 0's
    evaluations, if any; a run restored from a checkpoint of step 0 had them before that save."""
    if start == 0 and fresh and cadence.evals_due(0):
        yield Call(start=0, updates=0, evals=cadence.evals_due(0))
    step = start
    while step < stop:
        size = call_size if limit is None else max(1, min(call_size, limit()))
        n = 1 if call_size == 1 else _steps_until_boundary(step, stop=stop, limit=size, cadence=cadence)
        end = step + n
        log_metrics = cadence.logs_metrics(end)
        log_summaries = cadence.logs_summaries(end)
        yield Call(
            start=step,
            updates=n,
            last_alone=call_size == 1 or log_summaries or (log_metrics and cadence.metrics_alone),
            log_metrics=log_metrics,
            log_summaries=log_summaries,
            evals=cadence.evals_due(end),
            save=end == stop or cadence.save_due(end),
            trace_start=cadence.trace_starts(step),
            trace_stop=cadence.trace_stops(end),
        )
        step = end


def time_capped(size: int, seconds_per_update: float | None) -> int:
    """At most `size` updates, and no more than take about `CALL_SECONDS` (at `seconds_per_update`, measured
    over the last logging window): the loop sees a SIGTERM, and the progress bar moves, between calls, so a
    model whose update takes seconds gets short calls (fusing buys it nothing anyway)."""
    if not seconds_per_update or seconds_per_update <= 0:
        return size
    return max(1, min(size, int(CALL_SECONDS / seconds_per_update)))


def _steps_until_boundary(step: int, *, stop: int, limit: int, cadence: Cadence) -> int:
    for n in range(1, limit + 1):
        if step + n >= stop or cadence.is_boundary(step + n):
            return n
    return limit


def _due(step: int, every: int, last_step: int) -> bool:
    return step == 1 or step == last_step or step % every == 0
