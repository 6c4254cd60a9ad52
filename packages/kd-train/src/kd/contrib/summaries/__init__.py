"""kd.contrib.summaries: Kauldron's contributed summaries (`kauldron.contrib.summaries`).

    cfg.train_summaries = {"confusion": kd.contrib.summaries.ConfusionMatrix(logits="preds.logits", labels="batch.label")}

`ConfusionMatrix` computes a `str` (the matrix's numpy `repr`), which writers show as text.
"""

from ._confusion_matrix import NORMALIZE_OPTIONS as NORMALIZE_OPTIONS
from ._confusion_matrix import ConfusionMatrix as ConfusionMatrix
from ._confusion_matrix import ConfusionMatrixState as ConfusionMatrixState
from ._confusion_matrix import confusion_counts as confusion_counts

__all__ = [
    "NORMALIZE_OPTIONS",
    "ConfusionMatrix",
    "ConfusionMatrixState",
    "confusion_counts",
]
