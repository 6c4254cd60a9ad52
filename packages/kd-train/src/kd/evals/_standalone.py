"""`evaluate_checkpoints`: the evaluators of a run, on each of its checkpoints, in a process of their own.

    trainer = konfig.resolve(konfig.from_json(open("/tmp/run/config.json").read()))
    values = kd.evals.evaluate_checkpoints(trainer, evals=["val"], poll_seconds=30)  # {step: {"val/...": ...}}
    values = kd.evals.evaluate_checkpoints(trainer, follow=False)  # the checkpoints there now, then return

It follows `<workdir>/checkpoints` while the run trains (or after it finished): each checkpoint, oldest
first, is restored and evaluated once, and the values go to `<workdir>/eval_metrics.jsonl` (and the
terminal, and TensorBoard when the run writes there). It stops once the run's DONE marker is written and
every checkpoint present has been evaluated (`follow=False`: after one look). A save still being written
(orbax's `*.orbax-checkpoint-tmp-*` folder, or a step folder without orbax's commit marker) is left for a
later look. `kd-train eval --workdir=... [--no-follow]` is the command line of it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np
from etils import epath

from kd import _interfaces, ckpts, writers
from kd._evaluator_names import names_problem
from kd.evals._base import EvaluatorBase
from kd.train import DONE_FILE, ConfigError, Evaluation, as_evaluations, evaluate_and_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.train import Trainer, TrainState

_E = TypeVar("_E")  # an evaluator, or a config's (`select_evaluators` reads only the keys)

EVAL_METRICS_FILE = "eval_metrics.jsonl"
"""What `evaluate_checkpoints` writes by default: `<workdir>/eval_metrics.jsonl`, rows as in `metrics.jsonl`."""


def evaluate_checkpoints(
    trainer: Trainer,
    *,
    evals: Sequence[str] | None = None,
    follow: bool = True,
    poll_seconds: float = 10.0,
    timeout_seconds: float | None = None,
    writer: writers.Writer | None = None,
) -> dict[int, dict[str, float | np.ndarray]]:
    """Evaluates every checkpoint of `trainer`'s run as it appears; returns `{step: values written}`.

    Usage: `kd.evals.evaluate_checkpoints(trainer, evals=["val"], timeout_seconds=3600)`.

    Each checkpoint (oldest first, each once) is restored onto the Trainer's state template and every
    chosen evaluator runs on it, whatever its `run` strategy (a `StandaloneLastCheckpoint` one: only the
    last checkpoint, once the run is done); its values are written as `<evaluator name>/<key>` at the
    checkpoint's step. Between rounds it waits `poll_seconds` for new checkpoints; it returns once
    `<workdir>/DONE` exists and every checkpoint present was evaluated (at once, for a run that had
    finished already). A save in flight (orbax's temporary folder, or a step folder without orbax's
    commit marker) is not read: it is taken on a later round, once complete (one still without its
    marker when the run is done is skipped with a note). Steps whose values `<workdir>/eval_metrics.jsonl`
    already holds (for that evaluator) are skipped, so an evaluation that was stopped continues where it
    was. A checkpoint deleted before it could be read (the run's `max_to_keep`) is skipped with a note.

    Args:
      trainer: a `kd.train.Trainer` with a workdir and a `kd.ckpts.Checkpointer`.
      evals: names of `trainer.evals` to run; None runs them all.
      follow: wait for the run's next checkpoints until it is done; False evaluates the complete
        checkpoints there now and returns (a `StandaloneLastCheckpoint` evaluator then runs only if the run
        is done).
      poll_seconds: seconds between looks at the checkpoint folder while the run is not done.
      timeout_seconds: raise `TimeoutError` after waiting this long without a new checkpoint (and no DONE);
        None waits as long as it takes. Not used with `follow=False`.
      writer: where the values go; default: the terminal, `<workdir>/eval_metrics.jsonl`, and TensorBoard
        event files in `<workdir>` when the run's writer writes TensorBoard (`default_writer`: kd's own
        writers, never the run's writer objects).

    Returns:
      The values this call wrote, by step (scalars as floats, other values as numpy arrays); skipped
      steps are not in it.

    Raises:
      kd.train.ConfigError: no workdir, no checkpointer, no evaluator, or an unknown name in `evals`.
      TimeoutError: `timeout_seconds` passed without a new checkpoint while the run was not done.
    """
    checkpointer = _read_only_checkpointer(trainer)
    chosen = select_evaluators(trainer.evals, evals)
    workdir = epath.Path(trainer.workdir)
    own_writer = writer is None
    if writer is None:
        writer = default_writer(trainer)
    done_before = evaluated_steps(workdir / EVAL_METRICS_FILE, [_prefix(n, e) for n, e in chosen.items()])
    try:  # the writer and the checkpointer are closed whatever fails, wrapping the evaluators too
        rounds = _Rounds(
            checkpointer=checkpointer,
            chosen=chosen,
            evaluations=as_evaluations(chosen, writer=writer),  # each evaluator wrapped once, for every checkpoint
            writer=writer,
            template=trainer.sharding.state_template(trainer.state_specs),
            done_before=done_before,
        )
        _follow(rounds, workdir, follow=follow, poll_seconds=poll_seconds, timeout_seconds=timeout_seconds)
    finally:
        if own_writer:
            writer.close()
        else:
            writer.flush()
        checkpointer.close()
    if rounds.skipped_before:
        _note(
            f"{rounds.skipped_before} checkpoint(s) already evaluated in {workdir / EVAL_METRICS_FILE}: skipped"
        )
    return rounds.results


def _read_only_checkpointer(trainer: Trainer) -> ckpts.Checkpointer:
    """The Trainer's checkpointer, read-only (a normal one would clean up the training job's save in flight and
    apply retention); a ConfigError without a workdir or a checkpointer that keeps checkpoints."""
    if trainer.workdir is None:
        raise ConfigError(
            "evaluate_checkpoints: Trainer.workdir is not set; it is where the checkpoints to evaluate are"
        )
    checkpointer = trainer.checkpointer
    if isinstance(checkpointer, ckpts.NoopCheckpointer) or not all(
        callable(getattr(checkpointer, m, None)) for m in ("all_steps", "reload", "restore")
    ):
        raise ConfigError(
            f"evaluate_checkpoints: Trainer.checkpointer is {type(checkpointer).__name__}, which keeps no "
            "checkpoints; the run needs a kd.ckpts.Checkpointer(save_interval_steps=...) to be evaluated"
        )
    return dataclasses.replace(checkpointer, read_only=True, enable_async_checkpointing=False)


def _follow(
    rounds: _Rounds, workdir: epath.Path, *, follow: bool, poll_seconds: float, timeout_seconds: float | None
) -> None:
    """Looks at the checkpoints until the run is done (once, without `follow`), `poll_seconds` apart; a
    TimeoutError after `timeout_seconds` without a new checkpoint or an evaluation."""
    idle_since = time.monotonic()
    while True:
        run_done = (workdir / DONE_FILE).exists()  # before listing: DONE comes after the last save
        steps, progressed = rounds.look(run_done=run_done, follow=follow)
        if progressed:
            idle_since = time.monotonic()
        if run_done:
            return
        if not follow:
            _note_waiting(rounds.chosen, steps)
            return
        waited = time.monotonic() - idle_since
        if timeout_seconds is not None and waited >= timeout_seconds:
            directory = getattr(rounds.checkpointer, "directory", workdir)
            raise TimeoutError(
                f"evaluate_checkpoints: no new checkpoint in {directory} for "
                f"{waited:.1f}s (timeout_seconds={timeout_seconds:g}) and the run has no {DONE_FILE} "
                f"marker; evaluated steps: {_steps_text(rounds.results)}. Is the training still running?"
            )
        time.sleep(poll_seconds)


@dataclasses.dataclass
class _Rounds:
    """What `evaluate_checkpoints` keeps from one look at the checkpoint folder to the next.

    Attributes:
      done_before: `{step: prefixes}` of the values the metrics file already held (not evaluated again).
      results: the values written by this call, by step.
      seen: the steps listed so far; `finished`: those no evaluator will take any more; `handled`: `(step,
        evaluator)` evaluated by this call; `noted`: incomplete saves said to be skipped.
      skipped_before: the checkpoints found evaluated before this call.
    """

    checkpointer: ckpts.Checkpointer
    chosen: Mapping[str, _interfaces.Evaluator | EvaluatorBase]
    evaluations: Mapping[str, Evaluation]
    writer: writers.Writer
    template: TrainState
    done_before: dict[int, set[str]]
    results: dict[int, dict[str, float | np.ndarray]] = dataclasses.field(default_factory=dict)
    seen: set[int] = dataclasses.field(default_factory=set)
    finished: set[int] = dataclasses.field(default_factory=set)
    handled: set[tuple[int, str]] = dataclasses.field(default_factory=set)
    noted: set[int] = dataclasses.field(default_factory=set)
    skipped_before: int = 0

    def look(self, *, run_done: bool, follow: bool) -> tuple[tuple[int, ...], bool]:
        """One look: the complete checkpoints there, oldest first, each evaluated by the evaluators that take it
        now. Returns `(the steps listed, whether a new step was listed or a checkpoint evaluated)`."""
        steps, writing = _complete_steps(self.checkpointer)
        if run_done or not follow:  # no later look takes a save in flight once complete
            for step in sorted(writing - self.noted):
                self.noted.add(step)
                _note(_incomplete_text(step, run_done=run_done))
        progressed = bool(set(steps) - self.seen)
        self.seen.update(steps)
        for step in steps:
            progressed = self._evaluate(step, run_done=run_done, last_step=steps[-1]) or progressed
        return steps, progressed

    def _evaluate(self, step: int, *, run_done: bool, last_step: int) -> bool:
        """Evaluates the checkpoint of `step` with each chosen evaluator that takes it now and has not yet;
        whether it did."""
        if step in self.finished:
            return False
        todo = {n: e for n, e in self.chosen.items() if _prefix(n, e) not in self.done_before.get(step, ())}
        if not todo:
            self.finished.add(step)
            self.skipped_before += 1
            return False
        # `StandaloneLastCheckpoint` waits for the run to be done; the others take each checkpoint
        todo = {n: e for n, e in todo.items() if (step, n) not in self.handled}
        ready = {n: e for n, e in todo.items() if _wants(e, step, done=run_done, last_step=last_step)}
        if run_done or len(ready) == len(todo):
            self.finished.add(step)
        self.handled.update((step, n) for n in ready)
        if not ready:
            return False
        state = _restore(self.checkpointer, self.template, step)
        if state is None:
            return False
        # `StandaloneLastCheckpoint` may take a step the others took on an earlier round
        evaluations = {name: self.evaluations[name] for name in ready}
        self.results.setdefault(step, {}).update(evaluate_and_write(evaluations, state, step, self.writer))
        self.writer.flush()
        return True


def _note_waiting(chosen: Mapping[str, _interfaces.Evaluator | EvaluatorBase], steps: Sequence[int]) -> None:
    """Names the evaluators that wait for the run to be done (`StandaloneLastCheckpoint`), so took nothing."""
    if not steps:
        return
    last = steps[-1]
    waiting = [
        name
        for name, evaluator in chosen.items()
        if _wants(evaluator, last, done=True, last_step=last)
        and not _wants(evaluator, last, done=False, last_step=last)
    ]
    if waiting:
        _note(
            f"evaluator(s) {', '.join(map(repr, waiting))} take the last checkpoint once the run is done, "
            f"and it has no {DONE_FILE} yet: not run (following the run waits for it)"
        )


def _incomplete_text(step: int, *, run_done: bool) -> str:
    if run_done:
        return (
            f"step {step}: its checkpoint folder has no orbax commit marker ({_COMMIT_MARKER}) and the run "
            "is done, so its save never completed; skipped"
        )
    return (
        f"step {step}: its checkpoint folder has no orbax commit marker yet (a save being written, or a "
        "deletion in progress): not evaluated (following the run takes it once complete)"
    )


def _wants(evaluator: _interfaces.Evaluator | EvaluatorBase, step: int, *, done: bool, last_step: int) -> bool:
    """Whether the evaluator's run strategy takes the checkpoint of `step` now (a strategy that is not a
    standalone one: every checkpoint)."""
    wants = getattr(evaluator.run, "wants", None)
    return True if wants is None else bool(wants(step, done=done, last_step=last_step))


def select_evaluators(evaluators: Mapping[str, _E], names: Iterable[str] | None) -> dict[str, _E]:
    """`{name: evaluator}` of `names` (all when None); a `ConfigError` for an unknown name or none at all.

    Usage: `select_evaluators(trainer.evals, ["val"])`. Works on a config's `cfg.evals` too (only the
    keys are read), so a command line can check names before resolving the config.
    """
    available = list(evaluators or {})
    if not available:
        raise ConfigError(
            "evals: the config has no evaluator to run (cfg.evals is empty); add one, e.g. "
            'cfg.evals = {"val": kd.evals.Evaluator(ds=..., num_batches=...)}'
        )
    if names is None:
        return {name: evaluators[name] for name in available}
    names = [names] if isinstance(names, str) else list(names)
    problem = names_problem(names, available)
    if problem is not None:
        raise ConfigError(f"evals: {problem}")
    return {name: evaluators[name] for name in dict.fromkeys(names)}


def default_writer(trainer: Trainer) -> writers.Writer:
    """The terminal, `<workdir>/eval_metrics.jsonl`, and TensorBoard event files in `<workdir>` if the run's
    writer writes TensorBoard: kd's own writers, made here for the workdir; none of the run's writer objects
    (which its config chose, and could point anywhere) is written to."""
    chosen: list[writers.Writer] = [
        writers.PrintWriter(),
        writers.JsonlWriter(workdir=trainer.workdir, filename=EVAL_METRICS_FILE),
    ]
    tensorboard = _tensorboard_writers(trainer.writer)
    if tensorboard:
        chosen.append(
            writers.TensorBoardWriter(
                workdir=trainer.workdir,
                evals=trainer.evals,
                num_buckets=int(tensorboard[0].num_buckets),
                max_image_columns=int(tensorboard[0].max_image_columns),
            )
        )
    return writers.MultiWriter(writers=chosen)


def evaluated_steps(path: epath.PathLike, prefixes: Sequence[str]) -> dict[int, set[str]]:
    """`{step: prefixes with values at that step}` in a JSON-lines metrics file (empty when there is none).

    A row counts for an evaluator when it has a key `<prefix>/...`; the longest prefix wins, so
    evaluators `val` and `val/hard` are told apart. Lines that are not whole JSON rows are ignored.
    """
    path = epath.Path(path)
    if not path.exists():
        return {}
    longest_first = sorted(set(prefixes), key=len, reverse=True)
    found: dict[int, set[str]] = {}
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        step = row.get("step") if isinstance(row, dict) else None
        if not isinstance(step, (int, float)) or isinstance(step, bool) or not math.isfinite(step):
            continue
        for key in row:
            owner = next((p for p in longest_first if key.startswith(p + "/")), None)
            if owner is not None:
                found.setdefault(int(step), set()).add(owner)
    return found


def _prefix(name: str, evaluator: object) -> str:
    """What the values of `evaluator` are logged under (its `name` field wins, as in the Trainer)."""
    return getattr(evaluator, "name", None) or name


def _tensorboard_writers(writer: object) -> list[writers.TensorBoardWriter]:
    if isinstance(writer, writers.TensorBoardWriter):
        return [writer]
    if isinstance(writer, writers.MultiWriter):
        return [found for inner in writer.writers for found in _tensorboard_writers(inner)]
    return []


_RESTORE_ATTEMPTS = 3


# orbax writes it into a save's folder last, just before the folder takes its final name (on a local disk) or
# in place of that rename (on GCS, where orbax lists no step without it; on a local disk it lists any folder).
_COMMIT_MARKER = "commit_success.txt"


def _complete_steps(checkpointer: ckpts.Checkpointer) -> tuple[tuple[int, ...], set[int]]:
    """`(complete steps, steps listed but still being written)` on disk now; none before the checkpoint
    folder exists.

    orbax already leaves out its temporary `*.orbax-checkpoint-tmp-*` folders; a step folder without the
    commit marker (a save orbax writes in place, a checkpoint being copied in, or one the run's
    `max_to_keep` is deleting file by file) is not complete either.
    """
    checkpointer.reload()
    try:
        listed = tuple(checkpointer.all_steps())
    except FileNotFoundError:  # read_only and no `<workdir>/checkpoints` yet
        return (), set()
    step_directory = getattr(checkpointer, "step_directory", None)
    if step_directory is None:  # not a kd.ckpts.Checkpointer: its listing is taken as it is
        return listed, set()
    writing = {step for step in listed if _uncommitted(step_directory(step))}
    return tuple(step for step in listed if step not in writing), writing


def _uncommitted(folder: epath.Path) -> bool:
    # A folder gone since the listing is not "being written": `_restore` says it was deleted.
    return folder.exists() and not (folder / _COMMIT_MARKER).exists()


def _restore(checkpointer: ckpts.Checkpointer, template: TrainState, step: int) -> TrainState | None:
    """The state saved at `step`, or None when the checkpoint was deleted before (or while) it was read."""
    for attempt in range(_RESTORE_ATTEMPTS):
        try:
            state, _ = checkpointer.restore(template, step=step)
            return state
        except Exception:
            checkpointer.reload()
            if step not in checkpointer.all_steps():
                break
            if attempt == _RESTORE_ATTEMPTS - 1:
                raise  # still there: a real error, e.g. a state that does not fit the config
            time.sleep(0.5)  # a deletion in progress (its folder is removed file by file) finishes first
    _note(f"step {step}: its checkpoint was deleted (max_to_keep) before it could be read; skipped")
    return None


def _steps_text(results: Mapping[int, object]) -> str:
    return ", ".join(map(str, sorted(results))) or "none"


def _note(line: str) -> None:
    print(f"eval: {line}", file=sys.stderr, flush=True)


__all__ = [
    "EVAL_METRICS_FILE",
    "default_writer",
    "evaluate_checkpoints",
    "evaluated_steps",
    "select_evaluators",
]
