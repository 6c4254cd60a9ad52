"""Kauldron's element-wise map transforms on NumPy arrays: casts, einops rearranges, value ranges, resizes, crops.

Usage:

    to_chw = kd.data.Rearrange(key="image", pattern="h w c -> c h w")
    element = to_chw.map({"image": np.zeros((32, 32, 3), np.uint8), "label": 3})

Everything runs on the host in NumPy; `Resize` runs `jax.image.resize` on the CPU device.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import einops
import jax
import numpy as np

from kd.data import _transform_base


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class Cast(_transform_base.ElementWiseTransform):
    """Casts the values of `key` to `dtype`.

    Attributes:
      dtype: the NumPy dtype (or anything `np.dtype` takes) to cast to.
    """

    dtype: Any

    def map_element(self, element: Any) -> np.ndarray:
        return np.asarray(element).astype(self.dtype)


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class Rearrange(_transform_base.ElementWiseTransform):
    """`einops.rearrange` of the values of `key`; python ints, floats and lists become arrays first.

    Attributes:
      pattern: the einops pattern, e.g. "b h w c -> b c (h w)".
      axes_lengths: sizes of axes that the pattern and the array do not fix, e.g. {"h": 4} for "(h w) -> h w".
    """

    pattern: str
    axes_lengths: Mapping[str, int] = _transform_base.FrozenMapping()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "axes_lengths", _transform_base.FrozenMapping(self.axes_lengths))

    def map(self, element: Mapping[str, Any]) -> dict[str, Any]:
        # Like ElementWiseTransform.map, with the key at hand for the error message.
        sources = {out: src for src, out in self.key.items()}
        return {
            k: self._rearrange(v, sources[k]) if change else v for k, v, change in self._per_element(element)
        }

    def map_element(self, element: Any) -> np.ndarray:
        return self._rearrange(element, None)

    def _rearrange(self, value: Any, key: str | None) -> np.ndarray:
        value = np.asarray(value)
        try:
            return einops.rearrange(value, self.pattern, **self.axes_lengths)
        except einops.EinopsError as err:
            where = f"key {key!r}" if key is not None else "the value"
            expected = _expected_axes(self.pattern)
            if _rank_fits(value.ndim, self.pattern):
                problem = f"does not fit the pattern {self.pattern!r} (its {expected}, axes_lengths={dict(self.axes_lengths)})"
            else:
                problem = f"but the pattern {self.pattern!r} expects {expected}"
            raise ValueError(
                f"{_transform_base.describe(self)}: {where} has shape {value.shape} {problem}: "
                f"{' '.join(str(err).split())}"
            ) from err


def _rank_fits(ndim: int, pattern: str) -> bool:
    """Whether an array of `ndim` axes has as many axes as the pattern's left side names."""
    left = pattern.split("->")[0].strip()
    axes = re.findall(r"\([^)]*\)|\S+", left)
    if "..." in axes:
        return ndim >= len(axes) - 1
    return ndim == len(axes)


