"""Position embeddings called with the shape of the tokens they are added to: `emb(tokens.shape, axis=-2)`.

tokens = tokens + kd.nn.LearnedEmbedding()(tokens.shape, axis=-2)  # one learned vector per position
tokens = kd.nn.AddEmbedding(emb=kd.nn.FourierEmbedding(num_fourier_bases=8), axis=(-3, -2))(grid_tokens)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn

from kd.nn._train_property import accept_training_property
from kd.nn._types import PositionEmbedding


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


@accept_training_property
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


@accept_training_property
class ZeroEmbedding(nn.Module):
    """Zeros of the given shape: no position embedding (`VitEncoder(pos_embedding=kd.nn.ZeroEmbedding())`)."""

    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, shape: Sequence[int], *, axis: int | Sequence[int] = ()) -> jax.Array:
        del axis
        return jnp.zeros(tuple(shape), self.dtype)


def convert_to_fourier_features(
    inputs: jax.Array, basis_degree: int, precision: jax.lax.PrecisionLike = jax.lax.Precision.HIGHEST
) -> jax.Array:
    """NeRF's sinusoidal features of coordinates `(..., D)`: `(..., 2 * D * basis_degree)`.

    With `x = [inputs * 2**0, inputs * 2**1, ..., inputs * 2**(basis_degree - 1)]` (each block of D
    coordinates scaled by one power of two), the features are `[sin(x), cos(x)]`. Coordinates are
    expected in [-pi, pi] (or [0, 2 pi]).

    Usage: `feats = kd.nn.convert_to_fourier_features(coords, basis_degree=4)`.
    """
    if not isinstance(basis_degree, int) or basis_degree < 1:
        raise ValueError(f"convert_to_fourier_features(basis_degree={basis_degree!r}): expected an int >= 1")
    n_dims = inputs.shape[-1]
    # (D, D * degree): one identity block per frequency 2**i, so a matmul gives every scaled copy at once.
    frequencies = jnp.concatenate(
        [(2.0**i) * jnp.eye(n_dims, dtype=inputs.dtype) for i in range(basis_degree)], 1
    )
    scaled = jnp.matmul(inputs, frequencies, precision=precision)
    return jnp.concatenate([jnp.sin(scaled), jnp.cos(scaled)], axis=-1)


def coordinate_grid(
    samples_per_dim: Sequence[int], value_range: tuple[float, float] = (-1.0, 1.0)
) -> jax.Array:
    """Evenly spaced coordinates over `samples_per_dim`: `samples_per_dim + (k,)`, k the sizes above 1.

    Usage: `coordinate_grid((4, 1, 3)).shape == (4, 1, 3, 2)`; each axis runs from `value_range[0]` to [1].
    """
    sizes = tuple(int(n) for n in samples_per_dim)
    axes = [jnp.linspace(value_range[0], value_range[1], n) for n in sizes if n != 1]
    grid = jnp.stack(jnp.meshgrid(*axes, indexing="ij"), axis=-1)
    return grid.reshape(sizes + grid.shape[-1:])


@accept_training_property
class FourierEmbedding(nn.Module):
    """A Fourier embedding of the position on the grid of the embedded axes, projected to the features.

    The coordinates run over [-pi, pi] along each embedded axis of size > 1; their Fourier features
    (`convert_to_fourier_features`, `2 x axes x num_fourier_bases` of them) go through a Dense `dense_pe`
    to `shape[-1]` features, broadcast to `shape`.

    Attributes:
      num_fourier_bases: the number of frequencies (powers of two) per coordinate.
    Usage: `kd.nn.FourierEmbedding(num_fourier_bases=8)(tokens.shape, axis=(-3, -2))`.
    """

    num_fourier_bases: int

    @nn.compact
    def __call__(self, shape: Sequence[int], *, axis: int | Sequence[int]) -> jax.Array:
        grid_shape = embedding_shape(shape, axis)[:-1]  # the positions; the feature axis is made below
        coords = coordinate_grid(grid_shape, value_range=(-jnp.pi, jnp.pi))
        features = convert_to_fourier_features(coords, basis_degree=self.num_fourier_bases)
        projected = nn.Dense(shape[-1], name="dense_pe")(features)
        return jnp.broadcast_to(projected, tuple(shape))


@accept_training_property
class AddEmbedding(nn.Module):
    """Adds a position embedding to its input (for `kd.nn.Sequential`): `inputs + emb(inputs.shape, axis=axis)`.

    Attributes:
      emb: the position embedding (`LearnedEmbedding`, `FourierEmbedding`, `ZeroEmbedding`, ...).
      axis: the axes it varies over; -2 for tokens `(*b, n, d)`.
    Usage: `kd.nn.AddEmbedding(emb=kd.nn.LearnedEmbedding(), axis=-2)`.
    """

    emb: PositionEmbedding
    axis: int | Sequence[int]

    def __call__(self, inputs: jax.Array) -> jax.Array:
        return inputs + self.emb(inputs.shape, axis=self.axis)


@accept_training_property
class AddLearnedEmbedding(nn.Module):
    """Deprecated (as in Kauldron): adds a learned embedding `embeddings` over `axes` (the feature axis
    included) to `inputs`; use `AddEmbedding(emb=LearnedEmbedding(), axis=...)`.

    Attributes:
      emb_init: the initializer of the embedding.
      axes: the axes the embedding varies over, e.g. (-2, -1) for one vector per token.
    Usage: `kd.nn.AddLearnedEmbedding()(tokens)`.
    """

    emb_init: Callable[..., jax.Array] = nn.initializers.normal(stddev=0.02)
    axes: int | Sequence[int] = (-2, -1)

    @nn.compact
    def __call__(self, inputs: jax.Array) -> jax.Array:
        warnings.warn(
            f"{type(self).__name__} is deprecated: use kd.nn.AddEmbedding(emb=kd.nn.LearnedEmbedding(), axis=...)",
            DeprecationWarning,
            stacklevel=2,
        )
        axes = (self.axes,) if isinstance(self.axes, int) else tuple(self.axes)
        shape = [1] * inputs.ndim
        for a in axes:
            shape[a] = inputs.shape[a]
        while shape and shape[0] == 1:  # no leading 1s: the embedding fits any batch shape
            shape.pop(0)
        return inputs + self.param("embeddings", self.emb_init, tuple(shape), inputs.dtype)
