"""Protocols for the sub-modules a model takes, to annotate its fields (Kauldron's `knn_types`).

class MyEncoder(nn.Module):
    block: kd.nn.TransformerBlock   # PreNormBlock, PostNormBlock, ParallelAttentionBlock, ...
    norm: kd.nn.NormModule = nn.LayerNorm()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import jax


class AttentionModule(Protocol):
    """What an attention module is called with: queries `(*b, q, dq)`, optional keys / values, a mask.

    Attributes:
      num_heads: the number of attention heads.
    Usage: `attention: kd.nn.AttentionModule = kd.nn.ImprovedMultiHeadDotProductAttention(num_heads=4)`.
    Keys default to the queries and values to the keys; the mask broadcasts to `(*b, heads, q, k)`;
    the output is `(*b, q, do)`.
    """

    num_heads: int

    def __call__(
        self,
        inputs_q: jax.Array,
        inputs_k: jax.Array | None = None,
        inputs_v: jax.Array | None = None,
        *,
        mask: jax.Array | None = None,
    ) -> jax.Array: ...


class ImageTokenizer(Protocol):
    """Turns images `(*b, h, w, c)` into tokens `(*b, n, d)` (`kd.nn.Patchify`, `kd.nn.PatchifyEmbed`).

    Usage: `tokenizer: kd.nn.ImageTokenizer = kd.nn.PatchifyEmbed(patch_size=(16, 16), num_features=768)`.
    """

    def __call__(self, image: jax.Array) -> jax.Array: ...


class NormModule(Protocol):
    """A normalization: one array in, an array of the same shape out (`nn.LayerNorm`, `nn.RMSNorm`, ...).

    Usage: `norm: kd.nn.NormModule = nn.LayerNorm()`.
    """

    def __call__(self, x: jax.Array) -> jax.Array: ...


class PositionEmbedding(Protocol):
    """An embedding made from the shape it is added to (`kd.nn.LearnedEmbedding`, `kd.nn.FourierEmbedding`).

    Usage: `emb: PositionEmbedding = kd.nn.LearnedEmbedding()`; `emb(tokens.shape, axis=-2)`.
    """

    def __call__(self, shape: Sequence[int], *, axis: int | Sequence[int]) -> jax.Array: ...


class TransformerBlock(Protocol):
    """Tokens `(*b, n, d)` and an optional mask `(*b, 1, n, n)` in, tokens of the same shape out.

    Usage: `block: kd.nn.TransformerBlock = kd.nn.PreNormBlock.from_spec(num_heads=4)`.
    """

    def __call__(self, tokens: jax.Array, attention_mask: jax.Array | None = None) -> jax.Array: ...
