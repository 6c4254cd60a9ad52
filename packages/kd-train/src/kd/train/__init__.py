"""kd.train: the Trainer (model + data + optimizer + losses wired by kontext keys) and its parts.

state, aux = konfig.resolve(cfg).train()   # cfg = kd.train.Trainer(...) built in a konfig config
cfg.hooks = [kd.train.EarlyStopping(monitor="val/losses/l2", patience=3)]   # or your own kd.train.Hook
preds = trainer.predict(eval_ds)   # the trained run's outputs; kd.train.lr_find(trainer).suggestion: a learning rate
"""

from kd._root_ref import ROOT_CFG_REF as ROOT_CFG_REF
from kd.runtime import AuxiliariesOutput as AuxiliariesOutput
from kd.runtime import AuxiliariesState as AuxiliariesState
from kd.runtime import AuxState as AuxState
from kd.runtime import ConfigError as ConfigError
from kd.runtime import Context as Context
from kd.runtime import InterestFilter as InterestFilter
from kd.runtime import KeyPathError as KeyPathError
from kd.runtime import LinenModel as LinenModel
from kd.runtime import NnxModel as NnxModel
from kd.runtime import NonFiniteLossError as NonFiniteLossError
from kd.runtime import RngStream as RngStream
from kd.runtime import RngStreams as RngStreams
from kd.runtime import ShapeMismatchError as ShapeMismatchError
from kd.runtime import TrainState as TrainState
from kd.runtime import get_batch_stats as get_batch_stats
from kd.writers import KDMetricWriter as KDMetricWriter

from ._compiles import CompileLog as CompileLog
from ._early_stopping import EarlyStopping as EarlyStopping
from ._eval_only import eval_only_in_place as eval_only_in_place
from ._evaluations import Evaluation as Evaluation
from ._evaluations import as_evaluations as as_evaluations
from ._forward import Auxiliaries as Auxiliaries
from ._forward import forward as forward
from ._forward import forward_with_loss as forward_with_loss
from ._hook import Hook as Hook
from ._hooks import evaluate_and_write as evaluate_and_write
from ._lr_find import LrFindResult as LrFindResult
from ._lr_find import learning_rate_source as learning_rate_source
from ._lr_find import lr_find as lr_find
from ._precision import MixedPrecision as MixedPrecision
from ._predict import latest_state as latest_state
from ._predict import predict_batches as predict_batches
from ._profiler import Profiler as Profiler
from ._progress import Progress as Progress
from ._run_record import DONE_FILE as DONE_FILE
from ._run_record import stopped_early as stopped_early
from ._setup import Setup as Setup
from ._setup import TqdmInfo as TqdmInfo
from ._step import TrainStep as TrainStep
from ._timer import PerformanceTimer as PerformanceTimer
from ._trainer import Trainer as Trainer

__all__ = [
    "DONE_FILE",
    "ROOT_CFG_REF",
    "AuxState",
    "Auxiliaries",
    "AuxiliariesOutput",
    "AuxiliariesState",
    "CompileLog",
    "ConfigError",
    "Context",
    "EarlyStopping",
    "Evaluation",
    "Hook",
    "InterestFilter",
    "KDMetricWriter",
    "KeyPathError",
    "LinenModel",
    "LrFindResult",
    "MixedPrecision",
    "NnxModel",
    "NonFiniteLossError",
    "PerformanceTimer",
    "Profiler",
    "Progress",
    "RngStream",
    "RngStreams",
    "Setup",
    "ShapeMismatchError",
    "TqdmInfo",
    "TrainState",
    "TrainStep",
    "Trainer",
    "eval_only_in_place",
    "as_evaluations",
    "evaluate_and_write",
    "forward",
    "forward_with_loss",
    "get_batch_stats",
    "latest_state",
    "learning_rate_source",
    "lr_find",
    "predict_batches",
    "stopped_early",
]
