"""`TrainingRun`: the set-up and tear-down around `Trainer.train()`'s loop.

with TrainingRun(trainer) as run:      # records the run, restores or inits, opens the writers and hooks
    state = run.state
    for call in run.plan:
        for hook in run.hooks: hook.before(call)
        state, out = run.runner.run(state, call)
        for hook in run.hooks: hook.after(call, state, out)
        if out.stop: break             # a SIGTERM, or a `kd.train.Hook` asked (early stopping)
    run.finish(state)                  # the last checks, the user hooks' end
# closed whatever happened: the bar, a trace, the checkpointer (a save in flight completes), the writer;
# DONE once the last step is reached or a hook stopped the run early (`run.stopped_early`)

`run.hooks` is `run.run_hooks.in_order()`: the hooks of `kd.train._hooks.RunHooks`, whose fields give their order
and its reasons (profiler, progress, preemption, non-finite watch, call timer, metrics, summaries, evaluators,
the Trainer's `hooks`, checkpoint).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator, Mapping

import jax

from kd._interfaces import Checkpointer, PyTree, Writer
from kd._phase import during
from kd.runtime import TrainState, parameter_table
from kd.train import _hooks
from kd.train._compiles import CompileLog
from kd.train._evaluations import as_evaluations
from kd.train._feed import make_feed
from kd.train._hook import hook_keys
from kd.train._nonfinite import NonFiniteWatch
from kd.train._plan import UNMEASURED_SINGLE_CALL, Cadence, Call, plan
from kd.train._preemption import Preemption
from kd.train._progress import print_line
from kd.train._run_record import write_run_end, write_run_start
from kd.train._runner import CallRunner
from kd.train._stop import StopRequest
from kd.train._user_hooks import UserHooks
from kd.writers import NoopWriter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.train._progress import Progress
    from kd.train._trainer import Trainer
    from kd.train._types import LoggedValue

# What the hosts other than process 0 write through: nothing (all compute, one writes).
_SILENT_WRITER = NoopWriter()


class TrainingRun:
    """One run of a Trainer (see the module docstring). Attributes after `__enter__`: `state` (restored or
    fresh), `plan` (the calls), `runner`, `run_hooks` (`RunHooks`) and `hooks` (those the loop calls, in
    order), `logged` (the last logged values), `stopped_early` (a hook's `StopRequest` that ended the run, or
    None)."""

    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer
        self._closing = contextlib.ExitStack()
        # Set as `_start` gets to them (what `_close` closes, whatever step of the set-up failed).
        self._bar: Progress._Bar | None = None
        self._profiler: _hooks.ProfilerHook | None = None
        self._user_hooks: UserHooks | None = None

    def __enter__(self) -> TrainingRun:
        try:
            self._start()
        except BaseException:
            self._closing.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.close()
        stopped = self.stopped_early
        if exc[0] is None and (self._reached >= self.trainer.num_train_steps or stopped is not None):
            write_run_end(
                self.trainer.workdir, step=self._reached, seconds=self._clock.seconds(), early_stop=stopped
            )

    def _start(self) -> None:
        """Records the run, restores or inits the state, then builds what the loop runs: runner, hooks, plan."""
        t = self.trainer
        writer, checkpointer = _run_writer(t), t.checkpointer
        self._record_start(writer)
        self._closing.callback(self._close, writer, checkpointer)
        self._preemption = self._closing.enter_context(Preemption())
        self._watch = NonFiniteWatch(policy=t.on_nonfinite_loss, last_checkpoint=lambda: checkpointer.latest_step)
        data, run_info = self._restore(writer, checkpointer)
        start = self._reached
        self._clock = _hooks.RunClock(float((run_info or {}).get("train_seconds", 0.0)))
        self._watch.skipped = int((run_info or {}).get("skipped_updates", 0))
        stopped_before = self._stopped_before = _stopped_before(run_info, start, t)
        user_hooks = self._user_hooks = UserHooks(
            t.hooks, writer=writer, watch=self._watch, stop_request=stopped_before
        )
        if stopped_before is not None and jax.process_index() == 0:
            print_line(f"run already complete: {stopped_before.line()}; nothing to train")
        stop = start if stopped_before is not None else t.stop_step
        desc = t.setup.tqdm_info.desc
        bar = self._bar = t.progress.start(total=stop, initial=start, desc=None if desc == "train" else desc)
        self.runner = self._make_runner(data)
        self.run_hooks = self._make_hooks(writer, checkpointer, data, bar=bar, user_hooks=user_hooks, stop=stop)
        self.hooks = self.run_hooks.in_order()
        calls = plan(
            start=start,
            stop=stop,
            cadence=_cadence(t),
            call_size=self.runner.size,
            limit=self.run_hooks.timer.limit,
            fresh=run_info is None,
        )
        self.plan: Iterator[Call] = self._tracked(calls)
        user_hooks.start(t, self.state, saved=(run_info or {}).get("hooks") or {})

    def _record_start(self, writer: Writer) -> None:
        """The config to the writer; run.json, params.txt and element_spec.txt into the workdir."""
        t = self.trainer
        config_json = t.config_json
        if config_json is not None:
            writer.write_config(config_json)
        if t.workdir is not None:
            write_run_start(
                t.workdir,
                params_table=parameter_table(t.state_specs.params),
                element_spec=t.element_spec,
                config_json=config_json,
                tags=t.setup.tags,
            )

    def _restore(
        self, writer: Writer, checkpointer: Checkpointer
    ) -> tuple[Iterator[PyTree], Mapping[str, object] | None]:
        """`self.state` restored (with the data's position) or fresh, said to the writers (they drop what they
        wrote after it) and to the exporter: `(data iterator, the checkpoint's run info or None)`."""
        t = self.trainer
        with during("initializing the train state and the data (or restoring them)"):
            self.state, data, run_info = t.restore_or_init()
        start = self._reached = int(self.state.step)
        resumed_from = start if run_info is not None else -1
        if run_info is not None and jax.process_index() == 0:
            print_line(_resuming_line(start, checkpointer))
        writer.resume_from(resumed_from)
        if jax.process_index() == 0:  # an evaluator's own writer (Kauldron's Evaluator(writer=...)) too
            for own in _own_writers(t):
                own.resume_from(resumed_from)
        writer.write_element_spec(start, t.element_spec)
        writer.write_param_overview(start, self.state.params)
        writer.write_context_structure(start, t)
        if t.exporter is not None and jax.process_index() == 0:
            with during("exporting the model (Trainer.exporter)"):
                t.exporter.export(model=t.model, state=self.state, element_spec=t.element_spec, is_training=True)
        return data, run_info

    def _make_runner(self, data: Iterator[PyTree]) -> CallRunner:
        """How batches reach the compiled calls (`kd.train._feed`), and the runner of the calls."""
        t = self.trainer
        single = _single_updates(t)
        feed, size = make_feed(
            data,
            sharding=t.sharding,
            element_spec=t.element_spec,
            steps_per_call=None if single else t.steps_per_call,
            period=t.log_metrics_every,
            logging_step_inside=not t.trainstep.metrics,
        )
        return CallRunner(t.trainstep, feed, size, measure=t.steps_per_call is None, single=single)

    def _make_hooks(
        self,
        writer: Writer,
        checkpointer: Checkpointer,
        data: Iterator[PyTree],
        *,
        bar: Progress._Bar,
        user_hooks: UserHooks,
        stop: int,
    ) -> _hooks.RunHooks:
        """The run's hooks (`RunHooks`: in the loop's order); the evaluators wrapped once here."""
        t = self.trainer
        # Single updates of a model not yet timed: short calls, so that a SIGTERM or Ctrl-C is seen within a
        # few updates even when one takes seconds (the first logging window then sets the calls' length).
        unmeasured = UNMEASURED_SINGLE_CALL if _single_updates(t) else None
        compile_clock = CompileLog()
        self._profiler = _hooks.ProfilerHook(t.profiler) if t.profiler is not None else None
        return _hooks.RunHooks(
            profiler=self._profiler,
            progress=_hooks.ProgressHook(bar, compile_clock),
            preemption=_hooks.PreemptionHook(self._preemption),
            nonfinite=_hooks.NonFiniteHook(self._watch),
            timer=_hooks.CallTimer(self.runner.size, unmeasured=unmeasured),
            metrics=_hooks.MetricsHook(
                writer=writer,
                bar=bar,
                schedules=t.schedules,
                clock=self._clock,
                compile_clock=compile_clock,
                watch=self._watch,
            ),
            summaries=_hooks.SummariesHook(writer),
            evaluators=_hooks.EvaluatorsHook(as_evaluations(t.evals, writer=writer, run_writer=t.writer), writer),
            user=user_hooks if t.hooks else None,
            checkpoint=_hooks.CheckpointHook(
                checkpointer=checkpointer,
                writer=writer,
                data=data,
                clock=self._clock,
                watch=self._watch,
                seed=t.seed,
                stop=stop,
                hook_states=user_hooks.saved_states,
            ),
        )

    def _tracked(self, calls: Iterator[Call]) -> Iterator[Call]:
        for call in calls:
            yield call
            self._reached = call.end

    @property
    def logged(self) -> dict[str, LoggedValue]:
        return self.run_hooks.metrics.last

    @property
    def stopped_early(self) -> StopRequest | None:
        """The request of the hook that ended the run before its last step (this `train()`, or an earlier
        one whose checkpoint the run restored), or None."""
        return None if self._user_hooks is None else self._user_hooks.stop_request

    def finish(self, state: TrainState) -> None:
        """After the loop: an early stop or a preemption is said; losses still unread are checked; the user
        hooks' `on_train_end`."""
        self._reached = int(state.step)
        stopped = self.stopped_early
        if stopped is None and self._preemption.requested:
            print_line(_preempted_line(self._reached, self.trainer, self._preemption.signal), sys.stderr)
        self._watch.check()
        if stopped is not None and stopped is not self._stopped_before and jax.process_index() == 0:
            print_line(stopped.line())
        self._user_hooks.end(self.trainer, state)
        if stopped is None and self._preemption.signal == signal.SIGINT:  # saved, said: Ctrl-C goes on
            interrupt = KeyboardInterrupt(f"stopped at step {self._reached} (Ctrl-C)")
            interrupt._kd_announced = True  # type: ignore[attr-defined]  # the line above said it
            raise interrupt

    def _close(self, writer: Writer, checkpointer: Checkpointer) -> None:
        """Whatever happened: the bar and a trace close, a save in flight completes, the writer flushes."""
        try:
            if self._bar is not None:
                self._bar.close()
            if self._profiler is not None:
                self._profiler.close()
            checkpointer.wait_until_finished()
            checkpointer.close()
        finally:
            writer.flush()


