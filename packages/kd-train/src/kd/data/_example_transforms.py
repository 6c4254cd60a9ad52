"""Transforms of single examples for pipelines that hold arrays (`InMemoryPipeline(transforms=...)`).

Usage:

    fixed, per_batch = split_transforms([kd.data.ValueRange(...), kd.data.RandomCrop(...)], owner="InMemoryPipeline")
    examples = apply_once(examples, fixed, owner="InMemoryPipeline")       # at load: deterministic, once
    batch = transform_rows(examples, rows, per_batch, seed=0, epoch=1, owner="InMemoryPipeline")

Transforms up to the first random one are deterministic: they run once over every example when the data
is loaded (filters drop examples there). From the first random transform on, they run on each batch's
examples as it is made, the random ones with a generator seeded by `(seed, transform position, epoch,
example index)`: an example gets the same augmentation in a resumed run, another one in the next epoch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import numpy as np


def transform_list(transforms: Any, *, owner: str) -> list[tuple[str, Any]]:
    """`[(label, transform), ...]` of a list or a dict of transforms (a dict in its order)."""
    if isinstance(transforms, Mapping):
        return [(repr(k), t) for k, t in transforms.items()]
    if isinstance(transforms, Sequence) and not isinstance(transforms, str):
        return [(str(i), t) for i, t in enumerate(transforms)]
    raise TypeError(
        f"{owner}.transforms must be a list or a dict of transforms; got {type(transforms).__name__}: "
        f"{transforms!r} (write transforms=[...] for one)"
    )


def is_random(transform: Any) -> bool:
    return callable(getattr(transform, "random_map", None))


def is_filter(transform: Any) -> bool:
    return callable(getattr(transform, "filter", None)) and not callable(getattr(transform, "map", None))


def split_transforms(transforms: Any, *, owner: str) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """`(fixed, per_batch)`: the transforms before the first random one, and the rest."""
    items = transform_list(transforms, owner=owner)
    for label, t in items:
        if not (is_random(t) or is_filter(t) or callable(getattr(t, "map", None)) or callable(t)):
            raise TypeError(
                f"{owner}.transforms[{label}] must be a kd.data transform (MapTransform, FilterTransform, a "
                f"random transform) or a function of an example; got {type(t).__name__}: {t!r}"
            )
    first_random = next((i for i, (_, t) in enumerate(items) if is_random(t)), len(items))
    fixed, per_batch = items[:first_random], items[first_random:]
    filters = [label for label, t in per_batch if is_filter(t)]
    if filters:
        raise ValueError(
            f"{owner}.transforms[{filters[0]}] is a filter after a random transform: it would change the "
            "rows of each batch; put filters before the first random transform (they then run once, at load)"
        )
    return fixed, per_batch


def apply_once(examples: Any, fixed: list[tuple[str, Any]], *, owner: str) -> Any:
    """Every example through the deterministic transforms, stacked again (filtered ones left out)."""
    if not fixed:
        return examples
    num_examples = jax.tree.leaves(examples)[0].shape[0]
    kept = []
    for i in range(num_examples):
        example = jax.tree.map(lambda a: np.array(a[i]), examples)  # noqa: B023 (a copy: transforms may write)
        for label, t in fixed:
            if is_filter(t):
                if not _call(t.filter, (example,), owner, label, t):
                    example = None
                    break
            else:
                example = _call(_map_fn(t), (example,), owner, label, t)
        if example is not None:
            kept.append(example)
    if not kept:
        raise ValueError(f"{owner}: the transforms' filters left no example of the {num_examples} loaded")
    return _stack(kept, owner=owner)


def transform_rows(
    examples: Any, rows: np.ndarray, per_batch: list[tuple[str, Any]], *, seed: int, epoch: int, owner: str
) -> Any:
    """The batch of `rows` (example indices), each example through `per_batch`, stacked."""
    out = []
    for row in rows:
        example = jax.tree.map(lambda a: np.array(a[row]), examples)  # noqa: B023 (a copy: transforms may write)
        for position, (label, t) in enumerate(per_batch):
            if is_random(t):
                rng = np.random.default_rng([seed, position, epoch, int(row)])
                example = _call(t.random_map, (example, rng), owner, label, t)
            else:
                example = _call(_map_fn(t), (example,), owner, label, t)
        out.append(example)
    return _stack(out, owner=owner)


def _map_fn(t: Any) -> Callable[[Any], Any]:
    fn = getattr(t, "map", None)
    return fn if callable(fn) else t


def _call(fn: Callable[..., Any], args: tuple[Any, ...], owner: str, label: str, t: Any) -> Any:
    return Noted(fn, t, f"{owner}.transforms[{label}]")(*args)


class Noted:
    """Calls `fn`; an exception leaving it gets a note saying which transform of which pipeline raised."""

    def __init__(self, fn: Callable[..., Any], transform: Any, where: str) -> None:
        self._fn = fn
        self._note = f"raised by {where}: {transform!r}"

    def __call__(self, *args: Any) -> Any:
        try:
            return self._fn(*args)
        except Exception as e:
            if self._note not in getattr(e, "__notes__", ()):
                e.add_note(self._note)
            raise

    def __repr__(self) -> str:
        return self._note.removeprefix("raised by ")


def _stack(examples: list[Any], *, owner: str) -> Any:
    try:
        return jax.tree.map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *examples)
    except ValueError as e:
        raise ValueError(
            f"{owner}: the transformed examples do not stack into a batch (their keys or shapes differ): {e}"
        ) from e
