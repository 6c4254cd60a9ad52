"""`ShowSegmentations`: the first few segmentations, each segment in its own colour, `(n, h, w, 3)` in [0, 1].

kd.summaries.ShowSegmentations(segmentations="preds.segmentation", num_images=4, entropy=True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import jax.numpy as jnp
import kontext
import numpy as np

from kd import metrics

from . import _base, _layout, _segplot


@metrics.state_dataclass
class SegmentationsState(metrics.CollectFirstState):
    """The first `keep_first` segmentations (`(n, h, w, 1)` ids or `(n, h, w, k)` masks); `compute()`
    colours them.

    Usage: `ShowSegmentations(segmentations="x").get_state(segmentations=s).merge(other).compute()`.
    """

    segmentations: Any = None
    options: tuple[tuple[str, Any], ...] = metrics.static_field(default=())

    def compute(self) -> np.ndarray:
        """RGB float32 `(n, h, w, 3)` in [0, 1] (host only)."""
        if self.segmentations is None:
            return np.zeros((0, 0, 0, 3), np.float32)
        segmentations = np.asarray(self.segmentations)[: self.keep_first]
        rgb = _segplot.plot_segmentation(segmentations, **dict(self.options))
        return np.clip(rgb, 0.0, 1.0).astype(np.float32)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShowSegmentations(_base.ImageSummary):
    """Shows the first `num_images` segmentations, each segment in a colour of `palette`.

    Usage: `kd.summaries.ShowSegmentations(segmentations="preds.masks", num_images=5, hard=True)`.

    Integer ids `(n, h, w, 1)` are one-hot encoded (as many segments as the palette has colours, else the
    largest id + 1); soft masks `(n, h, w, k)` mix their colours in Oklab, unless `hard` takes the argmax.

    Attributes:
      segmentations: key of integer segment ids `(..., h, w, 1)` or float masks `(..., h, w, k)`.
      num_images: how many segmentations to keep.
      entropy: darken each pixel by the normalized entropy of its soft mask.
      hard: colour soft masks by their argmax instead of mixing the colours.
      palette: optional RGB colours `(K, 3)` in [0, 1], at least one per segment; default: K hues of
        equal Oklab lightness and chroma, starting from blue.
      rearrange: optional einops pattern giving `(n, h, w, c)`; by default the leading axes are merged.
      rearrange_kwargs: the pattern's axis sizes.
      edges: light the borders between segments (of the argmax) to `edge_lightness`.
      edge_lightness: the lightness of the borders, in [0, 1].
      image_contrast: accepted for Kauldron's configs; it only applies with an image under the
        segmentation, which this summary does not take, so it changes nothing.
    """

    segmentations: kontext.Key = kontext.REQUIRED
    num_images: int = 5
    entropy: bool = False
    hard: bool = False
    palette: Sequence[Sequence[float]] | None = None
    rearrange: str | None = None
    rearrange_kwargs: Mapping[str, Any] | None = None
    edges: bool = False
    edge_lightness: float = 1.0
    image_contrast: float = 0.6

    def __post_init__(self) -> None:
        if not (isinstance(self.num_images, int) and self.num_images >= 1):
            raise ValueError(
                f"ShowSegmentations: num_images must be a positive int, got {self.num_images!r}."
            )
        if self.palette is not None:
            shape = np.shape(self.palette)
            if len(shape) != 2 or shape[1] != 3 or shape[0] < 1:
                raise ValueError(f"ShowSegmentations: palette must be RGB colours (K, 3), got shape {shape}.")

    def _options(self) -> tuple[tuple[str, Any], ...]:
        palette = None if self.palette is None else tuple(tuple(float(v) for v in c) for c in self.palette)
        return (
            ("palette", palette),
            ("hard", bool(self.hard)),
            ("entropy", bool(self.entropy)),
            ("edges", bool(self.edges)),
            ("edge_lightness", float(self.edge_lightness)),
        )

    def get_state(self, segmentations: Any) -> SegmentationsState:
        segmentations = _layout.maybe_rearrange(segmentations, self.rearrange, self.rearrange_kwargs)
        integer = jnp.issubdtype(segmentations.dtype, jnp.integer)
        floating = jnp.issubdtype(segmentations.dtype, jnp.floating)
        if segmentations.ndim != 4 or not (
            (integer and segmentations.shape[-1] == 1) or (floating and segmentations.shape[-1] >= 1)
        ):
            raise ValueError(
                "ShowSegmentations: argument segmentations must be integer ids (n, h, w, 1) or float masks "
                f"(n, h, w, k) after rearranging, got {segmentations.dtype} of shape {tuple(segmentations.shape)}."
            )
        if floating and segmentations.shape[-1] == 1:
            raise ValueError(
                "ShowSegmentations: float segmentations of one channel are ambiguous: pass integer ids "
                f"(n, h, w, 1) or masks with k >= 2 channels, got {segmentations.dtype} of shape "
                f"{tuple(segmentations.shape)}."
            )
        return SegmentationsState(
            segmentations=segmentations[: self.num_images],
            keep_first=self.num_images,
            options=self._options(),
        )
