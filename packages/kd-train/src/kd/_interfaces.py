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
    """Where logged values go (`kd.writers`)."""

    def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None: ...

    def write_summaries(self, step: int, summaries: Mapping[str, Any]) -> None: ...

    def write_config(self, config_json: str) -> None: ...

    def resume_from(self, step: int) -> None: ...

    def flush(self) -> None: ...


@runtime_checkable
class Checkpointer(Protocol):
    """What the loop saves with and restores from (`kd.ckpts.Checkpointer`, `kd.ckpts.NoopCheckpointer`)."""

    @property
    def latest_step(self) -> int | None: ...

    def should_save(self, step: int) -> bool: ...

    def maybe_save(self, step: int, *, state: Any, **items: Any) -> bool: ...

    def restore_latest(self, state: Any) -> Any: ...

    def info(self, step: int) -> Mapping[str, Any]: ...

    def wait_until_finished(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Evaluator(Protocol):
    """An evaluation of the state on a schedule (`kd.evals.Evaluator`)."""

    run: Any  # a run strategy: `should_run(step, *, last_step) -> bool`

    def evaluate_states(self, state: Any, step: int) -> Any:
        """The merged AuxState of the evaluated batches (`.compute()`, `.compute_summaries()`)."""


@runtime_checkable
class TrainingData(Protocol):
    """A training pipeline (`kd.data`): iterable, with the shapes of one batch. Its iterator may have
    `get_state()` / `set_state(state)` (the data position saved with each checkpoint)."""

    element_spec: Any

    def __iter__(self) -> Iterator[Any]: ...
