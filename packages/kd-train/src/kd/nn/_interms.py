"""`self.interms[name] = value` records an intermediate the Trainer can read at `interms.<module path>.<name>[0]`.

class Encoder(nn.Module):
    interms = kd.nn.interms_property()
    @nn.compact
    def __call__(self, x):
        h = nn.Dense(16)(x)
        self.interms["hidden"] = h   # as `self.sow("intermediates", "hidden", h)`
        return nn.Dense(4, name="out")(h)

cfg.train_summaries = {"hidden": kd.summaries.Histogram(tensor="interms.encoder.hidden[0]")}
"""

from __future__ import annotations

import sys
from typing import Any

import kontext
from flax import linen as nn


class IntermsAccessor:
    """What `self.interms` gives inside a forward pass: item access to the module's intermediates.

    Attributes:
      module: the module being run (a bound linen module, or an NNX module).
    Usage: `self.interms["h"] = h`, then `self.interms["h"]` (the last value recorded under "h").
    """

    def __init__(self, module: Any) -> None:
        if isinstance(module, nn.Module) and module.scope is None:
            raise ValueError(
                f"{type(module).__name__}.interms can only be used inside `.init` / `.apply` (a forward pass): "
                "the module is not bound"
            )
        self.module = module

    def __setitem__(self, name: str, value: Any) -> None:
        if isinstance(self.module, nn.Module):
            self.module.sow("intermediates", name, value)
        else:  # NNX: the Trainer runs the model inside `nnx.capture(nnx.Intermediate)`
            self.module.sow(_nnx().Intermediate, name, value)

    def __getitem__(self, name: str) -> Any:
        values = self._recorded(name)
        if not values:
            raise KeyError(
                f"{type(self.module).__name__}.interms[{name!r}]: nothing was recorded under {name!r} in this "
                "forward pass (intermediates are kept only when asked for: a key `interms.<path>` in the "
                "losses / metrics / summaries, or `mutable=['intermediates']` in `.apply`)"
            )
        return values[-1]

    def _recorded(self, name: str) -> Any:
        if isinstance(self.module, nn.Module):
            return self.module.get_variable("intermediates", name)
        nnx = _nnx()
        for captured in getattr(self.module, "__captures__", ()):
            if type(captured) is nnx.Intermediate and name in captured:
                return captured[name]
        variable = getattr(self.module, name, None)
        return variable.get_value() if isinstance(variable, nnx.Intermediate) else None

    def get_by_path(self, path: str) -> Any:
        """The intermediates of any linen module of the model, by a dotted path: absolute from the top
        module (`"encoder.out.__call__[0]"`), or relative with a leading `.` (this module's children,
        `".out.__call__[0]"`), each further `.` going one module up (`"..sibling.hidden[0]"`).

        Raises:
            ValueError: on an NNX module (its intermediates are read after the call, from `nnx.capture`).
        """
        if not isinstance(self.module, nn.Module):
            raise ValueError("interms.get_by_path reads linen scopes; an NNX module has none")
        scope = self.module.scope
        if path.startswith("."):
            path = path[1:]
            while path.startswith("."):
                path = path[1:]
                if scope.parent is None:
                    raise ValueError(f"interms.get_by_path: {path!r} goes above the top module")
                scope = scope.parent
        else:
            scope = scope.root
        intermediates = scope.variables().get("intermediates", {})
        return kontext.get_by_path(intermediates, path)


def _nnx() -> Any:
    """flax.nnx, loaded already: the NNX module being run was defined by code that imported it."""
    return sys.modules["flax.nnx"]


def interms_property() -> Any:
    """A read-only class attribute: `self.interms[name] = value` records, `self.interms[name]` reads back
    (Kauldron's `kd.nn.interms_property`). Only inside `.init` / `.apply` (or an NNX model's call).

    Usage: `interms = kd.nn.interms_property()` in the class body (no annotation).
    """
    return property(IntermsAccessor)
