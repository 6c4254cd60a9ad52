"""Image quality metrics: `Psnr` and `Ssim`, one value per image, averaged over the batch.

kd.metrics.Psnr(pred="preds.image", target="batch.image", in_vrange=(-1.0, 1.0))
"""

# ruff: noqa: UP037
from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Bool, Float

from . import _base
from ._state import AverageState


def _check_same_shape(metric: str, pred: Any, target: Any) -> None:
    if pred.shape != target.shape:
        raise ValueError(
            f"{metric}: pred and target must have the same shape (*b, h, w, c), "
            f"got pred {tuple(pred.shape)} and target {tuple(target.shape)}."
        )


def _check_vrange(metric: str, in_vrange: tuple[float, float]) -> None:
    low, high = in_vrange
    if not high > low:
        raise ValueError(f"{metric}: in_vrange must be (min, max) with max > min, got {tuple(in_vrange)!r}.")


def _per_image_state(values: Any, mask: Any) -> AverageState:
    """The average of per-image values `(*b, 1)`; masked-out images count as nothing, even if inf."""
    if mask is not None:
        keep = jnp.reshape(mask, mask.shape + (1,) * (values.ndim - mask.ndim)) != 0
        values = jnp.where(keep, values, 0.0)  # 0 * inf would be nan
    return AverageState.from_values(values, mask=mask)


def psnr(
    pred: Any,
    target: Any,
    *,
    dynamic_range: float = 1.0,
) -> Any:
    """The peak signal-to-noise ratio (dB) of each image pair `(*b, h, w, c)`, shape `(*b, 1)`.

    Usage: `psnr(pred, target, dynamic_range=255.0)`; identical images give `inf`.
    """
    mse = jnp.mean(jnp.square(pred - target), axis=(-3, -2, -1))
    return (20.0 * jnp.log10(dynamic_range) - 10.0 * jnp.log10(mse))[..., None]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Psnr(_base.Metric):
    """Peak signal-to-noise ratio in dB, per image, averaged over the (masked) images.

    Usage: `kd.metrics.Psnr(pred="preds.image", target="batch.image")`.

    Identical images have an infinite PSNR, so the average is `inf` too; set `clip` (e.g. 100.0)
    to cap each image's value.

    Attributes:
      pred: key of the predicted images `(*b, h, w, c)`.
      target: key of the target images, of the same shape.
      mask: optional key of per-image weights, `(*b,)` or `(*b, 1)`.
      in_vrange: the range `(min, max)` of pixel values; its width is the peak signal.
      clip: if set, each image's PSNR is capped at this value.
    """

    pred: kontext.Key = kontext.REQUIRED
    target: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    in_vrange: tuple[float, float] = (0.0, 1.0)
    clip: float | None = None

    State = AverageState

    def __post_init__(self) -> None:
        _check_vrange("Psnr", self.in_vrange)

    @ktyping.typechecked
    def get_state(
        self,
        pred: Float["*b h w c"],
        target: Float["..."],
        mask: Bool["*b"] | Float["*b"] | Bool["*b 1"] | Float["*b 1"] | None = None,
    ) -> AverageState:
        _check_same_shape("Psnr", pred, target)
        low, high = self.in_vrange
        values = psnr(pred, target, dynamic_range=high - low)
        if self.clip is not None:
            values = jnp.minimum(values, self.clip)
        return _per_image_state(values, mask)


def _gaussian_window(size: int, sigma: float) -> Any:
    """A normalised 1-D Gaussian of `size` taps, centred between taps when `size` is even."""
    offsets = jnp.arange(size, dtype=jnp.float32) - (size - 1) / 2
    weights = jnp.exp(-0.5 * (offsets / sigma) ** 2)
    return weights / weights.sum()


def _blur_valid(x: Any, window: Any) -> Any:
    """`x (*b, h, w, c)` filtered by `window` along h then w, keeping only the full-overlap positions."""
    size = window.shape[0]
    for axis in (x.ndim - 3, x.ndim - 2):
        length = x.shape[axis] - size + 1
        x = sum(window[k] * jax.lax.slice_in_dim(x, k, k + length, axis=axis) for k in range(size))
    return x


