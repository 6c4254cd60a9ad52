"""What happens around each planned call: one small hook per concern (`kd._interfaces.Hook`), and `RunHooks`,
the hooks of one run in the order the loop calls them.

    for hook in run_hooks.in_order(): hook.before(call)
    state, out = runner.run(state, call)
    for hook in run_hooks.in_order(): hook.after(call, state, out)

`RunHooks` lists them in that order and says why: the profiler trace, the progress bar, preemption (a SIGTERM
asks the run to stop after this call), the non-finite watch (nothing computed from a NaN loss is logged,
evaluated or saved), the call timer (calls of ~2 s at most once updates are timed), metrics, summaries,
evaluators, the user's hooks (`Trainer.hooks`, `kd.train._user_hooks`: they see the step's logged and evaluated
values and may stop the run), checkpoints (a stop is saved). `evaluate_and_write` is also what `kd-train eval`
runs on each checkpoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

import jax
import numpy as np

from kd._interfaces import Checkpointer, Evaluator, PyTree, Writer
from kd._phase import during
from kd.runtime import TrainState
from kd.train._compiles import CompileLog
from kd.train._evaluations import Evaluation, SelfWritingEvaluator, as_evaluations, write_evaluations
from kd.train._nonfinite import NonFiniteWatch, ready_losses
from kd.train._plan import Call, time_capped
from kd.train._preemption import Preemption
from kd.train._profiler import Profiler
from kd.train._progress import Progress
from kd.train._runner import CallOutput

TYPE_CHECKING = False
if TYPE_CHECKING:
    import chex
    import optax

    from kd.train._types import LoggedValue, UpdateLosses
    from kd.train._user_hooks import UserHooks


class BaseHook:
    """A `kd._interfaces.Hook` whose methods do nothing: subclasses define what they need."""

    def before(self, call: Call) -> None:
        pass

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        pass


class RunClock:
    """Training seconds of the run, across restarts: `clock.seconds()` (`started` counts the time before)."""

    def __init__(self, seconds_before: float = 0.0) -> None:
        self.started = time.perf_counter() - seconds_before

    def seconds(self) -> float:
        return time.perf_counter() - self.started


class ProfilerHook(BaseHook):
    """Starts a `kd.train.Profiler` trace before the planned call that begins it, stops it after the last
    traced step (once the state is computed)."""

    def __init__(self, profiler: Profiler) -> None:
        self.profiler = profiler
        self.tracing = False
        # `all_host=False` traces on process 0 only: the other hosts never start a trace.
        self._traces_here = getattr(profiler, "all_host", True) or jax.process_index() == 0

    def before(self, call: Call) -> None:
        if not self._traces_here:
            return
        if call.trace_start and call.updates and self.profiler.folder is not None:
            jax.profiler.start_trace(self.profiler.folder)
            self.tracing = True

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        if call.trace_stop and self.tracing:
            jax.block_until_ready(state)
            self.close()

    def close(self) -> None:
        """Ends a trace still open (the run stopped or failed inside the traced steps)."""
        if self.tracing:
            self.tracing = False
            jax.profiler.stop_trace()


class ProgressHook(BaseHook):
    """Moves the bar by the call's updates, leaves compile time out of its rate, and shows the latest loss
    a call brought back once it is computed (the previous call's, if this one's is still running)."""

    def __init__(self, bar: Progress._Bar, compile_clock: CompileLog) -> None:
        self.bar, self.compile_clock = bar, compile_clock
        self._compiled = compile_clock.seconds()
        self._pending: UpdateLosses | None = None

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        if self.bar.shown:  # the call's compiling left out before the bar shows the rate it moved at
            compiled = self.compile_clock.seconds()
            self.bar.exclude(compiled - self._compiled)
            self._compiled = compiled
        self.bar.step(call.updates)
        if not self.bar.shown:
            return
        for states in (self._pending, out.losses[-1][1] if out.losses else None):
            values = ready_losses(states) if states is not None else None
            if values is not None:
                self.bar.losses(values)
        self._pending = out.losses[-1][1] if out.losses else None


class PreemptionHook(BaseHook):
    """A SIGTERM received during the call stops the run after it (the checkpoint hook saves it)."""

    def __init__(self, preemption: Preemption) -> None:
        self.preemption = preemption

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        out.stop = self.preemption.requested


class NonFiniteHook(BaseHook):
    """Hands each update's losses to the watch; reads them before anything is logged, evaluated or saved."""

    def __init__(self, watch: NonFiniteWatch) -> None:
        self.watch = watch

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        for step, states in out.losses:
            if isinstance(states, tuple):
                self.watch.add_fused(step, *states)
            else:
                self.watch.add(step, states)
        if call.anything_due or out.stop:
            self.watch.check()


