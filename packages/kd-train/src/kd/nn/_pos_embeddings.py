"""Position embeddings called with the shape of the tokens they are added to: `emb(tokens.shape, axis=-2)`.

tokens = tokens + kd.nn.LearnedEmbedding()(tokens.shape, axis=-2)  # one learned vector per position
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn


def embedding_shape(full_shape: Sequence[int], axis: int | Sequence[int]) -> tuple[int, ...]:
    """The shape of an embedding over the axes `axis` and the feature axis, without leading 1s.

    Usage: `embedding_shape((8, 16, 32), axis=-2) == (16, 32)`; it broadcasts to `full_shape`.

    Raises:
        ValueError: an axis is not negative, or is the feature axis (-1, always included).
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if any(a >= 0 for a in axes):
        raise ValueError(f"position embedding axes must be negative (counted from the end), got axis={axis}")
    if -1 in axes:
        raise ValueError(f"axis={axis} names the feature axis (-1), which is always included: leave it out")
    shape = [1] * len(full_shape)
    for a in (*axes, -1):
        shape[a] = full_shape[a]
    while shape and shape[0] == 1:  # leading 1s dropped: the embedding then fits any batch shape
        shape.pop(0)
    return tuple(shape)


class LearnedEmbedding(nn.Module):
    """A learned embedding (param `embeddings`, normal(0.02) as BERT's), broadcast to the given shape.

    Usage: `kd.nn.LearnedEmbedding()(tokens.shape, axis=-2)`.
    """

    dtype: Any = jnp.float32
    emb_init: Callable[..., jax.Array] = nn.initializers.normal(stddev=0.02)
    emb_name: str = "embeddings"

    @nn.compact
    def __call__(self, shape: Sequence[int], *, axis: int | Sequence[int]) -> jax.Array:
        embedding = self.param(self.emb_name, self.emb_init, embedding_shape(shape, axis), self.dtype)
        return jnp.broadcast_to(embedding, tuple(shape))


class ZeroEmbedding(nn.Module):
    """Zeros of the given shape: no position embedding (`VitEncoder(pos_embedding=kd.nn.ZeroEmbedding())`)."""

    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, shape: Sequence[int], *, axis: int | Sequence[int] = ()) -> jax.Array:
        del axis
        return jnp.zeros(tuple(shape), self.dtype)
