"""`kd.data.IterableDataset`: Kauldron's dataset interface, and the chainable views every pipeline has.

Usage:

    (first,) = pipeline.take(1)                  # the first batch
    small = pipeline.map(lambda b: b["image"]).take(10).cache()
    for batch in pipeline.prefetch(2).device_put():  # batches on the devices, split on their first axis
        ...

The views (`map`, `take`, `cache`, `prefetch`, `device_put`) are for notebooks and evaluation scripts:
they iterate their parent and are not resumable (the Trainer iterates the pipeline itself).
"""

from __future__ import annotations

import abc
import collections
import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Any


class IterableDataset(abc.ABC):
    """Something to iterate batches from that knows their shapes (Kauldron's `kd.data.IterableDataset`).

    Subclasses define `element_spec` and `__iter__` (and `__len__` when they know it).
    """

    @property
    @abc.abstractmethod
    def element_spec(self) -> Any:
        """A tree of array specs (shape and dtype) of one batch."""

    @abc.abstractmethod
    def __iter__(self) -> Iterator[Any]:
        """The batches."""

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} does not know its length")

    def map(self, map_fn: Callable[[Any], Any]) -> IterableDataset:
        """A view yielding `map_fn(batch)` for every batch."""
        return _Mapped(parent=self, map_fn=map_fn)

    def take(self, num_examples: int) -> IterableDataset:
        """A view of the first `num_examples` batches."""
        if not isinstance(num_examples, int) or isinstance(num_examples, bool) or num_examples < 0:
            raise ValueError(
                f"{type(self).__name__}.take: num_examples must be an int >= 0; got {num_examples!r}"
            )
        return _Taken(parent=self, num_examples=num_examples)

    def cache(self) -> IterableDataset:
        """A view that iterates its parent once and keeps every batch in memory (a finite parent only)."""
        return _Cached(parent=self)

    def prefetch(self, buffer_size: int = 1) -> IterableDataset:
        """A view that keeps `buffer_size` batches made ahead (in the same thread)."""
        if not isinstance(buffer_size, int) or isinstance(buffer_size, bool) or buffer_size < 1:
            raise ValueError(
                f"{type(self).__name__}.prefetch: buffer_size must be an int >= 1; got {buffer_size!r}"
            )
        return _Prefetched(parent=self, buffer_size=buffer_size)

    def device_put(self, sharding: Any = None) -> IterableDataset:
        """A view whose batches are on the devices: split on their first axis across all of them by default,
        or placed with `sharding` (a `jax.sharding.Sharding`, or a tree of them)."""
        return _OnDevice(parent=self, sharding=sharding)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _View(IterableDataset):
    parent: IterableDataset

    @property
    def element_spec(self) -> Any:
        return self.parent.element_spec

    def __iter__(self) -> Iterator[Any]:
        yield from self.parent

    def __len__(self) -> int:
        return len(self.parent)

    def __repr__(self) -> str:
        return f"{type(self).__name__.lstrip('_')}({self.parent!r})"


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Mapped(_View):
    map_fn: Callable[[Any], Any]

    @functools.cached_property
    def element_spec(self) -> Any:  # type: ignore[override]
        from kd.data._spec import spec_of

        return spec_of(next(iter(self)))

    def __iter__(self) -> Iterator[Any]:
        for batch in self.parent:
            yield self.map_fn(batch)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Taken(_View):
    num_examples: int

    def __iter__(self) -> Iterator[Any]:
        yield from itertools.islice(self.parent, self.num_examples)

    def __len__(self) -> int:
        try:
            return min(self.num_examples, len(self.parent))
        except TypeError:  # An endless parent: take gives exactly num_examples.
            return self.num_examples


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Cached(_View):
    @functools.cached_property
    def batches(self) -> list[Any]:
        try:
            len(self.parent)
        except TypeError as e:
            raise TypeError(
                f"cache() needs a finite dataset; {self.parent!r} has no length (endless?): "
                "call .take(n) before .cache()"
            ) from e
        return list(self.parent)

    def __iter__(self) -> Iterator[Any]:
        yield from self.batches


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Prefetched(_View):
    buffer_size: int

    def __iter__(self) -> Iterator[Any]:
        iterator = iter(self.parent)
        queue = collections.deque(itertools.islice(iterator, self.buffer_size))
        while queue:
            yield queue.popleft()
            queue.extend(itertools.islice(iterator, 1))


@dataclasses.dataclass(frozen=True, kw_only=True)
class _OnDevice(_View):
    sharding: Any = None

    def __iter__(self) -> Iterator[Any]:
        import jax

        sharding = self.sharding
        if sharding is None:
            mesh = jax.sharding.Mesh(jax.devices(), ("devices",))
            sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("devices"))
        for batch in self.parent:
            yield jax.device_put(batch, sharding)
