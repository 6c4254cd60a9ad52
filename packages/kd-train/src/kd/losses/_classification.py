"""Classification losses: softmax cross-entropy (probability or integer labels), sigmoid cross-entropy.

kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds.logits", labels="batch.label")
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
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

    Kauldron only takes `(*b, 1)` labels; a mask shaped like the labels applies per example (a masked
    padding label such as -1 contributes nothing). An unmasked label outside `0..n-1` (`n` the logits'
    last axis, e.g. 10-class labels on a 1-output model) stops the Trainer on its first batch, naming the
    loss, and on any batch under checkify's user checks (`Trainer.checkify_error_categories=
    checkify.all_checks`); called directly, such a label picks no logit and gives `logsumexp(logits)`. The
    values are optax's, computed with a one-hot select instead of a gather, so that
    `jax.experimental.checkify`'s index checks trace its gradient.
    """

    # The keys of the logits, the integer labels and the mask: the range is checked (kd._label_range).
    label_range_keys: ClassVar[tuple[str, str, str]] = ("logits", "labels", "mask")

    logits: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED

    @ktyping.typechecked
    def get_values(
        self, logits: Float["*b n"], labels: Int["*b"] | Int["*b 1"]
    ) -> Float["*b"] | Float["*b 1"]:
        with_axis = labels.ndim == logits.ndim
        flat_labels = labels[..., 0] if with_axis else labels
        values = _integer_label_cross_entropy(logits, flat_labels)
        return values[..., None] if with_axis else values


def _integer_label_cross_entropy(logits: jax.Array, labels: jax.Array) -> jax.Array:
    """`logsumexp(logits) - logits[label]`, as optax's, the label's logit picked by a one-hot `where` (exact:
    the other terms are zeros) rather than `take_along_axis`, whose gradient checkify cannot trace. Logits
    below float32 (a bf16 model's) are upcast: XLA fuses the cast into the reductions."""
    logits = logits.astype(jnp.promote_types(logits.dtype, jnp.float32))
    classes = jnp.arange(logits.shape[-1])
    one_hot = labels[..., None] == classes
    label_logits = jnp.sum(jnp.where(one_hot, logits, 0), axis=-1)
    return jax.nn.logsumexp(logits, axis=-1) - label_logits


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
