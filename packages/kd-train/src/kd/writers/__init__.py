"""kd.writers: where the Trainer's logged values go (terminal, JSON lines, TensorBoard, memory).

trainer = kd.train.Trainer(..., writer=kd.writers.InMemoryWriter())
trainer = kd.train.Trainer(..., writer=kd.writers.MultiWriter(writers=[kd.writers.PrintWriter(),
                                                                         kd.writers.TensorBoardWriter()]))

A writer of your own subclasses `Writer` and implements what it needs (`write_scalars`, ...).
"""

from ._base import InMemoryWriter as InMemoryWriter
from ._base import JsonlWriter as JsonlWriter
from ._base import MultiWriter as MultiWriter
from ._base import NoopWriter as NoopWriter
from ._base import PrintWriter as PrintWriter
from ._base import Writer as Writer
from ._default import KDMetricWriter as KDMetricWriter
from ._tensorboard import TensorBoardWriter as TensorBoardWriter

__all__ = [
    "InMemoryWriter",
    "JsonlWriter",
    "KDMetricWriter",
    "MultiWriter",
    "NoopWriter",
    "PrintWriter",
    "TensorBoardWriter",
    "Writer",
]