def _expected_axes(pattern: str) -> str:
    """'h w c -> c h w' -> '3 axes (h w c)'; an ellipsis gives 'at least ...'."""
    left = pattern.split("->")[0].strip()
    axes = re.findall(r"\([^)]*\)|\S+", left)
    fixed = [a for a in axes if a != "..."]
    at_least = "at least " if len(fixed) < len(axes) else ""
    return f"{at_least}{len(fixed)} axes ({left})"


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class ValueRange(_transform_base.ElementWiseTransform):
    """Maps the values of `key` linearly from `in_vrange` to `vrange`, in `dtype`.

    Attributes:
      vrange: (low, high) of the output.
      in_vrange: (low, high) of the input; (0, 255) for 8-bit images.
      dtype: the dtype of the output (and of the arithmetic).
      clip_values: clip the output to `vrange`.
    """

    vrange: tuple[float, float]
    in_vrange: tuple[float, float] = (0.0, 255.0)
    dtype: Any = np.float32
    clip_values: bool = True

    def map_element(self, element: Any) -> np.ndarray:
        values = np.asarray(element, dtype=self.dtype)
        (in_low, in_high), (low, high) = self.in_vrange, self.vrange
        values = (values - in_low) / (in_high - in_low) * (high - low) + low
        if self.clip_values:
            values = np.clip(values, low, high)
        return np.asarray(values, dtype=self.dtype)


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class Gather(_transform_base.ElementWiseTransform):
    """Takes the entries `indices` of the values of `key` along `axis`.

    Attributes:
      axis: the axis to take from.
      indices: the entries to take, in order (repeats allowed).
    """

    axis: int
    indices: tuple[int, ...]

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "indices", tuple(self.indices))

    def map_element(self, element: Any) -> np.ndarray:
        return np.take(np.asarray(element), self.indices, axis=self.axis)


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class Resize(_transform_base.ElementWiseTransform):
    """Resizes images laid out `*b h w c`; exactly one of `size`, `min_size`, `max_size` is set.

    Attributes:
      size: the new (h, w).
      min_size: the new length of the shorter side; the aspect ratio stays.
      max_size: the new length of the longer side; the aspect ratio stays.
      method: a `jax.image.resize` method; None picks "nearest" for integer inputs, else "bilinear".
        Integer inputs keep their dtype (rounded and clipped to it).
      antialias: low-pass filter when downsampling.
    """

    size: tuple[int, int] | None = None
    min_size: int | None = None
    max_size: int | None = None
    method: str | jax.image.ResizeMethod | None = None
    antialias: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        given = [name for name in ("size", "min_size", "max_size") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"Resize: set exactly one of `size`, `min_size`, `max_size`; got {given or 'none'}"
            )
        if self.size is not None:
            object.__setattr__(self, "size", tuple(self.size))
        if str(getattr(self.method, "name", self.method)).lower() == "area":
            raise ValueError(
                "Resize: method 'area' is not supported (jax.image.resize has no area method); "
                "pick e.g. 'bilinear' or 'linear' with antialias=True"
            )

    def new_size(self, h: int, w: int) -> tuple[int, int]:
        """The (h, w) that an `h` x `w` image is resized to."""
        if self.size is not None:
            return self.size
        side = min(h, w) if self.min_size is not None else max(h, w)
        ratio = (self.min_size if self.min_size is not None else self.max_size) / side
        return max(1, round(h * ratio)), max(1, round(w * ratio))

    def map_element(self, element: Any) -> np.ndarray:
        image = np.asarray(element)
        if image.ndim < 3:
            raise ValueError(f"{_transform_base.describe(self)}: expects `*b h w c`, got shape {image.shape}")
        integer = np.issubdtype(image.dtype, np.integer)
        method = self.method if self.method is not None else ("nearest" if integer else "bilinear")
        *batch, h, w, c = image.shape
        cpu = jax.local_devices(backend="cpu")[0]
        nearest = str(getattr(method, "name", method)).lower() == "nearest"
        values = image if (nearest or not integer) else image.astype(np.float32)
        resized = jax.image.resize(
            jax.device_put(values, cpu),
            (*batch, *self.new_size(h, w), c),
            method=method,
            antialias=self.antialias,
        )
        resized = np.asarray(resized)
        if integer and not nearest:
            info = np.iinfo(image.dtype)
            resized = np.clip(np.round(resized), info.min, info.max)
        return resized.astype(image.dtype, copy=False)


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class CenterCrop(_transform_base.ElementWiseTransform):
    """Crops the values of `key` to `shape` around their center (any rank: images, videos, ...).

    Attributes:
      shape: the shape of the crop, one entry per dimension; None (or 0, as in Kauldron) keeps that
        dimension whole.
    """

    shape: tuple[int | None, ...]

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "shape", tuple(self.shape))

    def map_element(self, element: Any) -> np.ndarray:
        array = np.asarray(element)
        if array.ndim != len(self.shape):
            raise ValueError(
                f"{_transform_base.describe(self)}: the crop shape {self.shape} and the element's shape "
                f"{array.shape} differ in rank"
            )
        target = tuple(
            d if not c else c for d, c in zip(array.shape, self.shape)
        )  # 0 or None: whole (Kauldron)
        if any(c > d for d, c in zip(array.shape, target)):
            raise ValueError(
                f"{_transform_base.describe(self)}: the crop shape {self.shape} is larger than the element's "
                f"shape {array.shape}"
            )
        starts = [(d - c) // 2 for d, c in zip(array.shape, target)]
        return array[tuple(slice(s, s + c) for s, c in zip(starts, target))]
