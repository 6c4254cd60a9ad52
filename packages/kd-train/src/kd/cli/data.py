"""Kauldron's `data` commands (`kauldron.cli.data`): the element spec of a pipeline of the config.

    kd.cli.data.ElementSpec(cfg=cfg)()                  # batch: image: float32[8, 28, 28, 1] ...
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

import kontext

from . import cmd_utils as cu


@dataclasses.dataclass(frozen=True, kw_only=True)
class ElementSpec(cu.SubCommand):
    """Prints the dtype and shape of each leaf of a batch of the pipeline at `ds_path` (default the train one)."""

    ds_path: str = "train_ds"

    def __call__(self) -> None:
        self.print_config_origin()
        ds = kontext.get_by_path(self.trainer, self.ds_path)
        with cu.timed("Getting element spec"), _mock_tfds(getattr(ds, "batch_size", 1)):
            spec = ds.element_spec
        print("")
        print(f"Dataset: {self.ds_path}")
        print("batch:")
        for path, leaf in kontext.flatten_with_path(spec, is_leaf=_is_array_spec).items():
            print(f"  {path}: {_dtype_name(leaf.dtype)}{list(leaf.shape)}")


def _is_array_spec(node: Any) -> bool:
    return hasattr(node, "shape") and hasattr(node, "dtype")  # an array, a ShapeDtypeStruct, an ArraySpec


def _dtype_name(dtype: Any) -> str:
    import numpy as np

    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype)


def _mock_tfds(num_examples: int) -> Any:
    """TFDS's mock data when TFDS is installed (no dataset is read for a spec), else nothing."""
    try:
        import tensorflow_datasets as tfds
    except ImportError:
        return contextlib.nullcontext()
    return tfds.testing.mock_data(num_examples=num_examples)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Data(cu.CommandGroup):
    """`data element_spec`."""

    sub_command: ElementSpec
