"""A synthetic regression data set made on the fly (no download): y = sin(3 x0) + 0.5 x1 + noise."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def regression_batches(batch_size: int, num_features: int = 2, seed: int = 0) -> Iterator[dict[str, np.ndarray]]:
    """Yields `{"x": f32[batch_size num_features], "y": f32[batch_size 1]}` batches forever.

    Usage: `batch = next(regression_batches(batch_size=64))`.
    """
    rng = np.random.default_rng(seed)
    while True:
        x = rng.uniform(-1.0, 1.0, size=(batch_size, num_features)).astype(np.float32)
        y = np.sin(3.0 * x[:, :1]) + 0.5 * x[:, 1:2] + 0.01 * rng.normal(size=(batch_size, 1))
        yield {"x": x, "y": y.astype(np.float32)}
