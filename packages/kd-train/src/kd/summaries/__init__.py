"""kd.summaries: metrics whose value a writer displays (images, histograms, texts, point clouds) rather
than logs as a scalar.

    summaries = {
        "inputs": kd.summaries.ShowImages(images="batch.image", num_images=4),
        "logits": kd.summaries.Histogram(tensor="preds.logits"),
        "errors": kd.summaries.ShowDifferenceImages(images1="batch.image", images2="preds.image", num_images=4),
        "masks": kd.summaries.ShowSegmentations(segmentations="preds.masks"),
    }

The image summaries (`ShowImages`, `ShowDifferenceImages`, `ShowSegmentations`, `ShowBoxes`) compute a
float32 array `(n, h, w, c)` in [0, 1]; `Histogram` and `HistogramSummary` a `HistogramValue(values,
num_buckets)`; `ShowTexts` a numpy array of `str`; `ShowPointCloud` a `PointCloud`.
"""

from ._base import ImageSummary as ImageSummary
from ._base import Summary as Summary
from ._boxes import BoxesState as BoxesState
from ._boxes import ShowBoxes as ShowBoxes
from ._difference import DifferenceImagesState as DifferenceImagesState
from ._difference import ShowDifferenceImages as ShowDifferenceImages
from ._histograms import Histogram as Histogram
from ._histograms import HistogramState as HistogramState
from ._histograms import HistogramSummary as HistogramSummary
from ._histograms import HistogramSummaryState as HistogramSummaryState
from ._histograms import HistogramValue as HistogramValue
from ._images import ImagesState as ImagesState
from ._images import ShowImages as ShowImages
from ._pointclouds import PointCloud as PointCloud
from ._pointclouds import PointCloudState as PointCloudState
from ._pointclouds import ShowPointCloud as ShowPointCloud
from ._segmentations import SegmentationsState as SegmentationsState
from ._segmentations import ShowSegmentations as ShowSegmentations
from ._texts import ShowTexts as ShowTexts
from ._texts import TextsState as TextsState

__all__ = [
    "BoxesState",
    "DifferenceImagesState",
    "Histogram",
    "HistogramState",
    "HistogramSummary",
    "HistogramSummaryState",
    "HistogramValue",
    "ImageSummary",
    "ImagesState",
    "PointCloud",
    "PointCloudState",
    "SegmentationsState",
    "ShowBoxes",
    "ShowDifferenceImages",
    "ShowImages",
    "ShowPointCloud",
    "ShowSegmentations",
    "ShowTexts",
    "Summary",
    "TextsState",
]
