"""Exception types of kd.metrics (each refines the builtin callers already catch)."""

from __future__ import annotations


class StateMergeError(ValueError):
    """Two metric states that cannot be merged: different types, or different static settings.

    Usage: `except kd.metrics.StateMergeError as e: ...` around `state.merge(other)`.
    """
