"""kd.data.iters: Kauldron's iterator wrappers.

it = kd.data.iters.PyGrainIterator(source=pipeline, iter=iter(grain_dataset))
manager.save(step, args=kd.data.iters.NoopArg(it))   # an orbax item that writes nothing
"""

from kd.data._iters import Iterator as Iterator
from kd.data._iters import NonCheckpointableIterator as NonCheckpointableIterator
from kd.data._iters import PyGrainIterator as PyGrainIterator

_WITH_ORBAX = ("NoopArg", "NoopHandler")  # orbax is imported when one of them is first asked for


def __getattr__(name: str) -> object:
    if name in _WITH_ORBAX:
        from kd.data import _noop_handler

        return getattr(_noop_handler, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Iterator", "NonCheckpointableIterator", "NoopArg", "NoopHandler", "PyGrainIterator"]
