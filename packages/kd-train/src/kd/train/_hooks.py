"""What happens around each planned call: one small hook per concern (`kd._interfaces.Hook`).

    for hook in hooks: hook.before(call)
    state, out = runner.run(state, call)
    for hook in hooks: hook.after(call, state, out)

In the order the Trainer runs them: the profiler trace, the progress bar, preemption (a SIGTERM asks the
run to stop after this call), the non-finite watch (nothing computed from a NaN loss is logged, evaluated or
saved), the call timer (calls of ~2 s at most once updates are timed), metrics, summaries, evaluators, the
user's hooks (`Trainer.hooks`, `kd.train._user_hooks`: they see the step's logged and evaluated values and may
stop the run), checkpoints (a stop is saved). `evaluate_and_write` is also what `kd-train eval` runs on each
checkpoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np

from kd._phase import during
from kd._root_ref import INHERITED_ATTR, RootRef
from kd.train._compiles import CompileLog
from kd.train._nonfinite import NonFiniteWatch, ready_losses
from kd.train._plan import Call, time_capped
from kd.train._runner import CallOutput
from kd.writers import CollectionWriter


class BaseHook:
    """A `kd._interfaces.Hook` whose methods do nothing: subclasses define what they need."""

    def before(self, call: Call) -> None:
        pass

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
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

    def __init__(self, profiler: Any) -> None:
        self.profiler = profiler
        self.tracing = False

    def before(self, call: Call) -> None:
        lead_only = not getattr(self.profiler, "all_host", True)
        if lead_only and jax.process_index() != 0:
            return
        if call.trace_start and call.updates and self.profiler.folder is not None:
            jax.profiler.start_trace(self.profiler.folder)
            self.tracing = True

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
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

    def __init__(self, bar: Any, compile_clock: CompileLog) -> None:
        self.bar, self.compile_clock = bar, compile_clock
        self._compiled = compile_clock.seconds()
        self._pending: Any = None

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
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

    def __init__(self, preemption: Any) -> None:
        self.preemption = preemption

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
        out.stop = self.preemption.requested


class NonFiniteHook(BaseHook):
    """Hands each update's losses to the watch; reads them before anything is logged, evaluated or saved."""

    def __init__(self, watch: NonFiniteWatch) -> None:
        self.watch = watch

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
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

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
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
        writer: Any,
        bar: Any,
        schedules: Mapping[str, Callable[[int], Any]],
        clock: RunClock,
        compile_clock: CompileLog,
        watch: NonFiniteWatch,
    ) -> None:
        self.writer, self.bar, self.schedules, self.clock, self.watch = writer, bar, schedules, clock, watch
        self._schedules_jit = True

        def schedule_values(step: Any) -> dict[str, Any]:
            return {name: fn(step) for name, fn in schedules.items()}

        self._schedule_values = schedule_values
        # Every schedule's value in one compiled call (eagerly, each jnp operation in them is a program).
        self._jitted_schedule_values = jax.jit(schedule_values)
        self.compile_clock = compile_clock
        self.last: dict[str, Any] = {}  # the last logged values (what `Trainer.train` returns)
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

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
        if not call.log_metrics:
            return
        step = call.end
        assert out.aux is not None
        with during(f"computing the losses and metrics of step {step}"):
            logged = out.aux.compute()
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
    def __init__(self, writer: Any) -> None:
        self.writer = writer

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
        if call.log_summaries:
            assert out.aux is not None
            with during(f"computing the summaries of step {call.end}"):
                summaries = out.aux.compute_summaries()
            self.writer.write_summaries(call.end, summaries)


class EvaluatorsHook(BaseHook):
    """Runs the evaluators due after the call and writes their values."""

    def __init__(self, evaluators: Mapping[str, Any], writer: Any, run_writer: Any = None) -> None:
        self.evaluators, self.writer, self.run_writer = evaluators, writer, run_writer

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
        if call.evals:
            chosen = {name: self.evaluators[name] for name in call.evals}
            out.evaluated = evaluate_and_write(
                chosen, state, call.end, self.writer, run_writer=self.run_writer
            )