def _run_writer(trainer: Trainer) -> Writer:
    """The Trainer's `writer` on process 0; on the other hosts one that writes nothing."""
    return trainer.writer if jax.process_index() == 0 else _SILENT_WRITER


def _single_updates(trainer: Trainer) -> bool:
    """`steps_per_call=1`: every update its own compiled call, the calls still running from one logging step
    to the next (hooks run between calls: per update they would cost more than a small model's update)."""
    return trainer.steps_per_call == 1


def _stopped_before(
    run_info: Mapping[str, object] | None, start: int, trainer: Trainer
) -> StopRequest | None:
    """The stop request saved with the checkpoint the run resumes from, when a hook ended the run there and is
    still among the Trainer's hooks (without it, the run goes on)."""
    request = StopRequest.from_json((run_info or {}).get("early_stop"))
    if request is None or request.step != start or request.hook not in hook_keys(trainer.hooks):
        return None
    return request


def _own_writers(trainer: Trainer) -> list[Writer]:
    """The evaluators' writers other than the Trainer's, each once."""
    found: dict[int, Writer] = {}
    for evaluator in dict(trainer.evals).values():
        own = getattr(evaluator, "writer", None)
        if own is not None and own is not trainer.writer and callable(getattr(own, "resume_from", None)):
            found.setdefault(id(own), own)
    return list(found.values())


