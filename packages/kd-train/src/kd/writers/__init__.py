"""kd.writers: where the Trainer's logged values go (terminal, JSON lines, TensorBoard, memory, W&B, MLflow).

trainer = kd.train.Trainer(..., writer=kd.writers.InMemoryWriter())
trainer = kd.train.Trainer(..., writer=kd.writers.MultiWriter(writers=[kd.writers.PrintWriter(),
                                                                         kd.writers.TensorBoardWriter()]))

trainer = kd.train.Trainer(..., writer=kd.writers.MultiWriter(writers=[kd.writers.KDMetricWriter(),
                                                                         kd.writers.WandbWriter(project="p")]))
# kd-train ... --track=wandb,mlflow: the same beside the default writers (extras kd-train[wandb], [mlflow])

A writer of your own subclasses `Writer` and implements what it needs (`write_scalars`, ...).
"""

from ._base import CollectionWriter as CollectionWriter
from ._base import InMemoryWriter as InMemoryWriter
from ._base import JsonlWriter as JsonlWriter
from ._base import MultiWriter as MultiWriter
from ._base import NoopWriter as NoopWriter
from ._base import PrintWriter as PrintWriter
from ._base import Writer as Writer
from ._base import short_labels as short_labels
from ._default import KDMetricWriter as KDMetricWriter
from ._left_out import leave_out_writers as leave_out_writers
from ._mlflow import MlflowWriter as MlflowWriter
from ._tensorboard import TensorBoardWriter as TensorBoardWriter
from ._tracker import TrackerWriter as TrackerWriter
from ._wandb import WandbWriter as WandbWriter

__all__ = [
    "CollectionWriter",
    "InMemoryWriter",
    "JsonlWriter",
    "KDMetricWriter",
    "MlflowWriter",
    "MultiWriter",
    "NoopWriter",
    "PrintWriter",
    "TensorBoardWriter",
    "TrackerWriter",
    "WandbWriter",
    "Writer",
    "leave_out_writers",
    "short_labels",
]
