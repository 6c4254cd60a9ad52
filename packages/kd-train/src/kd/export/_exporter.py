"""Kauldron's exporters: `ModelExporter` (the interface), `JaxModelExporter` (`jax.export`), `NoopExporter`.

    exporter = JaxModelExporter(workdir=workdir, rng_streams=kd.train.RngStreams(seed=0))
    folder = exporter.export(model=model, state=state, element_spec=element_spec, is_training=False)
    folder = export_model(trainer, state)      # the same, `workdir` and `rng_streams` taken from the Trainer

The forward pass is exported as a function of keyword arguments, as in Kauldron: `params`, `collections`, `key`
(a raw uint32[2] key folded into the RNG streams) and the model's inputs, named as its kontext keys
(`x` for `x: kontext.Key = "batch.x"`; `batch` for a model without keys). Its first dimension is symbolic by
default (`batch_specs="b, ..."`), so any batch size runs. It returns `{"preds": ..., "interms": ...}`.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import jax
import kontext
import numpy as np
from flax import linen as nn

from kd._atomic import write_text_atomic
from kd._root_ref import ROOT_CFG_REF, RootRef
from kd.export import _loader
from kd.nn import training_mode
from kd.runtime import (
    ConfigError,
    Context,
    InterestFilter,
    NnxModel,
    as_model,
    as_rng_streams,
    fill_from_root,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.train import Trainer

_DEFAULT_EXPORTED_NAME = "train_model"


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class ModelExporter(abc.ABC):
    """Serializes a model's computation (the parameters are the checkpoint's business, or ride along).

    Attributes:
      name: the exported model's name (in the output path).
      workdir: where it is written; the Trainer's by default (`ROOT_CFG_REF.workdir`).
      rng_streams: the RNG streams the forward pass uses; the Trainer's by default.
    """

    name: str = _DEFAULT_EXPORTED_NAME
    workdir: Any = ROOT_CFG_REF.workdir
    rng_streams: Any = ROOT_CFG_REF.rng_streams

    def get_rngs(self, is_training: bool, step: int = 0) -> dict[str, jax.Array]:
        """The streams' keys for training or evaluation at `step`: `{"dropout": key, ...}`."""
        streams = as_rng_streams(self._filled("rng_streams"))
        return streams.train_rngs(step) if is_training else streams.eval_rngs(step)

    def _filled(self, field: str) -> Any:
        value = getattr(self, field)
        if isinstance(value, RootRef):
            raise ConfigError(
                f"{type(self).__name__}.{field}: still {value!r}; pass {field}=..., or export with "
                "kd.export.export_model(trainer, state), which fills it from the Trainer"
            )
        return value

    @abc.abstractmethod
    def export(self, *, model: Any, state: Any, element_spec: Any, is_training: bool) -> Any:
        """Exports `model` with the variables of `state` (a `kd.train.TrainState`).

        Args:
          model: the Trainer's model (a flax linen module, an NNX module class or `kd.train.NnxModel`).
          state: the train state holding `params` and `collections`.
          element_spec: shapes and dtypes of one batch (`trainer.element_spec`).
          is_training: whether the model runs in training mode.
        """


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class NoopExporter(ModelExporter):
    """Exports nothing (`Trainer`-style configs that name an exporter and want none)."""

    def export(self, *, model: Any, state: Any, element_spec: Any, is_training: bool) -> None:
        return None


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class JaxModelExporter(ModelExporter):
    """Exports the forward pass with `jax.export`, and its variables, into a folder `load_exported` reads.

    Usage: `JaxModelExporter(workdir=d, rng_streams=kd.train.RngStreams(seed=0)).export(model=..., ...)`.

    Attributes:
      batch_specs: the symbolic shapes of the batch, a string or a prefix tree of strings of it
        (`jax.export.symbolic_args_specs`); `"b, ..."`: the first dimension of every leaf is any size.
      model_method: the linen method to export (None: `__call__`).
      platforms: where the export runs: any of `"cpu"`, `"tpu"`, `"cuda"`, `"rocm"`.
      vjp_order: how many orders of derivatives are serialized with it.
      path_template: the output folder; `{workdir}` and `{name}` are filled in.
    """

    batch_specs: Any = "b, ..."
    model_method: str | None = None
    platforms: Sequence[Literal["cpu", "tpu", "cuda", "rocm"]] = ("cpu", "tpu")
    vjp_order: int = 1
    path_template: str = "{workdir}/{name}.jax_exported"

    def export(self, *, model: Any, state: Any, element_spec: Any, is_training: bool) -> str | None:
        """Writes `<path_template>/` (`exported.bin`, `variables.npz`, `signature.json`); returns its path.

        Only the lead host writes (the others return None). `signature.json` is written last: a folder
        holding it is complete.
        """
        workdir = self._filled("workdir")
        if workdir is None:
            raise ConfigError(f"{type(self).__name__}.workdir: None; give a folder to export into")
        rngs = self.get_rngs(is_training)
        if jax.process_index() != 0:
            return None
        adapter = as_model(model)
        module = _keyed_module(adapter, rngs)
        keys = {name: path for name, path in kontext.get_keypaths(module).items() if path is not None}
        if not keys:
            keys = {"batch": "batch"}
        batch = jax.export.symbolic_args_specs(_specs(element_spec), self.batch_specs)
        inputs = {name: _input_spec(batch, path, name) for name, path in keys.items()}
        params, collections = _plain(state.params), _plain(state.collections or {})
        forward = _forward_fn(
            adapter, keys=keys, method=self.model_method, is_training=is_training, rngs=rngs
        )
        exported = jax.export.export(jax.jit(forward), platforms=tuple(self.platforms))(
            params=_specs(params),
            collections=_specs(collections),
            key=jax.ShapeDtypeStruct((2,), np.uint32),
            **inputs,
        )
        serialized = exported.serialize(vjp_order=self.vjp_order)  # before any file: it needs flatbuffers
        folder = self.path_template.format(workdir=os.fspath(workdir), name=self.name)
        os.makedirs(folder, exist_ok=True)
        signature_path = os.path.join(folder, _loader.SIGNATURE_FILE)
        if os.path.exists(signature_path):  # exporting again: the folder is incomplete until the end
            os.remove(signature_path)
        with open(os.path.join(folder, _loader.EXPORTED_FILE), "wb") as f:
            f.write(serialized)
        _, positions = jax.tree.unflatten(exported.in_tree, list(range(len(exported.in_avals))))
        arrays: dict[str, np.ndarray] = {}
        for field, values in (("params", params), ("collections", collections)):
            for index, value in zip(jax.tree.leaves(positions[field]), jax.tree.leaves(values), strict=True):
                arrays[str(index)] = np.asarray(jax.device_get(value))
        np.savez(os.path.join(folder, _loader.VARIABLES_FILE), **arrays)
        signature = {
            "format": _loader.FORMAT,
            "name": self.name,
            "model": _model_name(adapter),
            "method": self.model_method or "__call__",
            "is_training": bool(is_training),
            "platforms": list(exported.platforms),
            "inputs": {name: {"key": keys[name], **_described(spec)} for name, spec in inputs.items()},
            "outputs": ["preds", "interms"],
        }
        write_text_atomic(signature_path, json.dumps(signature, indent=2))
        return folder


