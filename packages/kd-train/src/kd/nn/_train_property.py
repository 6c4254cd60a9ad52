"""`is_training` reaches any module without patching flax: a context variable set while the Trainer traces.

class Block(nn.Module):
    is_training = kd.nn.train_property()
    @nn.compact
    def __call__(self, x):
        return nn.Dropout(0.1, deterministic=not self.is_training)(x)

Block().apply(variables, x, is_training_property=False)  # Kauldron's spelling, outside the Trainer
with kd.nn.set_train_property(False): ...                 # or change it for part of a forward pass
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

from flax import linen as nn

from kd.nn._errors import TrainingModeError

_IS_TRAINING: contextvars.ContextVar[bool | None] = contextvars.ContextVar("kd_is_training", default=None)

_NOT_SET = (
    "kd.nn.is_training() was read outside a forward pass of the Trainer: no training mode is set "
    "(the `is_training_property=` kwargs was not set in `.init` / `.apply`). Call the model inside "
    "`with kd.nn.training_mode(True):` (or False), or pass `model.apply(..., is_training_property=True)`."
)


def is_training() -> bool:
    """Whether the step being traced trains (True) or evaluates (False).

    Usage: `deterministic = not kd.nn.is_training()`.

    Raises:
        TrainingModeError: outside a Trainer's (or `kd.nn.training_mode(...)`'s) forward pass.
    """
    value = _IS_TRAINING.get()
    if value is None:
        raise TrainingModeError(_NOT_SET)
    return value


@contextlib.contextmanager
def training_mode(training: bool) -> Iterator[None]:
    """Sets what `is_training()` / `train_property()` read: `with kd.nn.training_mode(False): model.apply(...)`."""
    token = _IS_TRAINING.set(bool(training))
    try:
        yield
    finally:
        _IS_TRAINING.reset(token)


@contextlib.contextmanager
def set_train_property(is_training: bool) -> Iterator[None]:
    """Kauldron's `training_mode`, which takes a bool only: `with kd.nn.set_train_property(False): ...`.

    Inside a module it changes the mode for what it calls; the mode before comes back on exit.

    Raises:
        TrainingModeError: `is_training` is not a bool (a NumPy / JAX bool too: the mode is static).
    """
    if not isinstance(is_training, bool):
        raise TrainingModeError(
            f"is_training_property / set_train_property expects a bool (True or False), got "
            f"{type(is_training).__name__}: {is_training!r}"
        )
    with training_mode(is_training):
        yield


def _accepting_training_property(method: Callable[..., Any]) -> Callable[..., Any]:
    """`method` (a Module's `init`, `init_with_output` or `apply`) with an `is_training_property=` argument."""

    @functools.wraps(method)
    def with_property(self: Any, *args: Any, is_training_property: bool | None = None, **kwargs: Any) -> Any:
        if is_training_property is None:  # the mode of the caller (the Trainer's, or none)
            return method(self, *args, **kwargs)
        with set_train_property(is_training_property):
            return method(self, *args, **kwargs)

    with_property.nowrap = True  # type: ignore[attr-defined]  # flax must not bind it as a module method
    with_property.accepts_training_property = True  # type: ignore[attr-defined]
    return with_property


_ENTRY_POINTS = ("init", "init_with_output", "apply")


def accept_training_property(cls: type) -> type:
    """Gives the linen class `cls` (and so its subclasses) `init` / `init_with_output` / `apply` that take
    `is_training_property=`, as Kauldron's; flax's own `nn.Module` is left as it is. Returns `cls`.

    A method `cls` defines itself is kept. Usage: `kd.nn.train_property()` does this for its class.
    """
    for name in _ENTRY_POINTS:
        inherited = getattr(cls, name, None)
        if (
            name in cls.__dict__
            or inherited is None
            or getattr(inherited, "accepts_training_property", False)
        ):
            continue
        setattr(cls, name, _accepting_training_property(inherited))
    return cls


class _TrainProperty:
    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name
        if isinstance(owner, type) and issubclass(owner, nn.Module):
            accept_training_property(owner)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if isinstance(obj, nn.Module) and obj.scope is None:
            raise TrainingModeError(
                f"`{self._name}` property can only be called from within `.init` / `.apply`: "
                f"{type(obj).__name__}.{self._name} was read outside a forward pass (the module is not bound)."
            )
        return is_training()


def train_property() -> Any:
    """A read-only class attribute giving `is_training()` (Kauldron's `kd.nn.train_property`).

    Its linen class also takes `model.apply(..., is_training_property=True)` (and `init`, `init_with_output`).
    """
    return _TrainProperty()
