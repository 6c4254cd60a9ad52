"""How the Trainer calls a model: flax linen and flax NNX behind one small interface.

    model = as_model(trainer.model)                 # LinenModel or NnxModel
    params, collections = model.init(rngs, context)
    preds, collections, interms = model.apply(params, collections, context, rngs=rngs, is_training=True,
                                              capture=InterestFilter(["interms.encoder.__call__[0]"]))

Inputs are read from the context by the kontext keys declared on the module (`image: kontext.Key = "batch.image"`);
a module without keys receives the batch.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import kontext
from flax import linen as nn

from kd.nn import training_mode
from kd.runtime._context import Context
from kd.runtime._errors import ConfigError

if TYPE_CHECKING:
    from flax import nnx

    from kd._interfaces import PyTree

    Collections = Mapping[str, PyTree]
    """A model's variable collections other than its params, by name (`batch_stats`, ...)."""
    NnxParts = tuple[nnx.GraphDef, nnx.State, nnx.State, nnx.State]
    """An NNX module split: its graph, its params, its RNG state, the rest of its variables."""


def loaded_nnx_module() -> type | None:
    """`flax.nnx.Module` once something has imported flax.nnx, else None. An NNX module's class is defined
    by code that imported flax.nnx, so a linen-only run never pays for importing it (~0.3 s)."""
    nnx = sys.modules.get("flax.nnx")
    return getattr(nnx, "Module", None)


def is_nnx_module(value: object) -> bool:
    """Whether `value` is a built `flax.nnx.Module` (False without importing flax.nnx)."""
    module_type = loaded_nnx_module()
    return module_type is not None and isinstance(value, module_type)


def is_nnx_module_class(value: object) -> bool:
    """Whether `value` is a subclass of `flax.nnx.Module` (False without importing flax.nnx)."""
    module_type = loaded_nnx_module()
    return module_type is not None and isinstance(value, type) and issubclass(value, module_type)


class InterestFilter:
    """Which intermediates some key asks for: only those are captured (not every layer's output).

    Usage: `InterestFilter(["interms.encoder.dense1.__call__[0]"]).wants(("encoder", "dense1"), "__call__")`.
    """

    def __init__(self, paths: Iterable[str | Sequence[object]]) -> None:
        self.patterns: list[tuple[object, ...]] = []
        for path in paths:
            parts = kontext.GlobPath.from_str(path).parts if isinstance(path, str) else tuple(path)
            if parts and parts[0] == "interms":
                self.patterns.append(tuple(parts[1:]))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def wants(self, module_path: tuple[str, ...], method_name: str) -> bool:
        target = (*module_path, method_name)
        return any(_prefix_matches(pattern, target) for pattern in self.patterns)


def _prefix_matches(pattern: tuple[object, ...], target: tuple[str, ...]) -> bool:
    """Whether what `pattern` selects holds the output of `target` (module path + method), or part of it."""
    if not pattern:
        return True  # the pattern ended at a module above the target (or at it): all of it is wanted
    if not target:
        return _may_select_in_outputs(pattern)
    head = pattern[0]
    if isinstance(head, kontext.Wildcard):
        if head is kontext.Wildcard.DOUBLE_STAR:
            return _prefix_matches(pattern[1:], target) or _prefix_matches(pattern, target[1:])
        return _prefix_matches(pattern[1:], target[1:])
    return head == target[0] and _prefix_matches(pattern[1:], target[1:])


def _may_select_in_outputs(rest: tuple[object, ...]) -> bool:
    """What follows the method name: its outputs are a tuple, so an index or a wildcard (`[0]`, `*`)."""
    i = 0
    while i < len(rest) and rest[i] is kontext.Wildcard.DOUBLE_STAR:
        i += 1
    return i == len(rest) or not isinstance(rest[i], str)


def _call_inputs(
    module: nn.Module | nnx.Module, context: Context, call: Callable[..., object]
) -> tuple[tuple[object, ...], dict[str, object]]:
    keys = {name: path for name, path in kontext.get_keypaths(module).items() if path is not None}
    if not keys:
        return (context.batch,), {}
    kwargs = kontext.resolve_from_keyed_obj(context, module)
    if "__args__" in kwargs:
        return (kwargs.pop("__args__"),), kwargs
    return (), kwargs


def _accepts(call: Callable[..., object], name: str) -> bool:
    try:
        return name in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False


class EveryIntermediate:
    """An interest filter that captures every module's `__call__` output (Kauldron's `capture_intermediates=True`).

    Usage: `model.apply(params, collections, context, rngs=rngs, is_training=False, capture=EveryIntermediate())`.
    """

    def __bool__(self) -> bool:
        return True

    def wants(self, module_path: tuple[str, ...], method_name: str) -> bool:
        return method_name == "__call__"