def export_model(
    trainer: Trainer, state: Any, *, exporter: ModelExporter | None = None, is_training: bool = False
) -> Any:
    """Exports `trainer`'s model with `state`'s variables; `exporter`'s `ROOT_CFG_REF` fields are the Trainer's.

    Usage: `folder = kd.export.export_model(trainer, state)` (a `JaxModelExporter()` into `trainer.workdir`).
    """
    exporter = JaxModelExporter() if exporter is None else exporter
    exporter = fill_from_root(trainer, exporter, "exporter", memo={})
    trainer.state_specs  # noqa: B018  (builds an NNX model's templates: its structure is known)
    return exporter.export(
        model=trainer.trainstep.model, state=state, element_spec=trainer.element_spec, is_training=is_training
    )


# ---------------------------------------------------------------------------------------------- the forward


def _forward_fn(
    adapter: Any,
    *,
    keys: Mapping[str, str],
    method: str | None,
    is_training: bool,
    rngs: dict[str, jax.Array],
) -> Any:
    """`forward(*, params, collections, key, **inputs) -> {"preds", "interms"}`, the function exported."""
    if method is not None and isinstance(adapter, NnxModel):
        raise ConfigError("JaxModelExporter.model_method: only a flax linen model can export another method")
    everything = InterestFilter(["interms.**"])

    def forward(*, params: Any, collections: Any, key: jax.Array, **inputs: Any) -> dict[str, Any]:
        bits = jax.random.bits(key)  # the caller's key, folded into each stream (the streams are constants)
        step_rngs = {name: jax.random.fold_in(rng, bits) for name, rng in rngs.items()}
        if isinstance(adapter, NnxModel):
            context = Context(step=0, batch=_batch_of(inputs, keys), params=params, collections=collections)
            preds, _, interms = adapter.apply(
                params, collections, context, rngs=step_rngs, is_training=is_training, capture=everything
            )
        else:
            preds, interms = _apply_linen(
                adapter.module, params, collections, inputs, method, is_training, step_rngs
            )
        return {"preds": _plain(preds), "interms": _plain(interms)}

    return forward


