"""How `kd-train` stops: `CliError` (the command or config is wrong, exit 2) and `RunError` (the machine
refused, exit 1), each printed as one paragraph; `operational_cause` finds the I/O error behind a crash.

    cause = operational_cause(error)  # the OSError (disk full, read-only, too many files...) or None
    if cause is not None:
        raise RunError(describe_os_error(cause, flag="--cfg.workdir")) from error
"""

from __future__ import annotations

import errno
import logging
import os
import re
import sys
import threading

from kd._terminal import print_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class CliError(Exception):
    """Raised by the `kd-train` subcommands for bad arguments or workdirs; the CLI prints it, no traceback.

    Usage: `raise CliError(f"{workdir}: no metrics.jsonl (was the run started with a workdir?)")`.
    """


class RunError(Exception):
    """The command stopped for a reason outside the config's text (disk full, a read-only or unwritable
    workdir, too few file descriptors) or a value that broke a computation during training; the CLI prints
    it as one paragraph, no traceback, exit 1.

    Usage: `raise RunError("no space left on device writing /tmp/run: free space ...") from error`.
    """


# errno -> what to do about it (the machine's state, not the config's text: exit 1)
_ADVICE = {
    errno.ENOSPC: "free space there or choose another {flag}",
    errno.EDQUOT: "free space within your quota or choose another {flag}",
    errno.EFBIG: "choose another {flag} (a filesystem that allows larger files)",
    errno.EROFS: "choose a writable {flag}",
    errno.EACCES: "give this user write access or choose another {flag}",
    errno.EPERM: "give this user write access or choose another {flag}",
    errno.EMFILE: "raise the limit (`ulimit -n 4096`) and run the same command again",
    errno.ENFILE: "close other programs or raise the system's limit (fs.file-max) and run the same command again",
    errno.EIO: "check the disk (or the network filesystem) and run the same command again",
    errno.ENOTDIR: "choose a {flag} whose parents are all folders",
    errno.EISDIR: "remove or rename that folder, or choose another {flag}",
}


# An errno in the text of another library's error: tensorstore's `[os_error_code='28']` (orbax's array
# writes), or a logged `[Errno 24] Too many open files`.
_ERRNO_IN_TEXT = re.compile(r"os_error_code='(\d+)'|\[Errno (\d+)\]")
_FILE_IN_TEXT = re.compile(r'(?:local file|Failed writing:) "([^"]+)"')


def _is_operational(error: BaseException) -> bool:
    if not isinstance(error, OSError):
        return False
    # kd.ckpts' own OSErrors (a checkpoint that cannot be read) say what happened themselves.
    return error.errno in _ADVICE or type(error).__module__.startswith("kd.ckpts")


def _os_error_in_text(text: str) -> OSError | None:
    match = _ERRNO_IN_TEXT.search(text)
    code = int(match.group(1) or match.group(2)) if match else None
    if code not in _ADVICE:
        return None
    where = _FILE_IN_TEXT.search(text)
    return OSError(code, os.strerror(code), where.group(1) if where else None)


