"""Errors of kd.ckpts (the bottom layer: standard library only), and which errors prove a checkpoint damaged.

    CheckpointReadError(OSError)                a listed checkpoint could not be read
      CheckpointDamagedError                    ... and what failed proves it damaged: it is set aside
        CheckpointDigestError                   ... an array or JSON item differs from its saved digest
    CheckpointStructureError(ValueError)        the checkpoint's tree is not the template's

Only a `CheckpointDamagedError` makes `restore_latest` move a checkpoint aside and fall back to the one
before. Anything else met while reading (PermissionError, an OSError such as EIO, MemoryError, an error
of unknown cause) propagates: the checkpoint may well be good, and the run stops instead of discarding it.
"""

from __future__ import annotations

import errno
import json
import re


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
    """A checkpoint is listed but cannot be read.

    Raised as is (not a `CheckpointDamagedError`) when the cause does not prove damage, e.g. tensorstore
    reporting PERMISSION_DENIED or UNAVAILABLE: `restore_latest` then stops instead of setting it aside.

    try:
        ckpt.restore(state, step=100)
    except kd.ckpts.CheckpointReadError as e:
        e.step  # 100
    """

    def __init__(self, message: str, *, step: int) -> None:
        super().__init__(message)
        self.step = step


class CheckpointDamagedError(CheckpointReadError):
    """A checkpoint is damaged: a missing or truncated file, undecodable metadata, a digest that differs.

    `restore_latest` moves it to `<workdir>/checkpoints.unreadable/` (kept, never deleted) and restores
    the one before; `restore(state, step=...)` raises it.

    try:
        ckpt.restore(state, step=100)
    except kd.ckpts.CheckpointDamagedError as e:
        e.step, e.path  # 100, 'params.dense.kernel' (what was found damaged, when known; else None)
    """

    def __init__(self, message: str, *, step: int, path: str | None = None) -> None:
        super().__init__(message, step=step)
        self.path = path


class CheckpointDigestError(CheckpointDamagedError):
    """What a checkpoint holds differs from the digests saved with it (a flipped bit, an edited file).

    `e.path` is the array's path (`'params.dense.kernel'`), or the JSON item (`'data'`: the data iterator
    state) whose digest differs.
    """

    def __init__(self, message: str, *, step: int, path: str) -> None:
        super().__init__(message, step=step, path=path)


class CheckpointWarning(UserWarning):
    """Something on disk was set aside: an incomplete save ignored, an unreadable checkpoint skipped."""


# tensorstore (orbax's array store) raises ValueError("<CODE>: ...") with absl's status codes.
_TENSORSTORE_DAMAGE = ("NOT_FOUND", "OUT_OF_RANGE", "DATA_LOSS", "FAILED_PRECONDITION", "INVALID_ARGUMENT")
_TENSORSTORE_OTHER = (
    "PERMISSION_DENIED",
    "UNAVAILABLE",
    "RESOURCE_EXHAUSTED",
    "UNKNOWN",
    "INTERNAL",
    "ABORTED",
    "DEADLINE_EXCEEDED",
    "CANCELLED",
    "UNAUTHENTICATED",
    "UNIMPLEMENTED",
)


def chain(error: BaseException) -> list[BaseException]:
    """`error`, then its causes (`raise ... from`) and contexts, each once."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and not any(current is s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


_TENSORSTORE_KEY = re.compile(r'(?:reading|at) "([^"]+?)/(?:\.zarray|\.zattrs|[0-9][0-9.]*)"')


def tensorstore_array(error: BaseException) -> str | None:
    """The array a tensorstore error names (`'params.dense.kernel'` in `Error reading "params.dense.kernel/0"`)."""
    match = _TENSORSTORE_KEY.search(str(error))
    return match.group(1) if match else None


def _tensorstore_code(error: BaseException) -> str | None:
    if type(error) not in (ValueError, Exception):
        return None
    text = str(error)
    for code in _TENSORSTORE_DAMAGE + _TENSORSTORE_OTHER:
        if text.startswith(code + ":"):
            return code
    return None


def proves_damage(error: BaseException) -> bool:
    """Whether an error met reading a listed checkpoint proves the checkpoint damaged.

    Damage: a file missing (FileNotFoundError, tensorstore NOT_FOUND), cut short or undecodable (tensorstore
    OUT_OF_RANGE, DATA_LOSS, FAILED_PRECONDITION, INVALID_ARGUMENT; JSON, UTF-8 or msgpack decoding errors),
    a digest that differs. Not damage, whatever else is in the chain: MemoryError, PermissionError, any
    other OSError (EIO, ENOSPC, too many open files), tensorstore PERMISSION_DENIED, UNAVAILABLE,
    RESOURCE_EXHAUSTED, UNKNOWN, INTERNAL, ... An error of neither kind does not prove damage either.
    """
    errors = chain(error)
    damage = False
    for e in errors:
        code = _tensorstore_code(e)
        if isinstance(e, CheckpointDamagedError):
            damage = True
        elif isinstance(e, CheckpointReadError) and e is not error:
            continue  # a wrapper of ours: its own cause is in the chain
        elif isinstance(e, MemoryError) or code in _TENSORSTORE_OTHER:
            return False
        elif isinstance(e, OSError):
            if e.errno != errno.ENOENT and not isinstance(e, FileNotFoundError):
                return False
            damage = True
        elif isinstance(e, (json.JSONDecodeError, UnicodeDecodeError)) or code in _TENSORSTORE_DAMAGE:
            damage = True
        elif type(e).__module__.partition(".")[0] == "msgpack":
            damage = True
    return damage