def evaluate_and_write(
    evaluators: Mapping[str, Any], state: Any, step: int, writer: Any, *, run_writer: Any = None
) -> dict[str, Any]:
    """Runs each evaluator on `state`; writes (one row) and returns `{"<prefix>/<key>": value}`.

    The prefix is the evaluator's `name` field, else its key. Scalars come back as floats, other values as
    numpy arrays. With `run_writer` (the Trainer's writer), an evaluator whose own `writer` is another one
    (Kauldron's `Evaluator(writer=...)`) has its values written there instead, on process 0 only.
    Usage: `evaluate_and_write({"val": evaluator}, state, 1000, writer)`.
    """
    rows: dict[int, tuple[Any, dict[str, Any], dict[str, Any]]] = {}
    values: dict[str, Any] = {}
    for name, evaluator in evaluators.items():
        prefix = getattr(evaluator, "name", None) or name
        if not callable(getattr(evaluator, "evaluate_states", None)):
            # Kauldron's EvaluatorBase: `evaluate` computes and writes through the evaluator's own writer,
            # which (unless the config gave it one) writes where this call writes, under its name.
            _write_here(evaluator, writer, prefix)
            with during(f"evaluator {name!r} at step {step}"):
                result = evaluator.evaluate(state, step)
            values.update({f"{prefix}/{key}": _host(value) for key, value in _values_of(result).items()})
            continue
        target = _own_writer(evaluator, run_writer)
        target = writer if target is None else target
        _, scalars, summaries = rows.setdefault(id(target), (target, {}, {}))
        with during(f"evaluator {name!r} at step {step}"):
            aux = evaluator.evaluate_states(state, step)
            computed = {f"{prefix}/{key}": _host(value) for key, value in aux.compute().items()}
            scalars.update(computed)
            summaries.update({f"{prefix}/{key}": value for key, value in aux.compute_summaries().items()})
        values.update(computed)
    for target, scalars, summaries in rows.values():
        if target is not writer and jax.process_index() != 0:
            continue  # an evaluator's own writer writes on the lead process only, as the Trainer's
        target.write_scalars(step, scalars)
        if summaries:
            target.write_summaries(step, summaries)
        if target is not writer:
            target.flush()
    return values


def _write_here(evaluator: Any, writer: Any, prefix: str) -> None:
    """Points an EvaluatorBase's writer taken from the Trainer (`ROOT_CFG_REF.writer`) at `writer` (the
    training's, or `kd-train eval`'s), scoped to `prefix`; a writer the config gave it is kept."""
    current = getattr(evaluator, "writer", None)
    if not isinstance(current, RootRef) and "writer" not in getattr(evaluator, INHERITED_ATTR, {}):
        return
    if isinstance(current, CollectionWriter) and current.writer is writer and current.collection == prefix:
        return
    scoped = CollectionWriter(writer=writer, collection=prefix)
    object.__setattr__(evaluator, "writer", scoped)  # the evaluator is this run's; its caches stay


def _values_of(result: Any) -> dict[str, Any]:
    """What an EvaluatorBase's `evaluate` returned, as logged values: a dict, an AuxState / Kauldron's
    AuxiliariesState (computed), an AuxiliariesOutput, or nothing."""
    if result is None:
        return {}
    if callable(getattr(result, "compute", None)) and not isinstance(result, Mapping):
        result = result.compute()
    if hasattr(result, "metric_values"):
        return {**result.loss_values, **result.metric_values}
    if isinstance(result, Mapping):
        return {str(key): value for key, value in result.items() if _is_numeric(value)}
    return {}


def _is_numeric(value: Any) -> bool:
    """A number or an array of numbers (what is logged); a text or another object is left out."""
    try:
        dtype = np.asarray(value).dtype
    except (TypeError, ValueError):
        return False
    return np.issubdtype(dtype, np.number) or dtype == np.bool_


def _own_writer(evaluator: Any, run_writer: Any) -> Any:
    """The evaluator's `writer` when it is not the run's (None: the run's writer takes its values)."""
    own = getattr(evaluator, "writer", None)
    if (
        run_writer is None
        or own is None
        or own is run_writer
        or not callable(getattr(own, "write_scalars", None))
    ):
        return None
    return own


def _host(value: Any) -> Any:
    array = np.asarray(value)
    return float(array) if array.ndim == 0 else array


class CheckpointHook(BaseHook):
    """Saves after the calls that end at a checkpoint step, the stop step, a SIGTERM or a hook's stop request.

    The info saved beside the state: the seed, the training seconds, the skipped updates, the user hooks'
    states (`hook_states()`, under `hooks`) and a hook's stop request (`early_stop`), read back on resume.
    """

    def __init__(
        self,
        *,
        checkpointer: Any,
        writer: Any,
        data: Any,
        clock: RunClock,
        watch: NonFiniteWatch,
        seed: int,
        stop: int,
        hook_states: Callable[[], Mapping[str, Any]] = dict,
    ) -> None:
        self.checkpointer, self.writer, self.data = checkpointer, writer, data
        self.clock, self.watch, self.seed, self.stop = clock, watch, seed, stop
        self.hook_states = hook_states

    def after(self, call: Call, state: Any, out: CallOutput) -> None:
        if not (call.save or out.stop):
            return
        self.writer.flush()  # what was logged up to this step is on disk before its checkpoint is
        get_state = getattr(self.data, "get_state", None)  # the data position is read only now
        info: dict[str, Any] = {
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
            data_state=get_state() if get_state is not None else None,
            metrics={**out.logged, **out.evaluated},
            info=info,
            force=call.end == self.stop or out.stop,
        )
