"""kd.train: the Trainer (model + data + optimizer + losses wired by kontext keys) and its parts.

state, aux = konfig.resolve(cfg).train()   # cfg = kd.train.Trainer(...) built in a konfig config
"""

from kd._root_ref import ROOT_CFG_REF as ROOT_CFG_REF

from ._aux import AuxState as AuxState
from ._context import Context as Context
from ._errors import ConfigError as ConfigError
from ._errors import KeyPathError as KeyPathError
from ._errors import ShapeMismatchError as ShapeMismatchError
from ._model import InterestFilter as InterestFilter
from ._model import LinenModel as LinenModel
from ._model import NnxModel as NnxModel
from ._rngs import RngStream as RngStream
from ._rngs import RngStreams as RngStreams
from ._state import TrainState as TrainState
from ._step import TrainStep as TrainStep
from ._trainer import Trainer as Trainer

__all__ = [
    "ROOT_CFG_REF",
    "AuxState",
    "ConfigError",
    "Context",
    "InterestFilter",
    "KeyPathError",
    "LinenModel",
    "NnxModel",
    "RngStream",
    "RngStreams",
    "ShapeMismatchError",
    "TrainState",
    "TrainStep",
    "Trainer",
]
