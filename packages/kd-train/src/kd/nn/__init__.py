"""kd.nn: modules and helpers for models trained by kd (flax linen and NNX).

cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=10), keys="batch.x")
cfg.model = kd.nn.Vit(image="batch.image", encoder=kd.nn.VitEncoder.from_variant_str("ViT-Ti/8"))
"""

from ._adapter import ExternalModule as ExternalModule
from ._attention import ImprovedMultiHeadDotProductAttention as ImprovedMultiHeadDotProductAttention
from ._attention import MultiHeadDotProductAttention as MultiHeadDotProductAttention
from ._attention import dot_product_attention_weights as dot_product_attention_weights
from ._errors import PatchSizeError as PatchSizeError
from ._errors import VariantError as VariantError
from ._models import FlatAutoencoder as FlatAutoencoder
from ._patchify import Patchify as Patchify
from ._patchify import PatchifyEmbed as PatchifyEmbed
from ._pos_embeddings import LearnedEmbedding as LearnedEmbedding
from ._pos_embeddings import ZeroEmbedding as ZeroEmbedding
from ._train_property import is_training as is_training
from ._train_property import train_property as train_property
from ._train_property import training_mode as training_mode
from ._transformers import ParallelAttentionBlock as ParallelAttentionBlock
from ._transformers import PostNormBlock as PostNormBlock
from ._transformers import PreNormBlock as PreNormBlock
from ._transformers import TransformerMLP as TransformerMLP
from ._vit import Vit as Vit
from ._vit import VitAutoEncoder as VitAutoEncoder
from ._vit import VitEncoder as VitEncoder
from ._vit import ViTSpec as ViTSpec

__all__ = [
    "ExternalModule",
    "FlatAutoencoder",
    "ImprovedMultiHeadDotProductAttention",
    "LearnedEmbedding",
    "MultiHeadDotProductAttention",
    "ParallelAttentionBlock",
    "PatchSizeError",
    "Patchify",
    "PatchifyEmbed",
    "PostNormBlock",
    "PreNormBlock",
    "TransformerMLP",
    "VariantError",
    "ViTSpec",
    "Vit",
    "VitAutoEncoder",
    "VitEncoder",
    "ZeroEmbedding",
    "dot_product_attention_weights",
    "is_training",
    "train_property",
    "training_mode",
]