@dataclasses.dataclass(frozen=True)
class LinenModel:
    """A `flax.linen.Module`: params in `params`, every other variable collection in `collections`."""

    module: nn.Module

    def _inputs(
        self, context: Context, is_training: bool, method: str | None = None
    ) -> tuple[tuple[object, ...], dict[str, object]]:
        call = self.module.__call__ if method is None else getattr(self.module, method)
        args, kwargs = _call_inputs(self.module, context, call)
        if _accepts(call, "is_training") and "is_training" not in kwargs:
            kwargs["is_training"] = is_training
        return args, kwargs

    def init(self, rngs: dict[str, jax.Array], context: Context) -> tuple[PyTree, Collections]:
        args, kwargs = self._inputs(context, is_training=True)
        with training_mode(True):  # as Kauldron: modules whose variables depend on the mode see training
            variables = dict(self.module.init(rngs, *args, **kwargs))
        params = variables.pop("params", {})
        # `self.sow(...)` collections hold tuples of values: not state (they would grow every step). Left out
        # of `mutable`, sow stores nothing outside init; "intermediates" are captured on request instead.
        collections = {name: tree for name, tree in variables.items() if not _is_sown(tree)}
        return params, collections

    def apply(
        self,
        params: PyTree,
        collections: Collections,
        context: Context,
        *,
        rngs: dict[str, jax.Array],
        is_training: bool,
        capture: InterestFilter | EveryIntermediate,
        method: str | None = None,
        every_collection_mutable: bool = False,
    ) -> tuple[PyTree, Collections, PyTree]:
        """`(preds, collections, interms)`. The Trainer's step keeps a collection's updates in training only;
        `every_collection_mutable` is Kauldron's `forward`: every collection (new ones too) mutable and its
        updates kept in evaluation as well. `method` names another method than `__call__`."""
        args, kwargs = self._inputs(context, is_training, method)
        # Mutable in eval too, as Kauldron's forward: a model may update a collection outside training
        # (`BatchNorm(use_running_average=False)`); the step keeps the updates in training only.
        mutable: bool | list[str] = True if every_collection_mutable else list(collections)
        if capture and not every_collection_mutable:
            mutable.append("intermediates")
        capture_fn: bool | Callable[[nn.Module, str], bool] = False
        if isinstance(capture, EveryIntermediate):
            capture_fn = True  # flax's own rule: every module's `__call__` output
        elif capture:
            capture_fn = lambda module, method: capture.wants(tuple(module.path), method)  # noqa: E731
        with training_mode(is_training):
            out = self.module.apply(
                {"params": params, **collections},
                *args,
                rngs=rngs,
                mutable=mutable or False,
                capture_intermediates=capture_fn,
                method=method,
                **kwargs,
            )
        if not mutable:
            return out, collections, {}
        preds, updated = out
        updated = dict(updated)
        interms = updated.pop("intermediates", {})
        if every_collection_mutable:
            updated.pop("params", None)  # `mutable=True` hands the params back too: they are not a collection
            return preds, {**collections, **{k: v for k, v in updated.items() if not _is_sown(v)}}, interms
        new_collections = {**collections, **updated} if is_training else collections
        return preds, new_collections, interms


