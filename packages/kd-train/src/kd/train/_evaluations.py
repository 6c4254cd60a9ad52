"""The evaluators of a run as one kind: each wrapped once into an `Evaluation`, then run and written alike.

    evaluations = as_evaluations(trainer.evals, writer=writer, run_writer=trainer.writer)   # at the run's start
    values = write_evaluations({"val": evaluations["val"]}, state, step, writer)        # after a call

kd's evaluators are `kd._interfaces.Evaluator`s (`evaluate_states`) as they are. Kauldron's `EvaluatorBase`
has only `evaluate(state, step)`, which computes and writes through the evaluator's own writer: here, at the
edge, `EvaluatorBaseAdapter` makes it an `Evaluator` too (what `evaluate` returned are its values), its writer
taken from the Trainer is pointed at the run's, and its values are written nowhere else. Each `Evaluation`
knows where its values go, chosen once, so `write_evaluations` has one path for every kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Protocol, cast

import jax
import numpy as np

from kd._interfaces import Evaluator, RunStrategy, Writer
from kd._phase import during
from kd._root_ref import INHERITED_ATTR, RootRef
from kd.writers import CollectionWriter, NoopWriter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.runtime import TrainState
    from kd.train._types import LoggedValue

# Where an EvaluatorBase's values go after it wrote them itself: nowhere again.
_WRITTEN_BY_THE_EVALUATOR = NoopWriter()


class SelfWritingEvaluator(Protocol):
    """Kauldron's `kd.evals.EvaluatorBase` as the loop sees it: `evaluate` computes and writes its values."""

    @property
    def run(self) -> RunStrategy: ...

    def evaluate(self, state: TrainState, step: int) -> object: ...


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """An evaluator as the loop runs it: its values are logged as `<prefix>/<key>` and written to `writer`
    (None: the writer of the call that runs it)."""

    evaluator: Evaluator
    prefix: str
    writer: Writer | None = None


@dataclasses.dataclass(frozen=True)
class EvaluatorBaseAdapter:
    """Kauldron's `EvaluatorBase` as a `kd._interfaces.Evaluator`: `evaluate_states` calls its `evaluate`
    (which writes through the evaluator's writer) and gives what it returned as the evaluation's values.

    Usage: `EvaluatorBaseAdapter(sampling).evaluate_states(state, 1000).compute()`.
    """

    evaluator: SelfWritingEvaluator

    @property
    def run(self) -> RunStrategy:
        return self.evaluator.run

    def evaluate_states(self, state: TrainState, step: int) -> ReturnedValues:
        return ReturnedValues(_values_of(self.evaluator.evaluate(state, step)))


@dataclasses.dataclass(frozen=True)
class ReturnedValues:
    """What an `EvaluatorBase.evaluate` returned, as the `kd._interfaces.EvaluatedStates` of an evaluation: its
    numbers; no summaries (it wrote its own)."""

    values: Mapping[str, object]

    def compute(self) -> Mapping[str, object]:
        return self.values

    def compute_summaries(self) -> Mapping[str, object]:
        return {}


def as_evaluations(
    evaluators: Mapping[str, Evaluator | SelfWritingEvaluator | Evaluation],
    *,
    writer: Writer,
    run_writer: Writer | None = None,
) -> dict[str, Evaluation]:
    """Each evaluator wrapped once (an `Evaluation` is kept as it is), its values to be written to `writer`.

    The prefix is the evaluator's `name` field, else its key. With `run_writer` (the Trainer's writer), an
    evaluator whose own `writer` is another one (Kauldron's `Evaluator(writer=...)`) has its values written
    there instead. An `EvaluatorBase`'s writer taken from the Trainer (`ROOT_CFG_REF.writer`) is pointed at
    `writer`, scoped to its prefix.
    Usage: `as_evaluations(trainer.evals, writer=writer, run_writer=trainer.writer)`.
    """
    return {
        name: _as_evaluation(name, evaluator, writer=writer, run_writer=run_writer)
        for name, evaluator in evaluators.items()
    }


