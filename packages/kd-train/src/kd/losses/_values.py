"""`Value`, `AbsoluteValue`: losses that are a value the model computes itself (a regularizer, an aux loss).

kd.losses.Value(values="interms.encoder.kl_loss.__call__[0]", weight=1e-3)
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Float

from . import _base


@dataclasses.dataclass(frozen=True, kw_only=True)
class Value(_base.Loss):
    """The values at `values`, as they are: the loss is their (masked, weighted) mean.

    Usage: `kd.losses.Value(values="preds.aux_loss")`.

    Attributes:
      values: key of a float array (any shape) that already is the loss.
    """

    values: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(self, values: Float["*a"]) -> Float["*a"]:
        return values


@dataclasses.dataclass(frozen=True, kw_only=True)
class AbsoluteValue(_base.Loss):
    """`|values|`, element-wise: the loss is the (masked, weighted) mean absolute value.

    Usage: `kd.losses.AbsoluteValue(values="preds.residual")` (pulls the values towards zero).

    Attributes:
      values: key of a float array (any shape).
    """

    values: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(self, values: Float["*a"]) -> Float["*a"]:
        return jnp.abs(values)
