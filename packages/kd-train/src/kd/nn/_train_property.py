"""`is_training` reaches any module without patching flax: a context variable set while the Trainer traces.

class Block(nn.Module):
    is_training = kd.nn.train_property()
    @nn.compact
    def __call__(self, x):
        return nn.Dropout(0.1, deterministic=not self.is_training)(x)
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

_IS_TRAINING: contextvars.ContextVar[bool | None] = contextvars.ContextVar("kd_is_training", default=None)


def is_training() -> bool:
    """Whether the step being traced trains (True) or evaluates (False).

    Usage: `deterministic = not kd.nn.is_training()`.

    Raises:
        RuntimeError: outside a Trainer's (or `kd.nn.training_mode(...)`'s) forward pass.
    """
    value = _IS_TRAINING.get()
    if value is None:
        raise RuntimeError(
            "kd.nn.is_training() was read outside a forward pass of the Trainer; call the model inside "
            "`with kd.nn.training_mode(True):` (or False) when calling it yourself."
        )
    return value


@contextlib.contextmanager
def training_mode(training: bool) -> Iterator[None]:
    """Sets what `is_training()` / `train_property()` read: `with kd.nn.training_mode(False): model.apply(...)`."""
    token = _IS_TRAINING.set(bool(training))
    try:
        yield
    finally:
        _IS_TRAINING.reset(token)


class _TrainProperty:
    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return is_training()


def train_property() -> Any:
    """A read-only class attribute giving `is_training()` (Kauldron's `kd.nn.train_property`)."""
    return _TrainProperty()
