"""`Preemption`: SIGTERM (how schedulers preempt a job) and a first Ctrl-C ask the training loop to stop
after its current call.

    with Preemption() as preemption:
        while step < stop and not preemption.requested: ...
    preemption.signal   # signal.SIGTERM or signal.SIGINT: what asked

A first Ctrl-C (SIGINT) behaves like SIGTERM: the loop finishes the current call, saves it when a
checkpointer is set and says so, then `Trainer.train` raises KeyboardInterrupt (the command line exits 130).
A second Ctrl-C raises KeyboardInterrupt at once, unless a checkpoint is being written (the stop's, or a
periodic one still in flight): then it says which and the save is finished, and a third press abandons it,
the process exiting with 130 (`kd._interrupts`). Only the main thread can take signals; elsewhere the
loop simply runs on.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType

from kd import _interrupts


class Preemption:
    """Within the block, SIGTERM and a first SIGINT set `requested` (and `signal`) instead of stopping the
    process; the old handlers come back after."""

    def __init__(self) -> None:
        self.requested = False
        self.signal: int | None = None
        # The handlers before (`signal.signal`'s: a function, SIG_DFL / SIG_IGN, or None), put back after.
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT and self.signal == signal.SIGINT:
            _interrupts.stop_now()  # the second Ctrl-C: stop now, a save being written finished first
            return
        self.requested = True
        self.signal = signum if self.signal != signal.SIGINT else self.signal

    def __enter__(self) -> Preemption:
        if threading.current_thread() is threading.main_thread():
            _interrupts.reset()
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
