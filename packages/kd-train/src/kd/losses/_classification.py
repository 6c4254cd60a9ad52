"""Classification losses: softmax cross-entropy (probability or integer labels), sigmoid cross-entropy.

kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds.logits", labels="batch.label")
"""

from __future__ import annotations

import dataclasses

import kontext
import ktyping
import optax
from ktyping import Array, Float, Int

from . import _base


@dataclasses.dataclass(frozen=True, kw_only=True)
class SoftmaxCrossEntropy(_base.Loss):
    """Softmax cross-entropy with one-hot or probability labels; values `(*b, 1)`.

    Usage: `kd.losses.SoftmaxCrossEntropy(logits="preds.logits", labels="batch.label_probs")`.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(self, logits: Float["*b n"], labels: Float["*b n"]) -> Float["*b 1"]:
        return optax.softmax_cross_entropy(logits, labels)[..., None]


@dataclasses.dataclass(frozen=True, kw_only=True)
class SoftmaxCrossEntropyWithIntLabels(_base.Loss):
    """Softmax cross-entropy with integer labels `(*b,)` or `(*b, 1)`; values have the labels' shape.

    Usage: `kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds.logits", labels="batch.label")`.

    Kauldron only takes `(*b, 1)` labels; a mask shaped like the labels applies per example.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(
        self, logits: Float["*b n"], labels: Int["*b"] | Int["*b 1"]
    ) -> Float["*b"] | Float["*b 1"]:
        with_axis = labels.ndim == logits.ndim
        flat_labels = labels[..., 0] if with_axis else labels
        values = optax.softmax_cross_entropy_with_integer_labels(logits, flat_labels)
        return values[..., None] if with_axis else values


@dataclasses.dataclass(frozen=True, kw_only=True)
class SigmoidBinaryCrossEntropy(_base.Loss):
    """Sigmoid cross-entropy of each logit against a binary (or probability) label; values `(*b, n)`.

    Usage: `kd.losses.SigmoidBinaryCrossEntropy(logits="preds.logits", labels="batch.multi_hot")`.
    """

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(self, logits: Float["*b n"], labels: Array["*b n"]) -> Float["*b n"]:
        return optax.sigmoid_binary_cross_entropy(logits, labels.astype(logits.dtype))
