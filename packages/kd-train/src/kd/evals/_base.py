"""`EvaluatorBase`: Kauldron's base for evaluators that compute and write their own values.

    class Sampling(kd.evals.EvaluatorBase):       # a frozen, keyword-only dataclass, no decorator needed
        num_prompts: int = 4

        def evaluate(self, state, step):
            aux = ...                                 # a kd.train.AuxiliariesState
            self.writer.write_step_metrics(step=step, aux=aux, schedules={}, log_summaries=True)

    cfg.evals = {"sampling": Sampling(run=kd.evals.EveryNSteps(100))}

The Trainer fills `writer` (its own, scoped to the evaluator's name: values are logged as
`sampling/metrics/...`) and `base_cfg` (the Trainer), names the evaluator after its key, and calls
`evaluate(state, step)` when `run` says so.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
from typing import Any

from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.evals._run_strategies import EveryNSteps, RunStrategy
from kd.utils.config_util import BaseConfig, UpdateFromRootCfg

DEFAULT_NAME = "eval"  # Kauldron's: an evaluator left with it is named after its key in `Trainer.evals`


class _EvaluatorMeta(abc.ABCMeta):
    """Lets `kd.evals.Evaluator` count as an `EvaluatorBase` without inheriting its fields."""


class EvaluatorBase(BaseConfig, UpdateFromRootCfg, metaclass=_EvaluatorMeta):
    """Base of evaluators that implement `evaluate(state, step)` and write through `self.writer`.

    Usage: subclass it, declare fields as on a dataclass, implement `evaluate`; see the module docstring.

    Attributes (Kauldron's): `name` (the prefix of the logged values; left "eval", it becomes the key in
    `Trainer.evals`), `run` (when to run), `writer` (the Trainer's, scoped to `name`), `base_cfg`
    (the Trainer), `discard_opt` (accepted: evaluators get the state as the Trainer holds it).
    """

    __kd_default_name__ = DEFAULT_NAME  # the Trainer renames an evaluator still holding it (no field)

    name: str = DEFAULT_NAME
    run: RunStrategy = dataclasses.field(default_factory=lambda: EveryNSteps(1000))
    writer: Any = ROOT_CFG_REF.writer
    base_cfg: Any = dataclasses.field(default=ROOT_CFG_REF, repr=False)
    discard_opt: bool = False

    def __post_init__(self) -> None:
        parent = super()
        if hasattr(parent, "__post_init__"):
            parent.__post_init__()  # type: ignore[misc]
        where = type(self).__name__
        if not (isinstance(self.name, str) and self.name.replace(".", "_").replace("-", "_").isidentifier()):
            raise ValueError(
                f"{where}.name: expected a Python identifier (it names the logged values), got {self.name!r}"
            )
        if not isinstance(self.run, RunStrategy):
            raise TypeError(
                f"{where}.run: expected a kd.evals run strategy (EveryNSteps(...)), got {self.run!r}"
            )
        writer = self.writer
        if not isinstance(writer, RootRef) and callable(getattr(writer, "collection_writer", None)):
            object.__setattr__(self, "writer", writer.collection_writer(self.name))

    def maybe_eval(self, *, step: int, state: Any) -> Any:
        """`evaluate(state, step)` when `run` says this step is one to evaluate during training; else None."""
        if self.run.should_eval_in_train(step):
            try:
                return self.evaluate(state, step)
            except Exception as e:
                e.add_note(f"in evaluator {self.name!r} at step {step}")
                raise

    def evaluate(self, state: Any, step: int) -> Any:
        """Computes this evaluator's values on `state` and writes them through `self.writer`."""
        raise NotImplementedError(f"{type(self).__name__}.evaluate(state, step)")

    @functools.cached_property
    def __dashboards__(self) -> Any:
        from kd.kdash import NoopDashboard

        return NoopDashboard()
