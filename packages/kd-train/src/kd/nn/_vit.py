"""Vision Transformers: `VitEncoder` (image to tokens), `Vit` (a classifier) and `VitAutoEncoder`.

cfg.model = kd.nn.Vit(image="batch.image", encoder=kd.nn.VitEncoder.from_variant_str("ViT-Ti/8"), num_classes=1000)
# preds.logits; interms.encoder.layers_11.attention.attn_weights[0]; interms.encoder.__call__[0]
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

import jax
import jax.numpy as jnp
import kontext
from flax import linen as nn

from kd.nn._attention import ImprovedMultiHeadDotProductAttention
from kd.nn._errors import VariantError
from kd.nn._patchify import PatchifyEmbed, as_pair
from kd.nn._pos_embeddings import LearnedEmbedding
from kd.nn._train_property import accept_training_property
from kd.nn._transformers import PreNormBlock, TransformerMLP

# name: (hidden_size, num_layers, mlp_size, num_heads), Table 2 of arxiv.org/abs/2106.04560 (and `mu`, tiny).
VIT_SIZES: dict[str, tuple[int, int, int, int]] = {
    "mu": (32, 1, 128, 2),
    "Ti": (192, 12, 768, 3),
    "S": (384, 12, 1536, 6),
    "M": (512, 12, 2048, 8),
    "B": (768, 12, 3072, 12),
    "L": (1024, 24, 4096, 16),
    "H": (1280, 32, 5120, 16),
    "g": (1408, 40, 6144, 16),
    "G": (1664, 48, 8192, 16),
    "e": (1792, 56, 15360, 16),
}

_VARIANT = re.compile(r"^(?P<prefix>[Vv][Ii][Tt][-_])?(?P<name>[a-zA-Z]{1,2})(/(?P<patch>\d+))?$")
_LOOSE_VARIANT = re.compile(r"^(?P<prefix>[Vv][Ii][Tt][-_ ]?)?(?P<name>[a-zA-Z]+)([-_/ ]?(?P<patch>\d+))?$")


def _nearest_size(name: str) -> str | None:
    """The size a mistyped name most likely meant: same letters in another case, a word it starts
    (`Base` -> `B`, `Tiny` -> `Ti`), else the closest spelling."""
    other_case = [size for size in VIT_SIZES if size.lower() == name.lower()]
    if other_case:
        return other_case[0]
    starts = [size for size in VIT_SIZES if name.lower().startswith(size.lower())]
    starts.sort(key=lambda size: (-len(size), size != name[: len(size)]))
    if starts:
        return starts[0]
    by_lower = {size.lower(): size for size in reversed(VIT_SIZES)}  # `g` over `G`: the first listed wins
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.5)
    return by_lower[close[0]] if close else None


def _variant_error(variant_str: str) -> VariantError:
    known = ", ".join(VIT_SIZES)
    loose = _LOOSE_VARIANT.match(variant_str.strip())
    hint = ""
    if loose is not None:
        size = _nearest_size(loose["name"])
        if size is not None:
            patch = f"/{loose['patch']}" if loose["patch"] else ""
            hint = f"; did you mean {('ViT-' if loose['prefix'] else '') + size + patch!r}?"
    return VariantError(
        f"unknown ViT variant {variant_str!r}: expected '[ViT-]<size>[/<patch size>]' (e.g. 'ViT-B/16') with "
        f"a size among {known}{hint}"
    )


@dataclasses.dataclass(frozen=True)
class ViTSpec:
    """The sizes of a Vision Transformer, from a variant string: `ViTSpec.from_variant_string("ViT-B/16")`."""

    hidden_size: int  # width of the tokens passed between blocks
    num_layers: int  # transformer blocks
    mlp_size: int  # hidden width of each block's MLP
    num_heads: int  # attention heads
    patch_size: int | None = None  # side of the square image patches

    @classmethod
    def from_variant_string(cls, variant_str: str) -> ViTSpec:
        """Parses `"ViT-L"`, `"B"`, `"Ti/16"`, `"vit_S/8"`.

        Raises:
            VariantError: the string is not of that form or names no size of `VIT_SIZES`; the message
              suggests the nearest valid string.
        """
        match = _VARIANT.match(variant_str)
        if match is None or match["name"] not in VIT_SIZES:
            raise _variant_error(variant_str)
        spec = cls(*VIT_SIZES[match["name"]])
        if match["patch"] is not None:
            spec = dataclasses.replace(spec, patch_size=int(match["patch"]))
        return spec

    @property
    def kwargs(self) -> dict[str, int]:
        """The sizes as keyword arguments of `VitEncoder.from_spec` (no `patch_size` when unset)."""
        sizes = dataclasses.asdict(self)
        if self.patch_size is None:
            del sizes["patch_size"]
        return sizes


@accept_training_property
class VitEncoder(nn.Module):
    """Patches embedded, a position embedding added, transformer blocks, a final norm: tokens `(*b, n, d)`.

    Attributes:
      layers: the transformer blocks, in order (named `layers_0`, `layers_1`, ...).
      embedding: images `(*b, h, w, c)` to tokens `(*b, n, d)` (e.g. `PatchifyEmbed`).
      pos_embedding: called as `pos_embedding(tokens.shape, axis=-2)`, added to the tokens.
      encoder_norm: applied to the output tokens; None for none.
      prepend_cls_token: put a learned `cls` token (param `cls`) first, after the position embedding.
      cls_token_init: initializer of the `cls` token.
      image: key of the images when the encoder is the model itself (e.g. `"batch.image"`).
    Usage: `kd.nn.VitEncoder.from_variant_str("ViT-Ti/8")`.
    """

    layers: Sequence[nn.Module]
    embedding: nn.Module
    pos_embedding: nn.Module = dataclasses.field(default_factory=LearnedEmbedding)
    encoder_norm: nn.Module | None = dataclasses.field(default_factory=nn.RMSNorm)
    prepend_cls_token: bool = False
    cls_token_init: Callable[..., jax.Array] = nn.initializers.zeros
    image: kontext.Key = kontext.REQUIRED

    @nn.compact
    def __call__(self, image: jax.Array) -> jax.Array:
        tokens = self.embedding(image)
        tokens = tokens + self.pos_embedding(tokens.shape, axis=-2)
        if self.prepend_cls_token:
            cls = self.param("cls", self.cls_token_init, tokens.shape[-1:], tokens.dtype)
            cls = jnp.broadcast_to(cls, (*tokens.shape[:-2], 1, tokens.shape[-1]))
            tokens = jnp.concatenate([cls, tokens], axis=-2)
        for layer in self.layers:
            tokens = layer(tokens)
        if self.encoder_norm is not None:
            tokens = self.encoder_norm(tokens)
        return tokens

    @classmethod
    def from_variant_str(cls, variant_str: str, **kwargs: Any) -> VitEncoder:
        """An encoder of the sizes `variant_str` names (`"ViT-B/16"`); `kwargs` override them or go to
        `from_spec` (`patch_size=14`, `prepend_cls_token=True`).

        Raises:
            VariantError: an unknown variant, or no patch size in the string nor in `kwargs`.
        """
        sizes = ViTSpec.from_variant_string(variant_str).kwargs | kwargs
        if sizes.get("patch_size") is None:
            raise VariantError(
                f"ViT variant {variant_str!r} names no patch size: write it as {variant_str + '/16'!r} (say) "
                "or pass patch_size=..."
            )
        return cls.from_spec(**sizes)

    @classmethod
    def from_spec(
        cls,
        num_heads: int,
        hidden_size: int,
        num_layers: int,
        patch_size: int | tuple[int, int],
        mlp_size: int | None = None,
        block_type: Callable[..., nn.Module] = PreNormBlock,
        dtype: Any = jnp.float32,
        **kwargs: Any,
    ) -> VitEncoder:
        """A `PatchifyEmbed` and `num_layers` blocks of `block_type` (LayerNorms of `dtype`, attention of
        `num_heads`, an MLP of `mlp_size`); `kwargs` go to the encoder (`prepend_cls_token=True`)."""
        return cls(
            embedding=PatchifyEmbed(patch_size=as_pair(patch_size), hidden_size=hidden_size),
            layers=tuple(
                block_type(
                    attention_norm=nn.LayerNorm(dtype=dtype),
                    mlp_norm=nn.LayerNorm(dtype=dtype),
                    attention=ImprovedMultiHeadDotProductAttention(num_heads=num_heads),
                    mlp=TransformerMLP(hidden_size=mlp_size),
                )
                for _ in range(num_layers)
            ),
            **kwargs,
        )


_MODES = ("gap", "cls_token", "cls_token_forced")


@accept_training_property
class Vit(nn.Module):
    """A ViT classifier: encoder tokens pooled (mean, or the first token), a tanh `pre_logits` Dense, then
    `classifier_head`; returns `{"logits": (*b, num_classes)}`.

    Attributes:
      encoder: images to tokens `(*b, n, d)`, e.g. `VitEncoder.from_variant_str("ViT-B/16")`.
      num_classes: width of the logits.
      init_head_bias: initializer of the head's bias.
      mode: `"gap"` averages the tokens; `"cls_token"` takes the first (the encoder must prepend a cls
        token); `"cls_token_forced"` takes the first without checking.
      image: key of the images, e.g. `"batch.image"`.
    Usage: `kd.nn.Vit(image="batch.image", encoder=kd.nn.VitEncoder.from_variant_str("ViT-Ti/8"))`.
    """

    encoder: nn.Module
    num_classes: int = 1000
    init_head_bias: Callable[..., jax.Array] = nn.initializers.zeros
    mode: Literal["gap", "cls_token", "cls_token_forced"] = "gap"
    image: kontext.Key = kontext.REQUIRED

    @nn.compact
    def __call__(self, image: jax.Array) -> dict[str, jax.Array]:
        if self.mode not in _MODES:
            raise ValueError(f"Vit(mode={self.mode!r}) is not one of {', '.join(map(repr, _MODES))}")
        if self.mode == "cls_token" and not getattr(self.encoder, "prepend_cls_token", False):
            raise ValueError(
                "Vit(mode='cls_token') takes the encoder's cls token, but the encoder prepends none: set "
                "prepend_cls_token=True on it, or use mode='gap' (or 'cls_token_forced' to take the first token)"
            )
        tokens = self.encoder(image)
        pooled = jnp.mean(tokens, axis=-2) if self.mode == "gap" else tokens[..., 0, :]
        pre_logits = nn.tanh(nn.Dense(pooled.shape[-1], name="pre_logits")(pooled))
        logits = nn.Dense(self.num_classes, bias_init=self.init_head_bias, name="classifier_head")(pre_logits)
        return {"logits": logits}


@accept_training_property
class VitAutoEncoder(nn.Module):
    """Encodes images to tokens and decodes each token linearly (`decoder`) to `h*w*c / n` values, laid
    back in raster order: `{"image": (*b, h, w, c)}`.

    As Kauldron's, token `i` fills the `i`-th run of `h*w*c / n` values of the flattened image (not its patch).
    Usage: `kd.nn.VitAutoEncoder(encoder=kd.nn.VitEncoder.from_variant_str("ViT-Ti/8"), image="batch.image")`.
    """

    encoder: nn.Module
    image: kontext.Key = kontext.REQUIRED

    @nn.compact
    def __call__(self, image: jax.Array) -> dict[str, jax.Array]:
        tokens = self.encoder(image)
        height, width, channels = image.shape[-3:]
        num_tokens = tokens.shape[-2]
        if (height * width * channels) % num_tokens:
            raise ValueError(
                f"VitAutoEncoder: the encoder gives {num_tokens} tokens, which do not divide the "
                f"{height}x{width}x{channels} = {height * width * channels} values of an image (a cls token "
                "adds one: leave prepend_cls_token off)"
            )
        values = nn.Dense(height * width * channels // num_tokens, name="decoder")(tokens)
        return {"image": values.reshape(image.shape)}
