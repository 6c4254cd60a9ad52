"""Kauldron's random element-wise transforms, driven by a `np.random.Generator` (grain's `random_map`).

Usage:

    ds = grain.MapDataset.source(src).seed(42).random_map(kd.data.RandomCrop(key="image", shape=(24, 24, 3)))

Every transformed key draws from the same generator state, so an image and its mask get the same crop.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from kd.data import _transform_base


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class ElementWiseRandomTransform(_transform_base.ElementWise, abc.ABC):
    """A random transform of each of the `key` entries of an element: subclasses define `random_map_element`.

    Calling it as `transform(element, rng)` is `random_map`: grain's `MapDataset.random_map` calls it so.
    """

    def random_map(self, element: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        """The transformed element; every key draws from `rng` as it is now, and `rng` is left there."""
        start = rng.bit_generator.state  # Rewound before each key: cheaper than a deep copy per key.
        out = {}
        try:
            for k, v, change in self._per_element(element):
                if change:
                    rng.bit_generator.state = start
                    v = self.random_map_element(v, rng)
                out[k] = v
        finally:
            rng.bit_generator.state = start
        return out

    def __call__(self, element: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        return self.random_map(element, rng)

    @abc.abstractmethod
    def random_map_element(self, element: Any, rng: np.random.Generator) -> Any:
        """The transformed value of one key, drawing from `rng`."""


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class RandomCrop(ElementWiseRandomTransform):
    """Crops the values of `key` to `shape` at a random place, the same place for every key.

    Attributes:
      shape: the shape of the crop, one entry (>= 0) per dimension; None keeps that dimension whole.
    """

    shape: tuple[int | None, ...]

    def __post_init__(self) -> None:
        if not all(d is None or d >= 0 for d in self.shape):
            raise ValueError(
                f"RandomCrop: the crop shape holds ints >= 0 or None; got shape={tuple(self.shape)}"
            )
        object.__setattr__(self, "shape", tuple(self.shape))
        super().__post_init__()

    def random_map(self, element: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        shapes = {k: np.shape(v) for k, v in element.items() if k in self.key}
        for k, shape in shapes.items():
            if len(shape) != len(self.shape):
                raise ValueError(
                    f"{_transform_base.describe(self)}: key {k!r} has shape {shape}, not of the rank of the "
                    f"crop shape {self.shape}"
                )
        if shapes:
            first, first_shape = next(iter(shapes.items()))
            for k, shape in shapes.items():
                if any(a != b and c is not None for a, b, c in zip(first_shape, shape, self.shape)):
                    raise ValueError(
                        f"{_transform_base.describe(self)}: keys cropped together need the same sizes where "
                        f"the crop shape {self.shape} is set; {first!r} has {first_shape}, {k!r} has {shape}"
                    )
        return super().random_map(element, rng)

    def random_map_element(self, element: Any, rng: np.random.Generator) -> np.ndarray:
        array = np.asarray(element)
        target = tuple(d if c is None else c for d, c in zip(array.shape, self.shape))
        if any(c > d for d, c in zip(array.shape, target)):
            raise ValueError(
                f"{_transform_base.describe(self)}: the element's shape {array.shape} is smaller than the "
                f"crop shape {self.shape}"
            )
        slices = []
        for d, c in zip(array.shape, target):
            start = rng.integers(0, d - c + 1) if c < d else 0
            slices.append(slice(start, start + c))
        return array[tuple(slices)]


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class RandomFlipLeftRight(ElementWiseRandomTransform):
    """Flips images laid out `... H W C` left-right, each entry of the leading dimensions with probability 1/2."""

    def random_map_element(self, element: Any, rng: np.random.Generator) -> np.ndarray:
        image = np.asarray(element)
        if image.ndim < 3:
            raise ValueError(
                f"{_transform_base.describe(self)}: expects `... H W C`, got shape {image.shape}"
            )
        keep = rng.integers(2, size=(*image.shape[:-3], 1, 1, 1), dtype=bool)
        return np.where(keep, image, np.flip(image, axis=-2))
