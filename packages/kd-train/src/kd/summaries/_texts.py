"""`ShowTexts`: the first few texts seen, as a numpy object array of `str` (host only, not under `jit`).

kd.summaries.ShowTexts(texts="preds.sampled_text", num_texts=5)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import kontext
import numpy as np

from kd import metrics

from . import _base


def _as_texts(texts: Any, argument: str) -> np.ndarray:
    """`texts` (a str, a sequence or an array of str, any shape) flattened to a 1-d object array."""
    if isinstance(texts, (str, bytes)):
        texts = [texts]
    if not isinstance(texts, (Sequence, np.ndarray)):
        raise TypeError(
            f"ShowTexts: argument {argument} must be a str, a sequence of str or an array of str, "
            f"got a {type(texts).__name__}."
        )
    flat = np.asarray(texts, dtype=object).reshape(-1)
    flat = np.asarray([t.decode() if isinstance(t, bytes) else t for t in flat], dtype=object).reshape(-1)
    odd = [t for t in flat if not isinstance(t, str)]
    if odd:
        raise TypeError(
            f"ShowTexts: argument {argument} must hold texts (str or bytes), got a {type(odd[0]).__name__} "
            f"({odd[0]!r}); token ids must be decoded to text first."
        )
    return flat


@metrics.state_dataclass
class TextsState(metrics.CollectFirstState):
    """The first `keep_first` texts seen, a 1-d object array; `compute()` returns it.

    Usage: `ShowTexts(texts="x").get_state(texts=["a", "b"]).merge(other).compute()`.
    """

    texts: Any = None

    def compute(self) -> np.ndarray:
        """The collected texts, a 1-d numpy array of `str` (dtype object)."""
        if self.texts is None:
            return np.zeros((0,), dtype=object)
        return np.asarray(self.texts, dtype=object)[: self.keep_first]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShowTexts(_base.Summary):
    """Shows the first `num_texts` texts of the batches it sees (a TensorBoard text table).

    Usage: `kd.summaries.ShowTexts(texts="preds.text", num_texts=5)`.

    It handles Python strings, so it runs on the host only: use it in an evaluator that computes its
    summaries outside `jax.jit` (as Kauldron's), not in the Trainer's jitted step.

    Attributes:
      texts: key of the texts: a str, a sequence of str, or a numpy array of str (any shape, flattened).
      num_texts: how many texts to keep.
    """

    texts: kontext.Key = kontext.REQUIRED
    num_texts: int = 5

    def __post_init__(self) -> None:
        if not (isinstance(self.num_texts, int) and self.num_texts >= 1):
            raise ValueError(f"ShowTexts: num_texts must be a positive int, got {self.num_texts!r}.")

    def get_state(self, texts: str | Sequence[str] | np.ndarray) -> TextsState:
        flat = _as_texts(texts, "texts")
        return TextsState(texts=flat[: self.num_texts], keep_first=self.num_texts)
