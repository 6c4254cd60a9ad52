"""TFDS datasets as random-access sources: `tfds.data_source` over ArrayRecord files, with no TensorFlow.

    from kd.data import _tfds
    source = _tfds.data_source("mnist", split="train", data_dir="~/tensorflow_datasets")
    len(source)              # 60000
    source[0]                # {"image": uint8[28, 28, 1], "label": 3}: numpy, decoded on access

This is the piece under `kd.data.py.Tfds`: the same call Kauldron's makes (`tfds.data_source(name,
split=, data_dir=, decoders=)`, which prepares the dataset first when it is not on disk), with errors
that name the dataset or split asked for and the nearest one that exists. The dataset must be in the
ArrayRecord format (random access); reading it needs no TensorFlow (decoding images needs pillow or
OpenCV). tensorflow_datasets is an optional dependency (`pip install 'kd-train[tfds]'`, which pulls no
TensorFlow), imported on first use.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from typing import Any

_EXTRA = "pip install 'kd-train[tfds]'"
_UNKNOWN_SPLIT = re.compile(r"Unknown split '([^']*)'")


def import_tfds() -> Any:
    """tensorflow_datasets, or an ImportError saying which extra to install."""
    try:
        import tensorflow_datasets as tfds
    except ImportError as e:
        raise ImportError(
            f"kd.data.py.Tfds needs tensorflow-datasets, which is not installed: {_EXTRA} "
            "(it does not install TensorFlow)"
        ) from e
    return tfds


def data_source(
    name: str,
    *,
    split: str,
    data_dir: str | os.PathLike[str] | None = None,
    decoders: Mapping[str, Any] | None = None,
) -> Any:
    """The random-access source (`__len__`, `__getitem__`) of split `split` of TFDS dataset `name`.

    Args:
      name: the TFDS name, `'dataset[/config][:version]'` (e.g. `'mnist'`, `'imagenet2012:5.1.0'`).
      split: a split or a slice of one (`'train'`, `'test[:10%]'`, `'train+validation'`).
      data_dir: where the prepared dataset lies; None: `$TFDS_DATA_DIR`, else `~/tensorflow_datasets`.
      decoders: per feature, a `tfds.decode.Decoder` (e.g. `{"image": tfds.decode.SkipDecoding()}`).

    Returns:
      tfds's `ArrayRecordDataSource` (a grain `RandomAccessDataSource`): examples as numpy trees.

    Raises:
      ImportError: tensorflow-datasets is not installed (names the extra).
      ValueError: no dataset `name` (in `data_dir` or registered), or no such split; names the
        nearest existing one where there is one.
    """
    tfds = import_tfds()
    try:
        return tfds.data_source(
            name,
            split=split,
            data_dir=data_dir,
            decoders=dict(decoders) if decoders is not None else None,
        )
    except tfds.core.registered.DatasetNotFoundError as e:
        raise ValueError(_unknown_dataset_message(tfds, name, data_dir)) from e
    except ValueError as e:
        match = _UNKNOWN_SPLIT.search(str(e))
        if match is None:
            raise
        raise ValueError(_unknown_split_message(tfds, name, split, match.group(1), data_dir)) from e


def _where(data_dir: str | os.PathLike[str] | None) -> str:
    return f" in {os.fspath(data_dir)}" if data_dir is not None else ""


def _near_miss(asked: str, names: list[str]) -> str:
    close = difflib.get_close_matches(asked, names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _unknown_dataset_message(tfds: Any, name: str, data_dir: str | os.PathLike[str] | None) -> str:
    base = name.split(":")[0].split("/")[0]
    names = set(tfds.list_builders(with_community_datasets=False))
    local = os.path.expanduser(os.fspath(data_dir)) if data_dir is not None else None
    if local is not None and os.path.isdir(local):  # the datasets prepared there (not gs:// paths)
        names.update(entry.name for entry in os.scandir(local) if entry.is_dir())
    names.discard("downloads")
    return f"kd.data: no TFDS dataset {name!r}{_where(data_dir)}, nor registered with tfds{_near_miss(base, sorted(names))}"


def _unknown_split_message(
    tfds: Any, name: str, split: str, unknown: str, data_dir: str | os.PathLike[str] | None
) -> str:
    message = f"kd.data: TFDS dataset {name!r}{_where(data_dir)} has no split {unknown!r}"
    if unknown != split:
        message += f" (asked for split={split!r})"
    try:
        splits = list(tfds.builder(name, data_dir=data_dir).info.splits)
    except Exception:  # the splits are only a hint; the error above stands without them
        return message
    return f"{message}; its splits: {', '.join(map(repr, splits))}{_near_miss(unknown, splits)}"
