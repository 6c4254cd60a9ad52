"""The error raised by CLI overrides and sweeps."""

from __future__ import annotations

__all__ = ["OverrideError"]


class OverrideError(ValueError):
    """A CLI override or sweep item names a path or value that does not fit the config.

    Usage: `except konfig.OverrideError as e: print(e)`; the message names the path
    and the closest existing paths.
    """
