"""`Loss`: a metric whose state is the weighted, masked mean of per-example values.

loss = kd.losses.L2(preds="preds.y", targets="batch.y", weight=0.5)
state = loss.get_state_from_context(context)  # an AverageState
state.compute()  # the weighted scalar loss (inside jit too)
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Literal

import jax
import jax.numpy as jnp
import kontext

from kd import _label_range, metrics

Schedule = Callable[[Any], Any]
"""A loss weight as a function of the step (an optax schedule: `optax.linear_schedule(...)`)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Loss(metrics.Metric):
    """Base of losses: handles the mask, the normalization and the (scheduled) weight.

    Usage: `kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds.logits", labels="batch.label")`.

    Subclasses declare their input keys and implement `get_values(**inputs)`, returning the
    unreduced loss values (per example, per element, ...). `get_state` turns them into an
    `AverageState` whose `compute()` is `weight * sum(values * mask) / count`, where `count`
    is `sum(mask)` (`normalize_by="mask"`) or the number of values (`normalize_by="values"`);
    without a mask it is the plain mean of the values times the weight.

    Attributes:
      weight: a number, or a schedule of the step (`optax.linear_schedule(1.0, 0.0, 100)`).
      mask: optional key of a mask (0 drops a value, 1 keeps it) that broadcasts against the
        values numpy-style (aligned on the trailing axes: a `(b, 1)` mask for `(b, 1)` values).
      normalize_by: "mask" divides by the mask's sum (the mean over the kept values), "values"
        by the number of values (masked-out values count as zeros).
      step: key of the current step; only looked up when `weight` is a schedule.
    """

    weight: float | Schedule = 1.0
    mask: kontext.Key | None = None
    normalize_by: Literal["mask", "values"] = "mask"
    step: kontext.Key = "step"

    def __post_init__(self) -> None:
        if self.normalize_by not in ("mask", "values"):
            raise ValueError(
                f"{type(self).__name__}: normalize_by must be 'mask' or 'values', got {self.normalize_by!r}."
            )

    @abc.abstractmethod
    def get_values(self, **inputs: Any) -> Any:
        """The loss values before masking, averaging and weighting."""

    def get_state(self, *, mask: Any = None, step: Any = None, **inputs: Any) -> metrics.AverageState:
        """The `AverageState` of the weighted, masked values of `get_values(**inputs)`."""
        keys = getattr(type(self), "label_range_keys", None)
        if keys is not None:  # integer labels: checked in the step only under checkify's user checks
            _label_range.check_in_step(self, logits=inputs[keys[0]], labels=inputs[keys[1]], mask=mask)
        values = jnp.asarray(self.get_values(**inputs))
        weight = self.get_weight(step)
        if mask is None:
            total = values.sum()
            count = jnp.asarray(values.size, jnp.float32)
        else:
            mask = jnp.asarray(mask)
            try:
                mask = jnp.broadcast_to(mask, values.shape)
            except ValueError:
                raise ValueError(
                    f"{type(self).__name__}: mask of shape {mask.shape} does not broadcast to the loss values "
                    f"of shape {values.shape} (numpy broadcasting, aligned on the trailing axes)."
                ) from None
            total = (values * mask).sum()
            if self.normalize_by == "mask":
                count = mask.sum(dtype=jnp.float32)
            else:
                count = jnp.asarray(values.size, jnp.float32)
        return metrics.AverageState(total=total * weight, count=count)

    def get_state_from_context(self, context: Any) -> metrics.AverageState:
        """`get_state` with the inputs, mask and (for a schedule) step looked up in `context`."""
        keyed = self if callable(self.weight) else dataclasses.replace(self, step=None)
        kwargs = kontext.resolve_from_keyed_obj(context, keyed, func=self.get_state)
        return self.get_state(**kwargs)

    def get_weight(self, step: Any = None) -> Any:
        """The weight at `step`: the number itself, or the schedule evaluated at `step`."""
        if not callable(self.weight):
            return jnp.asarray(self.weight, jnp.float32)
        if step is None:
            raise ValueError(
                f"{type(self).__name__}: the weight is a schedule, so a step is needed: pass step= "
                f"or set the key `step` (now {self.step!r}) to a path in the context."
            )
        return jnp.asarray(self.weight(step), jnp.float32)


def compute_losses(losses: Any, context: Any) -> tuple[Any, Any]:
    """The total loss and the tree of loss states, for a tree (dict) of losses.

    Usage: `total, states = kd.losses.compute_losses({"l2": L2(...), "ce": ...}, context)`.
    """
    states = jax.tree.map(lambda loss: loss.get_state_from_context(context), losses)
    return total_loss(states), states


def total_loss(states: Any) -> Any:
    """The sum of the losses a tree of loss states computes (float32 0 for none): what the optimizer minimises.

    Usage: `total = kd.losses.total_loss({"l2": l2_state, "ce": ce_state})`.
    """
    if isinstance(states, Mapping) and all(callable(getattr(s, "compute", None)) for s in states.values()):
        values = [state.compute() for state in states.values()]  # in the order the losses are listed
    else:
        values = jax.tree.leaves(
            jax.tree.map(lambda s: s.compute(), states, is_leaf=metrics.State.isinstance)
        )
    return sum(values, jnp.zeros((), jnp.float32))
