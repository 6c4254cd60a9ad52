"""Shared helpers of the image summaries: reshaping with einops and mapping grey values to colours.

images = maybe_rearrange(images, "b t h w c -> (b t) h w c", None)  # (n, h, w, c)
rgb = colormap(values, "gray", vmin=None, vmax=None)  # (..., 3) float in [0, 1]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

_EPS = float(np.finfo(np.float64).eps)


def maybe_rearrange(array: Any, rearrange: str | None, rearrange_kwargs: Mapping[str, Any] | None) -> Any:
    """`einops.rearrange(array, rearrange, **rearrange_kwargs)`; without a pattern, leading axes are merged
    into one (`(..., h, w, c) -> (n, h, w, c)`; a 3-d array gets a leading axis of 1)."""
    if array is None:
        return None
    if rearrange is None:
        if array.ndim < 3:
            raise ValueError(
                f"expected images (..., h, w, c) with at least 3 axes, got shape {tuple(array.shape)}."
            )
        return array.reshape((-1, *array.shape[-3:]))
    try:
        import einops
    except ImportError as e:
        raise ImportError(
            f"rearrange={rearrange!r} needs einops, which is not installed: pip install einops"
        ) from e
    return einops.rearrange(array, rearrange, **dict(rearrange_kwargs or {}))


def colormap(values: Any, cmap: str, *, vmin: float | None, vmax: float | None) -> np.ndarray:
    """Grey values `(...)` -> RGB `(..., 3)` float32 in [0, 1], as mediapy's `to_rgb`: values are scaled from
    `[vmin, vmax]` (default: their min and max) to [0, 1], clipped, then coloured by the matplotlib colormap
    `cmap` ("gray" needs no matplotlib)."""
    values = np.asarray(values, np.float64)
    if values.size == 0:
        return np.zeros((*values.shape, 3), np.float32)
    lo = float(np.nanmin(values)) if vmin is None else float(vmin)
    hi = float(np.nanmax(values)) if vmax is None else float(vmax)
    scaled = np.clip((values - lo) / (hi - lo + _EPS), 0.0, 1.0)
    scaled = np.nan_to_num(scaled)
    if cmap in ("gray", "grey"):
        return np.repeat(scaled[..., None], 3, axis=-1).astype(np.float32)
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError(
            f"cmap={cmap!r} needs matplotlib (only 'gray' works without it): pip install matplotlib"
        ) from e
    try:
        colors = matplotlib.colormaps[cmap]
    except KeyError:
        raise ValueError(
            f"cmap={cmap!r} is not a matplotlib colormap name (e.g. 'gray', 'viridis', 'magma')."
        ) from None
    return np.asarray(colors(scaled), np.float32)[..., :3]


def hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    """`(..., 3)` HSV in [0, 1] -> RGB in [0, 1] (the standard six-sector formula)."""
    h, s, v = (hsv[..., i] for i in range(3))
    sector = np.floor(h * 6.0)
    f = h * 6.0 - sector
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    sector = sector.astype(int) % 6
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    rgb = np.zeros(hsv.shape, np.float64)
    for index, (r, g, b) in enumerate(choices):
        where = sector == index
        rgb[where] = np.stack([r, g, b], axis=-1)[where]
    return rgb
