"""`Summary`: a metric whose value is shown by a writer (images, histograms), not logged as a scalar.

isinstance(kd.summaries.ShowImages(images="batch.image"), kd.summaries.Summary)  # -> True
"""

from __future__ import annotations

import dataclasses

from kd import metrics


@dataclasses.dataclass(frozen=True, kw_only=True)
class Summary(metrics.Metric):
    """Base of summaries: metrics whose `compute()` gives something to display.

    Usage: `cfg.train_summaries = {"inputs": kd.summaries.ShowImages(images="batch.image")}`.

    Writers dispatch on the subclass: an `ImageSummary` computes a float32 array `(n, h, w, c)`
    in [0, 1]; a `Histogram` computes a `HistogramValue`.
    """


@dataclasses.dataclass(frozen=True, kw_only=True)
class ImageSummary(Summary):
    """Marks summaries whose `compute()` is a float32 numpy array `(n, h, w, c)` in [0, 1], c in {1, 3}.

    Usage: `if isinstance(summary, kd.summaries.ImageSummary): writer.write_images(name, value)`.
    """
