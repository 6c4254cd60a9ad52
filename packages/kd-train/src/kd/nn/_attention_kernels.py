"""Fused dot-product attention over `(*b, t, h, d)` tensors, its implementation chosen by backend and shape.

out = kd.nn.dot_product_attention(query, key, value, is_causal=True)   # "auto": the fastest that applies
kd.nn.attention_implementation(query, key, is_causal=True)             # -> "splash" on a TPU, "xla" on a CPU

Implementations:
  "einsum": the reference: the weights `(*b, h, q, k)` materialized by `dot_product_attention_weights`, then
            mixed; what the others are tested against.
  "xla":    `jax.nn.dot_product_attention(implementation="xla")`.
  "cudnn":  `jax.nn.dot_product_attention(implementation="cudnn")` (GPUs, 16-bit inputs).
  "splash": the Pallas TPU flash-attention kernel (`jax.experimental.pallas.ops.tpu.splash_attention`),
            blockwise, never materializing the `t x t` weights; self-attention without mask or bias, a
            sequence length that its blocks divide, heads of a multiple of 64 features, one device (it is not
            partitioned over several: a shard_map over the mesh is not written yet). On other backends it runs in Pallas' interpreter (slow:
            for tests).
  "auto":   "splash" on a TPU where it applies (one device, `t >= SPLASH_MIN_LENGTH`, no mask or bias),
            else `jax.nn.dot_product_attention`'s own choice (cuDNN on a GPU where it applies, else XLA).
"""

from __future__ import annotations

from typing import Any, Literal

import jax
import jax.numpy as jnp

Implementation = Literal["auto", "einsum", "xla", "cudnn", "splash"]
IMPLEMENTATIONS: tuple[str, ...] = ("auto", "einsum", "xla", "cudnn", "splash")
SPLASH_MIN_LENGTH = 512  # below it, XLA's fused attention is as fast on a v5e (benchmarks/lm_bench.py)
_SPLASH_BLOCK = 512  # the kernel's block along both sequences (clipped to the sequence)
_LANES = 128  # the TPU's vector width: the kernel's blocks are multiples of it
_MIN_HEAD_DIM = 64  # heads of 64 and 128 features run on a v5e; narrower ones are not known to


