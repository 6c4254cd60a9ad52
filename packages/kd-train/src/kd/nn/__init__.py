"""kd.nn: modules and helpers for models trained by kd (flax linen and NNX), with Kauldron's `kd.nn` names.

cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=10), keys="batch.x")
cfg.model = kd.nn.Vit(image="batch.image", encoder=kd.nn.VitEncoder.from_variant_str("ViT-Ti/8"))
cfg.model = kd.nn.DecoderLM.from_variant_str("LM-B", vocab_size=51200, tokens="batch.inputs", dtype="bfloat16")
cfg.model = kd.nn.Sequential(inputs="batch.x", layers=[nn.Dense(8), kd.nn.Dropout(0.1), nn.Dense(1)])
"""

from ._adapter import ExternalModule as ExternalModule
from ._adapter import WrapperModule as WrapperModule
from ._attention import ImprovedMultiHeadDotProductAttention as ImprovedMultiHeadDotProductAttention
from ._attention import MultiHeadDotProductAttention as MultiHeadDotProductAttention
from ._attention import SelfAttention as SelfAttention
from ._attention_kernels import attention_implementation as attention_implementation
from ._attention_kernels import dot_product_attention as dot_product_attention
from ._attention_kernels import dot_product_attention_weights as dot_product_attention_weights
from ._errors import PatchSizeError as PatchSizeError
from ._errors import TrainingModeError as TrainingModeError
from ._errors import VariantError as VariantError
from ._interms import interms_property as interms_property
from ._lm import DecoderBlock as DecoderBlock
from ._lm import DecoderLM as DecoderLM
from ._lm import LMSpec as LMSpec
from ._misc import Dropout as Dropout
from ._misc import DummyModel as DummyModel
from ._misc import Identity as Identity
from ._misc import Rearrange as Rearrange
from ._misc import Reduce as Reduce
from ._models import FlatAutoencoder as FlatAutoencoder
from ._models import Sequential as Sequential
from ._patchify import Patchify as Patchify
from ._patchify import PatchifyEmbed as PatchifyEmbed
from ._pos_embeddings import AddEmbedding as AddEmbedding
from ._pos_embeddings import AddLearnedEmbedding as AddLearnedEmbedding
from ._pos_embeddings import FourierEmbedding as FourierEmbedding
from ._pos_embeddings import LearnedEmbedding as LearnedEmbedding
from ._pos_embeddings import ZeroEmbedding as ZeroEmbedding
from ._pos_embeddings import convert_to_fourier_features as convert_to_fourier_features
from ._train_property import is_training as is_training
from ._train_property import set_train_property as set_train_property
from ._train_property import train_property as train_property
from ._train_property import training_mode as training_mode
from ._transformers import ParallelAttentionBlock as ParallelAttentionBlock
from ._transformers import PostNormBlock as PostNormBlock
from ._transformers import PreNormBlock as PreNormBlock
from ._transformers import TransformerMLP as TransformerMLP
from ._types import AttentionModule as AttentionModule
from ._types import ImageTokenizer as ImageTokenizer
from ._types import NormModule as NormModule
from ._types import TransformerBlock as TransformerBlock
from ._vit import Vit as Vit
from ._vit import VitAutoEncoder as VitAutoEncoder
from ._vit import VitEncoder as VitEncoder
from ._vit import ViTSpec as ViTSpec

__all__ = [
    "AddEmbedding",
    "AddLearnedEmbedding",
    "AttentionModule",
    "DecoderBlock",
    "DecoderLM",
    "Dropout",
    "DummyModel",
    "ExternalModule",
    "FlatAutoencoder",
    "FourierEmbedding",
    "Identity",
    "ImageTokenizer",
    "ImprovedMultiHeadDotProductAttention",
    "LMSpec",
    "LearnedEmbedding",
    "MultiHeadDotProductAttention",
    "NormModule",
    "ParallelAttentionBlock",
    "PatchSizeError",
    "Patchify",
    "PatchifyEmbed",
    "PostNormBlock",
    "PreNormBlock",
    "Rearrange",
    "Reduce",
    "SelfAttention",
    "Sequential",
    "TrainingModeError",
    "TransformerBlock",
    "TransformerMLP",
    "VariantError",
    "ViTSpec",
    "Vit",
    "VitAutoEncoder",
    "VitEncoder",
    "WrapperModule",
    "ZeroEmbedding",
    "attention_implementation",
    "convert_to_fourier_features",
    "dot_product_attention",
    "dot_product_attention_weights",
    "interms_property",
    "is_training",
    "set_train_property",
    "train_property",
    "training_mode",
]
