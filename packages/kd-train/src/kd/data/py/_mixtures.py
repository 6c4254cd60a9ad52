"""Mixtures of grain pipelines (Kauldron's `kd.data.py.Mix` and `SelectFromDatasets`).

Usage:

    ds = kd.data.py.Mix([digits, noisy_digits], weights=[3, 1], batch_size=64, seed=0, num_workers=0)

Each mixed pipeline contributes its examples after its own transforms (seeded apart from the others);
only the mixture's own batch size, epochs and workers apply.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

import grain
import jax

from kd import random as kd_random
from kd.data.py import _pipeline


class _MixtureParts:
    """Shared by the mixtures: the mixed pipelines, told this host when the mixture was (simulated hosts)."""

    def _parts(self) -> list[_pipeline.PyGrainPipeline]:
        if self.process_index is None:  # type: ignore[attr-defined]
            return list(self.datasets)  # type: ignore[attr-defined]
        return [
            d
            if d.process_index is not None
            else dataclasses.replace(d, process_index=self.process_index, process_count=self.process_count)  # type: ignore[attr-defined]
            for d in self.datasets  # type: ignore[attr-defined]
        ]


@dataclasses.dataclass(frozen=True)
class Mix(_MixtureParts, _pipeline.PyGrainPipeline):
    """Examples of several pipelines interleaved in proportion to `weights` (equal without), reshuffled.

    Attributes:
      datasets: the pipelines mixed (`kd.data.py` pipelines).
      weights: one positive number per pipeline; None weighs them equally.
      shuffle: shuffle the mixture (seeded).
    """

    datasets: list[_pipeline.PyGrainPipeline]
    _: dataclasses.KW_ONLY
    weights: list[float] | None = None
    shuffle: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_datasets(self.datasets, owner="Mix")
        if self.weights is not None:
            weights = list(self.weights)
            if len(weights) != len(self.datasets):
                raise ValueError(
                    f"Mix: weights has {len(weights)} entries for {len(self.datasets)} datasets; give one per dataset"
                )
            bad = [w for w in weights if not isinstance(w, numbers.Real) or isinstance(w, bool) or not w > 0]
            if bad or not all(math.isfinite(w) for w in weights):
                raise ValueError(
                    "Mix: weights must be finite numbers > 0 (grain mixes no zero proportion: leave that dataset "
                    f"out instead); got {weights!r}"
                )

    def uses_randomness(self) -> bool:
        return (
            bool(self.shuffle) or super().uses_randomness() or any(d.uses_randomness() for d in self.datasets)
        )

    def ds_for_current_process(self, rng: jax.Array) -> grain.MapDataset:
        parts = [d.ds_with_transforms(jax.random.fold_in(rng, i)) for i, d in enumerate(self._parts())]
        weights = None if self.weights is None else [float(w) for w in self.weights]
        ds = grain.MapDataset.mix(parts, weights=weights)
        if self.shuffle:
            ds = ds.shuffle(seed=kd_random.random_seed(kd_random.fold_in_str(rng, "shuffle")))
        return ds


@dataclasses.dataclass(frozen=True)
class SelectFromDatasets(_MixtureParts, _pipeline.PyGrainPipeline):
    """Examples of several pipelines in the order a grain `DatasetSelectionMap` gives.

    Attributes:
      datasets: the pipelines.
      selection_map: which dataset, and which of its examples, each position takes.
      shuffle: shuffle the result (seeded).
    """

    datasets: list[_pipeline.PyGrainPipeline]
    _: dataclasses.KW_ONLY
    selection_map: Any
    shuffle: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_datasets(self.datasets, owner="SelectFromDatasets")

    def uses_randomness(self) -> bool:
        return (
            bool(self.shuffle) or super().uses_randomness() or any(d.uses_randomness() for d in self.datasets)
        )

    def ds_for_current_process(self, rng: jax.Array) -> grain.MapDataset:
        parts = [d.ds_with_transforms(jax.random.fold_in(rng, i)) for i, d in enumerate(self._parts())]
        ds = grain.MapDataset.select_from_datasets(parts, selection_map=self.selection_map)
        if self.shuffle:
            ds = ds.shuffle(seed=kd_random.random_seed(kd_random.fold_in_str(rng, "shuffle")))
        return ds


def _check_datasets(datasets: Any, *, owner: str) -> None:
    if not isinstance(datasets, list | tuple) or not datasets:
        raise ValueError(
            f"{owner}: datasets must be a non-empty list of kd.data.py pipelines; got {datasets!r}"
        )
    for i, d in enumerate(datasets):
        if not isinstance(d, _pipeline.PyGrainPipeline):
            raise TypeError(
                f"{owner}: datasets[{i}] must be a kd.data.py pipeline (DataSource, Tfds, Json, Mix, ...); "
                f"got {type(d).__name__}"
            )
