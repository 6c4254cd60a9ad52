"""kd.train's errors. Each names the Trainer field or key at fault, what was expected and what was found."""

from __future__ import annotations


class ConfigError(ValueError):
    """A Trainer whose fields do not fit together (raised before anything compiles or is written)."""


class KeyPathError(KeyError):
    """A loss / metric / summary / model key that names no path of the step's context."""

    def __str__(self) -> str:  # KeyError's str() would quote the whole message
        return str(self.args[0]) if self.args else ""


class ShapeMismatchError(ValueError):
    """Model outputs that do not fit what a loss / metric expects (names both shapes)."""


class NonFiniteLossError(FloatingPointError):
    """A loss became NaN or infinite; training stopped before saving anything computed from it.

    try:
        trainer.train()
    except kd.train.NonFiniteLossError as e:
        e.step, e.losses  # 37, {"l2": nan}: the first step whose loss was not finite, and its losses
    """

    def __init__(self, message: str, *, step: int, losses: dict[str, float]) -> None:
        super().__init__(message)
        self.step = step
        self.losses = losses