class CallTimer(BaseHook):
    """Times the updates of each logging window (evaluations and saves left out): `limit()` is the call
    size that takes about `kd.train._plan.CALL_SECONDS`."""

    def __init__(self, size: int, *, unmeasured: int | None = None) -> None:
        self.size = size
        self.unmeasured = unmeasured  # the call size until a window is timed (None: `size`)
        self.seconds_per_update: float | None = None
        self._window: tuple[float, int] | None = None
        self._restart = False

    def limit(self) -> int:
        if self.seconds_per_update is None and self.unmeasured is not None:
            return min(self.size, self.unmeasured)
        return time_capped(self.size, self.seconds_per_update)

    def before(self, call: Call) -> None:
        if self._restart:  # the previous call logged: its evaluations and save are done
            self._window, self._restart = (time.perf_counter(), call.start), False

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        if not call.log_metrics:
            return
        window = self._window
        if window is not None and call.end > window[1]:
            self.seconds_per_update = (time.perf_counter() - window[0]) / (call.end - window[1])
        self._restart = True


class MetricsHook(BaseHook):
    """On logging steps: the losses and metrics, the schedules' values and `perf/*`, to the writer and bar.

    `perf/steps_per_sec` is the updates of the logging window over its seconds, less the time JAX spent
    compiling in it and without the evaluations and saves after the previous logging step (which have their
    own times); the first window of a run (start-up, warm-up) logs none. `perf/compile_seconds` is the
    compile time of this invocation so far.
    """

    def __init__(
        self,
        *,
        writer: Writer,
        bar: Progress._Bar,
        schedules: Mapping[str, optax.Schedule],
        clock: RunClock,
        compile_clock: CompileLog,
        watch: NonFiniteWatch,
    ) -> None:
        self.writer, self.bar, self.schedules, self.clock, self.watch = writer, bar, schedules, clock, watch
        self._schedules_jit = True

        def schedule_values(step: chex.Numeric) -> dict[str, chex.Numeric]:
            return {name: fn(step) for name, fn in schedules.items()}

        self._schedule_values = schedule_values
        # Every schedule's value in one compiled call (eagerly, each jnp operation in them is a program).
        self._jitted_schedule_values = jax.jit(schedule_values)
        self.compile_clock = compile_clock
        self.last: dict[str, LoggedValue] = {}  # the last logged values (what `Trainer.train` returns)
        self._window: tuple[float, float, int] | None = None  # (time, compile seconds, step) at its start
        self._run_start: int | None = None
        self._restart = True

    def before(self, call: Call) -> None:
        if self._run_start is None:
            self._run_start = call.start
        if self._restart:  # the first call after a logging step (its evaluations and save are done)
            self._window = (time.perf_counter(), self.compile_clock.seconds(), call.start)
            self._restart = False

    def _schedules_at(self, step: int) -> dict[str, float]:
        """Each schedule's value at `step`: compiled together, or one by one for a schedule that is plain Python
        (`lambda step: 0.1 if step < 100 else 0.01` cannot be traced)."""
        if self._schedules_jit:
            try:
                values = jax.device_get(self._jitted_schedule_values(np.int32(step)))
                return {name: float(value) for name, value in values.items()}
            except jax.errors.JAXTypeError:
                self._schedules_jit = False
        return {name: float(value) for name, value in self._schedule_values(step).items()}

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        if not call.log_metrics:
            return
        step = call.end
        assert out.aux is not None
        with during(f"computing the losses and metrics of step {step}"):
            logged: dict[str, LoggedValue] = out.aux.compute()
        # The values the update that reached `step` used (optax counts from 0: `schedule(step - 1)`).
        if self.schedules:
            logged.update({f"schedules/{name}": value for name, value in self._schedules_at(step - 1).items()})
        now, compiled = time.perf_counter(), self.compile_clock.seconds()
        assert self._window is not None
        started, compiled_before, first = self._window
        seconds = (now - started) - (compiled - compiled_before)
        if first > self._run_start:  # the first window (start-up, first calls) is not a rate of training
            logged["perf/steps_per_sec"] = (step - first) / max(seconds, 1e-9)
        logged["perf/train_seconds"] = now - self.clock.started
        logged["perf/compile_seconds"] = compiled
        if self.watch.policy == "skip":
            logged["perf/skipped_updates"] = self.watch.skipped
        self._restart = True
        self.writer.write_scalars(step, logged)
        self.bar.logged(logged)
        self.last = out.logged = logged


