"""kd.losses: losses are metrics whose state is the weighted, masked mean of their values.

    loss = kd.losses.SoftmaxCrossEntropyWithIntLabels(logits="preds.logits", labels="batch.label")
    state = loss.get_state_from_context(context)  # inside the jitted step
    state.compute()  # the scalar loss, weight applied

`weight` may be a schedule of the step (`weight=optax.linear_schedule(0.0, 1.0, 1000)`).
"""

from ._base import Loss as Loss
from ._base import Schedule as Schedule
from ._base import compute_losses as compute_losses
from ._base import total_loss as total_loss
from ._classification import SigmoidBinaryCrossEntropy as SigmoidBinaryCrossEntropy
from ._classification import SoftmaxCrossEntropy as SoftmaxCrossEntropy
from ._classification import SoftmaxCrossEntropyWithIntLabels as SoftmaxCrossEntropyWithIntLabels
from ._regression import L1 as L1
from ._regression import L2 as L2
from ._regression import Huber as Huber
from ._similarity import NegativeCosineSimilarity as NegativeCosineSimilarity
from ._values import AbsoluteValue as AbsoluteValue
from ._values import Value as Value

__all__ = [
    "L1",
    "L2",
    "AbsoluteValue",
    "Huber",
    "Loss",
    "NegativeCosineSimilarity",
    "Schedule",
    "SigmoidBinaryCrossEntropy",
    "SoftmaxCrossEntropy",
    "SoftmaxCrossEntropyWithIntLabels",
    "Value",
    "compute_losses",
    "total_loss",
]
