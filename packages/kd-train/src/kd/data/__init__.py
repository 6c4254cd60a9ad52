"""kd.data: batch pipelines the Trainer iterates, resumes exactly and reads shapes from.

    from kd import data
    pipeline = data.InMemoryPipeline(loader=data.SyntheticRegression(num_examples=1024), batch_size=64, seed=0)
    it = iter(pipeline)
    batch = next(it)                 # {"x": f32[64, 2], "y": f32[64, 1]}: this host's rows
    state = it.get_state()           # {"epoch": 0, "index": 1}: JSON, saved with a checkpoint
    it = pipeline.iter_from_state(state)  # yields what would have followed `batch`

Every pipeline: `iter(p)` (a `CheckpointableIterator`: `get_state()` / `set_state(state)`),
`p.iter_from_state(state)`, `p.element_spec` (a tree of `jax.ShapeDtypeStruct`, one host-local
batch), `len(p)` (batches per epoch, TypeError when unknown), `p.num_epochs` (None: forever) and
`p.seed` (defaults to `ROOT_CFG_REF.seed`, filled by the Trainer). `batch_size` is global: host i of
n yields rows [i*b/n, (i+1)*b/n) of each batch. An iterator that is also a `RowsIterator`
(`InMemoryPipeline`'s) lets the Trainer keep the examples on the device and gather batches there.
"""

from kd.data._base import Pipeline as Pipeline
from kd.data._base import spec_of as spec_of
from kd.data._errors import BatchSizeError as BatchSizeError
from kd.data._errors import LengthMismatchError as LengthMismatchError
from kd.data._errors import SeedNotSetError as SeedNotSetError
from kd.data._errors import StateError as StateError
from kd.data._from_iterable import FromIterable as FromIterable
from kd.data._grain import GrainPipeline as GrainPipeline
from kd.data._in_memory import InMemoryPipeline as InMemoryPipeline
from kd.data._iterator import CheckpointableIterator as CheckpointableIterator
from kd.data._iterator import RowsIterator as RowsIterator
from kd.data._synthetic import SyntheticRegression as SyntheticRegression

__all__ = [
    "BatchSizeError",
    "CheckpointableIterator",
    "FromIterable",
    "GrainPipeline",
    "InMemoryPipeline",
    "LengthMismatchError",
    "Pipeline",
    "RowsIterator",
    "SeedNotSetError",
    "StateError",
    "SyntheticRegression",
    "spec_of",
]
