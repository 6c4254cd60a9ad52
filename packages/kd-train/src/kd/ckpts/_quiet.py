"""Keeps orbax's routine logs and a failed read's noise off the terminal while a Checkpointer is open.

orbax logs dozens of lines per save (through absl's logger, and a few modules through their own
stdlib loggers), from our calls and from its background save threads. While at least one
Checkpointer holds this, records logged from orbax's source files below ERROR are dropped;
everything else (other libraries on the absl logger, orbax's errors) passes through untouched,
and the last `release()` puts the loggers back as they were.

While held, Python's report of an unraisable exception is dropped when it is a leftover of a failed orbax
read (a coroutine of orbax's collected unfinished, tensorstore calling back into the event loop orbax
closed: "Exception ignored in ... RuntimeError: Event loop is closed"); others reach the hook before.

While held, asyncio's "exception was never retrieved" report of a future whose error went through orbax (a
read a failed restore left behind, collected late) is dropped as well.

While a restore is attempted (`with restoring():`), orbax's errors are dropped too, and asyncio's, and
the "Exception ignored in: <coroutine ...>" tracebacks Python prints for the reads a failed restore leaves
unfinished (`sys.unraisablehook`, swapped for the attempt only): a damaged checkpoint is reported by
kd.ckpts in one line, and any other error is raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from kd.ckpts import _orbax

_ORBAX_SOURCE_DIR = _orbax.source_directory()
_ASYNCIO_SOURCE_DIR = os.path.join(os.path.dirname(asyncio.__file__), "")
_ABSL_LOGGER = logging.getLogger("absl")
_ABSL_SOURCE_DIR = os.path.join(os.path.dirname(_ORBAX_SOURCE_DIR.rstrip(os.sep)), "..", "absl", "")
_ABSL_SOURCE_DIR = os.path.join(os.path.realpath(_ABSL_SOURCE_DIR), "")
_LOGGING_SOURCE_DIR = os.path.join(os.path.dirname(logging.__file__), "")
_ORBAX_LOGGER = logging.getLogger("orbax")


_ASYNCIO_LOGGER = logging.getLogger("asyncio")
_restoring = 0


def _from_orbax(record: logging.LogRecord) -> bool:
    """Whether orbax logged `record`: its file is orbax's, or (a record absl's helpers such as `log_first_n`
    made, whose file is absl's own) the first caller outside absl and logging is orbax's."""
    if record.pathname.startswith(_ORBAX_SOURCE_DIR):
        return True
    if not record.pathname.startswith(_ABSL_SOURCE_DIR):
        return False
    frame = sys._getframe(1)  # filters run inside the logging call: the caller's frames are still here
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_ORBAX_SOURCE_DIR):
            return True
        ours = filename == __file__
        if not (ours or filename.startswith(_ABSL_SOURCE_DIR) or filename.startswith(_LOGGING_SOURCE_DIR)):
            return False
        frame = frame.f_back
    return False


class _DropOrbaxBelowError(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not _from_orbax(record):
            return True
        return record.levelno >= logging.ERROR and not _restoring


class _DropWhileRestoring(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _restoring


class _DropOrbaxLeftoverFutures(logging.Filter):
    """asyncio's "Future/Task exception was never retrieved" for a read orbax left behind when a restore
    failed: collected whenever orbax's loop thread lets go of it, possibly after `restoring()` ended."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "exception was never retrieved" not in str(record.msg):
            return True
        error = record.exc_info[1] if record.exc_info else None
        tb = getattr(error, "__traceback__", None)
        if "tensorstore_spec=" in str(error) and _only_asyncio_frames(tb):
            # A read tensorstore failed in C++ (no Python frame but asyncio's own to tell whose): its error
            # names its spec. In kd only orbax reads through tensorstore, and a future nobody awaited was
            # one it left behind.
            return False
        while tb is not None:
            if tb.tb_frame.f_code.co_filename.startswith(_ORBAX_SOURCE_DIR):
                return False
            tb = tb.tb_next
        return True


def _only_asyncio_frames(tb: Any) -> bool:
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_ASYNCIO_SOURCE_DIR):
            return False
        tb = tb.tb_next
    return True


