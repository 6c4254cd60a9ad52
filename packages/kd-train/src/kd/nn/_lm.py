"""A decoder-only transformer language model sized by a variant string: `DecoderLM`, its `DecoderBlock`.

cfg.model = kd.nn.DecoderLM.from_variant_str("LM-B", vocab_size=51200, tokens="batch.inputs", dtype="bfloat16")
# preds: logits (*b, t, vocab_size) in `dtype`; the loss upcasts them (kd.losses.SoftmaxCrossEntropyWithIntLabels)

Built for the accelerator: one fused `qkv` projection per block, attention by `kd.nn.dot_product_attention`
(the Pallas splash kernel on a TPU), a compute dtype apart from the parameters' (bf16 compute, f32 parameters and
optimizer state), the blocks scanned (one block compiled, not `num_layers`) and optionally rematerialized.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import jax
import jax.numpy as jnp
import kontext
from flax import linen as nn

from kd.nn._attention import SelfAttention
from kd.nn._errors import VariantError
from kd.nn._train_property import accept_training_property

# name: (d_model, num_layers, num_heads, mlp_size); heads of 128 features from S up (the TPU's lane width).
LM_SIZES: dict[str, tuple[int, int, int, int]] = {
    "mu": (64, 2, 2, 256),
    "Ti": (256, 4, 2, 1024),
    "S": (512, 8, 4, 2048),
    "B": (768, 12, 6, 3072),
    "L": (1024, 24, 8, 4096),
}
# What a rematerialized block keeps for the backward pass ("none": no remat; "full": only its input).
REMAT_POLICIES = ("none", "full", "dots", "dots_no_batch")
_VARIANT = re.compile(r"^(?:[Ll][Mm][-_])?(?P<name>[a-zA-Z]{1,2})$")


@dataclasses.dataclass(frozen=True)
class LMSpec:
    """The sizes of a `DecoderLM`, from a variant string: `LMSpec.from_variant_string("LM-B")`."""

    d_model: int
    num_layers: int
    num_heads: int
    mlp_size: int

    @classmethod
    def from_variant_string(cls, variant_str: str) -> LMSpec:
        """Parses `"LM-B"`, `"B"`, `"lm_S"`.

        Raises:
            VariantError: not of that form, or no size of `LM_SIZES` (the message lists them).
        """
        match = _VARIANT.match(variant_str.strip())
        if match is None or match["name"] not in LM_SIZES:
            other_case = [n for n in LM_SIZES if match is not None and n.lower() == match["name"].lower()]
            hint = f"; did you mean 'LM-{other_case[0]}'?" if other_case else ""
            raise VariantError(
                f"unknown LM variant {variant_str!r}: expected '[LM-]<size>' with a size among "
                f"{', '.join(LM_SIZES)}{hint}"
            )
        return cls(*LM_SIZES[match["name"]])


def _dtype(value: Any) -> Any:
    return None if value is None else jnp.dtype(value)


@accept_training_property
class DecoderBlock(nn.Module):
    """Pre-LN decoder block: `x += attention(norm(x)); x += mlp(norm(x))`, causal self-attention, GELU MLP.

    Usage: `kd.nn.DecoderBlock(num_heads=6, mlp_size=3072, dtype="bfloat16")`.
    """

    num_heads: int
    mlp_size: int
    attention: str = "auto"  # kd.nn.dot_product_attention's implementation
    dtype: Any = None
    param_dtype: Any = "float32"

    @nn.compact
    def __call__(self, tokens: jax.Array) -> jax.Array:
        dtype, param_dtype = _dtype(self.dtype) or tokens.dtype, _dtype(self.param_dtype)
        norm = lambda name: nn.LayerNorm(dtype=dtype, param_dtype=param_dtype, name=name)  # noqa: E731
        dense = lambda features, name: nn.Dense(  # noqa: E731
            features, dtype=dtype, param_dtype=param_dtype, name=name
        )
        attended = SelfAttention(
            num_heads=self.num_heads,
            is_causal=True,
            implementation=self.attention,
            dtype=dtype,
            param_dtype=param_dtype,
            name="attention",
        )(norm("attention_norm")(tokens))
        tokens = tokens + attended.astype(tokens.dtype)
        hidden = nn.gelu(dense(self.mlp_size, "dense_in")(norm("mlp_norm")(tokens)))
        return tokens + dense(tokens.shape[-1], "dense_out")(hidden).astype(tokens.dtype)


class _ScannedBlock(DecoderBlock):
    """`DecoderBlock` with `nn.scan`'s carry signature."""

    @nn.compact
    def __call__(self, tokens: jax.Array, _: Any = None) -> tuple[jax.Array, None]:  # type: ignore[override]
        return super().__call__(tokens), None


