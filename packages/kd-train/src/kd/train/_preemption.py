"""`Preemption`: SIGTERM (how schedulers preempt a job) asks the training loop to stop after its current call.

    with Preemption() as preemption:
        while step < stop and not preemption.requested: ...

Only the main thread can take signals; elsewhere the loop simply runs on (a SIGTERM then ends the process).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any


class Preemption:
    """Within the block, SIGTERM sets `requested` instead of killing the process; the old handler comes back after."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True

    def __enter__(self) -> Preemption:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None
