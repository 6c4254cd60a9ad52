"""Keeps orbax's INFO and WARNING logs off the terminal while a Checkpointer is open.

orbax logs dozens of lines per save (through absl's logger, and a few modules through their own
stdlib loggers), from our calls and from its background save threads. While at least one
Checkpointer holds this, records logged from orbax's source files below ERROR are dropped;
everything else (other libraries on the absl logger, orbax's errors) passes through untouched,
and the last `release()` puts the loggers back as they were.
"""

from __future__ import annotations

import logging
import threading

from kd.ckpts import _orbax

_ORBAX_SOURCE_DIR = _orbax.source_directory()
_ABSL_LOGGER = logging.getLogger("absl")
_ORBAX_LOGGER = logging.getLogger("orbax")


class _DropOrbaxBelowError(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not record.pathname.startswith(_ORBAX_SOURCE_DIR)


_FILTER = _DropOrbaxBelowError()
_lock = threading.Lock()
_holders = 0
_orbax_level_before = logging.NOTSET


def hold() -> None:
    """Start quieting orbax (counted: each `hold()` is matched by one `release()`)."""
    global _holders, _orbax_level_before
    with _lock:
        if _holders == 0:
            _ABSL_LOGGER.addFilter(_FILTER)
            _orbax_level_before = _ORBAX_LOGGER.level
            _ORBAX_LOGGER.setLevel(logging.ERROR)
        _holders += 1


def release() -> None:
    """Undo one `hold()`; the last one restores orbax's logging."""
    global _holders
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders == 0:
            _ABSL_LOGGER.removeFilter(_FILTER)
            _ORBAX_LOGGER.setLevel(_orbax_level_before)