def operational_cause(error: BaseException) -> OSError | None:
    """The operational `OSError` in `error`'s chain (itself, its `__cause__` or `__context__`; an errno in
    the text of a tensorstore error counts), or None."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop(0)
        if current is None or id(current) in seen or len(seen) > 100:
            continue
        seen.add(id(current))
        if _is_operational(current):
            return current  # type: ignore[return-value]
        if not isinstance(current, OSError) and isinstance(current, (ValueError, RuntimeError)):
            found = _os_error_in_text(str(current)[:10_000])
            if found is not None:
                return found
        todo += [current.__cause__, current.__context__]
    return None


def describe_os_error(error: OSError, *, flag: str, where: str | None = None) -> str:
    """`no space left on device writing /tmp/run/x: free space there or choose another --cfg.workdir`."""
    if error.errno is None:  # a kd.ckpts error: its message is the whole story
        return str(error)
    cause = (error.strerror or str(error)).rstrip(".")
    cause = cause[:1].lower() + cause[1:]
    target = error.filename or where
    text = f"{cause} ({target})" if target else cause
    if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) and target:
        text = f"{cause} writing {target}"
    return f"{text}: {_ADVICE.get(error.errno, 'choose another {flag}').format(flag=flag)}"


def traceback_frames(error: BaseException) -> list[Any]:
    """The frames `error` passed through, outermost first."""
    frames = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def _is_noise(error: BaseException | None) -> bool:
    """An I/O error, or what background threads raise once an I/O error stopped their event loop."""
    if error is None:
        return False
    text = str(error)
    return (
        operational_cause(error) is not None
        or (
            isinstance(error, RuntimeError)
            and text in ("Event loop is closed", "cannot schedule new futures after shutdown")
        )
        or (isinstance(error, ImportError) and "Python is likely shutting down" in text)
    )


class HeldIOErrorNoise(logging.Filter):
    """Holds back what orbax's background threads print for an I/O error (ERROR records with tracebacks,
    thread exceptions, "Exception ignored" at exit); the CLI's one paragraph says it instead (`discard()`),
    else all of it is printed when the command ends.

        with HeldIOErrorNoise() as held:
            ...
            held.discard()
    """

    def __init__(self) -> None:
        super().__init__()
        self.held: list[Callable[[], object]] = []
        self.discarded = False
        # orbax logs through absl's logger; asyncio logs "Task exception was never retrieved" at exit
        self._loggers = [logging.getLogger("absl"), logging.getLogger("asyncio")]

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if _is_noise(error) or (record.levelno >= logging.ERROR and _os_error_in_text(str(record.msg))):
            if not self.discarded:
                self.held.append(lambda: logging.getLogger(record.name).handle(record))
            return False
        return True

    def discard(self) -> None:
        self.held.clear()
        self.discarded = True

    def __enter__(self) -> HeldIOErrorNoise:
        self._hooks = sys.excepthook, threading.excepthook, sys.unraisablehook
        excepthook, thread_hook, unraisable_hook = self._hooks

        def on_exception(kind: Any, error: Any, tb: Any) -> None:
            if self.discarded or _is_noise(error):
                self.held.append(lambda: excepthook(kind, error, tb))
            else:
                excepthook(kind, error, tb)

        def on_thread_exception(args: Any) -> None:
            if self.discarded or _is_noise(args.exc_value):
                self.held.append(lambda: thread_hook(args))
            else:
                thread_hook(args)

        def on_unraisable(unraisable: Any) -> None:
            if self.discarded or _is_noise(unraisable.exc_value):
                self.held.append(lambda: unraisable_hook(unraisable))
            else:
                unraisable_hook(unraisable)

        for logger in self._loggers:
            logger.addFilter(self)
        sys.excepthook, threading.excepthook, sys.unraisablehook = (
            on_exception,
            on_thread_exception,
            on_unraisable,
        )
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        if not self.discarded:  # (else the filter stays, dropping what the process's exit logs of it)
            for logger in self._loggers:
                logger.removeFilter(self)
        excepthook, thread_hook, unraisable_hook = self._hooks
        sys.excepthook, threading.excepthook, sys.unraisablehook = self._hooks
        if self.discarded:
            # The command ends with the paragraph: what its unfinished background work raises on the way
            # out of the process ("Exception ignored in <coroutine>", a closed event loop) is dropped too.
            sys.excepthook = lambda k, e, t: None if _is_noise(e) else excepthook(k, e, t)
            threading.excepthook = lambda a: None if _is_noise(a.exc_value) else thread_hook(a)
            sys.unraisablehook = lambda u: None if _is_noise(u.exc_value) else unraisable_hook(u)
        else:
            for replay in self.held:
                replay()
        self.held.clear()


# ---------------------------------------------------------------- crashes in user code

# The installed libraries and kd's own packages: frames in them are not the user's (`--traceback=full`
# shows them). The rest (a config file, a model of one's own, a data loader, a test) is the user's code.
_LIBRARY_PACKAGES = ("kd", "konfig", "kontext", "ktyping", "kd_compat")
TRACEBACK_ENV = "KD_TRACEBACK"
"""`KD_TRACEBACK=full kd-train ...` shows whole tracebacks, as `--traceback=full` does."""
_SHOWN_FRAMES = 6  # the user's frames nearest to the error; the rest are counted
_JAX_FILTER_NOTE = re.compile(r"^-+\s*$|JAX has removed its internal frames", re.MULTILINE)


def _library_roots() -> tuple[str, ...]:
    import importlib.util
    import sysconfig

    roots = {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    for package in _LIBRARY_PACKAGES:
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            roots.add(location)
    return tuple(os.path.realpath(root) + os.sep for root in roots if root)


def is_user_file(filename: str, roots: tuple[str, ...] | None = None) -> bool:
    """Whether a frame of `filename` is the user's code (not Python's, an installed library's or kd's)."""
    if not filename or filename.startswith("<"):
        return False  # `<frozen importlib._bootstrap>`, `<string>`: Python's machinery
    path = os.path.realpath(filename)
    return not path.startswith(roots if roots is not None else _library_roots())


def _chain(error: BaseException) -> list[BaseException]:
    """`error`, then its causes (`raise ... from`) and contexts, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain and len(chain) < 20:
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return chain


