"""`ShowImages`: the first few images of the batches (masked), as float32 `(n, h, w, c)` in [0, 1].

kd.summaries.ShowImages(images="batch.image", num_images=4, in_vrange=(-1.0, 1.0))
"""

# ruff: noqa: F821, UP037
from __future__ import annotations

import dataclasses
from typing import Any

import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
from ktyping import Bool, Float, UInt8

from kd import metrics

from . import _base


@metrics.state_dataclass
class ImagesState(metrics.CollectFirstState):
    """The first `keep_first` valid images seen: float32 `(n, h, w, c)` and a validity flag per image.

    Usage: `ShowImages(images="batch.image").get_state(images=x).merge(other).compute()`.

    `merge` keeps valid images first (a masked-out image never displaces a valid one), so the
    shapes stay static under `jit`; `compute()` (on the host) drops the invalid ones and clips
    to [0, 1].
    """

    images: Any = None
    valid: Any = None

    def merge(self, other: ImagesState) -> ImagesState:
        if self.keep_first != other.keep_first:
            raise metrics.StateMergeError(
                f"Cannot merge ImagesStates keeping a different number of images: "
                f"{self.keep_first} and {other.keep_first}."
            )
        if self.images is None:
            return other
        if other.images is None:
            return self
        xp = np if isinstance(self.images, np.ndarray) and isinstance(other.images, np.ndarray) else jnp
        images = xp.concatenate([self.images, other.images], axis=0)
        valid = xp.concatenate([self.valid, other.valid], axis=0)
        order = xp.argsort(~valid, stable=True)[: self.keep_first]  # Valid first, in arrival order.
        return dataclasses.replace(self, images=images[order], valid=valid[order])

    def compute(self) -> np.ndarray:
        """The valid images, float32 `(n, h, w, c)` clipped to [0, 1] (host only)."""
        if self.images is None:
            return np.zeros((0, 0, 0, 1), np.float32)
        images = np.asarray(self.images, np.float32)[np.asarray(self.valid, bool)]
        return np.clip(images, 0.0, 1.0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShowImages(_base.ImageSummary):
    """Shows the first `num_images` images (of the masked-in examples) of the batches it sees.

    Usage: `kd.summaries.ShowImages(images="batch.image", num_images=5)`.

    Attributes:
      images: key of the images: `(n, h, w, c)` with c in {1, 3}, or `(n, h, w)` (shown with
        c = 1). Floats are expected in [0, 1] unless `in_vrange` is given; uint8 in [0, 255].
      num_images: how many images to keep.
      in_vrange: optional `(vmin, vmax)` of the input values (after uint8 images are scaled
        to [0, 1]): they are clipped to it and rescaled to [0, 1].
      mask: optional key of a per-image mask `(n,)` or `(n, 1)`: masked-out images are skipped.
    """

    images: kontext.Key = kontext.REQUIRED
    num_images: int = 5
    in_vrange: tuple[float, float] | None = None
    mask: kontext.Key | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.num_images, int) and self.num_images >= 1):
            raise ValueError(f"ShowImages: num_images must be a positive int, got {self.num_images!r}.")
        if self.in_vrange is not None:
            vmin, vmax = self.in_vrange
            if not vmin < vmax:
                raise ValueError(
                    f"ShowImages: in_vrange must be (vmin, vmax) with vmin < vmax, got {self.in_vrange!r}."
                )

    @ktyping.typechecked
    def get_state(
        self,
        images: (Float | UInt8)["n h w"] | (Float | UInt8)["n h w 1|3"],
        mask: (Bool | Float)["n"] | (Bool | Float)["n 1"] | None = None,
    ) -> ImagesState:
        if images.ndim == 3:
            images = images[..., None]
        if images.dtype == jnp.uint8:
            images = images.astype(jnp.float32) / 255.0
        else:
            images = images.astype(jnp.float32)
        if self.in_vrange is not None:
            vmin, vmax = self.in_vrange
            images = (jnp.clip(images, vmin, vmax) - vmin) / (vmax - vmin)
        if mask is None:
            valid = jnp.ones(images.shape[:1], bool)
        else:
            valid = jnp.reshape(mask, images.shape[:1]) != 0
        order = jnp.argsort(~valid, stable=True)[: self.num_images]
        return ImagesState(images=images[order], valid=valid[order], keep_first=self.num_images)
