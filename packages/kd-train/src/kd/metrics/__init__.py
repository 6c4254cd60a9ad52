"""kd.metrics: metrics are frozen configs with `kontext.Key` fields; their states are JAX pytrees.

    accuracy = kd.metrics.Accuracy(logits="preds.logits", labels="batch.label")
    state = accuracy.get_state_from_context(context)  # inside the jitted step
    state = state.merge(previous_state)  # accumulate across steps
    value = jax.device_get(state).compute()  # on the host

A metric's `get_state(**inputs)` returns a `State` (its `parent` is the metric); `State.merge`
accumulates, `State.compute` gives the value. Custom states declare their fields with
`AutoState` and `sum_field` / `concat_field` / `truncate_field` / `state_field` / ... .
Wrappers apply a metric to the leaves of a tree (`TreeMap`, `TreeReduce`) or skip it when its
inputs are missing (`SkipIfMissing`).
"""

from ._auto_state import AutoState as AutoState
from ._auto_state import AutoStateOutput as AutoStateOutput
from ._auto_state import concat_field as concat_field
from ._auto_state import max_field as max_field
from ._auto_state import min_field as min_field
from ._auto_state import state_field as state_field
from ._auto_state import sum_field as sum_field
from ._auto_state import truncate_field as truncate_field
from ._base import Metric as Metric
from ._base import NoopMetric as NoopMetric
from ._classification import Accuracy as Accuracy
from ._classification import BinaryAccuracy as BinaryAccuracy
from ._classification import Precision1 as Precision1
from ._classification import RocAuc as RocAuc
from ._classification import RocAucState as RocAucState
from ._clustering import Ari as Ari
from ._errors import StateMergeError as StateMergeError
from ._image import Psnr as Psnr
from ._image import Ssim as Ssim
from ._lpips import LpipsVgg as LpipsVgg
from ._skip import SkipIfMissing as SkipIfMissing
from ._state import EMPTY as EMPTY
from ._state import AverageState as AverageState
from ._state import CollectFirstState as CollectFirstState
from ._state import CollectingState as CollectingState
from ._state import EmptyState as EmptyState
from ._state import State as State
from ._state import SumState as SumState
from ._state import state_dataclass as state_dataclass
from ._state import static_field as static_field
from ._stats import Average as Average
from ._stats import Norm as Norm
from ._stats import NormState as NormState
from ._stats import SingleDimension as SingleDimension
from ._stats import Std as Std
from ._stats import StdState as StdState
from ._tree import TreeMap as TreeMap
from ._tree import TreeReduce as TreeReduce
from ._tree import TreeState as TreeState

__all__ = [
    "Accuracy",
    "Ari",
    "AutoState",
    "AutoStateOutput",
    "Average",
    "AverageState",
    "BinaryAccuracy",
    "CollectFirstState",
    "CollectingState",
    "EMPTY",
    "EmptyState",
    "LpipsVgg",
    "Metric",
    "NoopMetric",
    "Norm",
    "NormState",
    "Precision1",
    "Psnr",
    "RocAuc",
    "RocAucState",
    "SingleDimension",
    "SkipIfMissing",
    "Ssim",
    "State",
    "StateMergeError",
    "Std",
    "StdState",
    "SumState",
    "TreeMap",
    "TreeReduce",
    "TreeState",
    "concat_field",
    "max_field",
    "min_field",
    "state_dataclass",
    "state_field",
    "static_field",
    "sum_field",
    "truncate_field",
]