def _apply_linen(
    module: nn.Module,
    params: Any,
    collections: Any,
    inputs: dict[str, Any],
    method: str | None,
    is_training: bool,
    rngs: dict[str, jax.Array],
) -> tuple[Any, Any]:
    kwargs = dict(inputs)
    args: tuple[Any, ...] = ()
    if "__args__" in kwargs:
        args = (kwargs.pop("__args__"),)
    elif set(kwargs) == {"batch"} and not kontext.get_keypaths(module):
        args = (kwargs.pop("batch"),)
    call = getattr(module, method or "__call__")
    if "is_training" in _parameters(call) and "is_training" not in kwargs:
        kwargs["is_training"] = is_training
    with training_mode(is_training):
        preds, variables = module.apply(
            {"params": params, **collections},
            *args,
            rngs=rngs,
            mutable=True,
            capture_intermediates=True,
            method=method,
            **kwargs,
        )
    return preds, dict(variables).get("intermediates", {})


def _parameters(call: Any) -> Mapping[str, Any]:
    try:
        return inspect.signature(call).parameters
    except (TypeError, ValueError):
        return {}


def _keyed_module(adapter: Any, rngs: Mapping[str, Any]) -> Any:
    """The object whose kontext keys name the model's inputs (an NNX model: an abstract instance)."""
    if not isinstance(adapter, NnxModel):
        return adapter.module
    from flax import nnx  # an NNX model's code has loaded it already

    if adapter._abstract is None:
        adapter._templates(list(rngs) or ["default"])
    graphdef, *states = adapter._abstract
    return nnx.merge(graphdef, *states)


def _input_spec(batch: Any, path: str, name: str) -> Any:
    parts = kontext.Path.from_str(path).parts
    if not parts or parts[0] != "batch" or not all(isinstance(p, str) for p in parts):
        raise ConfigError(
            f"JaxModelExporter: the model input {name!r} reads {path!r}; an exported input must be a key "
            "into the batch with names only (`batch.image`, `batch.obs.rgb`)"
        )
    try:
        return kontext.get_by_path({"batch": batch}, path)
    except KeyError as e:
        raise ConfigError(f"JaxModelExporter: the model input {name!r} reads {path!r}: {e}") from None


def _batch_of(inputs: Mapping[str, Any], keys: Mapping[str, str]) -> Any:
    """A batch holding each input at its key's path (for a model that reads its inputs from a Context)."""
    if set(keys.values()) == {"batch"}:
        return inputs["batch"]
    batch: dict[str, Any] = {}
    for name, path in keys.items():
        *parents, last = kontext.Path.from_str(path).parts[1:]
        node = batch
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = inputs[name]
    return batch


# ---------------------------------------------------------------------------------------------- trees


def _specs(tree: Any) -> Any:
    """Shapes and dtypes only, without shardings: the export runs on one device of any kind."""
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), x.dtype), tree)


def _plain(tree: Any) -> Any:
    """`tree` made of dicts, lists and tuples only (what `jax.export` serializes without registrations):
    other mappings become dicts, any other pytree node a dict `{kontext path: leaf}` of its leaves."""
    if isinstance(tree, Mapping):
        return {key: _plain(value) for key, value in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(_plain(value) for value in tree)
    if tree is None or hasattr(tree, "shape"):
        return tree
    leaves = jax.tree.leaves(tree)
    if len(leaves) == 1 and leaves[0] is tree:
        return tree
    return dict(kontext.flatten_with_path(tree))


def _described(spec: Any) -> dict[str, Any]:
    """`{"shape": [...], "dtype": ...}` of an array input (symbolic dimensions by name), `{"leaves": {path:
    ...}}` of a tree of them."""
    if hasattr(spec, "shape"):
        return {"shape": [d if isinstance(d, int) else str(d) for d in spec.shape], "dtype": str(spec.dtype)}
    return {"leaves": {path: _described(leaf) for path, leaf in kontext.flatten_with_path(spec).items()}}


def _model_name(adapter: Any) -> str:
    if isinstance(adapter, NnxModel):  # `functools.partial(MyModel, ...)`: the class's name
        return getattr(getattr(adapter.build, "func", None), "__name__", adapter.name)
    return type(adapter.module).__name__
