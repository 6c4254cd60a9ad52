"""`Evaluator`: losses and metrics of the current params over an evaluation set, on a schedule.

    cfg.evals = {"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(100), num_batches=None, ds=eval_ds)}

Fields left unset come from the Trainer: `ds` is `eval_ds`, and the losses / metrics / summaries are the
training ones; the model and RNG streams are the Trainer's.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import jax
import kontext
import optax

from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.ckpts import NoopTransform
from kd.evals._base import EvaluatorBase
from kd.evals._run_strategies import EveryNSteps, RunStrategy
from kd.train import ConfigError, KeyPathError, ShapeMismatchError, TrainStep


@dataclasses.dataclass(frozen=True, kw_only=True)
class Evaluator:
    """Runs `num_batches` batches of `ds` (all of one epoch when None) with the model in eval mode.

    Usage: `evaluator.evaluate(state=state, step=1000)` -> `{"losses/xent": 0.12, "metrics/accuracy": 0.9}`;
    `evaluator.evaluate_states(state, step)` gives the merged `AuxState` (summaries included).

    Attributes (Kauldron's): `name` is the prefix of the logged values (default: the key in `Trainer.evals`);
    `cache` keeps the evaluation batches in memory after the first pass; `discard_opt` is accepted for
    Kauldron configs: an evaluation never reads the optimizer state (the compiled step drops it); `writer`
    (the Trainer's by default) takes the evaluator's values when set to another writer; `init_transform`
    (anything with `transform(state)`; `kd.ckpts.NoopTransform()` by default) is applied to the state before
    each evaluation, e.g. `kd.optim.UseEmaParams()` evaluates the moving average of the params (the
    training state is not changed).
    """

    run: RunStrategy = dataclasses.field(default_factory=lambda: EveryNSteps(1000))
    name: str | None = None
    num_batches: int | None = None
    cache: bool = False
    discard_opt: bool = False
    ds: Any = ROOT_CFG_REF.eval_ds
    losses: Mapping[str, Any] = ROOT_CFG_REF.train_losses
    metrics: Mapping[str, Any] = ROOT_CFG_REF.train_metrics
    summaries: Mapping[str, Any] = ROOT_CFG_REF.train_summaries
    model: Any = ROOT_CFG_REF.model
    rng_streams: Any = ROOT_CFG_REF.rng_streams
    sharding: Any = ROOT_CFG_REF.sharding
    precision: Any = ROOT_CFG_REF.precision
    writer: Any = ROOT_CFG_REF.writer
    init_transform: Any = dataclasses.field(default_factory=NoopTransform)

    def __post_init__(self) -> None:
        if not isinstance(self.run, RunStrategy):
            raise TypeError(
                f"Evaluator.run: expected a kd.evals run strategy (EveryNSteps(...)), got {self.run!r}"
            )
        if not callable(getattr(self.init_transform, "transform", None)):
            raise TypeError(
                "Evaluator.init_transform: expected an init transform (an object with transform(state), e.g. "
                f"kd.optim.UseEmaParams()), got {self.init_transform!r} of type {type(self.init_transform).__name__}"
            )

    @functools.cached_property
    def evalstep(self) -> TrainStep:
        return TrainStep(
            model=self.model,
            optimizer=optax.identity(),
            rng_streams=self.rng_streams,
            losses=self.losses,
            metrics=self.metrics,
            summaries=self.summaries,
            precision=None if isinstance(self.precision, RootRef) else self.precision,
        )

    def check(self, state_specs: Any, *, where: str = "Evaluator") -> None:
        """Traces one evaluation batch abstractly (`jax.eval_shape`): bad keys and shapes fail before training."""
        if self.ds is None:
            raise ConfigError(f"{where}.ds: no evaluation data (set `ds=` or the Trainer's `eval_ds`)")
        if self.num_batches is None and getattr(self.ds, "num_epochs", 1) is None:
            raise ConfigError(
                f"{where}: num_batches=None evaluates the whole of `ds`, but its num_epochs is None (endless); "
                "set num_batches, or num_epochs=1 on the evaluation data."
            )
        spec = getattr(self.ds, "element_spec", None)
        if spec is None:
            return  # a data source without shapes up front is checked on its first batch
        try:
            jax.eval_shape(self.evalstep._eval_step, state_specs, spec)
        except (KeyPathError, ShapeMismatchError) as e:
            raise type(e)(f"{where}: {e}") from None
        except kontext.UnresolvedKeysError as e:  # the model's own input keys, on the evaluation batches
            raise KeyPathError(f"{where}: model inputs: {e}") from None

    def evaluate(self, state: Any, step: int) -> dict[str, Any]:
        """The computed values over the evaluated batches: `{"losses/<name>": ..., "losses/total": ...,
        "metrics/<name>": ...}` (floats, or arrays for metrics that give one). Nothing is written."""
        return self.evaluate_states(state, step).compute()

    def evaluate_states(self, state: Any, step: int) -> Any:
        """The merged `AuxState` of every evaluated batch (`.compute()`, `.compute_summaries()`)."""
        if self.ds is None:
            raise ConfigError("Evaluator.ds: no evaluation data (set `ds=` or the Trainer's `eval_ds`)")
        state = self.init_transform.transform(state)
        merged = None
        for batch in self._batches():
            aux = self.evalstep.eval_step(state, batch)
            merged = aux if merged is None else merged.merge(aux)
        if merged is None:
            raise ConfigError(f"Evaluator: the evaluation data yielded no batch at step {step}")
        return merged

    def _batches(self) -> Iterable[Any]:
        """The evaluation batches as the eval step takes them; with `cache`, read from `ds` only once."""
        cached = self.__dict__.get("_cached_batches")
        if cached is not None:
            return cached
        batches: Iterable[Any] = iter(self.ds)
        if self.num_batches is not None:
            batches = itertools.islice(batches, self.num_batches)
        sharding = None if isinstance(self.sharding, RootRef) else self.sharding
        if sharding is not None:
            batches = map(sharding.step_input, batches)
        if not self.cache:
            return batches
        kept = self.__dict__["_cached_batches"] = list(batches)
        return kept


EvaluatorBase.register(Evaluator)  # isinstance(evaluator, kd.evals.EvaluatorBase), as in Kauldron
