"""The Trainer's `model` field arrives as a konfig node: build it, or hand an NNX class to the Trainer unbuilt.

    model = build_model(cfg.model)   # a linen Module, or an NnxModel the Trainer builds with its RNG streams

An NNX module needs `rngs=` at construction; the Trainer supplies them from `rng_streams`, so the config just
says `cfg.model = my_lib.NnxMLP(din=64, dout=10)`.
"""

from __future__ import annotations

import functools

import konfig

from kd.runtime._errors import ConfigError
from kd.runtime._model import NnxModel, is_nnx_module_class


def build_model(value: object) -> object:
    """`value` built when it is a konfig node: a linen Module, or an `NnxModel` for an NNX class (built later
    with the run's RNG streams). Anything else is returned as it is."""
    if not isinstance(value, konfig.ConfigDict):
        return value
    qualname = value.get("__qualname__")
    target = _import(qualname) if isinstance(qualname, str) else None
    if is_nnx_module_class(target):
        if "rngs" in value:
            raise ConfigError(
                f"Trainer.model: {qualname} is an NNX module; leave out `rngs` (the Trainer builds it with "
                "nnx.Rngs from its rng_streams and seed)."
            )
        try:
            arguments = konfig.resolve(
                konfig.ConfigDict({k: v for k, v in value.items() if k != "__qualname__"})
            )
        except konfig.ResolveError as e:
            raise type(e)(_under_model(str(e))) from e
        positional = [arguments[k] for k in sorted((k for k in arguments if k.isdigit()), key=int)]
        keywords = {k: v for k, v in arguments.items() if not k.isdigit()}
        return NnxModel(functools.partial(target, *positional, **keywords), name=qualname.rsplit(":", 1)[-1])
    try:
        return konfig.resolve(value)
    except konfig.ResolveError as e:
        raise type(e)(_under_model(str(e))) from e


def _under_model(message: str) -> str:
    """konfig names paths from the node it resolved (`In cfg.features: ...`); the model is `cfg.model`."""
    if message.startswith("In cfg"):
        return "In cfg.model" + message[len("In cfg") :]
    return f"In cfg.model: {message}"


def _import(qualname: str) -> object:
    """The model's target, through konfig's importer (and the safe-mode policy in force, if any)."""
    try:
        return konfig.import_object(qualname)
    except ImportError:
        return None  # konfig.resolve below reports it (a typo, a missing module) with the config path
