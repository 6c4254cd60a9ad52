"""Classification metrics: `Accuracy`, `Precision1`.

kd.metrics.Accuracy(logits="preds.logits", labels="batch.label")
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Bool, Float, Int

from . import _base
from ._state import AverageState


def drop_label_axis(x: Any, ndim: int) -> Any:
    """`(*b, 1)` -> `(*b,)` when `x` has one axis more than `ndim`; `(*b,)` is returned as is."""
    return x[..., 0] if x is not None and x.ndim == ndim + 1 else x


@dataclasses.dataclass(frozen=True, kw_only=True)
class Accuracy(_base.Metric):
    """The fraction of examples whose arg-max logit is the label.

    Usage: `kd.metrics.Accuracy(logits="preds.logits", labels="batch.label")`.

    Attributes:
      logits: key of the logits `(*b, n)`.
      labels: key of the integer labels, `(*b,)` or `(*b, 1)`.
      mask: optional key of per-example weights, `(*b,)` or `(*b, 1)`.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    @ktyping.typechecked
    def get_state(
        self,
        logits: Float["*b n"],
        labels: Int["*b"] | Int["*b 1"],
        mask: Bool["*b"] | Float["*b"] | Bool["*b 1"] | Float["*b 1"] | None = None,
    ) -> AverageState:
        batch_ndim = logits.ndim - 1
        labels = drop_label_axis(labels, batch_ndim)
        correct = (jnp.argmax(logits, axis=-1) == labels).astype(jnp.float32)
        return AverageState.from_values(correct, mask=drop_label_axis(mask, batch_ndim))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Precision1(_base.Metric):
    """Precision@1 for multi-label classification: whether the arg-max class is a positive label.

    Usage: `kd.metrics.Precision1(logits="preds.logits", labels="batch.labels")`.

    Attributes:
      logits: key of the logits `(*b, n)`.
      labels: key of the multi-hot labels `(*b, n)` (1 for each positive class).
      mask: optional key of per-example weights, `(*b,)` or `(*b, 1)`.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    @ktyping.typechecked
    def get_state(
        self,
        logits: Float["*b n"],
        labels: Float["*b n"] | Int["*b n"] | Bool["*b n"],
        mask: Bool["*b"] | Float["*b"] | Bool["*b 1"] | Float["*b 1"] | None = None,
    ) -> AverageState:
        top = jnp.argmax(logits, axis=-1, keepdims=True)
        correct = jnp.take_along_axis(labels, top, axis=-1)[..., 0].astype(jnp.float32)
        return AverageState.from_values(correct, mask=drop_label_axis(mask, logits.ndim - 1))
