"""`MultilabelAveragePrecision`: mean over classes of the average precision of multi-label scores.

kd.contrib.metrics.MultilabelAveragePrecision(scores="preds.logits", labels="batch.labels")
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import kontext
import ktyping
import numpy as np
from ktyping import Float, Int

from kd import metrics


@metrics.state_dataclass
class MultilabelAveragePrecisionState(metrics.AutoState):
    """The state of `MultilabelAveragePrecision`: the scores and labels of every example seen (on the host).

    Usage: `MultilabelAveragePrecision().get_state(scores=s, labels=y).merge(other).compute()`.
    """

    scores: Any = metrics.concat_field()
    labels: Any = metrics.concat_field()

    def compute(self) -> float:
        """The macro-averaged average precision (scikit-learn's `average_precision_score`); NaN with no examples."""
        try:
            from sklearn import metrics as sk_metrics
        except ImportError as e:
            raise ImportError(
                "MultilabelAveragePrecision.compute() needs scikit-learn (`pip install scikit-learn`); "
                "it is only used on the host."
            ) from e
        final = self.finalize()
        if final.labels is None or np.shape(final.labels)[0] == 0:
            return math.nan
        return float(
            sk_metrics.average_precision_score(
                y_true=np.asarray(final.labels), y_score=np.asarray(final.scores)
            )
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultilabelAveragePrecision(metrics.Metric):
    """Average precision of each class's scores against its 0/1 labels, averaged over the classes.

    Usage: `kd.contrib.metrics.MultilabelAveragePrecision(scores="preds.logits", labels="batch.labels")`.

    Every example is kept (on the host) until `compute`, which ranks the examples by score once
    per class (scikit-learn's `average_precision_score`, macro average). A class with no positive
    example scores 0 (scikit-learn warns).

    Attributes:
      scores: key of the scores `(b, n)` (logits or probabilities: only their order counts).
      labels: key of the multi-hot integer labels `(b, n)` (1 where the class applies).
    """

    scores: kontext.Key = kontext.REQUIRED
    labels: kontext.Key = kontext.REQUIRED

    State = MultilabelAveragePrecisionState

    @ktyping.typechecked
    def get_state(self, scores: Float["b n"], labels: Int["b n"]) -> MultilabelAveragePrecisionState:
        return MultilabelAveragePrecisionState(scores=scores, labels=labels)
