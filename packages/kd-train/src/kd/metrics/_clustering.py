"""Clustering metrics: `Ari`, the adjusted Rand index of segmentations.

kd.metrics.Ari(predictions="preds.segmentation", labels="batch.segmentation", num_instances_true=7, num_instances_pred=11)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Bool, Float, Int

from . import _base
from ._state import AverageState


def adjusted_rand_index(
    true_ids: Any,
    pred_ids: Any,
    *,
    num_instances_true: int,
    num_instances_pred: int,
    ignored_ids: Sequence[int] | int | None = None,
) -> Any:
    """The adjusted Rand index of each pair of id maps `(*b, ...)`, shape `(*b,)`.

    Usage: `adjusted_rand_index(labels, preds, num_instances_true=5, num_instances_pred=8)`.

    Every axis after the batch axes (`len(true_ids.shape) - 3` of them for `(*b, t, h, w)`) is
    one clustering of pixels; ids must lie in `[0, num_instances)`. Pixels whose true id is in
    `ignored_ids` are left out. Two clusterings with a single cluster each score 1.
    """
    true_oh = jax.nn.one_hot(true_ids, num_instances_true, dtype=jnp.float32)
    pred_oh = jax.nn.one_hot(pred_ids, num_instances_pred, dtype=jnp.float32)
    if ignored_ids is not None:
        ignored = [ignored_ids] if isinstance(ignored_ids, int) else list(ignored_ids)
        keep = jnp.ones((num_instances_true,), jnp.float32).at[jnp.asarray(ignored, jnp.int32)].set(0.0)
        true_oh = true_oh * keep
    batch = true_ids.shape[:-3]
    true_oh = true_oh.reshape((*batch, -1, num_instances_true))
    pred_oh = pred_oh.reshape((*batch, -1, num_instances_pred)) * true_oh.sum(-1, keepdims=True)
    table = jnp.einsum("...pi,...pj->...ij", true_oh, pred_oh)  # contingency counts n_ij
    rows, cols, n = table.sum(-1), table.sum(-2), table.sum((-2, -1))

    def pairs(x: Any) -> Any:
        return x * (x - 1) / 2

    index = pairs(table).sum((-2, -1))
    row_pairs, col_pairs = pairs(rows).sum(-1), pairs(cols).sum(-1)
    expected = row_pairs * col_pairs / jnp.maximum(pairs(n), 1e-12)
    maximum = (row_pairs + col_pairs) / 2
    denominator = maximum - expected
    # Both clusterings trivial (one cluster each, or one pixel): identical, so 1 (as scikit-learn).
    return jnp.where(
        denominator == 0, 1.0, (index - expected) / jnp.where(denominator == 0, 1.0, denominator)
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Ari(_base.Metric):
    """Adjusted Rand index between predicted and true segmentations of videos, averaged over examples.

    Usage: `kd.metrics.Ari(predictions="preds.segmentations", labels="batch.segmentations",
    num_instances_true=7, num_instances_pred=11, ignored_ids=0)`.

    1 is a perfect match up to a relabelling, about 0 is chance, negative is worse than chance.

    Attributes:
      num_instances_true: the number of true ids (ids lie in `[0, num_instances_true)`).
      num_instances_pred: the number of predicted ids.
      ignored_ids: true ids (e.g. the background 0) whose pixels are left out.
      predictions: key of the predicted ids `(*b, t, h, w, 1)`.
      labels: key of the true ids `(*b, t, h, w, 1)`.
      mask: optional key of per-example weights `(*b, 1)`.
    """

    num_instances_true: int
    num_instances_pred: int
    ignored_ids: Sequence[int] | int | None = None
    predictions: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    State = AverageState

    def __post_init__(self) -> None:
        if isinstance(self.ignored_ids, list):  # A tuple keeps the metric hashable (states' parent).
            object.__setattr__(self, "ignored_ids", tuple(self.ignored_ids))

    @ktyping.typechecked
    def get_state(
        self,
        predictions: Int["*b t h w 1"],
        labels: Int["*b t h w 1"],
        mask: Bool["*b 1"] | Float["*b 1"] | None = None,
    ) -> AverageState:
        values = adjusted_rand_index(
            labels[..., 0],
            predictions[..., 0],
            num_instances_true=self.num_instances_true,
            num_instances_pred=self.num_instances_pred,
            ignored_ids=self.ignored_ids,
        )
        return AverageState.from_values(values, mask=mask)
