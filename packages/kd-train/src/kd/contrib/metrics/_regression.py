"""`RootMeanSquaredError`: the RMSE of predictions against regression targets, in three conventions.

kd.contrib.metrics.RootMeanSquaredError(preds="preds.depth", targets="batch.depth", rmse_mode="trad")
"""

# ruff: noqa: F821, UP037
from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax.numpy as jnp
import kontext
import ktyping
from ktyping import Float

from kd import metrics

RMSE_MODES = ("trad", "average_all", "per_sample_sqrt")
"""The values of `RootMeanSquaredError.rmse_mode`."""


@metrics.state_dataclass
class RootMeanSquaredErrorState(metrics.AutoState):
    """The state of `RootMeanSquaredError`: running sums over examples, enough for every `rmse_mode`.

    Usage: `RootMeanSquaredError(...).get_state(preds=p, targets=t).merge(other).compute()`.

    Attributes:
      squared_error: the sum over examples of each example's summed squared error.
      sample_error: the sum over examples of the square root of each example's summed squared error.
      num_samples: the number of examples.
      num_values: the number of values compared (examples times values per example).
    """

    squared_error: Any = metrics.sum_field()
    sample_error: Any = metrics.sum_field()
    num_samples: Any = metrics.sum_field()
    num_values: Any = metrics.sum_field()

    def compute(self) -> float:
        """The RMSE by the parent's `rmse_mode` ("trad" when the state has no parent); NaN with no examples."""
        final = self.finalize()
        if final.num_samples is None or float(final.num_samples) == 0:
            return math.nan
        mode = getattr(self.parent, "rmse_mode", "trad")
        if mode == "trad":
            return math.sqrt(float(final.squared_error) / float(final.num_samples))
        if mode == "average_all":
            return math.sqrt(float(final.squared_error) / float(final.num_values))
        if mode == "per_sample_sqrt":
            return float(final.sample_error) / float(final.num_samples)
        raise ValueError(_unknown_mode_message(mode))


def _unknown_mode_message(mode: object) -> str:
    return f"RootMeanSquaredError: rmse_mode must be one of {RMSE_MODES}, got {mode!r}."


@dataclasses.dataclass(frozen=True, kw_only=True)
class RootMeanSquaredError(metrics.Metric):
    """Root mean squared error between predictions and targets, `(b, *d)` each.

    Usage: `kd.contrib.metrics.RootMeanSquaredError(preds="preds.xyz", targets="batch.xyz")`.

    With `e_i = sum_d (pred_i - target_i)**2` the summed squared error of example `i` (of `N`,
    each with `D` values), `rmse_mode` picks the convention:

    - "trad": `sqrt(sum_i e_i / N)`, the root of the mean squared distance per example
      (the usual root-mean-square deviation);
    - "average_all": `sqrt(sum_i e_i / (N * D))`, the root of the mean over every value
      (as `tf.keras.metrics.RootMeanSquaredError`);
    - "per_sample_sqrt": `sum_i sqrt(e_i) / N`, the mean Euclidean distance per example.

    Attributes:
      preds: key of the predictions `(b, *d)`.
      targets: key of the targets, of the same shape.
      rmse_mode: "trad", "average_all" or "per_sample_sqrt".
    """

    preds: kontext.Key = kontext.REQUIRED
    targets: kontext.Key = kontext.REQUIRED
    rmse_mode: str = "trad"

    State = RootMeanSquaredErrorState

    def __post_init__(self) -> None:
        if self.rmse_mode not in RMSE_MODES:
            raise ValueError(_unknown_mode_message(self.rmse_mode))

    @ktyping.typechecked
    def get_state(self, preds: Float["b *d"], targets: Float["b *d"]) -> RootMeanSquaredErrorState:
        squared = jnp.square(jnp.asarray(preds, jnp.float32) - jnp.asarray(targets, jnp.float32))
        per_sample = squared.sum(axis=tuple(range(1, squared.ndim)))
        return RootMeanSquaredErrorState(
            squared_error=per_sample.sum(),
            sample_error=jnp.sqrt(per_sample).sum(),
            num_samples=jnp.asarray(targets.shape[0], jnp.float32),
            num_values=jnp.asarray(squared.size, jnp.float32),
        )
