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


class DigitsSource:
    """A random-access source (grain's protocol) of one split's digits as single examples.

    Example i: `{"image": uint8[8, 8, 1] with values 0..16 (scikit-learn's raw pixels), "label": int64}`,
    the same split as `load(split)`. Usage: `kd.data.py.DataSource(DigitsSource("train"), shuffle=True)`.
    """

    def __init__(self, split: str = "train") -> None:
        from sklearn.datasets import load_digits

        digits = load_digits()
        order = np.random.default_rng(0).permutation(len(digits.target))
        num_test = round(len(order) * 0.2)
        if split not in ("train", "test"):
            raise ValueError(f"DigitsSource(split=...): expected 'train' or 'test', got {split!r}")
        chosen = order[:num_test] if split == "test" else order[num_test:]
        self.split = split
        self._images = digits.images.astype(np.uint8)[chosen][..., None]
        self._labels = digits.target.astype(np.int64)[chosen]

    def __len__(self) -> int:
        return len(self._labels)

    def __getitem__(self, index: int) -> dict[str, np.ndarray]:
        return {"image": self._images[index], "label": self._labels[index]}

    def __repr__(self) -> str:
        return f"DigitsSource({self.split!r})"