def _is_orbax_leftover(unraisable: Any) -> bool:
    error = unraisable.exc_value
    if isinstance(error, RuntimeError) and str(error) == "Event loop is closed":
        return True
    code = getattr(unraisable.object, "cr_code", None)
    if code is not None and code.co_filename.startswith(_ORBAX_SOURCE_DIR):
        return True
    tb = unraisable.exc_traceback
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_ORBAX_SOURCE_DIR):
            return True
        tb = tb.tb_next
    return False


def _unraisable_hook(unraisable: Any) -> None:
    if not _is_orbax_leftover(unraisable):
        (_hook_before or sys.__unraisablehook__)(unraisable)


_FILTER = _DropOrbaxBelowError()
_RESTORING_FILTER = _DropWhileRestoring()
_FUTURES_FILTER = _DropOrbaxLeftoverFutures()
_lock = threading.Lock()
_holders = 0
_orbax_level_before = logging.NOTSET
_hook_before: Any = None


def hold() -> None:
    """Start quieting orbax (counted: each `hold()` is matched by one `release()`)."""
    global _holders, _orbax_level_before, _hook_before
    with _lock:
        if _holders == 0:
            _ABSL_LOGGER.addFilter(_FILTER)
            _ASYNCIO_LOGGER.addFilter(_FUTURES_FILTER)
            _orbax_level_before = _ORBAX_LOGGER.level
            _ORBAX_LOGGER.setLevel(logging.ERROR)
            _hook_before, sys.unraisablehook = sys.unraisablehook, _unraisable_hook
        _holders += 1


def release() -> None:
    """Undo one `hold()`; the last one restores orbax's logging."""
    global _holders, _hook_before
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders == 0:
            if not _restoring:
                _ABSL_LOGGER.removeFilter(_FILTER)
            _ASYNCIO_LOGGER.removeFilter(_FUTURES_FILTER)
            _ORBAX_LOGGER.setLevel(_orbax_level_before)
            if sys.unraisablehook is _unraisable_hook:  # unless someone replaced it since
                sys.unraisablehook = _hook_before
            _hook_before = None


def _drop_unraisable(unraisable: object) -> None:
    """Drops what a failed restore's unfinished coroutines raise as they are collected."""


def collect_failed_reads() -> None:
    """Collects the garbage a failed restore left (orbax's unfinished reads), dropping their reports.

        _quiet.collect_failed_reads()  # once the error is handled: while it propagates it keeps them alive

    Each read still pending when a restore failed is a coroutine that raises as it is collected; Python would
    print "Exception ignored in: <coroutine ...>" and a screen of tracebacks for each, whenever its reference
    cycle happened to be collected (often after the Checkpointer closed). Other unraisable reports pass.
    """
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None if _is_orbax_leftover(unraisable) else hook(unraisable)
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


@contextlib.contextmanager
def restoring() -> Iterator[None]:
    """`with _quiet.restoring(): ...`: orbax's and asyncio's log records are dropped inside (all levels).

    On an error, the garbage left by orbax's failed tasks is collected before leaving, so that asyncio's
    "never retrieved" reports are made (and dropped) here rather than later on the terminal.
    """
    global _restoring
    with _lock:
        if _restoring == 0:
            _ABSL_LOGGER.addFilter(_FILTER)
            _ORBAX_LOGGER.addFilter(_RESTORING_FILTER)
            _ASYNCIO_LOGGER.addFilter(_RESTORING_FILTER)
        _restoring += 1
    orbax_level, unraisable_hook = _ORBAX_LOGGER.level, sys.unraisablehook
    _ORBAX_LOGGER.setLevel(logging.CRITICAL + 1)
    sys.unraisablehook = _drop_unraisable
    try:
        yield
    except BaseException:
        gc.collect()
        raise
    finally:
        sys.unraisablehook = unraisable_hook
        _ORBAX_LOGGER.setLevel(orbax_level)
        with _lock:
            _restoring -= 1
            if _restoring == 0:
                _ORBAX_LOGGER.removeFilter(_RESTORING_FILTER)
                _ASYNCIO_LOGGER.removeFilter(_RESTORING_FILTER)
                if _holders == 0:
                    _ABSL_LOGGER.removeFilter(_FILTER)
