"""kd.writers: where the Trainer's logged values go (terminal, JSON lines, memory).

trainer = kd.train.Trainer(..., writer=kd.writers.InMemoryWriter())
"""

from ._base import InMemoryWriter as InMemoryWriter
from ._base import JsonlWriter as JsonlWriter
from ._base import MultiWriter as MultiWriter
from ._base import PrintWriter as PrintWriter
from ._base import Writer as Writer

__all__ = ["InMemoryWriter", "JsonlWriter", "MultiWriter", "PrintWriter", "Writer"]
