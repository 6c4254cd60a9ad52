"""The 8x8 handwritten digits that ship inside scikit-learn (1,797 images, no download), split 80/20.

examples = load(split="train")   # {"image": f32[1437, 8, 8, 1] in [0, 1], "label": i32[1437]}
"""

from __future__ import annotations

import numpy as np


def load(split: str = "train", test_fraction: float = 0.2, seed: int = 0) -> dict[str, np.ndarray]:
    """One split of the digits, the same for every call (a fixed permutation by `seed`)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(labels))
    num_test = round(len(labels) * test_fraction)
    if split == "test":
        chosen = order[:num_test]
    elif split == "train":
        chosen = order[num_test:]
    else:
        raise ValueError(f"load(split=...): expected 'train' or 'test', got {split!r}")
    return {"image": images[chosen], "label": labels[chosen]}
