"""`intermediate_specs`: every intermediate a model offers, as shapes, for the keys that name `interms.<...>`.

    intermediate_specs(trainer)["interms.hidden.__call__[0]"].shape   # (16, 8)

Here, beside the `InterestFilter` a step captures with, because the Trainer lists them when a key names one the
model does not give; `kd.inspect` lists it with its reports (`kd-train inspect --interms`).
"""

from __future__ import annotations

from typing import Protocol

import jax
import kontext

from kd._interfaces import PyTree
from kd.runtime._context import Context
from kd.runtime._model import InterestFilter
from kd.runtime._state import TrainState


class _Forward(Protocol):
    """A step's forward pass (`kd.train.TrainStep.forward`)."""

    def forward(
        self,
        params: PyTree,
        collections: PyTree,
        batch: PyTree,
        step: jax.Array,
        *,
        is_training: bool,
        capture: InterestFilter | None = None,
    ) -> Context: ...


class _Run(Protocol):
    """What `intermediate_specs` reads of a `kd.train.Trainer`."""

    @property
    def trainstep(self) -> _Forward: ...

    @property
    def state_specs(self) -> TrainState: ...

    @property
    def element_spec(self) -> PyTree: ...


def intermediate_specs(trainer: _Run) -> dict[str, jax.ShapeDtypeStruct]:
    """Every intermediate the model offers, `{"interms.<path>": shape and dtype}`, in the model's order.

    Usage: `intermediate_specs(trainer)["interms.hidden.__call__[0]"].shape`. A training forward pass is traced
    with `jax.eval_shape`, capturing everything (a step captures only what some key asks for): a linen module's
    method outputs (`interms.<module path>.<method>[0]`) and what it sows, an NNX module's `self.sow` values.
    Nothing is allocated and no step runs.
    """
    trainstep = trainer.trainstep
    everything = InterestFilter(["interms.**"])

    def interms(state: TrainState, batch: PyTree) -> PyTree:
        context = trainstep.forward(
            state.params, state.collections, batch, state.step, is_training=True, capture=everything
        )
        return context.interms

    specs = jax.eval_shape(interms, trainer.state_specs, trainer.element_spec)
    if specs is None:
        return {}
    return dict(kontext.flatten_with_path(specs, prefix="interms"))