class SummariesHook(BaseHook):
    """On summary logging steps: the summaries (images, histograms, ...) to the writer."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        if call.log_summaries:
            assert out.aux is not None
            with during(f"computing the summaries of step {call.end}"):
                summaries = out.aux.compute_summaries()
            self.writer.write_summaries(call.end, summaries)


class EvaluatorsHook(BaseHook):
    """Runs the evaluations due after the call (`kd.train._evaluations`: each evaluator wrapped once, as the
    run starts) and writes their values."""

    def __init__(self, evaluations: Mapping[str, Evaluation], writer: Writer) -> None:
        self.evaluations, self.writer = evaluations, writer

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        if call.evals:
            chosen = {name: self.evaluations[name] for name in call.evals}
            out.evaluated = write_evaluations(chosen, state, call.end, self.writer)


def evaluate_and_write(
    evaluators: Mapping[str, Evaluator | SelfWritingEvaluator | Evaluation],
    state: TrainState,
    step: int,
    writer: Writer,
    *,
    run_writer: Writer | None = None,
) -> dict[str, LoggedValue]:
    """Runs each evaluator on `state`; writes (one row) and returns `{"<prefix>/<key>": value}`.

    The prefix is the evaluator's `name` field, else its key. Scalars come back as floats, other values as
    numpy arrays. With `run_writer` (the Trainer's writer), an evaluator whose own `writer` is another one
    (Kauldron's `Evaluator(writer=...)`) has its values written there instead, on process 0 only. Kauldron's
    `EvaluatorBase` writes its own values (through its writer, pointed at `writer`): what `evaluate`
    returned comes back. See `kd.train._evaluations`.
    Usage: `evaluate_and_write({"val": evaluator}, state, 1000, writer)`.
    """
    evaluations = as_evaluations(evaluators, writer=writer, run_writer=run_writer)
    return write_evaluations(evaluations, state, step, writer)


class CheckpointHook(BaseHook):
    """Saves after the calls that end at a checkpoint step, the stop step, a SIGTERM or a hook's stop request.

    The info saved beside the state: the seed, the training seconds, the skipped updates, the user hooks'
    states (`hook_states()`, under `hooks`) and a hook's stop request (`early_stop`), read back on resume.
    """

    def __init__(
        self,
        *,
        checkpointer: Checkpointer,
        writer: Writer,
        data: Iterator[PyTree],
        clock: RunClock,
        watch: NonFiniteWatch,
        seed: int,
        stop: int,
        hook_states: Callable[[], Mapping[str, object]] = dict,
    ) -> None:
        self.checkpointer, self.writer = checkpointer, writer
        self.clock, self.watch, self.seed, self.stop = clock, watch, seed, stop
        self.hook_states = hook_states
        # The data iterator's position (`get_state()`, when it has one), read at each save.
        self._data_position: Callable[[], PyTree] | None = getattr(data, "get_state", None)

    def after(self, call: Call, state: TrainState, out: CallOutput) -> None:
        if not (call.save or out.stop):
            return
        self.writer.flush()  # what was logged up to this step is on disk before its checkpoint is
        info: dict[str, object] = {
            "seed": self.seed,
            "train_seconds": self.clock.seconds(),
            "skipped_updates": self.watch.skipped,
        }
        hook_states = self.hook_states()
        if hook_states:
            info["hooks"] = dict(hook_states)
        if out.stop_request is not None:
            info["early_stop"] = out.stop_request.as_json()
        self.checkpointer.maybe_save(
            call.end,
            state=state,
            data_state=None if self._data_position is None else self._data_position(),  # read only now
            metrics={**out.logged, **out.evaluated},
            info=info,
            force=call.end == self.stop or out.stop,
        )


class RunHooks(NamedTuple):
    """The hooks of one run, in the order the loop calls them (`in_order()`): each hook reads what the ones
    before it wrote into the call's `CallOutput`, so it comes after them.

    - `profiler`: first, so that a trace holds the whole call; None without `Trainer.profiler`.
    - `progress`: the bar moves by the call's updates and shows its latest loss.
    - `preemption`: a SIGTERM or Ctrl-C received during the call sets `out.stop`, read by the hooks after it.
    - `nonfinite`: reads the call's losses before anything computed from them is logged, evaluated or saved (a
      NaN loss raises here, or is skipped and counted before `metrics` logs the count).
    - `timer`: times the logging window's updates before the logging, evaluations and save after them.
    - `metrics`: writes the logged values and sets `out.logged`.
    - `summaries`: writes the summaries.
    - `evaluators`: run and write the evaluations due, and set `out.evaluated`.
    - `user`: the Trainer's `hooks` see `out.logged` and `out.evaluated`, may log, and may stop the run (`out.stop`,
      `out.stop_request`); None when the Trainer has none.
    - `checkpoint`: last, so that it saves with the values the others set (`out.logged`, `out.evaluated`) and a
      stop any of them asked for (`out.stop`, `out.stop_request`).
    """

    profiler: ProfilerHook | None
    progress: ProgressHook
    preemption: PreemptionHook
    nonfinite: NonFiniteHook
    timer: CallTimer
    metrics: MetricsHook
    summaries: SummariesHook
    evaluators: EvaluatorsHook
    user: UserHooks | None
    checkpoint: CheckpointHook

    def in_order(self) -> tuple[BaseHook, ...]:
        """The hooks the loop calls, in the order above (the absent ones left out)."""
        return tuple(hook for hook in self if hook is not None)
