"""`kd.data.SyntheticRegression`: a regression data set made on the fly, no download.

Usage:

    pipeline = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=1024),
                                        batch_size=64, seed=0)
    next(iter(pipeline))  # {"x": f32[64, 2], "y": f32[64, 1]}
"""

from __future__ import annotations

import dataclasses

import numpy as np

from kd.data import _checks


@dataclasses.dataclass(frozen=True, kw_only=True)
class SyntheticRegression:
    """A loader: `y = sin(3 x0) + 0.5 x1 + noise`, with `x` uniform in [-1, 1).

    Calling it returns `{"x": f32[num_examples, num_features], "y": f32[num_examples, 1]}`, the same
    arrays for the same `seed`. Features past the second do not enter `y` (distractors); with
    `num_features=1`, `y = sin(3 x0) + noise`.

    Attributes:
      num_examples: rows of the data set.
      num_features: columns of `x` (>= 1).
      noise_std: standard deviation of the Gaussian noise added to `y`.
      seed: seeds the data set itself; the pipeline's own seed orders it. Fixed by default, so
        runs with different training seeds see the same data.
    """

    num_examples: int
    num_features: int = 2
    noise_std: float = 0.01
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("num_examples", "num_features"):
            value = getattr(self, name)
            if not _checks.is_int(value, at_least=1):
                raise ValueError(f"SyntheticRegression: {name} must be an int >= 1; got {value!r}")
        if not self.noise_std >= 0:
            raise ValueError(f"SyntheticRegression: noise_std must be >= 0; got {self.noise_std!r}")

    def __call__(self) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        x = rng.uniform(-1.0, 1.0, size=(self.num_examples, self.num_features)).astype(np.float32)
        y = np.sin(3.0 * x[:, :1])
        if self.num_features >= 2:
            y = y + 0.5 * x[:, 1:2]
        y = y + self.noise_std * rng.normal(size=(self.num_examples, 1))
        return {"x": x, "y": y.astype(np.float32)}
