"""What a step hands back besides the new state: loss, metric and summary states, merged and computed on the host.

state, aux = trainer.trainstep.step(state, batch, return_metrics=True)
aux.compute()   # {"losses/recon": 0.12, "metrics/accuracy": 0.97} (and "losses/total" with 2+ losses)
(aux1 | aux2).compute()   # Kauldron's AuxiliariesState: an AuxiliariesOutput
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import jax
import numpy as np

from kd._interfaces import MetricState, PyTree  # at run time too: typing.get_type_hints resolves the fields

Value = float | np.ndarray
"""A computed loss or metric: a float, or an array (a metric of several values)."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class AuxState:
    """Device-side states; `merge` combines two steps (or eval batches), `compute` reads them on the host."""

    loss_states: Mapping[str, MetricState] = dataclasses.field(default_factory=dict)
    metric_states: Mapping[str, MetricState] = dataclasses.field(default_factory=dict)
    summary_states: Mapping[str, MetricState] = dataclasses.field(default_factory=dict)

    def merge(self, other: AuxState | None) -> AuxState:
        if other is None:
            return self
        return AuxState(
            loss_states=_merge_dicts(self.loss_states, other.loss_states),
            metric_states=_merge_dicts(self.metric_states, other.metric_states),
            summary_states=_merge_dicts(self.summary_states, other.summary_states),
        )

    def compute(self) -> dict[str, Value]:
        """Scalars by name: `losses/<name>`, `losses/total` (of two or more losses), `metrics/<name>[/<sub>]`.
        Pulls values to the host."""
        loss_states, metric_states = jax.device_get(
            (self.loss_states, self.metric_states)
        )  # not the summaries
        out: dict[str, Value] = {}
        if loss_states:
            values = {name: float(np.asarray(state.compute())) for name, state in loss_states.items()}
            for name, value in values.items():
                out[f"losses/{name}"] = value
            if len(values) > 1:  # one loss is its own total
                out["losses/total"] = float(sum(values.values()))
        for name, state in metric_states.items():
            _put(out, f"metrics/{name}", state.compute())
        return out

    def compute_summaries(self) -> dict[str, PyTree]:
        """Images, histograms, ... by name (`summaries/<name>`), pulled to the host."""
        host = jax.device_get(self.summary_states)
        return {f"summaries/{name}": state.compute() for name, state in host.items()}


def _merge_dicts(a: Mapping[str, MetricState], b: Mapping[str, MetricState]) -> dict[str, MetricState]:
    out = dict(a)
    for name, state in b.items():
        out[name] = out[name].merge(state) if name in out else state
    return out


def _put(out: dict[str, Value], name: str, value: object) -> None:
    if value is None:
        return  # an EmptyState (SkipIfMissing with nothing to read)
    if isinstance(value, Mapping):
        for key, sub in value.items():
            _put(out, f"{name}/{key}", sub)
        return
    if isinstance(value, list | tuple) and any(isinstance(v, Mapping | list | tuple) for v in value):
        for index, sub in enumerate(value):  # A tree (TreeMap's result over a list of layers): by index.
            _put(out, f"{name}/{index}", sub)
        return
    array = np.asarray(value)
    out[name] = float(array) if array.ndim == 0 else array


@dataclasses.dataclass(frozen=True)
class AuxiliariesOutput:
    """What `AuxiliariesState.compute()` gives: values by name (`losses/l2`, `metrics/acc`, ...)."""

    loss_values: dict[str, Value] = dataclasses.field(default_factory=dict)
    metric_values: dict[str, Value] = dataclasses.field(default_factory=dict)
    summary_values: dict[str, PyTree] = dataclasses.field(default_factory=dict)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, kw_only=True)
class AuxiliariesState(AuxState):
    """Kauldron's name for the states of a step (or of merged steps); `aux1 | aux2` merges them.

    Usage: `out = (aux1 | aux2).compute()`: an `AuxiliariesOutput` (`compute(flatten=False)`: names
    without their `losses/` ... prefix). `losses/total` is there whenever there are losses, as Kauldron's.
    """

    def merge(self, other: AuxState | None) -> AuxiliariesState:
        merged = super().merge(other)
        return AuxiliariesState(
            loss_states=merged.loss_states,
            metric_states=merged.metric_states,
            summary_states=merged.summary_states,
        )

    def __or__(self, other: AuxState | None) -> AuxiliariesState:
        return self.merge(other)

    def __ror__(self, other: AuxState | None) -> AuxiliariesState:
        return self if other is None else AuxiliariesState(**_fields(other)).merge(self)

    def compute(self, *, flatten: bool = True) -> AuxiliariesOutput:  # type: ignore[override]
        values = AuxState.compute(self)
        losses = {k: v for k, v in values.items() if k.startswith("losses/")}
        if losses and "losses/total" not in losses:
            losses["losses/total"] = float(sum(losses.values()))
        metrics = {k: v for k, v in values.items() if k.startswith("metrics/")}
        summaries = self.compute_summaries()
        if not flatten:
            losses, metrics, summaries = (
                {k.split("/", 1)[1]: v for k, v in group.items()} for group in (losses, metrics, summaries)
            )
        return AuxiliariesOutput(loss_values=losses, metric_values=metrics, summary_values=summaries)


def _fields(aux: AuxState) -> dict[str, Mapping[str, MetricState]]:
    return {
        "loss_states": aux.loss_states,
        "metric_states": aux.metric_states,
        "summary_states": aux.summary_states,
    }
