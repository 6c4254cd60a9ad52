"""kd.data.py: Kauldron's grain pipelines (needs grain: `pip install 'kd-train[grain]'`).

    ds = kd.data.py.Mix([kd.data.py.Tfds("mnist", split="train", shuffle=True),
                         kd.data.py.Json(path="extra.json", shuffle=True)],
                        weights=[9, 1], batch_size=64, num_workers=4,
                        transforms=[kd.data.ValueRange(key="image", vrange=(0, 1))])

Sources: `DataSource` (any random-access source, or a dict of arrays: `ArraysSource`), `ArrayRecord`, `Tfds` (`tfds.data_source`: ArrayRecord, no TensorFlow;
`pip install 'kd-train[tfds]'`), `Json`, `HuggingFace`; mixtures: `Mix`, `SelectFromDatasets`; the base
classes `PyGrainPipeline` and `DataSourceBase`. The transforms of `kd.data` are here too, with the random
ones (`RandomCrop`, `RandomFlipLeftRight`) and `SliceDataset`.
"""

try:
    import grain as _grain  # noqa: F401
except ImportError as _e:
    raise ImportError("kd.data.py needs grain, which is not installed: pip install 'kd-train[grain]'") from _e

from kd.data._map_transforms import Cast as Cast
from kd.data._map_transforms import CenterCrop as CenterCrop
from kd.data._map_transforms import Gather as Gather
from kd.data._map_transforms import Rearrange as Rearrange
from kd.data._map_transforms import Resize as Resize
from kd.data._map_transforms import ValueRange as ValueRange
from kd.data._random_transforms import ElementWiseRandomTransform as ElementWiseRandomTransform
from kd.data._random_transforms import RandomCrop as RandomCrop
from kd.data._random_transforms import RandomFlipLeftRight as RandomFlipLeftRight
from kd.data._transform_base import AddConstants as AddConstants
from kd.data._transform_base import Elements as Elements
from kd.data._transform_base import ElementWiseTransform as ElementWiseTransform
from kd.data._transform_base import TreeFlattenWithPath as TreeFlattenWithPath
from kd.data.py._apply import SliceDataset as SliceDataset
from kd.data.py._mixtures import Mix as Mix
from kd.data.py._mixtures import SelectFromDatasets as SelectFromDatasets
from kd.data.py._pipeline import DataSourceBase as DataSourceBase
from kd.data.py._pipeline import DropRemainder as DropRemainder
from kd.data.py._pipeline import PyGrainPipeline as PyGrainPipeline
from kd.data.py._sources import ArrayRecord as ArrayRecord
from kd.data.py._sources import ArraysSource as ArraysSource
from kd.data.py._sources import DataSource as DataSource
from kd.data.py._sources import HuggingFace as HuggingFace
from kd.data.py._sources import Json as Json
from kd.data.py._sources import JsonDataSource as JsonDataSource
from kd.data.py._sources import Tfds as Tfds

__all__ = [
    "AddConstants",
    "ArrayRecord",
    "ArraysSource",
    "Cast",
    "CenterCrop",
    "DataSource",
    "DataSourceBase",
    "DropRemainder",
    "ElementWiseRandomTransform",
    "ElementWiseTransform",
    "Elements",
    "Gather",
    "HuggingFace",
    "Json",
    "JsonDataSource",
    "Mix",
    "PyGrainPipeline",
    "RandomCrop",
    "RandomFlipLeftRight",
    "Rearrange",
    "Resize",
    "SelectFromDatasets",
    "SliceDataset",
    "Tfds",
    "TreeFlattenWithPath",
    "ValueRange",
]