def ssim(
    pred: Any,
    target: Any,
    *,
    max_val: float = 1.0,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> Any:
    """The mean structural similarity of each image pair `(*b, h, w, c)`, shape `(*b, 1)`.

    Usage: `ssim(pred, target, max_val=1.0)`. Local statistics are Gaussian-weighted over
    `filter_size` x `filter_size` windows (only windows inside the image), per channel, as in
    `tf.image.ssim`; identical images give 1.
    """
    window = _gaussian_window(filter_size, filter_sigma)

    def blur(x: Any) -> Any:
        return _blur_valid(x, window)

    mu_p, mu_t = blur(pred), blur(target)
    var_p = jnp.maximum(blur(pred * pred) - mu_p**2, 0.0)
    var_t = jnp.maximum(blur(target * target) - mu_t**2, 0.0)
    cov = blur(pred * target) - mu_p * mu_t
    # Rounding can push |cov| above sqrt(var_p * var_t) (Cauchy-Schwarz): cap it there.
    cov = jnp.sign(cov) * jnp.minimum(jnp.abs(cov), jnp.sqrt(var_p * var_t))
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    similarity = ((2 * mu_p * mu_t + c1) * (2 * cov + c2)) / ((mu_p**2 + mu_t**2 + c1) * (var_p + var_t + c2))
    return jnp.mean(similarity, axis=(-3, -2, -1))[..., None]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Ssim(_base.Metric):
    """Structural similarity (SSIM), per image, averaged over the (masked) images.

    Usage: `kd.metrics.Ssim(pred="preds.image", target="batch.image", in_vrange=(-1.0, 1.0))`.

    Images are rescaled from `in_vrange` to (0, 1) first. Each image's value is the mean SSIM over
    its Gaussian windows and channels (1 for identical images).

    Attributes:
      pred: key of the predicted images `(*b, h, w, c)`, with h and w at least `filter_size`.
      target: key of the target images, of the same shape.
      mask: optional key of per-image weights, `(*b,)` or `(*b, 1)`.
      in_vrange: the range `(min, max)` of pixel values.
      filter_size: the width of the Gaussian window.
      filter_sigma: the standard deviation of the Gaussian window, in pixels.
      k1, k2: the constants stabilising the luminance and contrast terms.
    """

    pred: kontext.Key = kontext.REQUIRED
    target: kontext.Key = kontext.REQUIRED
    mask: kontext.Key | None = None

    in_vrange: tuple[float, float] = (0.0, 1.0)
    filter_size: int = 11
    filter_sigma: float = 1.5
    k1: float = 0.01
    k2: float = 0.03

    State = AverageState

    def __post_init__(self) -> None:
        _check_vrange("Ssim", self.in_vrange)
        if not (isinstance(self.filter_size, int) and self.filter_size >= 1) or not self.filter_sigma > 0:
            raise ValueError(
                "Ssim: filter_size must be an int >= 1 and filter_sigma > 0, "
                f"got filter_size={self.filter_size!r}, filter_sigma={self.filter_sigma!r}."
            )

    @ktyping.typechecked
    def get_state(
        self,
        pred: Float["*b h w c"],
        target: Float["..."],
        mask: Bool["*b"] | Float["*b"] | Bool["*b 1"] | Float["*b 1"] | None = None,
    ) -> AverageState:
        _check_same_shape("Ssim", pred, target)
        height, width = pred.shape[-3], pred.shape[-2]
        if min(height, width) < self.filter_size:
            raise ValueError(
                f"Ssim: images of {height}x{width} pixels (pred {tuple(pred.shape)}) are smaller than "
                f"the {self.filter_size}x{self.filter_size} window; lower filter_size to at most "
                f"{min(height, width)}."
            )
        low, high = self.in_vrange
        values = ssim(
            (pred - low) / (high - low),
            (target - low) / (high - low),
            max_val=1.0,
            filter_size=self.filter_size,
            filter_sigma=self.filter_sigma,
            k1=self.k1,
            k2=self.k2,
        )
        return _per_image_state(values, mask)
