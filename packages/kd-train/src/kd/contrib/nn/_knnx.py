"""`KdNnxModule`: a flax NNX module behind linen's `init` / `apply` (Kauldron's `contrib.modules.knnx`).

@dataclasses.dataclass(kw_only=True)
class Classifier(kd.contrib.nn.KdNnxModule):
    num_classes: int = 10

    def setup(self, rngs: nnx.Rngs | None = None):
        self.head = nnx.Linear(784, self.num_classes, rngs=rngs)

    def __call__(self, x):
        return self.head(x)

variables = Classifier().init({"params": jax.random.key(0)})   # {"params", "nnx", "intermediates"}
logits = Classifier().apply(variables, x, rngs={"dropout": key}, is_training_property=False)

The module itself is a configuration (its dataclass fields): `init` builds a copy through `setup` and returns
its state as linen variables; `apply` rebuilds it from them for each call, so the same variables can be
applied many times, under `jax.jit` and `jax.grad` too.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import jax
import numpy as np
from flax import nnx
from flax.core.scope import CollectionFilter, DenyList, in_filter

from kd import random as kd_random
from kd.nn import TrainingModeError, is_training, training_mode

PARAMS = "params"
"""The collection of the `nnx.Param` values: a nested dict of arrays, as a linen module's."""

NNX = "nnx"
"""The collection rebuilding the module: `graphdef` (its structure), `rng_vars` (its RNG streams) and
`attributes` (every other variable: batch statistics, ...), the last two as nested dicts of arrays."""

INTERMEDIATES = "intermediates"
"""The collection of the values sown with `self.sow(nnx.Intermediate, name, value)` during `apply`."""

_ALL_BUT_INTERMEDIATES = DenyList(INTERMEDIATES)  # linen's default `mutable` of `init`

RngsLike = Any
"""What `init` / `apply` take as `rngs`: None, an int seed or key (seeding every stream), or
`{stream: key}` where a key is a JAX key, a `kd.random.PRNGKey` or an int seed."""