def user_frames(error: BaseException) -> tuple[BaseException, list[Any]] | None:
    """`(exception, its user frames)` for the innermost exception of `error`'s chain raised through user code
    (`traceback.FrameSummary`s, outermost first), or None when no user frame is on any of its tracebacks."""
    import traceback

    roots = _library_roots()
    for current in reversed(_chain(error)):
        frames = [f for f in traceback.extract_tb(current.__traceback__) if is_user_file(f.filename, roots)]
        if frames:
            return current, frames
    return None


def _frame_lines(frames: list[Any]) -> list[str]:
    lines = []
    hidden = len(frames) - _SHOWN_FRAMES
    if hidden > 0:
        lines.append(f"  ... {hidden} earlier frame(s) of your code")
    for frame in frames[-_SHOWN_FRAMES:]:
        lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}')
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    return lines


def user_frame_lines(error: BaseException) -> str:
    """The user's frames nearest to where `error` was raised, as `describe_user_error` shows them (a leading
    newline), or "" when none of its frames is the user's."""
    found = user_frames(error)
    return "" if found is None else "\n" + "\n".join(_frame_lines(found[1]))


def describe_user_error(error: BaseException, where: str | None) -> str:
    """The crash of user code as a few lines: where in the run, the error, the user's frames nearest to it.

    error while training, steps 1-100: ValueError: cannot reshape array of shape (64, 256) into (64, 100)
      File "/home/me/models.py", line 12, in __call__
        x = x.reshape((x.shape[0], 100))
    (your code's frames; --traceback=full or KD_TRACEBACK=full shows all 41)
    """
    import traceback

    found = user_frames(error)
    assert found is not None
    raised, frames = found
    total = sum(len(traceback.extract_tb(e.__traceback__)) for e in _chain(error))
    message = _error_text(error)
    if raised is not error and _error_text(raised) not in message:
        message += f"\n  (raised as {_error_text(raised)})"
    lines = [f"error while {where}: {message}" if where else f"error: {message}", *_frame_lines(frames)]
    lines.append(f"(your code's frames; --traceback=full or {TRACEBACK_ENV}=full shows all {total} frame(s))")
    return "\n".join(lines)


def _error_text(error: BaseException) -> str:
    """`ValueError: cannot reshape ...`; a KeyError's message unquoted; the notes after it."""
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    name = type(error).__name__
    text = f"{name}: {text}" if text else name
    for note in getattr(error, "__notes__", None) or ():
        if not _JAX_FILTER_NOTE.search(str(note)):  # "JAX has removed its internal frames": so do we
            text += f"\n  {note}"
    return text


def describe_syntax_error(error: SyntaxError) -> str:
    """`examples/x.py, line 12: invalid syntax`, the line and a caret: a config file that does not parse."""
    where = error.filename or "the config"
    lines = [f"error: {where}, line {error.lineno}: {error.msg}"]
    if error.text:
        text = error.text.rstrip("\n")
        stripped = text.lstrip()
        lines.append(f"    {stripped}")
        if error.offset:
            column = max(error.offset - 1 - (len(text) - len(stripped)), 0)
            lines.append("    " + " " * column + "^")
    return "\n".join(lines)


class one_line_warnings:
    """Shows each warning as one line, `warning: <message>` (no source line of the library that warned),
    while a command runs; kd's own warnings say what happened and what to do.

        with one_line_warnings():
            warnings.warn("Ignoring the incomplete checkpoint ...")   # warning: Ignoring the incomplete ...
    """

    def __enter__(self) -> one_line_warnings:
        import warnings

        self._shown = warnings.showwarning
        warnings.showwarning = self._show
        return self

    def __exit__(self, *exc: object) -> None:
        import warnings

        warnings.showwarning = self._shown

    @staticmethod
    def _show(
        message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:

        own = (category.__module__ or "").split(".")[0] in _LIBRARY_PACKAGES
        kind = "" if own or category is UserWarning else f"{category.__name__}: "
        print_line(f"warning: {kind}{message}", file or sys.stderr)
