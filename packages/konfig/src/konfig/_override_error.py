"""The error raised by CLI overrides and sweeps, and how its messages quote the input."""

from __future__ import annotations

__all__ = ["OverrideError", "shown"]


class OverrideError(ValueError):
    """A CLI override or sweep item names a path or value that does not fit the config.

    Usage: `except konfig.OverrideError as e: print(e)`; the message names the path
    and the closest existing paths.
    """


def shown(text: str) -> str:
    """Input as messages quote it: long text (a hostile flag) cut in the middle.

    Usage: `OverrideError(f"In override path {shown(path)!r}: ...")`.
    """
    return text if len(text) <= 200 else f"{text[:120]}…({len(text) - 180:,} characters)…{text[-60:]}"
