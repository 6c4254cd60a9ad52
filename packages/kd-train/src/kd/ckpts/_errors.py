"""Errors of kd.ckpts (the bottom layer: standard library only)."""

from __future__ import annotations


class CheckpointStructureError(ValueError):
    """A checkpoint's tree differs from the state template it is restored onto.

    try:
        ckpt.restore_latest(state)
    except kd.ckpts.CheckpointStructureError as e:
        e.path  # 'params.dense.kernel': the first path that differs
    """

    def __init__(self, message: str, *, path: str, differences: tuple[str, ...]) -> None:
        super().__init__(message)
        self.path = path
        self.differences = differences


class CheckpointReadError(OSError):
    """A checkpoint is listed but cannot be read (a truncated or damaged file).

    try:
        ckpt.restore(state, step=100)
    except kd.ckpts.CheckpointReadError as e:
        e.step  # 100
    """

    def __init__(self, message: str, *, step: int) -> None:
        super().__init__(message)
        self.step = step


class CheckpointWarning(UserWarning):
    """Something on disk was set aside: an incomplete save ignored, an unreadable checkpoint skipped."""