@dataclasses.dataclass(kw_only=True)
class KdNnxModule(nnx.Module):
    """An NNX module with linen's `init` / `apply`, for code that calls a linen module's (kd's Trainer takes
    NNX models as classes instead: `cfg.model = MyNnxModel`, see `kd.train.NnxModel`).

    Subclass it as a dataclass, build the submodules in `setup(self, rngs)` and compute in `__call__` (or
    other methods, named by `apply(..., method=...)`):

        @dataclasses.dataclass(kw_only=True)
        class Mlp(kd.contrib.nn.KdNnxModule):
            hidden: int = 128

            def setup(self, rngs: nnx.Rngs | None = None):
                self.up = nnx.Linear(16, self.hidden, rngs=rngs)
                self.drop = nnx.Dropout(0.1, rngs=rngs)

            def __call__(self, x):
                return self.drop(self.up(x))

    Attributes:
      __dynamic_module__: whether a call may change the module's structure (add or drop submodules or
        variables). True (the default): the variables `apply` returns carry the structure found after the
        call. False: they keep the structure they came with (only the values are updated).
    """

    __dynamic_module__: ClassVar[bool] = True

    def setup(self, rngs: nnx.Rngs | None = None) -> None:
        """Builds the submodules of this module (the NNX `__init__`), with `rngs` for their initial values."""
        raise NotImplementedError(
            f"{type(self).__name__} must define `setup(self, rngs)`, building its submodules "
            "(e.g. `self.dense = nnx.Linear(4, 8, rngs=rngs)`)"
        )

    def get_linen_variables(self, capture_intermediates: bool = False) -> dict[str, Any]:
        """This built module's state as linen variables: `{"params", "nnx", "intermediates"}`.

        Values sown on the module outside `nnx.capture` are taken off it: they are returned under
        "intermediates" with `capture_intermediates`, dropped otherwise (they are not state).
        Usage: `module.get_linen_variables()` after `module.setup(rngs=nnx.Rngs(0))`.
        """
        sown = nnx.pop(self, nnx.Intermediate)
        intermediates = nnx.to_pure_dict(sown) if capture_intermediates else {}
        return _linen_variables(self, intermediates)

    def init(
        self,
        rngs: RngsLike,
        *args: Any,
        method: Callable[..., Any] | str | None = None,
        mutable: CollectionFilter = _ALL_BUT_INTERMEDIATES,
        capture_intermediates: bool | Callable[..., bool] = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Builds a copy of this module with `setup(rngs=...)` and returns its variables.

        NNX modules know their shapes when built, so no forward pass is run: `args`, `kwargs`, `method`,
        `mutable` and `capture_intermediates` are accepted for linen's signature and not used.
        Usage: `variables = module.init({"params": jax.random.key(0)}, x)`.

        Returns:
          `{"params": ..., "nnx": {"graphdef", "rng_vars", "attributes"}, "intermediates": {}}`.
        """
        del args, kwargs, method, mutable, capture_intermediates
        built = copy.deepcopy(self)  # `self` stays a configuration, never built
        if _takes_argument(built.setup, "rngs"):
            built.setup(rngs=_as_nnx_rngs(rngs))
        else:
            warnings.warn(
                f"{type(self).__name__}.setup takes no `rngs`, so the `rngs` given to init are not used; "
                "declare `def setup(self, rngs: nnx.Rngs | None = None)` for random initial values.",
                stacklevel=2,
            )
            built.setup()
        return built.get_linen_variables()

    def apply(
        self,
        variables: Mapping[str, Any],
        *args: Any,
        rngs: RngsLike = None,
        method: Callable[..., Any] | str | None = None,
        mutable: CollectionFilter = False,
        capture_intermediates: bool | Callable[..., bool] = False,
        is_training_property: bool | None = None,
        **kwargs: Any,
    ) -> Any:
        """Rebuilds the module from `variables` and calls `method` (default `__call__`) with the arguments.

        Args:
          variables: what `init` (or an earlier `apply` with `mutable`) returned.
          rngs: the RNG streams of this call: each stream named here is reseeded (so the same keys give
            the same output); the others keep their state from `variables`.
          method: a method name, or a function taking the module first.
          mutable: False returns the output only; otherwise `(output, variables)` with the collections
            the filter names (True: all) after the call.
          capture_intermediates: whether the returned "intermediates" hold the sown values (a linen filter
            function counts as True: every sown value is returned).
          is_training_property: whether the module trains (`module.train()`, e.g. dropout on) or
            evaluates (`module.eval()`). None: kd's current training mode (`kd.nn.training_mode`),
            else True.
          **kwargs: keyword arguments of `method`.

        Usage: `logits, variables = module.apply(variables, x, rngs={"dropout": key}, mutable=True)`.
        """
        module = nnx.merge(
            variables[NNX]["graphdef"],
            variables[PARAMS],
            variables[NNX]["rng_vars"],
            variables[NNX]["attributes"],
        )
        if rngs is not None:
            keys = _stream_keys(rngs)
            if keys:
                nnx.reseed(module, policy="match_shape", **keys)  # streams the module lacks are ignored
        training = _training_mode() if is_training_property is None else bool(is_training_property)
        if training:
            module.train()
        else:
            module.eval()
        call = _method_function(type(self), method)
        with training_mode(training):
            out, sown = nnx.capture(call, nnx.Intermediate)(module, *args, **kwargs)
        if not mutable:
            return out
        intermediates = nnx.to_pure_dict(sown) if capture_intermediates else {}
        if self.__dynamic_module__:
            updated = _linen_variables(module, intermediates)
        else:
            updated = _linen_variables(module, intermediates, graphdef=variables[NNX]["graphdef"])
        return out, {name: value for name, value in updated.items() if in_filter(mutable, name)}


@dataclasses.dataclass(kw_only=True)
class LinenModuleFromNnxDef(KdNnxModule):
    """Any NNX module (class or builder function) behind linen's `init` / `apply`.

    Usage: `kd.contrib.nn.LinenModuleFromNnxDef(nnx_init=functools.partial(MyNnxModel, din=3, dout=8))`;
    its params sit under `module` (`variables["params"]["module"]["linear"]["kernel"]`).

    Attributes:
      nnx_init: called as `nnx_init(rngs=rngs)` to build the module, or `nnx_init()` when it takes no
        `rngs`; bind its other arguments with `functools.partial`.
    """

    nnx_init: Callable[..., nnx.Module]

    def setup(self, rngs: nnx.Rngs | None = None) -> None:
        if _takes_argument(self.nnx_init, "rngs"):
            self.module = self.nnx_init(rngs=rngs)
        else:
            self.module = self.nnx_init()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)


def _linen_variables(module: nnx.Module, intermediates: Any, graphdef: Any = None) -> dict[str, Any]:
    """`module`'s state in the collections of `KdNnxModule.init`, with `graphdef` (when given) kept."""
    new_graphdef, params, rng_vars, attributes = nnx.split(module, nnx.Param, nnx.RngState, ...)
    return {
        PARAMS: nnx.to_pure_dict(params),
        NNX: {
            "graphdef": new_graphdef if graphdef is None else graphdef,
            "rng_vars": nnx.to_pure_dict(rng_vars),
            "attributes": nnx.to_pure_dict(attributes),
        },
        INTERMEDIATES: intermediates,
    }


def _as_nnx_rngs(rngs: RngsLike) -> nnx.Rngs:
    """The `nnx.Rngs` of `rngs` (see `RngsLike`); None seeds every stream with 0."""
    if rngs is None:
        return nnx.Rngs(0)
    if isinstance(rngs, Mapping):
        return nnx.Rngs(**_stream_keys(rngs))
    return nnx.Rngs(_key_array(rngs, "rngs"))


def _stream_keys(rngs: RngsLike) -> dict[str, Any]:
    """`{stream: key array}` of `rngs`; a single key or seed is the `default` stream."""
    if not isinstance(rngs, Mapping):
        return {"default": _key_array(rngs, "rngs")}
    return {str(name): _key_array(key, f"rngs[{name!r}]") for name, key in rngs.items()}


def _key_array(key: Any, where: str) -> Any:
    """A key nnx.Rngs takes: a JAX key (raw or typed) or an int seed; a `kd.random.PRNGKey` gives its array."""
    if isinstance(key, kd_random.PRNGKey):
        return key.rng
    if isinstance(key, (int, np.integer, np.ndarray, jax.Array)) and not isinstance(key, bool):
        return key
    raise TypeError(
        f"KdNnxModule: {where} is a {type(key).__name__}; expected a JAX key (jax.random.key(0)), "
        f"a kd.random.PRNGKey or an int seed"
    )


def _method_function(cls: type, method: Callable[..., Any] | str | None) -> Callable[..., Any]:
    """The function `apply` calls with the module first: a method of `cls` by name, or `method` itself."""
    if method is None:
        method = "__call__"
    if not isinstance(method, str):
        return method
    function = getattr(cls, method, None)
    if not callable(function):
        raise AttributeError(f"{cls.__name__} has no method {method!r} to apply")
    return function


def _training_mode() -> bool:
    """kd's training mode when one is set (inside a Trainer's forward pass), else True (Kauldron's default)."""
    try:
        return is_training()
    except TrainingModeError:
        return True


def _takes_argument(function: Callable[..., Any], name: str) -> bool:
    """Whether `function` accepts the keyword `name` (also through `**kwargs`); True when it cannot be told."""
    target: Any = function
    while isinstance(target, functools.partial):
        target = target.func
    if isinstance(target, type):  # a class's own signature: nnx's metaclass shows only (*args, **kwargs)
        target = target.__init__
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return True
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