class NnxModel:
    """A `flax.nnx.Module`, built by the Trainer with `rngs=nnx.Rngs(...)` from its RNG streams.

    `params` are the `nnx.Param` variables, `collections` every other variable (batch statistics, ...), as plain
    nested dicts; `self.sow(nnx.Intermediate, name, value)` values are the `interms`.
    Usage: `NnxModel(functools.partial(MyNnxModule, din=64, dout=10))`.
    """

    def __init__(self, build: Callable[..., nnx.Module], name: str = "") -> None:
        self.build = build
        self.name = name or getattr(build, "__name__", type(build).__name__)
        self._abstract: NnxParts | None = None

    def __repr__(self) -> str:
        return f"NnxModel({self.name})"

    def _split(self, module: nnx.Module) -> NnxParts:
        from flax import nnx  # an NNX model's code has loaded it already

        return nnx.split(module, nnx.Param, nnx.RngState, ...)

    def _templates(self, stream_names: Iterable[str]) -> NnxParts:
        from flax import nnx

        if self._abstract is None:
            key = jax.random.key(0)
            rngs = {name: key for name in stream_names}
            try:
                module = nnx.eval_shape(lambda: self.build(rngs=nnx.Rngs(**rngs)))
            except TypeError as e:
                raise ConfigError(
                    f"Trainer.model: building {self.name}(..., rngs=nnx.Rngs(...)) raised TypeError: {e}. "
                    "The model must be a flax linen module instance, or an NNX module class configured "
                    "without `rngs` (the Trainer passes them)."
                ) from e
            if not isinstance(module, nnx.Module):
                raise ConfigError(
                    f"Trainer.model: {self.name}(rngs=...) built a {type(module).__name__}, not an nnx.Module"
                )
            self._abstract = self._split(module)
        return self._abstract

    def init(
        self, rngs: dict[str, jax.Array], context: Context, all_streams: Iterable[str] = ()
    ) -> tuple[PyTree, Collections]:
        from flax import nnx

        names = dict.fromkeys([*rngs, *all_streams])
        # An NNX module takes every stream it will use at construction (a Dropout keeps its stream).
        keys = {name: rngs.get(name, rngs.get("default", jax.random.key(0))) for name in names}
        self._templates(keys)
        module = self.build(rngs=nnx.Rngs(**keys))
        _, params, _, rest = self._split(module)
        return nnx.to_pure_dict(params), nnx.to_pure_dict(rest)

    def apply(
        self,
        params: PyTree,
        collections: Collections,
        context: Context,
        *,
        rngs: dict[str, jax.Array],
        is_training: bool,
        capture: InterestFilter | EveryIntermediate,
    ) -> tuple[PyTree, Collections, PyTree]:
        from flax import nnx

        if self._abstract is None:  # evaluators share the Trainer's NnxModel, initialized by the Trainer
            raise ConfigError("NnxModel.apply before init: call trainer.init_state() (or model.init) first.")
        graphdef, params_t, rng_t, rest_t = self._abstract
        params_state = _filled(params_t, params)
        rest_state = _filled(rest_t, collections)
        module = nnx.merge(graphdef, params_state, jax.tree.map(_placeholder_value, rng_t), rest_state)
        if rngs:  # streams the module does not hold are ignored by reseed
            nnx.reseed(module, policy="match_shape", **rngs)
        if is_training:
            module.train()
        else:
            module.eval()
        args, kwargs = _call_inputs(module, context, module.__call__)
        with training_mode(is_training):
            # Always inside nnx.capture: `self.sow` outside it is deprecated. Unused values cost nothing under jit.
            preds, interms_state = nnx.capture(module, nnx.Intermediate)(*args, **kwargs)
        interms = nnx.to_pure_dict(interms_state) if capture else {}
        _, _, _, new_rest = self._split(module)
        new_collections = nnx.to_pure_dict(new_rest) if is_training else collections
        return preds, new_collections, interms


def _filled(template: nnx.State, pure: PyTree) -> nnx.State:
    from flax import nnx

    state = jax.tree.map(lambda v: v, template)  # a fresh copy: replace_by_pure_dict writes in place
    nnx.replace_by_pure_dict(state, pure)
    return state


def _placeholder_value(leaf: jax.ShapeDtypeStruct) -> jax.Array:
    """A concrete stand-in for an RNG state leaf; `nnx.reseed` then sets the step's keys."""
    if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        key = jax.random.key(0)
        return key if leaf.shape == () else jax.random.split(key, leaf.shape)
    return jnp.zeros(leaf.shape, leaf.dtype)


def _is_sown(tree: PyTree) -> bool:
    """Whether a variable collection was made by `sow` (every leaf sits in a tuple)."""
    leaves_with_paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    return bool(leaves_with_paths) and all(
        any(isinstance(k, jax.tree_util.SequenceKey) for k in path) for path, _ in leaves_with_paths
    )


def as_model(model: object) -> LinenModel | NnxModel:
    """The adapter for a Trainer's `model` field (a linen module, an NNX builder or an `NnxModel`)."""
    if isinstance(model, (LinenModel, NnxModel)):
        return model
    if isinstance(model, nn.Module):
        return LinenModel(model)
    if isinstance(model, type) and issubclass(model, nn.Module):
        raise ConfigError(
            f"Trainer.model: got the linen class {model.__name__}, not a module; instantiate it "
            f"(`{model.__name__}(...)`, in a config `cfg.model = lib.{model.__name__}(...)`)."
        )
    if is_nnx_module(model):
        raise ConfigError(
            "Trainer.model: got an already built nnx.Module; configure the class instead "
            "(`cfg.model = my_lib.MyModel(din=..., dout=...)`, the Trainer supplies `rngs`), or pass "
            "`kd.train.NnxModel(functools.partial(MyModel, ...))`."
        )
    if callable(model):
        return NnxModel(model)
    raise ConfigError(
        f"Trainer.model: expected a flax linen Module or an NNX module class configured without `rngs`, "
        f"got {type(model).__name__}: {model!r}"
    )
