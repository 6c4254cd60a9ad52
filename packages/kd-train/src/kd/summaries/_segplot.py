"""Colouring segmentations: a palette of evenly spaced Oklab hues, soft masks mixed in Oklab, optional
entropy shading and edges (numpy and scipy on the host).

rgb = plot_segmentation(masks)  # masks: int (..., h, w, 1) ids or float (..., h, w, k) -> (..., h, w, 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Linear sRGB <-> CIE XYZ (D65), the sRGB standard's primaries.
_XYZ_FROM_RGB = np.array(
    [[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169], [0.019334, 0.119193, 0.950227]]
)
_RGB_FROM_XYZ = np.linalg.inv(_XYZ_FROM_RGB)
# Oklab (Björn Ottosson, 2020): XYZ -> LMS cone response, cube root, LMS' -> Lab.
_LMS_FROM_XYZ = np.array(
    [
        [0.8189330101, 0.3618667424, -0.1288597137],
        [0.0329845436, 0.9293118715, 0.0361456387],
        [0.0482003018, 0.2643662691, 0.6338517070],
    ]
)
_XYZ_FROM_LMS = np.linalg.inv(_LMS_FROM_XYZ)
_LAB_FROM_LMS = np.array(
    [
        [0.2104542553, 0.7936177850, -0.0040720468],
        [1.9779984951, -2.4285922050, 0.4505937099],
        [0.0259040371, 0.7827717662, -0.8086757660],
    ]
)
_LMS_FROM_LAB = np.linalg.inv(_LAB_FROM_LMS)


def _apply(matrix: np.ndarray, colors: np.ndarray) -> np.ndarray:
    return colors @ matrix.T


def srgb_to_oklab(rgb: np.ndarray) -> np.ndarray:
    """`(..., 3)` sRGB in [0, 1] -> Oklab."""
    rgb = np.asarray(rgb, np.float64)
    linear = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    lms = np.cbrt(_apply(_LMS_FROM_XYZ, _apply(_XYZ_FROM_RGB, linear)))
    return _apply(_LAB_FROM_LMS, lms)


def oklab_to_srgb(lab: np.ndarray) -> np.ndarray:
    """Oklab `(..., 3)` -> sRGB clipped to [0, 1]."""
    linear = _apply(_RGB_FROM_XYZ, _apply(_XYZ_FROM_LMS, _apply(_LMS_FROM_LAB, lab) ** 3))
    positive = np.maximum(linear, 0.0)
    rgb = np.where(linear > 0.0031308, 1.055 * positive ** (1 / 2.4) - 0.055, linear * 12.92)
    return np.clip(rgb, 0.0, 1.0)


def hue_palette(n: int, *, chroma: float = 0.3, lightness: float = 0.8) -> np.ndarray:
    """`n` sRGB colours `(n, 3)` of equal Oklab lightness and chroma, hues evenly spaced from blue."""
    hues = (1.5 * np.pi + 2 * np.pi * np.arange(n) / max(n, 1)) % (2 * np.pi)
    lab = np.stack([np.full(n, lightness), chroma * np.cos(hues), chroma * np.sin(hues)], axis=-1)
    return oklab_to_srgb(lab)


def _wide(segmentation: np.ndarray, num_segments: int | None) -> np.ndarray:
    """Int ids `(..., 1)` -> one-hot float `(..., k)`; float masks `(..., k)` unchanged."""
    if segmentation.shape[-1] != 1:
        return segmentation.astype(np.float64)
    if not np.issubdtype(segmentation.dtype, np.integer):
        raise ValueError(
            f"a segmentation of one channel must hold integer segment ids, got dtype {segmentation.dtype}."
        )
    ids = segmentation[..., 0]
    k = int(ids.max()) + 1 if num_segments is None else num_segments
    if ids.size and (ids.min() < 0 or ids.max() >= k):
        raise ValueError(
            f"segment ids must lie in [0, {k}) (the palette's size), got {ids.min()}..{ids.max()}."
        )
    return np.eye(k, dtype=np.float64)[ids]


def _normalized_entropy(probs: np.ndarray) -> np.ndarray:
    """Entropy over the last axis divided by log2(k), in [0, 1], keeping the axis (1 where k == 1)."""
    k = probs.shape[-1]
    if k == 1:
        return np.ones_like(probs)
    entropy = -np.sum(probs * np.log2(np.clip(probs, 1e-6, None)), axis=-1, keepdims=True)
    return np.clip(entropy / np.log2(k), 0.0, 1.0)


def _blur(image: np.ndarray, sigma: float) -> np.ndarray:
    """A Gaussian blur over the two axes before the last (h and w of `(..., h, w, c)`)."""
    import scipy.ndimage  # a dependency of jax

    return scipy.ndimage.gaussian_filter(image, sigma=(0,) * (image.ndim - 3) + (sigma, sigma, 0))


def plot_segmentation(
    segmentation: Any,
    *,
    palette: np.ndarray | None = None,
    hard: bool = False,
    entropy: bool = False,
    edges: bool = False,
    edge_lightness: float = 1.0,
) -> np.ndarray:
    """RGB `(..., h, w, 3)` of int ids `(..., h, w, 1)` or soft masks `(..., h, w, k)`.

    Each segment gets a palette colour (default `hue_palette(k)`); soft masks mix the colours in Oklab
    (`hard=True`: the argmax's colour). `entropy` darkens pixels by their normalized entropy; `edges`
    lights the borders between segments (and, blurred, their surroundings) to `edge_lightness`.
    """
    segmentation = np.asarray(segmentation)
    palette = None if palette is None else np.asarray(palette, np.float64)
    soft = _wide(segmentation, None if palette is None else palette.shape[0])
    k = soft.shape[-1]
    if palette is None:
        palette = hue_palette(k)
    if palette.ndim != 2 or palette.shape[1] != 3 or palette.shape[0] < k:
        raise ValueError(
            f"palette must be RGB colours (K, 3) with K >= {k} segments, got shape {palette.shape}."
        )
    labels = soft.argmax(axis=-1)
    if hard:
        rgb = palette[:k][labels]
    else:
        rgb = oklab_to_srgb(soft @ srgb_to_oklab(palette[:k]))
    light = np.ones((*rgb.shape[:-1], 1))
    if entropy:
        light = light * (1.0 - _normalized_entropy(soft))
    if edges:
        gy, gx = np.gradient(labels[..., None].astype(np.float64), axis=(-3, -2))
        edge = ((np.abs(gy) + np.abs(gx)) != 0).astype(np.float64)
        edge = np.maximum(edge, _blur(edge, 1.0))
        light = light * (1 - edge) + edge * edge_lightness
    return rgb * light
