"""The 8x8 handwritten digits that ship inside scikit-learn (1,797 images, no download), split 80/20.

examples = load(split="train")   # {"image": f32[1437, 8, 8, 1] in [0, 1], "label": i32[1437]}

The file is read where scikit-learn keeps it, without importing scikit-learn (~1 s of every run's start on a
2-core machine, more than the data itself): the same numbers as `sklearn.datasets.load_digits()`.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np


def raw_digits() -> tuple[np.ndarray, np.ndarray]:
    """`(images f64[1797, 8, 8] with values 0..16, labels i64[1797])`, as `load_digits()` gives them."""
    spec = importlib.util.find_spec("sklearn")  # found, not imported
    folders = list(spec.submodule_search_locations or []) if spec else []
    path = os.path.join(folders[0], "datasets", "data", "digits.csv.gz") if folders else ""
    if not os.path.exists(path):  # a scikit-learn that keeps it elsewhere: its own loader
        from sklearn.datasets import load_digits

        digits = load_digits()
        return digits.images, digits.target
    table = np.loadtxt(path, delimiter=",")
    return table[:, :-1].reshape(-1, 8, 8), table[:, -1].astype(np.int64)


def load(split: str = "train", test_fraction: float = 0.2, seed: int = 0) -> dict[str, np.ndarray]:
    """One split of the digits, the same for every call (a fixed permutation by `seed`)."""
    raw_images, raw_labels = raw_digits()
    images = (raw_images / 16.0).astype(np.float32)[..., None]
    labels = raw_labels.astype(np.int32)
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
        raw_images, raw_labels = raw_digits()
        order = np.random.default_rng(0).permutation(len(raw_labels))
        num_test = round(len(order) * 0.2)
        if split not in ("train", "test"):
            raise ValueError(f"DigitsSource(split=...): expected 'train' or 'test', got {split!r}")
        chosen = order[:num_test] if split == "test" else order[num_test:]
        self.split = split
        self._images = raw_images.astype(np.uint8)[chosen][..., None]
        self._labels = raw_labels.astype(np.int64)[chosen]

    def __len__(self) -> int:
        return len(self._labels)

    def __getitem__(self, index: int) -> dict[str, np.ndarray]:
        return {"image": self._images[index], "label": self._labels[index]}

    def __repr__(self) -> str:
        return f"DigitsSource({self.split!r})"
