"""Kauldron's `ktyping.frame_utils`: asking which function is calling, and whether it may use a scope.

    frame = frame_utils.get_caller_frame()            # the calling function's frame, lambdas skipped
    frame_utils.has_active_scope(frame)               # may code in `frame` use the active scope?
    frame_utils.assert_caller_has_active_scope()      # NoActiveScopeError (with a stack summary) if not

Our scopes live in a context variable, not in frame markers, so "has an active scope" means what
`get_current_scope()` accepts (`_scope.frame_may_use_scope`): the frame is the active scope's own
function or block, or it sets Kauldron's `__ktyping_scope_counter__` local to a nonzero count.
Kauldron's frame marking (`mark_frame_as_active_scope`) and its ignore-this-frame local are not
brought over: ktyping never marks frames, and wrappers pass `stacklevel` instead.
"""

from __future__ import annotations

import sys

from ._errors import NoActiveScopeError
from ._scope import TRANSPARENT_FRAME_NAMES, frame_may_use_scope, stack

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType

__all__ = [
    "NoActiveScopeError",
    "assert_caller_has_active_scope",
    "get_caller_frame",
    "has_active_scope",
]

_SUMMARY_FRAMES = 10


def get_caller_frame(stacklevel: int = 0) -> FrameType:
    """The frame of the function that called this one, `stacklevel` functions further out.

    Lambdas, comprehensions and generator expressions are skipped (they count as the function they
    run in), and so are not counted by `stacklevel`. Raises `ValueError` past the outermost frame.
    """
    return _caller_frame(sys._getframe(1), stacklevel)


def has_active_scope(frame: FrameType) -> bool:
    """Whether code running in `frame` may use the active scope without `nested_ok=True`."""
    scopes = stack()
    return frame_may_use_scope(scopes[0] if scopes else None, frame)


def assert_caller_has_active_scope(stacklevel: int = 0) -> None:
    """Raises `NoActiveScopeError` unless the calling function (`stacklevel` functions further out)
    may use the active scope; the message marks that function in a summary of the innermost frames."""
    start = sys._getframe(1)
    frame = _caller_frame(start, stacklevel)
    if has_active_scope(frame):
        return
    code = frame.f_code
    raise NoActiveScopeError(
        f"No active scope for {code.co_name!r} ({code.co_filename}:{frame.f_lineno}): call it from a "
        "@ktyping.typechecked function or inside `with ktyping.typechecked():`. Innermost frames "
        f"(>> marks {code.co_name!r}):\n{_stack_summary(start, frame)}"
    )


def _caller_frame(frame: FrameType | None, stacklevel: int) -> FrameType:
    """`frame` or a frame outside it: the `stacklevel`-th one that is not transparent."""
    skipped = 0
    while frame is not None:
        if frame.f_code.co_name not in TRANSPARENT_FRAME_NAMES:
            if skipped == stacklevel:
                return frame
            skipped += 1
        frame = frame.f_back
    raise ValueError(f"stacklevel={stacklevel} is beyond the outermost frame of the call stack")


def _stack_summary(start: FrameType, highlighted: FrameType) -> str:
    """One line per frame from `start` outwards: `>> fn: ---`, `   main: active scope`, `   <lambda>: skipped`."""
    lines: list[str] = []
    frame: FrameType | None = start
    while frame is not None and len(lines) < _SUMMARY_FRAMES:
        name = frame.f_code.co_name
        if name in TRANSPARENT_FRAME_NAMES:
            state = "skipped"
        elif has_active_scope(frame):
            state = "active scope"
        else:
            state = "---"
        marker = ">>" if frame is highlighted else "  "
        lines.append(f"{marker} {name}: {state}")
        frame = frame.f_back
    return "\n".join(lines)
