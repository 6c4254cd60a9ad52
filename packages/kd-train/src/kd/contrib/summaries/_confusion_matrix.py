"""`ConfusionMatrix`: a summary showing the confusion matrix of a classifier as text.

kd.contrib.summaries.ConfusionMatrix(logits="preds.logits", labels="batch.label", normalize="true")
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
from ktyping import Float, Int

from kd import metrics, summaries

NORMALIZE_OPTIONS = ("true", "pred", "all")
"""The values of `ConfusionMatrix.normalize` besides None."""


def confusion_counts(
    labels: np.ndarray,
    preds: np.ndarray,
    num_classes: int,
    sample_weight: np.ndarray | None = None,
    normalize: Literal["true", "pred", "all"] | None = None,
) -> np.ndarray:
    """The `(num_classes, num_classes)` matrix whose entry `[i, j]` counts examples of label `i` predicted `j`.

    Usage: `confusion_counts(np.array([0, 1]), np.array([1, 1]), num_classes=2)` -> `[[0, 1], [0, 1]]`.

    As scikit-learn's `confusion_matrix(labels=range(num_classes))`: examples whose label or
    prediction is outside `[0, num_classes)` are left out; counts are int64, or float64 sums of
    `sample_weight` when given; `normalize` divides by the row sums ("true"), the column sums
    ("pred") or the total ("all"), with 0 where that sum is 0.
    """
    labels = np.asarray(labels, np.int64).reshape(-1)
    preds = np.asarray(preds, np.int64).reshape(-1)
    known = (labels >= 0) & (labels < num_classes) & (preds >= 0) & (preds < num_classes)
    cells = labels[known] * num_classes + preds[known]
    if sample_weight is None:
        weights = None
    else:
        weights = np.asarray(sample_weight, np.float64).reshape(-1)[known]
    counts = np.bincount(cells, weights=weights, minlength=num_classes * num_classes)
    matrix = counts.reshape(num_classes, num_classes)
    if normalize is None:
        return matrix
    if normalize == "true":
        sums = matrix.sum(axis=1, keepdims=True)
    elif normalize == "pred":
        sums = matrix.sum(axis=0, keepdims=True)
    elif normalize == "all":
        sums = matrix.sum()
    else:
        raise ValueError(
            f"confusion_counts: normalize must be one of {NORMALIZE_OPTIONS} or None, got {normalize!r}."
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(matrix / sums)


@metrics.state_dataclass
class ConfusionMatrixState(metrics.AutoState):
    """The state of `ConfusionMatrix`: the label, prediction (and weight) of every example seen.

    Usage: `ConfusionMatrix().get_state(logits=x, labels=y).merge(other).compute()`.

    Attributes:
      num_classes: the number of classes (the logits' last axis); static.
      labels: the labels `(b,)`.
      preds: the arg-max predictions `(b,)`.
      sample_weight: the weights `(b,)`, or None for unweighted counts.
    """

    num_classes: int = metrics.static_field(default=metrics.EMPTY)
    labels: Any = metrics.concat_field()
    preds: Any = metrics.concat_field()
    sample_weight: Any = metrics.concat_field(default=None)

    def compute(self) -> str:
        """The `repr` of the matrix (as `confusion_counts`), printed in full with the parent's precision."""
        final = self.finalize()
        if final.labels is None or final.num_classes is metrics.EMPTY:
            matrix = np.zeros((0, 0), np.int64)
        else:
            matrix = confusion_counts(
                final.labels,
                final.preds,
                num_classes=final.num_classes,
                sample_weight=final.sample_weight,
                normalize=getattr(self.parent, "normalize", None),
            )
        with np.printoptions(threshold=np.inf, precision=getattr(self.parent, "precision", 2)):
            return repr(matrix)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConfusionMatrix(summaries.Summary):
    """The confusion matrix of arg-max predictions against labels, shown as text (the numpy `repr`).

    Usage: `kd.contrib.summaries.ConfusionMatrix(logits="preds.logits", labels="batch.label")`.

    Every example's label and prediction are kept (on the host) until `compute`. Rows are labels,
    columns predictions, over the classes `0 .. n-1` of the logits' last axis.

    Attributes:
      logits: key of the logits `(*b, n)`.
      labels: key of the integer labels `(*b, 1)`.
      sample_weight: optional key of per-example weights `(*b, 1)` (0 leaves an example out);
        the matrix then holds float sums of weights.
      normalize: None for counts, or divide by the row sums ("true"), the column sums ("pred")
        or the total ("all").
      precision: the number of digits printed after the decimal point.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED
    sample_weight: kontext.Key | None = None
    normalize: Literal["true", "pred", "all"] | None = None
    precision: int = 2

    State = ConfusionMatrixState

    def __post_init__(self) -> None:
        if self.normalize is not None and self.normalize not in NORMALIZE_OPTIONS:
            raise ValueError(
                f"ConfusionMatrix: normalize must be one of {NORMALIZE_OPTIONS} or None, got {self.normalize!r}."
            )

    @ktyping.typechecked
    def get_state(
        self,
        logits: Float["*b n"],
        labels: Int["*b 1"],
        sample_weight: Float["*b 1"] | None = None,
    ) -> ConfusionMatrixState:
        return ConfusionMatrixState(
            num_classes=logits.shape[-1],
            labels=jnp.reshape(labels, -1),
            preds=jnp.reshape(jnp.argmax(logits, axis=-1), -1),
            sample_weight=None if sample_weight is None else jnp.reshape(sample_weight, -1),
        )
