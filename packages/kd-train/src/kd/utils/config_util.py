"""Kauldron's `kauldron.utils.config_util`: `ROOT_CFG_REF`, `BaseConfig`, `UpdateFromRootCfg`.

class MyEvaluator(kd.utils.config_util.BaseConfig, kd.utils.config_util.UpdateFromRootCfg):
    ds: Any = kd.utils.config_util.ROOT_CFG_REF.eval_ds   # filled with the Trainer's eval_ds
    num_batches: int = 10                                  # a frozen, keyword-only dataclass field
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from kd._root_ref import ROOT_CFG_REF as ROOT_CFG_REF
from kd._root_ref import RootRef

_SelfT = TypeVar("_SelfT")


class BaseConfig:
    """A base whose subclasses are frozen, keyword-only dataclasses without writing the decorator.

    Usage: `class Config(BaseConfig): workdir: str; cleanup: bool = False`, then `Config(workdir="/tmp")`.
    Decorating a subclass again with `@dataclasses.dataclass(frozen=True, ...)` works too.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(frozen=True, eq=False, kw_only=True)(cls)
        for name in ("__setattr__", "__delattr__"):
            if name in cls.__dict__:  # inherited from here instead: a second frozen decorator may add its own
                delattr(cls, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r} of {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r} of {type(self).__name__}")

    def replace(self: _SelfT, **changes: Any) -> _SelfT:
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


class UpdateFromRootCfg:
    """A dataclass whose `ROOT_CFG_REF.<path>` fields the Trainer holding it fills (kd does it for every
    dataclass under the Trainer; this base gives Kauldron's method names).

    Usage: `obj = obj.update_from_root_cfg(trainer)`; `obj._assert_root_cfg_resolved()` in a method that
    needs the fields filled.
    """

    def update_from_root_cfg(self: _SelfT, root_cfg: Any) -> _SelfT:
        """A copy with every `ROOT_CFG_REF` field (and those of the dataclasses inside) taken from `root_cfg`."""
        from kd.runtime import fill_from_root

        return fill_from_root(root_cfg, self, type(self).__name__, memo={})

    def _assert_root_cfg_resolved(self) -> None:
        """Raises ValueError naming the first field still holding a `ROOT_CFG_REF`."""
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name, None)
            if isinstance(value, RootRef):
                raise ValueError(
                    f"{type(self).__qualname__}.{field.name} is still {value!r}: it is filled by the "
                    f"kd.train.Trainer holding this object; outside one, set {field.name}= yourself"
                )


__all__ = ["ROOT_CFG_REF", "BaseConfig", "UpdateFromRootCfg"]
