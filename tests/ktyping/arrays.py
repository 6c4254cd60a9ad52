"""Small numpy arrays the tests pass to checked functions: `f32(2, 3)` is float32 zeros of shape (2, 3)."""

from __future__ import annotations

import numpy as np


def f32(*shape: int) -> np.ndarray:
    return np.zeros(shape, np.float32)


def i32(*shape: int) -> np.ndarray:
    return np.zeros(shape, np.int32)
