"""Regression losses: `L1`, `L2`, `Huber` (element-wise, same shape as the predictions).

kd.losses.L2(preds="preds.y", targets="batch.y")
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import kontext
import ktyping
import optax
from ktyping import Float

from . import _base


@dataclasses.dataclass(frozen=True, kw_only=True)
class L1(_base.Loss):
    """Absolute error `|preds - targets|`, element-wise.

    Usage: `kd.losses.L1(preds="preds.y", targets="batch.y")`.
    """

    preds: kontext.Key = kontext.REQUIRED
    targets: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(self, preds: Float["*a"], targets: Float["*a"]) -> Float["*a"]:
        return jnp.abs(preds - targets)


@dataclasses.dataclass(frozen=True, kw_only=True)
class L2(_base.Loss):
    """Squared error `(preds - targets) ** 2`, element-wise (no 1/2 factor, unlike `optax.l2_loss`).

    Usage: `kd.losses.L2(preds="preds.y", targets="batch.y")`.
    """

    preds: kontext.Key = kontext.REQUIRED
    targets: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(self, preds: Float["*a"], targets: Float["*a"]) -> Float["*a"]:
        return optax.squared_error(preds, targets)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Huber(_base.Loss):
    """Huber loss, element-wise: `x**2 / 2` for `|x| <= delta`, else `delta * (|x| - delta / 2)`.

    Usage: `kd.losses.Huber(preds="preds.y", targets="batch.y", delta=0.5)`.
    """

    preds: kontext.Key = kontext.REQUIRED
    targets: kontext.Key = kontext.REQUIRED
    delta: float = 1.0

    @ktyping.typechecked
    def get_values(self, preds: Float["*a"], targets: Float["*a"]) -> Float["*a"]:
        return optax.huber_loss(preds, targets, delta=self.delta)