def attention_implementation(
    query: jax.Array,
    key: jax.Array,
    *,
    is_causal: bool = False,
    masked: bool = False,
    implementation: Implementation = "auto",
) -> str:
    """The implementation `dot_product_attention` runs for these shapes: `implementation` unless "auto".

    Usage: `kd.nn.attention_implementation(q, k, is_causal=True)  # "splash" / "xla" / "cudnn"`.

    Raises:
      ValueError: an unknown `implementation`, or "splash" where it cannot run (the message says why).
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"attention implementation {implementation!r}: expected one of {IMPLEMENTATIONS}")
    if implementation == "splash":
        reason = _splash_refusal(query, key, masked)
        if reason:
            raise ValueError(f"attention implementation 'splash' cannot run here: {reason}")
        return "splash"
    if implementation != "auto":
        return implementation
    if (
        jax.default_backend() == "tpu"
        and jax.device_count() == 1
        and query.shape[-3] >= SPLASH_MIN_LENGTH
        and not _splash_refusal(query, key, masked)
    ):
        return "splash"
    return "auto"


def _splash_refusal(query: jax.Array, key: jax.Array, masked: bool) -> str:
    """Why the splash kernel cannot take these inputs, or "" where it can."""
    length = query.shape[-3]
    if jax.device_count() > 1:  # a Mosaic kernel is not partitioned by jit: it would need a shard_map
        return f"it runs on one device here, and JAX sees {jax.device_count()}"
    if masked:
        return "it takes no mask or bias (causal masking is is_causal=True)"
    if key.shape[-3] != length:
        return f"it attends within one sequence, got {length} queries and {key.shape[-3]} keys"
    depth = query.shape[-1]
    if depth % _MIN_HEAD_DIM:
        return f"its heads must have a multiple of {_MIN_HEAD_DIM} features, got {depth}"
    block = min(_SPLASH_BLOCK, length)
    if length % _LANES or length % block:
        return f"the sequence length {length} must be a multiple of {_LANES} (and of {block} above it)"
    return ""


def dot_product_attention_weights(
    query: jax.Array,
    key: jax.Array,
    softmax_axis: int = -1,
    bias: jax.Array | None = None,
    mask: jax.Array | None = None,
    softmax_dtype: Any = jnp.float32,
) -> jax.Array:
    """Attention weights `(*b, h, q, k)` of queries `(*b, q, h, d)` and keys `(*b, k, h, d)`.

    Usage: `weights = kd.nn.dot_product_attention_weights(query, key, mask=mask)`.

    Args:
      query: the queries; scaled by `1 / sqrt(d)` here.
      key: the keys.
      softmax_axis: normalized over the keys (-1), or over the queries (-2, as slot attention).
      bias: added to the logits, broadcastable to `(*b, h, q, k)`.
      mask: where False, the weight is (about) zero; broadcastable to `(*b, h, q, k)`.
      softmax_dtype: the softmax is computed in this dtype (None: the inputs'), then cast back.
    """
    logits = jnp.einsum("...qhd,...khd->...hqk", query / jnp.sqrt(query.shape[-1]).astype(query.dtype), key)
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
    dtype = logits.dtype if softmax_dtype is None else softmax_dtype
    return jax.nn.softmax(logits.astype(dtype), axis=softmax_axis).astype(logits.dtype)


def dot_product_attention(
    query: jax.Array,
    key: jax.Array,
    value: jax.Array,
    *,
    is_causal: bool = False,
    mask: jax.Array | None = None,
    bias: jax.Array | None = None,
    implementation: Implementation = "auto",
) -> jax.Array:
    """Multi-head attention `(*b, q, h, d)` of queries `(*b, q, h, d)` over keys / values `(*b, k, h, d)`.

    Scaled by `1 / sqrt(d)`; `is_causal` lets query i see keys up to i; `mask` (True: attend) and `bias`
    broadcast to `(*b, h, q, k)`. Usage: `kd.nn.dot_product_attention(q, k, v, is_causal=True)`.
    """
    masked = mask is not None or bias is not None
    chosen = attention_implementation(
        query, key, is_causal=is_causal, masked=masked, implementation=implementation
    )
    if chosen == "splash":
        return _splash_attention(query, key, value, is_causal=is_causal)
    if chosen == "einsum":
        if is_causal:
            causal = jnp.tril(jnp.ones((query.shape[-3], key.shape[-3]), bool))
            mask = causal if mask is None else jnp.logical_and(mask, causal)
        weights = dot_product_attention_weights(query, key, bias=bias, mask=mask)
        return jnp.einsum("...hqk,...khd->...qhd", weights, value)
    batch = query.shape[:-3]
    flat = lambda x: x.reshape(-1, *x.shape[-3:])  # noqa: E731  (jax.nn takes one batch axis)
    pairs = (query.shape[-2], query.shape[-3], key.shape[-3])  # (h, q, k)

    def broadcast(m: jax.Array | None) -> jax.Array | None:
        return None if m is None else jnp.broadcast_to(m, (*batch, *pairs)).reshape(-1, *pairs)

    out = jax.nn.dot_product_attention(
        flat(query),
        flat(key),
        flat(value),
        bias=broadcast(bias),
        mask=broadcast(mask),
        is_causal=is_causal,
        implementation=None if chosen == "auto" else chosen,
    )
    return out.reshape(*batch, *out.shape[-3:])


def _splash_kernel(length: int, heads: int, is_causal: bool, interpret: bool):
    """The splash kernel for one shape, built in each trace: its mask's block tables become arrays of that
    trace (a kernel kept across traces leaks tracers)."""
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as kernel
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as masks

    one = masks.CausalMask((length, length)) if is_causal else masks.FullMask((length, length))
    block = min(_SPLASH_BLOCK, length)
    sizes = kernel.BlockSizes(
        block_q=block,
        block_kv=block,
        block_kv_compute=block,
        block_q_dkv=block,
        block_kv_dkv=block,
        block_kv_dkv_compute=block,
        use_fused_bwd_kernel=True,
    )
    return kernel.make_splash_mha(
        masks.MultiHeadMask([one] * heads),
        block_sizes=sizes,
        head_shards=1,
        q_seq_shards=1,
        interpret=interpret,
    )


def _splash_attention(query: jax.Array, key: jax.Array, value: jax.Array, *, is_causal: bool) -> jax.Array:
    """The splash kernel over `(*b, t, h, d)`: heads first for the kernel, mapped over the batch."""
    *batch, length, heads, depth = query.shape
    run = _splash_kernel(length, heads, is_causal, jax.default_backend() != "tpu")
    scaled = query * jnp.asarray(1 / depth**0.5, query.dtype)
    heads_first = lambda x: jnp.swapaxes(x.reshape(-1, *x.shape[-3:]), 1, 2)  # noqa: E731  (n, h, t, d)
    out = jax.vmap(run)(heads_first(scaled), heads_first(key), heads_first(value))
    return jnp.swapaxes(out, 1, 2).reshape(*batch, length, heads, depth)
