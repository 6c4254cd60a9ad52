"""kd.nn: modules and helpers for models trained by kd (flax linen and NNX).

cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=10), keys="batch.x")
"""

from ._adapter import ExternalModule as ExternalModule
from ._models import FlatAutoencoder as FlatAutoencoder
from ._train_property import is_training as is_training
from ._train_property import train_property as train_property
from ._train_property import training_mode as training_mode

__all__ = ["ExternalModule", "FlatAutoencoder", "is_training", "train_property", "training_mode"]