def _as_evaluation(
    name: str,
    evaluator: Evaluator | SelfWritingEvaluator | Evaluation,
    *,
    writer: Writer,
    run_writer: Writer | None,
) -> Evaluation:
    if isinstance(evaluator, Evaluation):
        return evaluator
    prefix = getattr(evaluator, "name", None) or name
    if callable(getattr(evaluator, "evaluate_states", None)):  # kd's: an Evaluator as it is
        evaluates_states = cast("Evaluator", evaluator)
        return Evaluation(evaluates_states, prefix, _own_writer(evaluates_states, run_writer))
    writes_itself = cast("SelfWritingEvaluator", evaluator)  # Kauldron's EvaluatorBase
    _write_here(writes_itself, writer, prefix)
    return Evaluation(EvaluatorBaseAdapter(writes_itself), prefix, _WRITTEN_BY_THE_EVALUATOR)


def write_evaluations(
    evaluations: Mapping[str, Evaluation], state: TrainState, step: int, writer: Writer
) -> dict[str, LoggedValue]:
    """Runs each evaluation on `state`; writes one row per writer and returns `{"<prefix>/<key>": value}`.

    Scalars come back as floats, other values as numpy arrays. A writer other than `writer` (an evaluator's
    own) writes on process 0 only, and is flushed.
    Usage: `write_evaluations(as_evaluations({"val": evaluator}, writer=writer), state, 1000, writer)`.
    """
    rows: dict[int, tuple[Writer, dict[str, LoggedValue], dict[str, object]]] = {}
    values: dict[str, LoggedValue] = {}
    for name, evaluation in evaluations.items():
        target = writer if evaluation.writer is None else evaluation.writer
        _, scalars, summaries = rows.setdefault(id(target), (target, {}, {}))
        prefix = evaluation.prefix
        with during(f"evaluator {name!r} at step {step}"):
            states = evaluation.evaluator.evaluate_states(state, step)
            computed = {f"{prefix}/{key}": _host(value) for key, value in states.compute().items()}
            scalars.update(computed)
            summaries.update({f"{prefix}/{key}": value for key, value in states.compute_summaries().items()})
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


def _write_here(evaluator: SelfWritingEvaluator, writer: Writer, prefix: str) -> None:
    """Points an EvaluatorBase's writer taken from the Trainer (`ROOT_CFG_REF.writer`) at `writer` (the
    training's, or `kd-train eval`'s), scoped to `prefix`; a writer the config gave it is kept."""
    current = getattr(evaluator, "writer", None)
    if not isinstance(current, RootRef) and "writer" not in getattr(evaluator, INHERITED_ATTR, {}):
        return
    if isinstance(current, CollectionWriter) and current.writer is writer and current.collection == prefix:
        return
    scoped = CollectionWriter(writer=writer, collection=prefix)
    object.__setattr__(evaluator, "writer", scoped)  # the evaluator is this run's; its caches stay


def _values_of(result: object) -> dict[str, object]:
    """What an EvaluatorBase's `evaluate` returned, as logged values: a dict, an AuxState / Kauldron's
    AuxiliariesState (computed), an AuxiliariesOutput, or nothing."""
    if result is None:
        return {}
    compute = getattr(result, "compute", None)
    if callable(compute) and not isinstance(result, Mapping):
        result = compute()
    if hasattr(result, "metric_values"):
        return {**result.loss_values, **result.metric_values}
    if isinstance(result, Mapping):
        return {str(key): value for key, value in result.items() if _is_numeric(value)}
    return {}


def _is_numeric(value: object) -> bool:
    """A number or an array of numbers (what is logged); a text or another object is left out."""
    try:
        dtype = np.asarray(value).dtype
    except (TypeError, ValueError):
        return False
    return np.issubdtype(dtype, np.number) or dtype == np.bool_


def _own_writer(evaluator: Evaluator, run_writer: Writer | None) -> Writer | None:
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


def _host(value: object) -> LoggedValue:
    array = np.asarray(value)
    return float(array) if array.ndim == 0 else array
