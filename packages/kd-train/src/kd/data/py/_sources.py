"""The sources of `kd.data.py`: any grain data source, TFDS (ArrayRecord), JSON, Hugging Face (Kauldron's).

Usage:

    kd.data.py.DataSource(grain.sources.RangeDataSource(0, 10, 1), shuffle=False, batch_size=2)
    kd.data.py.Tfds("mnist", split="train", shuffle=True, batch_size=64)   # pip install 'kd-train[tfds]'
    kd.data.py.Json(path="examples.json", shuffle=False)
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import konfig

from kd.data.py import _pipeline


@dataclasses.dataclass(frozen=True)
class DataSource(_pipeline.DataSourceBase):
    """Any random-access source (`__len__`, `__getitem__`: grain's sources, a list of examples), or a dict
    of arrays sharing their first dimension (example i: each array's row i).

    Attributes:
      data_source: the source.
    """

    data_source: Any  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.data_source, Mapping):
            ArraysSource(self.data_source)  # Checked now: arrays of one length.
        elif not (hasattr(self.data_source, "__len__") and hasattr(self.data_source, "__getitem__")):
            raise TypeError(
                "DataSource: data_source must support random access (__len__ and __getitem__: a grain data "
                f"source, a list of examples) or be a dict of arrays; got {type(self.data_source).__name__}"
            )

    def random_access_source(self) -> Any:
        if isinstance(self.data_source, Mapping):
            return ArraysSource(self.data_source)
        if isinstance(self.data_source, (list, tuple)):
            return ExamplesSource(self.data_source)
        return self.data_source


class ExamplesSource:
    """A list of examples read as a source: `source[i]` is example i with its dicts, lists and tuples rebuilt
    (plain, mutable dicts, also when the list came frozen from a config), so a transform may add, remove or
    replace its entries; arrays are shared, not copied.

    Usage: `kd.data.py.DataSource([{"src": "hello", "dst": "world"}, ...])` (a list is wrapped so).
    """

    def __init__(self, examples: Sequence[Any]) -> None:
        self._examples = examples

    def __len__(self) -> int:
        return len(self._examples)

    def __getitem__(self, index: int) -> Any:
        return konfig.unfreeze(self._examples[index])  # dicts, lists and tuples rebuilt; arrays shared

    def __repr__(self) -> str:
        return f"ExamplesSource({len(self._examples)} examples)"


class ArraysSource:
    """A dict of arrays sharing their first dimension, read as examples: `source[i]` is row i of each.

    Usage: `kd.data.py.DataSource(kd.data.py.ArraysSource({"image": images, "label": labels}), shuffle=True)`
    (a plain dict passed to `DataSource` is wrapped so).
    """

    def __init__(self, arrays: Mapping[str, Any]) -> None:
        import numpy as np

        self._arrays = {k: np.asarray(v) for k, v in arrays.items()}
        lengths = {k: (a.shape[0] if a.ndim else None) for k, a in self._arrays.items()}
        if not lengths or None in lengths.values() or len(set(lengths.values())) != 1:
            found = (
                ", ".join(f"{k!r}: {n if n is not None else 'a scalar'}" for k, n in lengths.items())
                or "nothing"
            )
            raise ValueError(
                f"ArraysSource: expected arrays sharing their first (example) dimension; got {found}"
            )
        self._length = next(iter(lengths.values()))

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {k: a[index].copy() for k, a in self._arrays.items()}  # A transform may write into it.

    def __repr__(self) -> str:
        return f"ArraysSource({', '.join(f'{k}: {a.dtype}{list(a.shape)}' for k, a in self._arrays.items())})"


@dataclasses.dataclass(frozen=True)
class ArrayRecord(_pipeline.DataSourceBase):
    """Records of ArrayRecord files (grain's `ArrayRecordDataSource`), as bytes: parse them with a transform.

    Usage: `kd.data.py.ArrayRecord(paths=["/data/train.array_record"], shuffle=True, transforms=[parse])`.

    Attributes:
      paths: the files (a path, or a list of them).
    """

    paths: Any

    @functools.cached_property
    def data_source(self) -> Any:  # type: ignore[override]
        import grain

        paths = (
            [os.fspath(self.paths)]
            if isinstance(self.paths, str | os.PathLike)
            else [os.fspath(p) for p in self.paths]
        )
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            raise FileNotFoundError(f"ArrayRecord: no such file {missing[0]!r} (of paths={paths!r})")
        return grain.sources.ArrayRecordDataSource(paths)


@dataclasses.dataclass(frozen=True)
class Tfds(_pipeline.DataSourceBase):
    """A TFDS dataset read through `tfds.data_source` (ArrayRecord files, no TensorFlow).

    Needs `pip install 'kd-train[tfds]'` and the dataset prepared in ArrayRecord format
    (`tfds build --file_format=array_record`, or `data_dir` holding it).

    Attributes:
      name: the dataset (`"mnist"`, `"cifar10:3.0.2"`).
      split: the split (`"train"`, `"test[:10%]"`).
      data_dir: where the prepared dataset lives (TFDS's default when None).
      decoders: TFDS decoders per feature (e.g. `{"image": tfds.decode.SkipDecoding()}`).
    """

    name: str
    _: dataclasses.KW_ONLY
    split: str
    data_dir: str | os.PathLike[str] | None = None
    decoders: Mapping[str, Any] | None = None

    @functools.cached_property
    def data_source(self) -> Any:  # type: ignore[override]
        from kd.data import _tfds

        return _tfds.data_source(
            self.name,
            split=self.split,
            data_dir=self.data_dir,
            decoders=dict(self.decoders) if self.decoders else None,
        )


@dataclasses.dataclass(frozen=True)
class HuggingFace(_pipeline.DataSourceBase):
    """A Hugging Face dataset (`datasets.load_dataset`), read by index. Needs `pip install datasets`.

    Attributes:
      path: the dataset's name or folder.
      config: its configuration name.
      split: the split.
      data_dir, cache_dir: as `datasets.load_dataset` takes them.
    """

    path: str
    config: str | None = None
    _: dataclasses.KW_ONLY
    split: str
    data_dir: str | os.PathLike[str] | None = None
    cache_dir: str | os.PathLike[str] | None = None

    @functools.cached_property
    def data_source(self) -> Any:  # type: ignore[override]
        try:
            import datasets
        except ImportError as e:
            raise ImportError(
                "kd.data.py.HuggingFace needs Hugging Face datasets: pip install datasets"
            ) from e
        return datasets.load_dataset(
            self.path, name=self.config, split=self.split, data_dir=self.data_dir, cache_dir=self.cache_dir
        )


@dataclasses.dataclass(frozen=True)
class JsonDataSource:
    """A JSON file holding a list of examples, read once and kept in memory; each read is a fresh copy.

    Attributes:
      path: the file.
    """

    path: str | os.PathLike[str]

    @functools.cached_property
    def data(self) -> list[Any]:
        with open(self.path, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, list):
            raise ValueError(
                f"JsonDataSource: {os.fspath(self.path)} must hold a list of examples; got {type(data).__name__}"
            )
        return data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> Any:
        return copy.deepcopy(self.data[index])  # A transform may change the example it gets.


@dataclasses.dataclass(frozen=True)
class Json(_pipeline.DataSourceBase):
    """Examples from a JSON file holding a list of them.

    Attributes:
      path: the file.
    """

    path: str

    @functools.cached_property
    def data_source(self) -> JsonDataSource:  # type: ignore[override]
        return JsonDataSource(path=self.path)