def _preempted_line(step: int, trainer: Trainer, signum: int | None) -> str:
    """What a SIGTERM or Ctrl-C did: the step it stopped at, and whether that state is saved (a checkpointer
    that keeps checkpoints waits for its save, so `latest_step` is the truth)."""
    checkpointer = trainer.checkpointer
    checkpointer.wait_until_finished()
    what = "interrupted (Ctrl-C)" if signum == signal.SIGINT else "preempted (SIGTERM)"
    where = f"{what} at step {step} of {trainer.num_train_steps}"
    if checkpointer.latest_step == step:
        return f"{where}: the state is checkpointed; run the same command again to continue from here"
    return (
        f"{where}: nothing was saved (the Trainer has no checkpointer), so running the same command again "
        "starts over; set checkpointer=kd.ckpts.Checkpointer(...) to resume after a preemption"
    )


def _resuming_line(step: int, checkpointer: Checkpointer) -> str:
    """`resuming from step 7200 (/tmp/run/checkpoints/ckpt_7200)`."""
    directory = getattr(checkpointer, "directory", None)
    where = f" ({os.path.join(os.fspath(directory), f'ckpt_{step}')})" if directory is not None else ""
    return f"resuming from step {step}{where}"


def _cadence(trainer: Trainer) -> Cadence:
    last_step = trainer.num_train_steps
    runs = [(name, evaluator.run) for name, evaluator in trainer.evals.items()]  # read once, asked each step
    profiler = trainer.profiler
    return Cadence(
        last_step=last_step,
        log_metrics_every=trainer.log_metrics_every,
        log_summaries_every=trainer.log_summaries_every if trainer.train_summaries else None,
        evals_due=lambda step: tuple(name for name, run in runs if run.should_run(step, last_step=last_step)),
        save_due=trainer.checkpointer.should_save,
        profile=None if profiler is None else (profiler.first_step, profiler.num_steps, profiler.every_steps),
        metrics_alone=bool(trainer.trainstep.metrics),
    )