@accept_training_property
class DecoderLM(nn.Module):
    """Token embedding + learned positions, `num_layers` `DecoderBlock`s, a final LayerNorm, an output head.

    Attributes:
      vocab_size: the tokens' range; the logits' last axis.
      max_length: the longest sequence (the position table's rows).
      d_model, num_layers, num_heads, mlp_size: the sizes (`from_variant_str` sets them).
      dtype: the computation's dtype: "bfloat16" is mixed precision (parameters and the optimizer's state
        stay in `param_dtype`); the logits come out in it.
      param_dtype: the parameters' dtype.
      attention: the attention implementation (`kd.nn.dot_product_attention`'s; "auto" by backend and shape).
      remat: what a block keeps for the backward pass: "none" (everything), "full" (its input: recomputed),
        "dots" (the matmuls' outputs), "dots_no_batch" (those without a batch axis).
      scan_layers: the blocks as one `nn.scan` (parameters stacked on a leading axis; one block compiled).
      tie_embeddings: the head is the embedding's transpose.
      tokens: key of the input tokens `int[*b, t]`.
    Usage: `kd.nn.DecoderLM.from_variant_str("LM-B", vocab_size=32768, tokens="batch.inputs")`.
    """

    vocab_size: int
    d_model: int
    num_layers: int
    num_heads: int
    mlp_size: int
    max_length: int = 1024
    dtype: Any = "float32"
    param_dtype: Any = "float32"
    attention: str = "auto"
    remat: str = "none"
    scan_layers: bool = True
    tie_embeddings: bool = False
    tokens: kontext.Key = kontext.REQUIRED

    @classmethod
    def from_variant_str(cls, variant_str: str, **kwargs: Any) -> DecoderLM:
        """The model of a variant (`LM_SIZES`: mu, Ti, S, B (~160M with a 51200 vocabulary), L); `kwargs` set
        the other fields, or change a size (`num_heads=1`). Usage: `kd.nn.DecoderLM.from_variant_str("LM-S", vocab_size=256, tokens="batch.x")`."""
        return cls(**{**dataclasses.asdict(LMSpec.from_variant_string(variant_str)), **kwargs})

    @nn.compact
    def __call__(self, tokens: jax.Array) -> jax.Array:
        if self.remat not in REMAT_POLICIES:
            raise ValueError(f"DecoderLM(remat={self.remat!r}): expected one of {REMAT_POLICIES}")
        if tokens.shape[-1] > self.max_length:
            raise ValueError(
                f"DecoderLM got sequences of {tokens.shape[-1]} tokens, above max_length={self.max_length}"
            )
        dtype, param_dtype = _dtype(self.dtype), _dtype(self.param_dtype)
        embed = nn.Embed(
            self.vocab_size,
            self.d_model,
            embedding_init=nn.initializers.normal(0.02),
            dtype=dtype,
            param_dtype=param_dtype,
            name="embed",
        )
        positions = self.param(
            "positions", nn.initializers.normal(0.02), (self.max_length, self.d_model), param_dtype
        )
        x = embed(tokens) + positions[: tokens.shape[-1]].astype(dtype)
        sizes = dict(
            num_heads=self.num_heads,
            mlp_size=self.mlp_size,
            attention=self.attention,
            dtype=dtype,
            param_dtype=param_dtype,
        )
        block = _ScannedBlock if self.scan_layers else DecoderBlock
        if self.remat != "none":
            policy = {
                "full": None,
                "dots": jax.checkpoint_policies.checkpoint_dots,
                "dots_no_batch": jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims,
            }[self.remat]
            block = nn.remat(block, policy=policy, prevent_cse=not self.scan_layers)
        if self.scan_layers:
            layers = nn.scan(
                block,
                variable_axes={"params": 0},
                split_rngs={"params": True},
                length=self.num_layers,
            )(**sizes, name="layers")
            x, _ = layers(x, None)
        else:
            for index in range(self.num_layers):
                x = block(**sizes, name=f"layers_{index}")(x)
        x = nn.LayerNorm(dtype=dtype, param_dtype=param_dtype, name="final_norm")(x)
        if self.tie_embeddings:
            return embed.attend(x)
        return nn.Dense(self.vocab_size, use_bias=False, dtype=dtype, param_dtype=param_dtype, name="head")(x)
