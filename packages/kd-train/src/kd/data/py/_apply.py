"""Applying a pipeline's `transforms` to a grain `MapDataset`, one example at a time (Kauldron's rules).

Usage:

    ds = apply_transforms(ds, [kd.data.Elements(keep=["image"]), kd.data.py.RandomCrop(...)], owner="Tfds")

A transform is, in this order of checks: a grain transform or `SliceDataset` (used as it is), a
`kd.data.MapTransform` (`map`), a `kd.data.FilterTransform` (`filter`), a random transform (a
`random_map(element, rng)` method: grain gives it a generator seeded by the dataset's seed and the
element's index, so an example gets the same augmentation however it is reached), or a function of an
example. A mapping of transforms applies its values in order. An error raised inside a transform carries
a note naming the pipeline and the transform's position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grain

from kd.data import _example_transforms, _transform_base


class SliceDataset:
    """A transform that keeps a slice of the examples: `SliceDataset(10)` is `ds[:10]` (Kauldron's).

    `SliceDataset(start, stop, step)` is `ds[start:stop:step]`; useful to debug on a few examples.
    """

    def __init__(self, start: int | None = None, stop: int | None = None, step: int | None = None, /) -> None:
        if stop is None and step is None:  # `SliceDataset(stop)`, like `range(stop)`.
            start, stop = None, start
        self.slice = slice(start, stop, step)

    def __repr__(self) -> str:
        return f"SliceDataset({self.slice.start}, {self.slice.stop}, {self.slice.step})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SliceDataset) and other.slice == self.slice

    def __hash__(self) -> int:
        return hash((self.slice.start, self.slice.stop, self.slice.step))


def apply_transforms(ds: grain.MapDataset, transforms: Any, *, owner: str) -> grain.MapDataset:
    """`ds` with each of `transforms` applied in order."""
    for label, transform in _example_transforms.transform_list(transforms, owner=owner):
        ds = _apply(ds, transform, where=f"{owner}.transforms[{label}]")
    return ds


def _apply(ds: grain.MapDataset, transform: Any, *, where: str) -> grain.MapDataset:
    if isinstance(transform, SliceDataset):
        return ds.slice(transform.slice)
    if isinstance(transform, grain.transforms.Batch):
        return ds.batch(transform.batch_size, drop_remainder=transform.drop_remainder)
    if isinstance(transform, grain.transforms.Filter):
        return ds.filter(_Filter(transform.filter, transform, where, limit=len(ds)))
    if isinstance(transform, grain.transforms.RandomMap):
        return ds.random_map(_example_transforms.Noted(transform.random_map, transform, where))
    if isinstance(transform, grain.transforms.MapWithIndex):
        return ds.map_with_index(_example_transforms.Noted(transform.map_with_index, transform, where))
    if isinstance(transform, grain.transforms.Map):
        return ds.map(_example_transforms.Noted(transform.map, transform, where))
    if isinstance(transform, _transform_base.MapTransform):
        return ds.map(_example_transforms.Noted(transform.map, transform, where))
    if isinstance(transform, _transform_base.FilterTransform):
        return ds.filter(_Filter(transform.filter, transform, where, limit=len(ds)))
    if callable(getattr(transform, "random_map", None)):
        return ds.random_map(_example_transforms.Noted(transform.random_map, transform, where))
    if callable(transform):
        return ds.map(_example_transforms.Noted(transform, transform, where))
    raise TypeError(
        f"{where} must be a kd.data transform (MapTransform, FilterTransform, a random transform), a grain "
        f"transform or a function of an example; got {type(transform).__name__}: {transform!r}"
    )


class _Filter(_example_transforms.Noted):
    """A filter that raises once it has refused a whole epoch of examples in a row: nothing passes it, and an
    endless pipeline would otherwise look for a next example forever."""

    def __init__(self, fn: Callable[..., Any], transform: Any, where: str, *, limit: int) -> None:
        super().__init__(fn, transform, where)
        self._where = where
        self._limit = max(1, limit)
        self._refused = 0

    def __call__(self, *args: Any) -> Any:
        keep = super().__call__(*args)
        self._refused = 0 if keep else self._refused + 1
        if self._refused >= self._limit:
            raise ValueError(
                f"{self._where} refused {self._refused} examples in a row, as many as an epoch has: no example "
                f"passes it, and the pipeline would never yield a batch ({self._note.split(': ', 1)[1]})"
            )
        return keep
