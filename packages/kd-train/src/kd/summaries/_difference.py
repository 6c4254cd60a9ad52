"""`ShowDifferenceImages`: `|images1 - images2|` averaged over channels, coloured by a colormap.

kd.summaries.ShowDifferenceImages(images1="batch.image", images2="preds.image", num_images=4, vrange=(0, 1))
"""

# ruff: noqa: UP037
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
from ktyping import Float

from kd import metrics

from . import _base, _layout


@metrics.state_dataclass
class DifferenceImagesState(metrics.CollectFirstState):
    """The first `keep_first` difference images `(n, h, w, 1)`; `compute()` colours them `(n, h, w, 3)`.

    Usage: `ShowDifferenceImages(...).get_state(images1=a, images2=b).merge(other).compute()`.
    """

    diff_images: Any = None
    cmap: str = metrics.static_field(default="gray")
    vrange: tuple[float, float] | None = metrics.static_field(default=None)

    def compute(self) -> np.ndarray:
        """RGB float32 `(n, h, w, 3)` in [0, 1] (host only)."""
        if self.diff_images is None:
            return np.zeros((0, 0, 0, 3), np.float32)
        diff = np.asarray(self.diff_images, np.float32)[: self.keep_first, ..., 0]
        if self.vrange is None:  # The collected differences' own min and max.
            vmin = vmax = None
        else:  # Kauldron's range: a difference of the inputs lies within +-(vmax - vmin).
            vmin, vmax = self.vrange[0] - self.vrange[1], self.vrange[1] - self.vrange[0]
        images = _layout.colormap(diff, self.cmap, vmin=vmin, vmax=vmax)
        return np.clip(images, 0.0, 1.0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShowDifferenceImages(_base.ImageSummary):
    """Shows `mean_c |images1 - images2|` of the first `num_images` images, through the colormap `cmap`.

    Usage: `kd.summaries.ShowDifferenceImages(images1="batch.image", images2="preds.image", num_images=5)`.

    With `vrange=(vmin, vmax)` both inputs are clipped to it and rescaled to [0, 1] before the difference,
    and the colormap spans `[vmin - vmax, vmax - vmin]` (Kauldron's choice: with `vrange=(0, 1)` no
    difference is mid-grey, a full difference white); without it the colormap spans the differences'
    own min and max.

    Attributes:
      images1: key of the images the second ones are subtracted from, float `(..., h, w, c)`.
      images2: key of the images subtracted, the same shape.
      num_images: how many images to keep (required, as in Kauldron).
      vrange: optional `(vmin, vmax)` of the input values.
      cmap: a matplotlib colormap name ("gray", the default, needs no matplotlib).
      rearrange: optional einops pattern giving `(n, h, w, c)`; by default the leading axes are merged.
      rearrange_kwargs: the pattern's axis sizes.
    """

    images1: kontext.Key = kontext.REQUIRED
    images2: kontext.Key = kontext.REQUIRED
    num_images: int
    vrange: tuple[float, float] | None = None
    cmap: str = "gray"
    rearrange: str | None = None
    rearrange_kwargs: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.num_images, int) and self.num_images >= 1):
            raise ValueError(
                f"ShowDifferenceImages: num_images must be a positive int, got {self.num_images!r}."
            )
        if self.vrange is not None and not self.vrange[0] < self.vrange[1]:
            raise ValueError(
                f"ShowDifferenceImages: vrange must be (vmin, vmax) with vmin < vmax, got {self.vrange!r}."
            )

    @ktyping.typechecked
    def get_state(self, images1: Float["..."], images2: Float["..."]) -> DifferenceImagesState:
        images1 = _layout.maybe_rearrange(images1, self.rearrange, self.rearrange_kwargs)
        images2 = _layout.maybe_rearrange(images2, self.rearrange, self.rearrange_kwargs)
        if images1.ndim != 4 or images1.shape != images2.shape:
            raise ValueError(
                "ShowDifferenceImages: images1 and images2 must have the same shape (n, h, w, c) after "
                f"rearranging, got {tuple(images1.shape)} and {tuple(images2.shape)}."
            )
        images1 = images1[: self.num_images].astype(jnp.float32)
        images2 = images2[: self.num_images].astype(jnp.float32)
        if self.vrange is not None:
            vmin, vmax = self.vrange
            images1 = (jnp.clip(images1, vmin, vmax) - vmin) / (vmax - vmin)
            images2 = (jnp.clip(images2, vmin, vmax) - vmin) / (vmax - vmin)
        diff = jnp.abs(images1 - images2).mean(axis=-1, keepdims=True)
        vrange = None if self.vrange is None else (float(self.vrange[0]), float(self.vrange[1]))
        return DifferenceImagesState(
            diff_images=diff, keep_first=self.num_images, cmap=self.cmap, vrange=vrange
        )
