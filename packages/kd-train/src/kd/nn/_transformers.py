"""Transformer blocks over tokens `(*b, n, d)`: `PreNormBlock` (ViT's), `PostNormBlock`, `ParallelAttentionBlock`.

block = kd.nn.PreNormBlock.from_spec(num_heads=4, mlp_size=512)
tokens = block(tokens)  # tokens + attention(norm(tokens)), then + mlp(norm(...))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
from flax import linen as nn

from kd.nn._attention import ImprovedMultiHeadDotProductAttention
from kd.nn._train_property import accept_training_property


@accept_training_property
class TransformerMLP(nn.Module):
    """Dense `dense_in` (hidden_size, default 4 x d), activation, Dense `dense_out` back to d.

    Usage: `kd.nn.TransformerMLP(hidden_size=3072)`.
    """

    hidden_size: int | None = None
    activation_fn: Callable[[jax.Array], jax.Array] = nn.gelu
    kernel_init: Callable[..., jax.Array] = nn.initializers.xavier_uniform()
    bias_init: Callable[..., jax.Array] = nn.initializers.zeros

    @nn.compact
    def __call__(self, inputs: jax.Array) -> jax.Array:
        features = inputs.shape[-1]
        hidden = nn.Dense(
            features=4 * features if self.hidden_size is None else self.hidden_size,
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
            dtype=inputs.dtype,
            name="dense_in",
        )(inputs)
        hidden = self.activation_fn(hidden)
        return nn.Dense(
            features=features,
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
            dtype=hidden.dtype,
            name="dense_out",
        )(hidden)


def _block_parts(
    num_heads: int,
    mlp_size: int | None,
    normalize_qk: bool,
    attn_kwargs: dict[str, Any] | None,
    mlp_kwargs: dict[str, Any] | None,
) -> dict[str, nn.Module]:
    """The attention and MLP of a block's `from_spec`."""
    return {
        "attention": ImprovedMultiHeadDotProductAttention(
            num_heads=num_heads, normalize_qk=normalize_qk, **(attn_kwargs or {})
        ),
        "mlp": TransformerMLP(hidden_size=mlp_size, **(mlp_kwargs or {})),
    }


@accept_training_property
class _Block(nn.Module):
    """The fields every block has; `from_spec` builds one from sizes."""

    attention: nn.Module
    mlp: nn.Module = dataclasses.field(default_factory=TransformerMLP)
    attention_norm: nn.Module = dataclasses.field(default_factory=nn.LayerNorm)
    mlp_norm: nn.Module = dataclasses.field(default_factory=nn.LayerNorm)

    @classmethod
    def from_spec(
        cls,
        num_heads: int,
        mlp_size: int | None = None,
        normalize_qk: bool = True,
        attn_kwargs: dict[str, Any] | None = None,
        mlp_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A block with `ImprovedMultiHeadDotProductAttention(num_heads, normalize_qk)` and a
        `TransformerMLP(mlp_size)`; `attn_kwargs` / `mlp_kwargs` go to them, `kwargs` to the block."""
        return cls(**_block_parts(num_heads, mlp_size, normalize_qk, attn_kwargs, mlp_kwargs), **kwargs)


class PreNormBlock(_Block):
    """Pre-LN block: `x += attention(attention_norm(x)); x += mlp(mlp_norm(x))` (ViT's default).

    Usage: `kd.nn.PreNormBlock(attention=kd.nn.ImprovedMultiHeadDotProductAttention(num_heads=4))`.
    """

    @nn.compact
    def __call__(self, tokens: jax.Array, attention_mask: jax.Array | None = None) -> jax.Array:
        normed = self.attention_norm(tokens).astype(tokens.dtype)
        tokens = tokens + self.attention(
            inputs_q=normed, inputs_k=normed, inputs_v=normed, mask=attention_mask
        )
        normed = self.mlp_norm(tokens).astype(tokens.dtype)
        return tokens + self.mlp(normed).astype(tokens.dtype)


class PostNormBlock(_Block):
    """Post-LN block: `x += attention(x); x += mlp(attention_norm(x)); mlp_norm(x)` (not recommended).

    Usage: `kd.nn.PostNormBlock.from_spec(num_heads=4)`.
    """

    @nn.compact
    def __call__(self, tokens: jax.Array, attention_mask: jax.Array | None = None) -> jax.Array:
        tokens = tokens + self.attention(
            inputs_q=tokens, inputs_k=tokens, inputs_v=tokens, mask=attention_mask
        )
        tokens = tokens + self.mlp(self.attention_norm(tokens))
        return self.mlp_norm(tokens)


class ParallelAttentionBlock(_Block):
    """Attention and MLP side by side: `x + attention(attention_norm(x)) + mlp(mlp_norm(x))` (ViT-22B).

    Its `attention_norm` defaults to an RMSNorm.
    Usage: `kd.nn.ParallelAttentionBlock.from_spec(num_heads=4)`.
    """

    attention_norm: nn.Module = dataclasses.field(default_factory=nn.RMSNorm)

    @nn.compact
    def __call__(self, tokens: jax.Array) -> jax.Array:
        normed = self.attention_norm(tokens)
        attended = self.attention(inputs_q=normed, inputs_k=normed, inputs_v=normed)
        return tokens + attended + self.mlp(self.mlp_norm(tokens))
