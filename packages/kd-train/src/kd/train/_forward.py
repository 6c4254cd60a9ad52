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
from typing import Any

from kd._root_ref import ROOT_CFG_REF
from kd.losses import total_loss
from kd.nn import training_mode
from kd.train._aux import AuxiliariesOutput as AuxiliariesOutput
from kd.train._aux import AuxiliariesState as AuxiliariesState
from kd.train._context import Context
from kd.train._model import NnxModel, _accepts, _call_inputs, _is_sown, as_model
from kd.train._step import states_of


class _Everything:
    """An interest filter that captures every intermediate (Kauldron's `capture_intermediates=True`)."""

    def __bool__(self) -> bool:
        return True

    def wants(self, module_path: tuple[str, ...], method_name: str) -> bool:
        return True


def forward(
    context: Context, *, model: Any, rngs: Mapping[str, Any], is_training: bool, method: str | None = None
) -> Context:
    """The model on `context.batch` with `context.params` / `collections`: the context with `preds`,
    `interms` (every intermediate) and the updated `collections`.

    Usage: `context = kd.train.forward(context, model=model, rngs=rngs, is_training=False)`.
    As Kauldron's, every collection is mutable and the updates come back in `collections`, in training
    and evaluation alike; `method` names another method of a linen model than `__call__`.
    """
    collections = dict(context.collections or {})
    if isinstance(as_model(model), NnxModel):
        if method is not None:
            raise ValueError(f"kd.train.forward: method={method!r} applies to a flax linen model only")
        preds, new_collections, interms = as_model(model).apply(
            context.params,
            collections,
            context,
            rngs=dict(rngs),
            is_training=is_training,
            capture=_Everything(),
        )
        return context.replace(preds=preds, interms=interms, collections=new_collections)
    call = getattr(model, method) if method is not None else model.__call__
    args, kwargs = _call_inputs(model, context, call)
    if _accepts(call, "is_training") and "is_training" not in kwargs:  # as the Trainer's own step
        kwargs["is_training"] = is_training
    with training_mode(is_training):
        preds, updated = model.apply(
            {"params": context.params, **collections},
            *args,
            rngs=dict(rngs),
            mutable=True,
            capture_intermediates=True,
            method=method,
            **kwargs,
        )
    updated = dict(updated)
    interms = updated.pop("intermediates", {})
    updated.pop("params", None)  # `mutable=True` hands the params back too: they are not a collection
    new_collections = {**collections, **{k: v for k, v in updated.items() if not _is_sown(v)}}
    return context.replace(preds=preds, interms=interms, collections=new_collections)


def forward_with_loss(
    context: Context, *, model: Any, losses: Mapping[str, Any], rngs: Mapping[str, Any], is_training: bool
) -> tuple[Any, Context]:
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

    losses: Mapping[str, Any] = ROOT_CFG_REF.train_losses
    metrics: Mapping[str, Any] = ROOT_CFG_REF.train_metrics
    summaries: Mapping[str, Any] = ROOT_CFG_REF.train_summaries

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


def _given(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(
            f"Auxiliaries.{name} is {value!r}: outside a kd.train.Trainer pass the {name} (a dict) yourself"
        )
    return dict(value)
