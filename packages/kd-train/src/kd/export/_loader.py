"""`load_exported`: a folder written by `JaxModelExporter` back as a callable (jax, numpy and kontext only).

    model = kd.export.load_exported("/tmp/run/train_model.jax_exported")
    out = model(x=np.ones((3, 2), np.float32))      # or model(batch): the inputs are picked by their keys
    out["preds"]

No model code is imported: the forward pass is the `jax.export` serialization (`exported.bin`), the
parameters and collections come from `variables.npz`, and `signature.json` names the inputs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import kontext
import numpy as np

EXPORTED_FILE = "exported.bin"
VARIABLES_FILE = "variables.npz"
SIGNATURE_FILE = "signature.json"
FORMAT = "kd.export/1"


class ExportedModel:
    """An exported forward pass with its variables: `model(**inputs)` or `model(batch)`.

    Attributes:
      exported: the `jax.export.Exported` (call it yourself with `params=`, `collections=`, `key=` and the
        inputs, as for a Kauldron export).
      params, collections: the variables saved with it (numpy arrays, nested dicts).
      signature: the content of `signature.json` (`inputs`: name -> key, shape, dtype; `is_training`, ...).
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        folder = os.fspath(folder)
        signature_path = os.path.join(folder, SIGNATURE_FILE)
        if not os.path.exists(signature_path):
            raise FileNotFoundError(
                f"load_exported: {folder!r} holds no {SIGNATURE_FILE}: not a finished kd.export folder "
                "(JaxModelExporter.export writes it last)"
            )
        with open(signature_path) as f:
            self.signature: dict[str, Any] = json.load(f)
        if self.signature.get("format") != FORMAT:
            raise ValueError(
                f"load_exported: {signature_path} has format {self.signature.get('format')!r}, "
                f"expected {FORMAT!r}"
            )
        with open(os.path.join(folder, EXPORTED_FILE), "rb") as f:
            self.exported = jax.export.deserialize(bytearray(f.read()))
        avals = self.exported.in_avals
        # The inputs' tree with each leaf replaced by its position: where each saved array goes.
        _, positions = jax.tree.unflatten(self.exported.in_tree, list(range(len(avals))))
        with np.load(os.path.join(folder, VARIABLES_FILE)) as saved:
            arrays = {int(name): saved[name] for name in saved.files}

        def restore(index: int) -> np.ndarray:
            array = arrays[index]
            dtype = np.dtype(avals[index].dtype)
            return array if array.dtype == dtype else array.view(dtype)  # npz keeps bfloat16 as raw bytes

        self.params = jax.tree.map(restore, positions["params"])
        self.collections = jax.tree.map(restore, positions["collections"])
        self.folder = folder

    @property
    def input_names(self) -> list[str]:
        """The keyword arguments a call takes (the model's input names, `batch` for a model without keys)."""
        return list(self.signature["inputs"])

    def __repr__(self) -> str:
        inputs = ", ".join(f"{name}: {_spec_text(spec)}" for name, spec in self.signature["inputs"].items())
        return f"ExportedModel({self.signature.get('model', '?')}; {inputs})"

    def __call__(
        self, batch: Mapping[str, Any] | None = None, /, *, key: Any = None, **inputs: Any
    ) -> dict[str, Any]:
        """`{"preds": ..., "interms": ...}` for the inputs, given by name or picked from `batch` by their keys.

        `key` (a raw uint32[2] key, `jax.random.PRNGKey(0)` by default) is folded into the RNG streams. It runs on
        the default device when exported for its platform, else on the CPU when exported for it.
        """
        if batch is not None:
            if inputs:
                raise TypeError("ExportedModel: pass a batch or the inputs by name, not both")
            inputs = {
                name: _pick(batch, spec["key"], name) for name, spec in self.signature["inputs"].items()
            }
        missing = [name for name in self.input_names if name not in inputs]
        unknown = [name for name in inputs if name not in self.signature["inputs"]]
        if missing or unknown:
            raise TypeError(
                f"ExportedModel: expected the inputs {self.input_names}; missing {missing}, unknown {unknown}"
            )
        if key is None:
            key = np.zeros((2,), np.uint32)  # the raw data of jax.random.PRNGKey(0)
        device = _device_for(self.exported.platforms)
        if device is None:
            return self.exported.call(params=self.params, collections=self.collections, key=key, **inputs)
        with jax.default_device(device):
            return self.exported.call(params=self.params, collections=self.collections, key=key, **inputs)


def _device_for(platforms: Sequence[str]) -> Any:
    """None to run on the default device, when the export was lowered for its platform; else the CPU, when
    it was lowered for CPU (an export for `("cpu", "tpu")` loaded on a GPU machine)."""
    device = jax.devices()[0]
    names = {"gpu": {"cuda", "rocm"}}.get(device.platform, {device.platform})
    if names & set(platforms):
        return None
    if "cpu" in platforms:
        return jax.devices("cpu")[0]
    raise ValueError(
        f"ExportedModel: exported for {list(platforms)}, but this process runs on {device.platform}; "
        "export with JaxModelExporter(platforms=...) naming it"
    )


def _spec_text(spec: Mapping[str, Any]) -> str:
    if "leaves" in spec:
        return "{" + ", ".join(f"{path}: {_spec_text(leaf)}" for path, leaf in spec["leaves"].items()) + "}"
    return f"{spec['dtype']}[{', '.join(map(str, spec['shape']))}]"


def _pick(batch: Mapping[str, Any], key: str, name: str) -> Any:
    """The value at `key` ("batch.image", "batch.obs.rgb", or "batch" itself) of `batch`."""
    value: Any = batch
    for part in kontext.Path.from_str(key).parts[1:]:
        if not isinstance(value, Mapping) or part not in value:
            raise KeyError(f"ExportedModel: input {name!r} reads {key!r}, which the batch does not hold")
        value = value[part]
    return value


def load_exported(path: str | os.PathLike[str]) -> ExportedModel:
    """The model saved in `path` (a folder `JaxModelExporter.export` wrote), ready to call.

    Usage: `kd.export.load_exported(folder)(x=x)["preds"]`.
    """
    return ExportedModel(path)
