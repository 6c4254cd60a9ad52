"""Wrap a third-party linen module in the config instead of subclassing it (Kauldron's `ExternalModule`,
`WrapperModule`).

cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=10), keys={"inputs": "batch.x"})
cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=10), keys="batch.x")   # one positional input
cfg.model = kd.nn.ExternalModule(model=lib.Net(), keys="batch.x", train_kwarg_name="~deterministic")
cfg.model = kd.nn.WrapperModule(model=MyModel(image="batch.image"))  # keys and params are the model's
"""

from __future__ import annotations

from typing import Any

import kontext
from flax import linen as nn

from kd.nn._train_property import accept_training_property, is_training


@accept_training_property
class WrapperModule(nn.Module):
    """A module around `model` that adds nothing to its parameters or its keys: subclass it to change how
    the model is called (`nn.remat`, a different output, ...).

    Attributes:
      model: the wrapped module; its params sit at the top (`{"params": {"kernel": ...}}`, not under
        `model`), and its kontext keys are the wrapper's.
    Usage: `class Remat(kd.nn.WrapperModule): ...`; `Remat(model=MyModel(x="batch.x"))`.
    """

    model: nn.Module

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.scope is not None:  # bound: the wrapped module uses this module's scope
            nn.share_scope(self, self.model)

    @nn.compact
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.model(*args, **kwargs)

    def __kontext_keys__(self) -> dict[str, Any]:
        return kontext.get_keypaths(self.model)


@accept_training_property
class ExternalModule(nn.Module):
    """Calls `model` with inputs read from the context by `keys`, and tells it whether it trains.

    Attributes:
      model: the flax module to call; its params sit under `model` (unlike `WrapperModule`'s: kd's
        checkpoints and sharding rules name them `model/...`).
      keys: one path (the model's single positional input) or `{argument name: path}`.
      train_kwarg_name: the argument that tells the model it trains (`"train"`, `"is_training"`), or with a
        `~` the one that tells it does not (`"~deterministic"`); None passes nothing.
    Usage: `kd.nn.ExternalModule(model=nn.Dense(10), keys="batch.x")`; outside the Trainer
    `module.apply(variables, x, is_training_property=True)`.
    """

    model: nn.Module
    keys: str | dict[str, str]
    train_kwarg_name: str | None = None

    def __kontext_keys__(self) -> dict[str, str]:
        if isinstance(self.keys, str):
            return {"__args__": self.keys}
        return dict(self.keys)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "__args__" in kwargs:  # the one input of `keys="batch.x"`, by the name kontext gives it
            args = (kwargs.pop("__args__"), *args)
        if self.train_kwarg_name is not None:
            name = self.train_kwarg_name
            training = is_training()
            if name.startswith("~"):
                name, training = name[1:], not training
            kwargs[name] = training
        return self.model(*args, **kwargs)
