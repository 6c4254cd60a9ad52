"""`MeanCov`: a metric state accumulating the (frequency-weighted) mean and covariance of vectors.

mean, cov = MeanCov.from_samples(x0).merge(MeanCov.from_samples(x1)).compute()
"""

# ruff: noqa: F821, UP037
from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import ktyping
import numpy as np
from ktyping import Float, Int

from kd import metrics


def _divide_or_zero(numerator: Any, denominator: Any) -> Any:
    """`numerator / denominator`, and 0 where `denominator == 0` (no NaN from an all-zero-weight batch)."""
    positive = denominator > 0
    return jnp.where(positive, numerator / jnp.where(positive, denominator, 1.0), 0.0)


@metrics.state_dataclass
class MeanCov(metrics.State):
    """The mean and covariance of vectors, merged across batches without keeping the vectors.

    Usage (as the state of a metric, as in Kauldron):

        @flax.struct.dataclass
        class State(kd.contrib.metrics.MeanCov):
            def compute(self):
                mean, cov = super().compute()
                return frechet_distance(mean, cov, reference_mean, reference_cov)

        def get_state(self, features: Float["b n"]) -> State:
            return self.State.from_samples(features)

    Batches merge by the pairwise update of Chan et al. (see Schubert & Gertz, "Numerically
    stable parallel computation of (co-)variance", 2018): each state holds the weighted sum of
    its vectors, the total weight and the sum of weighted outer products of the deviations from
    its own mean, and merging adds a correction for the distance between the two means.

    Attributes:
      total: `sum_i w_i x_i`, shape `(n,)` (`None` in an empty state).
      squares: `sum_i w_i (x_i - mean)(x_i - mean)^T`, shape `(n, n)`.
      weight: `sum_i w_i` (the number of vectors when unweighted), a float scalar.
      ddof: "delta degrees of freedom": `compute` divides `squares` by `weight - ddof`
        (0: the biased covariance, 1: the unbiased one), as in `np.cov`.
    """

    total: Any = None
    squares: Any = None
    weight: Any = None
    ddof: int = metrics.static_field(default=0)

    @classmethod
    def empty(cls) -> MeanCov:
        """A state of no vectors: merging it changes nothing."""
        return cls(total=None, squares=None, weight=None)

    @classmethod
    @ktyping.typechecked
    def from_samples(
        cls,
        samples: Float["b n"],
        fweights: Int["b"] | None = None,
        ddof: int = 0,
    ) -> MeanCov:
        """The state of one batch of vectors.

        Args:
          samples: the vectors, one per row.
          fweights: optional integer frequency weights, one per row: how many times each vector
            counts (as `fweights` of `np.cov`); 0 leaves a row out. Unweighted when None.
          ddof: the divisor of the covariance is `weight - ddof` (see the class docstring).
        """
        samples = jnp.asarray(samples)
        if fweights is None:
            fweights = jnp.ones(samples.shape[:1], jnp.int32)
        weights = jnp.asarray(fweights).astype(samples.dtype)
        weight = jnp.sum(fweights, dtype=jnp.float32)
        total = jnp.einsum("b,bi->i", weights, samples, precision=jax.lax.Precision.HIGHEST)
        deviations = samples - _divide_or_zero(total, weight)
        squares = jnp.einsum(
            "b,bi,bj->ij", weights, deviations, deviations, precision=jax.lax.Precision.HIGHEST
        )
        return cls(total=total, squares=squares, weight=weight, ddof=ddof)

    def _is_empty(self) -> bool:
        return self.weight is None

    def merge(self, other: MeanCov) -> MeanCov:
        if other._is_empty():
            return self
        if self._is_empty():
            return other
        if self.ddof != other.ddof:
            raise metrics.StateMergeError(
                f"MeanCov: cannot merge states of different ddof: {self.ddof} and {other.ddof}."
            )
        weight = self.weight + other.weight
        between_means = _divide_or_zero(other.total, other.weight) - _divide_or_zero(self.total, self.weight)
        pair_weight = _divide_or_zero(self.weight * other.weight, weight)
        squares = self.squares + other.squares + pair_weight * jnp.outer(between_means, between_means)
        return dataclasses.replace(self, total=self.total + other.total, squares=squares, weight=weight)

    def finalize(self) -> MeanCov:
        """This state with numpy float32 arrays (for `compute` on the host)."""
        if self._is_empty():
            return self
        return dataclasses.replace(
            self,
            total=np.asarray(self.total, np.float32),
            squares=np.asarray(self.squares, np.float32),
            weight=np.asarray(self.weight, np.float32),
        )

    def compute(self) -> tuple[Any, Any]:
        """`(mean, covariance)`; `(None, None)` for an empty state.

        The covariance is all NaN when the total weight is not above `ddof` (too few vectors).
        """
        if self._is_empty():
            return None, None
        xp = np if isinstance(self.weight, (np.ndarray, np.generic)) else jnp
        mean = self.total / self.weight
        enough = self.weight > self.ddof
        divisor = xp.where(enough, self.weight - self.ddof, 1.0)
        cov = xp.where(enough, self.squares / divisor, xp.nan)
        return mean, cov
