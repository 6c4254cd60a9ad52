"""The interfaces between the parts of a run, as `typing.Protocol`s (the way optax's `_src/base.py` states its).

    class MyHook:                      # anything with these methods is a Hook; nothing to inherit
        def before(self, call): ...
        def after(self, call, state, out): ...

The Trainer's loop is `for call in plan: hooks.before; state, out = runner.run(state, call); hooks.after`;
its fields take any object that has the methods listed here (`kd.writers.Writer`, `kd.ckpts.Checkpointer`,
`kd.evals.Evaluator`, `kd.data` pipelines are the ones kd ships). Only the standard library is imported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

PyTree = Any
"""An arbitrary pytree: params, collections, a batch, the shapes of one. The one name under which `Any` stands
for such a tree (its leaves are arrays, its structure is the model's or the data's)."""


@runtime_checkable
class Hook(Protocol):
    """What happens around each planned call (`kd.train._plan.Call`) of the training loop."""

    def before(self, call: Any) -> None:
        """Before the call's first update (a profile trace starts here)."""

    def after(self, call: Any, state: Any, out: Any) -> None:
        """After the call: `state` is the new TrainState, `out` what the call produced
        (`kd.train._runner.CallOutput`: losses, the last AuxState; what hooks before this one added)."""


@runtime_checkable
class Writer(Protocol):
    """Where logged values go (`kd.writers`): the methods the training loop calls."""

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None: ...

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None: ...

    def write_config(self, config_json: str) -> None: ...

    def write_element_spec(self, step: int, element_spec: PyTree) -> None: ...

    def write_param_overview(self, step: int, params: PyTree) -> None: ...

    def write_context_structure(self, step: int, trainer: Any) -> None: ...

    def resume_from(self, step: int) -> None: ...

    def flush(self) -> None: ...


@runtime_checkable
class Checkpointer(Protocol):
    """What the loop saves with and restores from (`kd.ckpts.Checkpointer`, `kd.ckpts.NoopCheckpointer`)."""

    @property
    def latest_step(self) -> int | None: ...

    def should_save(self, step: int) -> bool: ...

    def maybe_save(self, step: int, *, state: PyTree, **items: Any) -> bool: ...

    def restore_latest(self, state: PyTree) -> Any: ...

    def info(self, step: int) -> Mapping[str, Any]: ...

    def wait_until_finished(self) -> None: ...

    def close(self) -> None: ...


class MetricState(Protocol):
    """The state a loss, metric or summary gives for a step (`kd.metrics.State`): merged across steps or
    batches, computed on the host."""

    def merge(self, other: Any) -> Any: ...

    def compute(self) -> Any: ...


class Auxiliary(Protocol):
    """A loss, metric or summary (Kauldron's auxiliaries: `kd.losses`, `kd.metrics`, `kd.summaries`): reads the
    step's Context (`kd.runtime.Context`) through its keys and gives a state."""

    def get_state_from_context(self, context: Any) -> MetricState: ...


class EvaluatedStates(Protocol):
    """What an evaluation gives (`kd.runtime.AuxState`, merged over the evaluated batches): its values and its
    summaries, by name, on the host."""

    def compute(self) -> Mapping[str, Any]: ...

    def compute_summaries(self) -> Mapping[str, Any]: ...


class RunStrategy(Protocol):
    """When an evaluator runs during training (`kd.evals.EveryNSteps`, ...)."""

    def should_run(self, step: int, *, last_step: int) -> bool: ...


@runtime_checkable
class Evaluator(Protocol):
    """An evaluation of the state on a schedule (`kd.evals.Evaluator`). Kauldron's `kd.evals.EvaluatorBase`,
    which has `evaluate(state, step)` and writes its own values, is adapted to it by the loop
    (`kd.train._evaluations`)."""

    @property
    def run(self) -> RunStrategy: ...

    def evaluate_states(self, state: Any, step: int) -> EvaluatedStates:
        """The merged AuxState of the evaluated batches (`.compute()`, `.compute_summaries()`)."""


@runtime_checkable
class TrainingData(Protocol):
    """A training pipeline (`kd.data`): iterable, with the shapes of one batch. Its iterator may have
    `get_state()` / `set_state(state)` (the data position saved with each checkpoint)."""

    element_spec: PyTree

    def __iter__(self) -> Iterator[PyTree]: ...
