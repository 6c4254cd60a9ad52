"""kd.summaries: metrics whose value a writer displays (images, histograms) rather than logs as a scalar.

    summaries = {
        "inputs": kd.summaries.ShowImages(images="batch.image", num_images=4),
        "logits": kd.summaries.Histogram(tensor="preds.logits"),
    }

`ShowImages(...).get_state(...)...compute()` is a float32 array `(n, h, w, c)` in [0, 1];
`Histogram` computes a `HistogramValue(values, num_buckets)`.
"""

from ._base import ImageSummary as ImageSummary
from ._base import Summary as Summary
from ._histograms import Histogram as Histogram
from ._histograms import HistogramState as HistogramState
from ._histograms import HistogramValue as HistogramValue
from ._images import ImagesState as ImagesState
from ._images import ShowImages as ShowImages

__all__ = [
    "Histogram",
    "HistogramState",
    "HistogramValue",
    "ImageSummary",
    "ImagesState",
    "ShowImages",
    "Summary",
]
