"""Ctrl-C while a checkpoint is being written: the save is finished, and one more press abandons it.

    with _interrupts.writing(save):   # kd.ckpts._orbax: around orbax's blocking save calls, its waits, deletes and close
        manager.save(...)
    _interrupts.stop_now()            # a Ctrl-C that stops at once (`kd.train`'s second Ctrl-C) calls this

A KeyboardInterrupt raised inside orbax's code makes orbax log a traceback and forget the step it is finishing
(while its threads still complete the files), so none is raised there: inside `writing()` on the main thread,
Python's default Ctrl-C handler gives way to one that raises the KeyboardInterrupt once orbax has returned
(once the save in flight is complete), and `kd.train`'s handler asks `stop_now()`.

While a save is being written, the first press that would stop at once prints one line,

    saving step 120 before stopping; press Ctrl-C again to abandon this save (the run would resume from step 100)

and the save goes on; the next press abandons it: two lines say so and which step the run resumes from, and the
process exits with 130 at once (`os._exit`: orbax's writing threads would hold a normal exit until they are
done; in a notebook this ends the kernel). The save stays as orbax's temporary folder, which the next start
removes (`Checkpointer` warns about it); no earlier checkpoint is touched. A press that lands after the save it
was told about completed stops at once and says that step is saved (there is nothing left to abandon).
Standard library only (and kd._terminal).
Shared by `kd.ckpts` (its saves run inside `writing()`) and `kd.train` (its Ctrl-C handler calls `stop_now()`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import threading
from types import FrameType

from kd._terminal import print_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclasses.dataclass(frozen=True)
class Save:
    """A save started: its `step`, the newest complete checkpoint besides it (`resumes_from`, None when
    there is none), the path orbax's temporary folder of it begins with (`partial`) and the step's folder once
    complete (`folder`)."""

    step: int
    resumes_from: int | None
    partial: str
    folder: str

    def partial_folder(self) -> str | None:
        """orbax's temporary folder of this save while it exists (a local folder); None once renamed."""
        parent, prefix = os.path.split(self.partial)
        try:
            names = os.listdir(parent)
        except OSError:
            return None
        return next((os.path.join(parent, name) for name in names if name.startswith(prefix)), None)

    def complete(self) -> bool:
        """Whether orbax finished it: its temporary folder was renamed to the step's folder (a local folder)."""
        return "://" not in self.folder and os.path.isdir(self.folder) and not self.partial_folder()

    def unfinished(self) -> bool | None:
        """Whether orbax is still writing it; None where that cannot be seen cheaply (a remote folder)."""
        if "://" in self.partial:
            return None
        return self.partial_folder() is not None

    def resume_text(self) -> str:
        """`resume from step 100`, or `start over from step 0`."""
        return (
            "start over from step 0" if self.resumes_from is None else f"resume from step {self.resumes_from}"
        )


# All of it is the main thread's (the only one Python runs signal handlers in).
_saving: Save | None = None  # the save in flight (cleared once a wait returns)
_latest: Save | None = None  # the newest save started (kept once complete)
_starting: Save | None = None  # the save whose blocking part orbax is running
_depth = 0
_announced = False  # the "press Ctrl-C again to abandon" line was printed
_pending: KeyboardInterrupt | None = None  # raised once the outermost `writing()` is left


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def writing(save: Save | None = None) -> Iterator[None]:
    """Inside, no KeyboardInterrupt is raised: a press that would raise one is raised as the block is left
    (without an error). `save`: the save this block starts (it is in flight from then on)."""
    global _depth, _saving, _starting, _pending, _latest
    if not _on_main_thread():
        yield
        return
    outermost = _depth == 0
    previous = signal.getsignal(signal.SIGINT) if outermost else None
    ours = previous is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, _on_ctrl_c)
    if save is not None:
        _saving = _starting = _latest = save
    _depth += 1
    pending = None
    try:
        yield
    finally:
        _depth -= 1
        if save is not None:
            _starting = None
        if ours:
            signal.signal(signal.SIGINT, previous)
        if outermost:
            pending, _pending = _pending, None
    if pending is not None:
        reset()  # the stop goes on: a later save's press is said again
        raise pending


def saved() -> None:
    """The save in flight is complete (or failed): nothing is being written."""
    global _saving
    if _on_main_thread():
        _saving = None


def pending() -> bool:
    """Whether a Ctrl-C waits to be raised as the outermost `writing()` is left."""
    return _pending is not None


def reset() -> None:
    """A new run: no press was said yet."""
    global _announced
    _announced = False


def stop_now() -> None:
    """What a Ctrl-C that stops at once does: raises KeyboardInterrupt (once orbax returns, inside `writing()`);
    while a checkpoint is being written, the first such press says so and lets the save go on (the stop comes
    after it), and the next abandons it (see the module docstring)."""
    global _announced, _pending
    save = _in_flight()
    if save is None:
        stop = _stop_after_save() if _announced else None
        if not _depth:
            raise stop or KeyboardInterrupt
        if _pending is None or stop is not None:
            _pending = stop or KeyboardInterrupt()
        return
    if _announced:
        _abandon(save)
    _announced = True
    _say(
        f"saving step {save.step} before stopping; press Ctrl-C again to abandon this save (the run would "
        f"{save.resume_text()})"
    )
    if _depth:
        if _pending is not None:
            _pending._kd_announced = True  # type: ignore[attr-defined]  # the line above said it
        return
    stop = KeyboardInterrupt(f"stopped while saving step {save.step} (Ctrl-C)")
    stop._kd_announced = True  # type: ignore[attr-defined]  # the line above said it
    raise stop


def _stop_after_save() -> KeyboardInterrupt | None:
    """A press after the save that was said completed: one line says the step is saved (and where the run goes
    on from); the KeyboardInterrupt to raise, marked as said. None when that save is not complete."""
    save = _latest
    if save is None or not save.complete():
        return None
    _say(f"interrupted (Ctrl-C) after step {save.step} was saved; run the same command again to resume from it")
    stop = KeyboardInterrupt(f"stopped after saving step {save.step} (Ctrl-C)")
    stop._kd_announced = True  # type: ignore[attr-defined]  # the line above said it
    return stop


def _in_flight() -> Save | None:
    """The save being written now: the one orbax is starting, or one whose temporary folder is still there
    (inside `writing()`, also one whose folder cannot be seen: the main thread waits for it)."""
    save = _saving
    if save is None:
        return None
    if save is _starting:
        return save
    unfinished = save.unfinished()
    return save if unfinished or (unfinished is None and _depth) else None


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """Python's default Ctrl-C, while orbax runs: the KeyboardInterrupt waits until it has returned."""
    global _pending
    if _pending is None:
        _pending = KeyboardInterrupt()
    stop_now()


def _abandon(save: Save) -> None:
    """The save is left unfinished and the process exits with 130 (128 + SIGINT), now."""
    partial = save.partial_folder()
    left = (
        f": {os.path.basename(partial)} is left unfinished and removed at the next start" if partial else ""
    )
    _say(f"abandoned the save of step {save.step} (Ctrl-C){left}")
    none = " (no checkpoint is complete)" if save.resumes_from is None else ""
    _say(f"run the same command again to {save.resume_text()}{none}")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(130)


def _say(line: str) -> None:
    """`line` on stderr, from a signal handler: straight to the file when the main thread was writing to it."""
    try:
        print_line(line, sys.stderr)
    except RuntimeError:  # "reentrant call": the handler interrupted a write to stderr
        os.write(2, (line + "\n").encode())
