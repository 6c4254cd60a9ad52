"""kd.contrib.metrics: Kauldron's contributed metrics (`kauldron.contrib.metrics`).

    cfg.train_metrics = {"rmse": kd.contrib.metrics.RootMeanSquaredError(preds="preds.y", targets="batch.y")}

`MeanCov` is a metric state (a running mean and covariance) for metrics to build on;
`MultilabelAveragePrecision` and `RootMeanSquaredError` are metrics.
"""

from ._meancov import MeanCov as MeanCov
from ._multilabel_average_precision import MultilabelAveragePrecision as MultilabelAveragePrecision
from ._multilabel_average_precision import MultilabelAveragePrecisionState as MultilabelAveragePrecisionState
from ._regression import RMSE_MODES as RMSE_MODES
from ._regression import RootMeanSquaredError as RootMeanSquaredError
from ._regression import RootMeanSquaredErrorState as RootMeanSquaredErrorState

__all__ = [
    "RMSE_MODES",
    "MeanCov",
    "MultilabelAveragePrecision",
    "MultilabelAveragePrecisionState",
    "RootMeanSquaredError",
    "RootMeanSquaredErrorState",
]
