"""Kauldron's free functions of a step: `forward`, `forward_with_loss`, and `Auxiliaries` over a Context.

    context = kd.train.Context(step=0, batch=batch, params=state.params, collections=state.collections)
    context = kd.train.forward(context, model=model, rngs={"dropout": key}, is_training=True)
    loss, context = kd.train.forward_with_loss(context, model=model, losses=losses, rngs=rngs, is_training=True)
    aux = kd.train.Auxiliaries(losses=losses, metrics=metrics).update_context(context)  # states in the context
    values = kd.train.AuxiliariesState(metric_states=aux.metric_states).compute()  # AuxiliariesOutput

The Trainer's own step (`kd.train.TrainStep`) computes the same things; these are for code written
against Kauldron's `train_step.forward` and `auxiliaries`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import jax

from kd._interfaces import Auxiliary
from kd._root_ref import ROOT_CFG_REF
from kd.losses import total_loss
from kd.runtime import AuxiliariesOutput as AuxiliariesOutput
from kd.runtime import AuxiliariesState as AuxiliariesState
from kd.runtime import Context, EveryIntermediate, LinenModel, NnxModel, as_model
from kd.train._step import states_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from flax import linen as nn


def forward(
    context: Context,
    *,
    model: nn.Module | LinenModel | NnxModel,
    rngs: Mapping[str, jax.Array],
    is_training: bool,
    method: str | None = None,
) -> Context:
    """The model on `context.batch` with `context.params` / `collections`: the context with `preds`,
    `interms` (every intermediate) and the updated `collections`.

    Usage: `context = kd.train.forward(context, model=model, rngs=rngs, is_training=False)`.
    As Kauldron's, every collection is mutable and the updates come back in `collections`, in training
    and evaluation alike; `method` names another method of a linen model than `__call__`. The model is
    called as the Trainer's step calls it (`kd.runtime.as_model(model).apply`).
    """
    adapter = as_model(model)
    collections = dict(context.collections or {})
    options: dict[str, str | bool | None] = {}
    if isinstance(adapter, NnxModel):
        if method is not None:
            raise ValueError(f"kd.train.forward: method={method!r} applies to a flax linen model only")
    else:
        options = {"method": method, "every_collection_mutable": True}
    preds, new_collections, interms = adapter.apply(
        context.params,
        collections,
        context,
        rngs=dict(rngs),
        is_training=is_training,
        capture=EveryIntermediate(),
        **options,
    )
    return context.replace(preds=preds, interms=interms, collections=new_collections)


def forward_with_loss(
    context: Context,
    *,
    model: nn.Module | LinenModel | NnxModel,
    losses: Mapping[str, Auxiliary],
    rngs: Mapping[str, jax.Array],
    is_training: bool,
) -> tuple[jax.Array, Context]:
    """`(loss_total, context)`: `forward`, then each loss's state (`loss_states`) and their weighted sum.

    Usage: `loss, context = kd.train.forward_with_loss(context, model=m, losses=ls, rngs=r, is_training=True)`.
    """
    context = forward(context, model=model, rngs=rngs, is_training=is_training)
    loss_states = states_of(dict(losses), context, "losses")
    loss_total = total_loss(loss_states)
    return loss_total, context.replace(loss_states=loss_states, loss_total=loss_total)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Auxiliaries:
    """Losses, metrics and summaries computed on a Context (the Trainer's `train_*` ones by default).

    Usage: `context = kd.train.Auxiliaries(metrics={"acc": acc}).update_context(context)`.
    """

    losses: Mapping[str, Auxiliary] = ROOT_CFG_REF.train_losses
    metrics: Mapping[str, Auxiliary] = ROOT_CFG_REF.train_metrics
    summaries: Mapping[str, Auxiliary] = ROOT_CFG_REF.train_summaries

    def update_context(self, context: Context) -> Context:
        """The context with `loss_states` (kept when already there), `metric_states` and `summary_states`."""
        loss_states = context.loss_states
        if loss_states is None:
            loss_states = states_of(_given(self.losses, "losses"), context, "losses")
        return context.replace(
            loss_states=loss_states,
            metric_states=states_of(_given(self.metrics, "metrics"), context, "metrics"),
            summary_states=states_of(_given(self.summaries, "summaries"), context, "summaries"),
        )


def _given(value: object, name: str) -> dict[str, Auxiliary]:
    if not isinstance(value, Mapping):
        raise ValueError(
            f"Auxiliaries.{name} is {value!r}: outside a kd.train.Trainer pass the {name} (a dict) yourself"
        )
    return dict(value)
