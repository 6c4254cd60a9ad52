"""kd.runtime: what a model run is made of, below the Trainer: the model adapter, Context, state, RNG streams.

    model = kd.runtime.as_model(trainer.model)   # LinenModel or NnxModel: init / apply on a Context
    context = kd.runtime.Context(step=0, batch=batch, params=state.params, collections=state.collections)
    print(kd.runtime.parameter_table(trainer.state_specs.params))   # what a run prints at its start

kd.train, kd.evals, kd.export and kd.inspect all build on these; kd.train lists the same names (`kd.train.Context`),
the spellings a config and Kauldron's code use.
"""

from ._aux import AuxiliariesOutput as AuxiliariesOutput
from ._aux import AuxiliariesState as AuxiliariesState
from ._aux import AuxState as AuxState
from ._batch_stats import BatchStats as BatchStats
from ._batch_stats import get_batch_stats as get_batch_stats
from ._build_model import build_model as build_model
from ._context import Context as Context
from ._errors import ConfigError as ConfigError
from ._errors import KeyPathError as KeyPathError
from ._errors import NonFiniteLossError as NonFiniteLossError
from ._errors import ShapeMismatchError as ShapeMismatchError
from ._intermediates import intermediate_specs as intermediate_specs
from ._model import EveryIntermediate as EveryIntermediate
from ._model import InterestFilter as InterestFilter
from ._model import LinenModel as LinenModel
from ._model import NnxModel as NnxModel
from ._model import as_model as as_model
from ._model import is_nnx_module as is_nnx_module
from ._parameters import parameter_counts as parameter_counts
from ._parameters import parameter_table as parameter_table
from ._propagate import fill_from_root as fill_from_root
from ._rngs import RngStream as RngStream
from ._rngs import RngStreams as RngStreams
from ._rngs import as_rng_streams as as_rng_streams
from ._state import TrainState as TrainState

__all__ = [
    "AuxState",
    "AuxiliariesOutput",
    "AuxiliariesState",
    "BatchStats",
    "ConfigError",
    "Context",
    "EveryIntermediate",
    "InterestFilter",
    "KeyPathError",
    "LinenModel",
    "NnxModel",
    "NonFiniteLossError",
    "RngStream",
    "RngStreams",
    "ShapeMismatchError",
    "TrainState",
    "as_model",
    "as_rng_streams",
    "build_model",
    "get_batch_stats",
    "fill_from_root",
    "intermediate_specs",
    "is_nnx_module",
    "parameter_counts",
    "parameter_table",
]
