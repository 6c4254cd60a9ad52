"""Synthetic token sequences a language model can learn: a random segment repeated to fill each sequence.

examples = repeated_segments(num_sequences=512, length=128, vocab_size=256)
# {"inputs": i32[512, 128], "targets": i32[512, 128]}: targets are the inputs shifted by one token

The first segment of each sequence is noise (loss ~ log(vocab_size)); every later token repeats the token one
period back, so a model that learns to copy (an induction head) drives the loss toward
`log(vocab_size) / repeats`. No download, the same for every call with the same arguments.
"""

from __future__ import annotations

import numpy as np


def repeated_segments(
    num_sequences: int, length: int, vocab_size: int, period: int = 64, seed: int = 0
) -> dict[str, np.ndarray]:
    """`num_sequences` sequences of `length + 1` tokens (a random `period`-token segment, repeated), split
    into `inputs` (all but the last token) and `targets` (all but the first)."""
    if period < 1 or vocab_size < 2:
        raise ValueError(
            f"repeated_segments: period {period} and vocab_size {vocab_size} must be >= 1 and >= 2"
        )
    rng = np.random.default_rng(seed)
    segments = rng.integers(0, vocab_size, size=(num_sequences, period), dtype=np.int32)
    tokens = np.tile(segments, (1, -(-(length + 1) // period)))[:, : length + 1]
    return {"inputs": np.ascontiguousarray(tokens[:, :-1]), "targets": np.ascontiguousarray(tokens[:, 1:])}
