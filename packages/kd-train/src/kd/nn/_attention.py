"""Multi-head dot-product attention whose weights are reachable as `interms.<path>.attn_weights[0]`.

attention = kd.nn.ImprovedMultiHeadDotProductAttention(num_heads=4)
out = attention(inputs_q=tokens)  # self-attention; sows the weights `(*b, heads, q, k)` as intermediates
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn

from kd.nn._attention_kernels import dot_product_attention, dot_product_attention_weights
from kd.nn._train_property import accept_training_property, is_training


@accept_training_property
class ImprovedMultiHeadDotProductAttention(nn.Module):
    """Multi-head attention with a softmax axis, an additive bias, optional q/k LayerNorm and no dropout.

    The weights are sown as `attn_weights`, read as `interms.<path to this module>.attn_weights[0]`
    (e.g. `interms.encoder.layers_11.attention.attn_weights[0]` in a `kd.nn.Vit`).

    Attributes:
      num_heads: the number of heads; divides the query/key and value features.
      qk_features: total features of the queries and keys (default: those of `inputs_q`).
      v_features: total features of the values (default: `qk_features`).
      out_features: features of the output (default: those of `inputs_q`).
      softmax_axis: -1 normalizes over the keys; -2 over the queries (slot attention).
      normalize_qk: LayerNorm (no bias) the projected queries and keys (ViT-22B).
      attn_weights_fn: computes the weights, `dot_product_attention_weights`'s signature.
    Usage: `kd.nn.ImprovedMultiHeadDotProductAttention(num_heads=8, normalize_qk=True)`.
    """

    num_heads: int
    qk_features: int | None = None
    v_features: int | None = None
    out_features: int | None = None
    softmax_axis: int = -1
    normalize_qk: bool = False
    kernel_init: Callable[..., jax.Array] = nn.initializers.lecun_normal()
    bias_init: Callable[..., jax.Array] = nn.initializers.zeros_init()
    use_bias: bool = True
    attn_weights_fn: Callable[..., jax.Array] = dot_product_attention_weights

    @nn.compact
    def __call__(
        self,
        inputs_q: jax.Array,
        inputs_k: jax.Array | None = None,
        inputs_v: jax.Array | None = None,
        *,
        bias: jax.Array | None = None,
        mask: jax.Array | None = None,
    ) -> jax.Array:
        """Attends from `inputs_q` to `inputs_k` (default: `inputs_q`) over `inputs_v` (default: `inputs_k`)."""
        qk_features = self.qk_features or inputs_q.shape[-1]
        v_features = self.v_features or qk_features
        for name, features in (("qk_features", qk_features), ("v_features", v_features)):
            if features % self.num_heads:
                raise ValueError(f"num_heads={self.num_heads} must divide {name}={features}")
        if inputs_k is None:
            if inputs_v is not None:
                raise ValueError(
                    "inputs_v was given without inputs_k: give both, or neither (self-attention)"
                )
            inputs_k = inputs_q
        if inputs_v is None:
            inputs_v = inputs_k

        def heads(name: str, x: jax.Array, features: int) -> jax.Array:
            return nn.DenseGeneral(
                features=(self.num_heads, features // self.num_heads),
                kernel_init=self.kernel_init,
                bias_init=self.bias_init,
                use_bias=self.use_bias,
                dtype=x.dtype,
                name=name,
            )(x)

        query = heads("query", inputs_q, qk_features)
        key = heads("key", inputs_k, qk_features)
        value = heads("value", inputs_v, v_features)
        if self.normalize_qk:  # steadies training at high learning rates (ViT-22B, arxiv.org/abs/2302.05442)
            query = nn.LayerNorm(use_bias=False, dtype=query.dtype, name="query_norm")(query)
            key = nn.LayerNorm(use_bias=False, dtype=key.dtype, name="key_norm")(key)

        weights = self.attn_weights_fn(
            query=query, key=key, softmax_axis=self.softmax_axis, bias=bias, mask=mask
        )
        self.sow("intermediates", "attn_weights", weights)
        mixed = jnp.einsum("...hqk,...khd->...qhd", weights, value)
        return nn.DenseGeneral(
            features=self.out_features or inputs_q.shape[-1],
            axis=(-2, -1),
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
            use_bias=self.use_bias,
            dtype=mixed.dtype,
            name="out",
        )(mixed)


@accept_training_property
class MultiHeadDotProductAttention(nn.MultiHeadDotProductAttention):
    """flax's attention, its dropout on while the Trainer trains (`kd.nn.is_training()`), not `deterministic`.

    Usage: `kd.nn.MultiHeadDotProductAttention(num_heads=8, dropout_rate=0.1)`.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.deterministic is not None:
            raise ValueError(
                f"{type(self).__name__}(deterministic={self.deterministic}) was given: leave it out; dropout "
                "follows kd.nn.is_training() (on while the Trainer trains, off in evaluation)"
            )

    @nn.compact
    def __call__(
        self,
        inputs_q: jax.Array,
        inputs_k: jax.Array | None = None,
        inputs_v: jax.Array | None = None,
        *,
        mask: jax.Array | None = None,
    ) -> jax.Array:
        # Without dropout the mode changes nothing: the module then also runs outside a Trainer.
        deterministic = self.dropout_rate == 0.0 or not is_training()
        return super().__call__(inputs_q, inputs_k, inputs_v, mask=mask, deterministic=deterministic)


@accept_training_property
class SelfAttention(nn.Module):
    """Multi-head self-attention by a fused kernel: one `qkv` projection, `kd.nn.dot_product_attention`, `out`.

    No weights are sown (the fused kernels never hold them; `ImprovedMultiHeadDotProductAttention` does).

    Attributes:
      num_heads: the number of heads; divides the features.
      is_causal: token i attends to tokens up to i (a decoder).
      implementation: of `kd.nn.dot_product_attention` ("auto": the fastest that applies on the backend).
      dtype: the computation's dtype (e.g. "bfloat16"); None: the inputs'.
      param_dtype: the parameters' dtype.
    Usage: `kd.nn.SelfAttention(num_heads=6, is_causal=True, dtype="bfloat16")`.
    """

    num_heads: int
    is_causal: bool = False
    implementation: str = "auto"
    use_bias: bool = False
    dtype: Any = None
    param_dtype: Any = "float32"
    kernel_init: Callable[..., jax.Array] = nn.initializers.lecun_normal()

    @nn.compact
    def __call__(self, tokens: jax.Array, mask: jax.Array | None = None) -> jax.Array:
        """Tokens `(*b, t, d)` to `(*b, t, d)`; `mask` (True: attend) broadcasts to `(*b, h, t, t)`."""
        features = tokens.shape[-1]
        if features % self.num_heads:
            raise ValueError(f"num_heads={self.num_heads} must divide the tokens' {features} features")
        dtype = tokens.dtype if self.dtype is None else jnp.dtype(self.dtype)
        dense = functools.partial(  # the projections in and out: one kind of layer
            nn.DenseGeneral,
            use_bias=self.use_bias,
            kernel_init=self.kernel_init,
            dtype=dtype,
            param_dtype=jnp.dtype(self.param_dtype),
        )
        qkv = dense(features=(3, self.num_heads, features // self.num_heads), name="qkv")(tokens)
        query, key, value = (qkv[..., i, :, :] for i in range(3))
        mixed = dot_product_attention(
            query, key, value, is_causal=self.is_causal, mask=mask, implementation=self.implementation
        )
        return dense(features=features, axis=(-2, -1), name="out")(mixed)
