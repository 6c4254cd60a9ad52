"""`Histogram` / `HistogramSummary`: a tensor's values, for a writer to show as a histogram.

kd.summaries.Histogram(tensor="preds.logits", num_buckets=30)         # a bounded, evenly spaced sample
kd.summaries.HistogramSummary(tensor="preds.logits", num_buckets=30)  # Kauldron's: every value seen
"""

# ruff: noqa: UP037
from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
from ktyping import Bool, Num

from kd import metrics

from . import _base


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class HistogramValue:
    """What a `Histogram` computes: flat values and the number of buckets to show them in.

    Usage: `counts, edges = value.counts()` (or hand `value.values` to a writer's histogram).
    """

    values: np.ndarray
    num_buckets: int

    @property
    def tensor(self) -> np.ndarray:
        """The values under the name of Kauldron's `Histogram` output (`Histogram.tensor`)."""
        return self.values

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """`np.histogram(values, bins=num_buckets)`: the counts and the `num_buckets + 1` bucket edges."""
        return np.histogram(self.values, bins=self.num_buckets)


@metrics.state_dataclass
class HistogramState(metrics.CollectFirstState):
    """The first `keep_first` values collected (flat float32); `compute()` gives a `HistogramValue`.

    Usage: `Histogram(tensor="x").get_state(tensor=x).merge(other).compute()`.
    """

    values: Any = None
    num_buckets: int = metrics.static_field(default=30)

    def merge(self, other: HistogramState) -> HistogramState:
        if self.num_buckets != other.num_buckets:
            raise metrics.StateMergeError(
                f"Cannot merge HistogramStates of {self.num_buckets} and {other.num_buckets} buckets."
            )
        return super().merge(other)

    def compute(self) -> HistogramValue:
        """The collected values as a `HistogramValue` (host only)."""
        values = np.zeros((0,), np.float32) if self.values is None else np.asarray(self.values)
        return HistogramValue(values=values.reshape(-1).astype(np.float32), num_buckets=self.num_buckets)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Histogram(_base.Summary):
    """A histogram of the values of a tensor (all its elements, over the batches seen).

    Usage: `kd.summaries.Histogram(tensor="interms.encoder.__call__[0]", num_buckets=50)`.

    The state is bounded: at most `max_values` values are kept. A larger tensor is sampled
    evenly (every k-th value of the flattened tensor), and across merges the first
    `max_values` values are kept, so later batches add nothing once the sample is full.

    Attributes:
      tensor: key of the tensor (any shape, any numeric dtype).
      num_buckets: number of buckets the writer shows.
      max_values: the most values kept (default 10,000).
    """

    tensor: kontext.Key = kontext.REQUIRED
    num_buckets: int = 30
    max_values: int = 10_000

    def __post_init__(self) -> None:
        for name in ("num_buckets", "max_values"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"Histogram: {name} must be a positive int, got {value!r}.")

    @ktyping.typechecked
    def get_state(self, tensor: Num["..."] | Bool["..."]) -> HistogramState:
        flat = jnp.ravel(tensor).astype(jnp.float32)
        stride = max(1, math.ceil(flat.size / self.max_values))
        values = flat[::stride][: self.max_values]
        return HistogramState(values=values, num_buckets=self.num_buckets, keep_first=self.max_values)


@metrics.state_dataclass
class HistogramSummaryState(metrics.CollectingState):
    """Every value seen (flat), concatenated across merges; `compute()` gives a `HistogramValue`.

    Usage: `HistogramSummary(tensor="x").get_state(tensor=x).merge(other).compute()`.
    """

    tensor: Any = None
    num_buckets: int = metrics.static_field(default=30)

    def merge(self, other: HistogramSummaryState) -> HistogramSummaryState:
        if self.num_buckets != other.num_buckets:
            raise metrics.StateMergeError(
                f"Cannot merge HistogramSummaryStates of {self.num_buckets} and {other.num_buckets} buckets."
            )
        return super().merge(other)

    def compute(self) -> HistogramValue:
        """Every collected value as a `HistogramValue` (host only); raises ValueError when there is none."""
        values = np.zeros((0,), np.float32) if self.tensor is None else np.asarray(self.tensor).reshape(-1)
        if values.size == 0:
            raise ValueError(
                "HistogramSummary: no values to show, the collected tensor is empty "
                f"(shape {values.shape}, dtype {values.dtype})."
            )
        return HistogramValue(values=values, num_buckets=self.num_buckets)


@dataclasses.dataclass(frozen=True, kw_only=True)
class HistogramSummary(_base.Summary):
    """Kauldron's histogram summary: every element of a tensor, over all the batches seen.

    Usage: `kd.summaries.HistogramSummary(tensor="preds.logits", num_buckets=50)`.

    Unlike `Histogram`, nothing is sampled: the state grows with each merge (its shape changes, so
    merges of states of different sizes compile again under `jit`), and `compute()` raises ValueError
    when the values are empty. Its value is a `HistogramValue` (`.tensor` and `.num_buckets`, the fields
    of Kauldron's `Histogram` output).

    Attributes:
      tensor: key of the tensor (any shape, any numeric dtype; flattened).
      num_buckets: number of buckets the writer shows.
    """

    tensor: kontext.Key = kontext.REQUIRED
    num_buckets: int = 30

    def __post_init__(self) -> None:
        if not (isinstance(self.num_buckets, int) and self.num_buckets >= 1):
            raise ValueError(
                f"HistogramSummary: num_buckets must be a positive int, got {self.num_buckets!r}."
            )

    @ktyping.typechecked
    def get_state(self, tensor: Num["..."] | Bool["..."]) -> HistogramSummaryState:
        return HistogramSummaryState(tensor=jnp.ravel(tensor), num_buckets=self.num_buckets)
