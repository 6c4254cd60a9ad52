"""kd.data: batch pipelines the Trainer iterates, resumes exactly and reads shapes from (Kauldron's names).

    from kd import data
    pipeline = data.InMemoryPipeline(loader=data.SyntheticRegression(num_examples=1024), batch_size=64, seed=0)
    it = iter(pipeline)
    batch = next(it)                 # {"x": f32[64, 2], "y": f32[64, 1]}: this host's rows
    state = it.get_state()           # {"epoch": 0, "index": 1}: JSON, saved with a checkpoint
    it = pipeline.iter_from_state(state)  # yields what would have followed `batch`

    ds = data.py.Tfds("mnist", split="train", shuffle=True, batch_size=64,   # grain, no TensorFlow
                      transforms=[data.Elements(keep=["image"]), data.ValueRange(key="image", vrange=(0, 1))])

Every pipeline: `iter(p)` (a `CheckpointableIterator`: `get_state()` / `set_state(state)`),
`p.iter_from_state(state)`, `p.element_spec` (a tree of `jax.ShapeDtypeStruct`, one host-local
batch), `len(p)` (batches over all epochs, Kauldron's meaning; TypeError when endless),
`p.batches_per_epoch`, `p.num_epochs` (None: forever) and `p.seed` (defaults to `ROOT_CFG_REF.seed`,
filled by the Trainer), and the views `take`, `map`, `cache`, `prefetch`, `device_put`. `batch_size` is
global: host i of n yields rows [i*b/n, (i+1)*b/n) of each batch. An iterator that is also a
`RowsIterator` (`InMemoryPipeline`'s) lets the Trainer keep the examples on the device.

Transforms (`Elements`, `Rearrange`, `ValueRange`, ...) work on one example (a dict) with NumPy.
`kd.data.py` (grain pipelines: `PyGrainPipeline`, `DataSource`, `Tfds`, `Json`, `Mix`) and
`kd.data.iters` load on first use; `kd.data.tf` (TensorFlow's tf.data) is not ported: each of its names
says which `kd.data.py` one to use.
"""

import importlib as _importlib

from kd.data._base import Pipeline as Pipeline
from kd.data._base import spec_of as spec_of
from kd.data._batch_size import BatchSize as BatchSize
from kd.data._errors import BatchSizeError as BatchSizeError
from kd.data._errors import LengthMismatchError as LengthMismatchError
from kd.data._errors import SeedNotSetError as SeedNotSetError
from kd.data._errors import StateError as StateError
from kd.data._from_iterable import FromIterable as FromIterable
from kd.data._grain import GrainPipeline as GrainPipeline
from kd.data._in_memory import InMemoryPipeline as InMemoryPipeline
from kd.data._iterable import IterableDataset as IterableDataset
from kd.data._iterator import CheckpointableIterator as CheckpointableIterator
from kd.data._iterator import RowsIterator as RowsIterator
from kd.data._map_transforms import Cast as Cast
from kd.data._map_transforms import CenterCrop as CenterCrop
from kd.data._map_transforms import Gather as Gather
from kd.data._map_transforms import Rearrange as Rearrange
from kd.data._map_transforms import Resize as Resize
from kd.data._map_transforms import ValueRange as ValueRange
from kd.data._random_transforms import ElementWiseRandomTransform as ElementWiseRandomTransform
from kd.data._random_transforms import RandomCrop as RandomCrop
from kd.data._random_transforms import RandomFlipLeftRight as RandomFlipLeftRight
from kd.data._synthetic import SyntheticRegression as SyntheticRegression
from kd.data._transform_base import AddConstants as AddConstants
from kd.data._transform_base import Elements as Elements
from kd.data._transform_base import ElementWiseTransform as ElementWiseTransform
from kd.data._transform_base import FilterTransform as FilterTransform
from kd.data._transform_base import MapTransform as MapTransform
from kd.data._transform_base import TreeFlattenWithPath as TreeFlattenWithPath

_SUBMODULES = frozenset({"py", "iters", "tf"})

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.data import iters as iters
    from kd.data import py as py
    from kd.data import tf as tf
del TYPE_CHECKING


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:  # grain is imported by kd.data.py only when it is used.
        module = _importlib.import_module(f"kd.data.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'kd.data' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)


__all__ = [
    "AddConstants",
    "BatchSize",
    "BatchSizeError",
    "Cast",
    "CenterCrop",
    "CheckpointableIterator",
    "ElementWiseRandomTransform",
    "ElementWiseTransform",
    "Elements",
    "FilterTransform",
    "FromIterable",
    "Gather",
    "GrainPipeline",
    "InMemoryPipeline",
    "IterableDataset",
    "LengthMismatchError",
    "MapTransform",
    "Pipeline",
    "RandomCrop",
    "RandomFlipLeftRight",
    "Rearrange",
    "Resize",
    "RowsIterator",
    "SeedNotSetError",
    "StateError",
    "SyntheticRegression",
    "TreeFlattenWithPath",
    "ValueRange",
    "iters",
    "py",
    "spec_of",
    "tf",
]
