"""Classification metrics: `Accuracy`, `Precision1`, `BinaryAccuracy`, `RocAuc`.

kd.metrics.Accuracy(logits="preds.logits", labels="batch.label")
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
from ktyping import Bool, Float, Int

from . import _auto_state, _base, _state
from ._state import AverageState


def drop_label_axis(x: Any, ndim: int) -> Any:
    """`(*b, 1)` -> `(*b,)` when `x` has one axis more than `ndim`; `(*b,)` is returned as is."""
    return x[..., 0] if x is not None and x.ndim == ndim + 1 else x


@dataclasses.dataclass(frozen=True, kw_only=True)
class Accuracy(_base.Metric):
    """The fraction of examples whose arg-max logit is the label.

    Usage: `kd.metrics.Accuracy(logits="preds.logits", labels="batch.label")`.

    An unmasked label outside `0..n-1` stops the Trainer on its first batch, naming the metric.

    Attributes:
      logits: key of the logits `(*b, n)`.
      labels: key of the integer labels, `(*b,)` or `(*b, 1)`.
      mask: optional key of per-example weights, `(*b,)` or `(*b, 1)`.
    """

    # The keys of the logits, the integer labels and the mask: the labels' range is checked (_label_range).
    label_range_keys: ClassVar[tuple[str, str, str]] = ("logits", "labels", "mask")

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    State = AverageState

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

    State = AverageState

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


@dataclasses.dataclass(frozen=True, kw_only=True)
class BinaryAccuracy(_base.Metric):
    """The fraction of binary predictions that are right: `(logits > 0) == labels`.

    Usage: `kd.metrics.BinaryAccuracy(logits="preds.logit", labels="batch.is_cat")`.

    Attributes:
      logits: key of the logits (any shape; positive predicts 1).
      labels: key of the 0/1 labels, of the same shape.
      mask: optional key of weights aligned with the leading axes of the logits.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    State = AverageState

    @ktyping.typechecked
    def get_state(
        self,
        logits: Float["*any"],
        labels: Int["*any"] | Bool["*any"],
        mask: Bool[...] | Float[...] | None = None,
    ) -> AverageState:
        correct = ((logits > 0) == labels.astype(bool)).astype(jnp.float32)
        return AverageState.from_values(correct, mask=mask)


@_state.state_dataclass
class RocAucState(_auto_state.AutoState):
    """The state of `RocAuc`: labels, class probabilities and weights of every example seen.

    Usage: `RocAuc(...).get_state(logits=x, labels=y).merge(other).compute()`.

    `compute` reads the settings (`unique_labels`, `multi_class_mode`) from `parent`.
    """

    labels: Any = _auto_state.concat_field()
    probs: Any = _auto_state.concat_field()
    mask: Any = _auto_state.concat_field()

    def compute(self) -> float:
        try:
            from sklearn import metrics as sk_metrics
        except ImportError as e:
            raise ImportError(
                "RocAuc.compute() needs scikit-learn (`pip install scikit-learn`); it is only used on the host."
            ) from e
        final = self.finalize()
        if final.labels is None:
            return 0.0
        labels = np.asarray(final.labels).reshape(-1)
        probs = np.asarray(final.probs, np.float64).reshape(labels.shape[0], -1)
        weights = np.asarray(final.mask, np.float64).reshape(-1)
        parent = self.parent
        seen = np.unique(labels).tolist()
        classes = seen if getattr(parent, "unique_labels", None) is None else list(parent.unique_labels)
        if len(seen) < 2:
            return 0.0  # AUC needs two classes present; batches early in training may have one.
        # Keep the columns of the classes scored and renormalise, so sklearn sees probabilities.
        probs = probs[:, classes]
        probs = probs / probs.sum(axis=-1, keepdims=True)
        if len(classes) == 2:
            probs = probs[:, 1]
        return float(
            sk_metrics.roc_auc_score(
                y_true=labels,
                y_score=probs,
                sample_weight=weights,
                labels=classes,
                multi_class=getattr(parent, "multi_class_mode", "ovr"),
            )
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class RocAuc(_base.Metric):
    """Area under the ROC curve of softmax probabilities (scikit-learn's `roc_auc_score`).

    Usage: `kd.metrics.RocAuc(logits="preds.logits", labels="batch.label")`.

    Every example is kept (on the host) until `compute`, which runs scikit-learn. Only the
    classes present in the labels are scored (their probabilities renormalised), unless
    `unique_labels` lists them; with fewer than two classes present the value is 0.0.
    An unmasked label outside `0..n-1` stops the Trainer on its first batch, naming the metric.

    Attributes:
      logits: key of the logits `(*b, n)`.
      labels: key of the integer labels `(*b, 1)`.
      mask: optional key of per-example weights `(*b, 1)`.
      unique_labels: the classes to score, when a split may miss some.
      multi_class_mode: "ovr" (one-vs-rest) or "ovo" (one-vs-one), as in scikit-learn.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None
    unique_labels: tuple[int, ...] | None = None
    multi_class_mode: str = "ovr"

    # The keys of the logits, the integer labels and the mask: the labels' range is checked (_label_range).
    label_range_keys: ClassVar[tuple[str, str, str]] = ("logits", "labels", "mask")

    State = RocAucState

    def __post_init__(self) -> None:
        if self.multi_class_mode not in ("ovr", "ovo"):
            raise ValueError(
                f"RocAuc: multi_class_mode must be 'ovr' or 'ovo', got {self.multi_class_mode!r}."
            )
        if self.unique_labels is not None:  # A tuple keeps the metric hashable (it is the states' parent).
            object.__setattr__(self, "unique_labels", tuple(int(c) for c in self.unique_labels))

    @ktyping.typechecked
    def get_state(
        self,
        logits: Float["*b n"],
        labels: Int["*b 1"],
        mask: Bool["*b 1"] | Float["*b 1"] | None = None,
    ) -> RocAucState:
        mask = jnp.ones(labels.shape, jnp.float32) if mask is None else mask
        return RocAucState(labels=labels, probs=jax.nn.softmax(logits, axis=-1), mask=mask)
