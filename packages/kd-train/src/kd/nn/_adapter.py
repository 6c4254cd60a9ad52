"""Wrap a third-party linen module in the config instead of subclassing it.

cfg.model = kd.nn.ExternalModule(module=nn.Dense(features=10), keys={"inputs": "batch.x"})
cfg.model = kd.nn.ExternalModule(module=nn.Dense(features=10), keys="batch.x")   # one positional input
"""

from __future__ import annotations

from typing import Any

from flax import linen as nn


class ExternalModule(nn.Module):
    """Calls `module` with inputs read from the context by `keys`.

    `keys` is one path (the module's single positional input) or `{argument name: path}`.
    Usage: `kd.nn.ExternalModule(module=nn.Dense(10), keys="batch.x")`.
    """

    module: nn.Module
    keys: str | dict[str, str]

    def __kontext_keys__(self) -> dict[str, str]:
        if isinstance(self.keys, str):
            return {"__args__": self.keys}
        return dict(self.keys)

    def __call__(self, __args__: Any = None, **kwargs: Any) -> Any:
        if isinstance(self.keys, str):
            return self.module(__args__)
        return self.module(**kwargs)
