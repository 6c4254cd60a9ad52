"""kd.data.iters: Kauldron's iterator wrappers.

it = kd.data.iters.PyGrainIterator(source=pipeline, iter=iter(grain_dataset))
"""

from kd.data._iters import Iterator as Iterator
from kd.data._iters import NonCheckpointableIterator as NonCheckpointableIterator
from kd.data._iters import PyGrainIterator as PyGrainIterator

__all__ = ["Iterator", "NonCheckpointableIterator", "PyGrainIterator"]
