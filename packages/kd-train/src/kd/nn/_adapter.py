"""Wrap a third-party linen module in the config instead of subclassing it (Kauldron's `ExternalModule`).

cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=10), keys={"inputs": "batch.x"})
cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=10), keys="batch.x")   # one positional input
cfg.model = kd.nn.ExternalModule(model=lib.Net(), keys="batch.x", train_kwarg_name="~deterministic")
"""

from __future__ import annotations

from typing import Any

from flax import linen as nn

from kd.nn._train_property import is_training


class ExternalModule(nn.Module):
    """Calls `model` with inputs read from the context by `keys`, and tells it whether it trains.

    Attributes:
      model: the flax module to call.
      keys: one path (the model's single positional input) or `{argument name: path}`.
      train_kwarg_name: the argument that tells the model it trains (`"train"`, `"is_training"`), or with a
        `~` the one that tells it does not (`"~deterministic"`); None passes nothing.
    Usage: `kd.nn.ExternalModule(model=nn.Dense(10), keys="batch.x")`.
    """

    model: nn.Module
    keys: str | dict[str, str]
    train_kwarg_name: str | None = None

    def __kontext_keys__(self) -> dict[str, str]:
        if isinstance(self.keys, str):
            return {"__args__": self.keys}
        return dict(self.keys)

    def __call__(self, __args__: Any = None, **kwargs: Any) -> Any:
        if self.train_kwarg_name is not None:
            name = self.train_kwarg_name
            training = is_training()
            if name.startswith("~"):
                name, training = name[1:], not training
            kwargs[name] = training
        if isinstance(self.keys, str):
            return self.model(__args__, **kwargs)
        return self.model(**kwargs)
