"""Lines for the terminal that keep clear of a progress bar: `print_line(text)`.

    print_line("step 100 | l2 0.0312")          # above the bar while one is shown
    ACTIVE_BARS.append(bar); ...; ACTIVE_BARS.remove(bar)  # what `kd.train.Progress` does with its bar

The bottom of kd-train: the writers (which print log lines) and the training loop's progress bar both use
it, and neither imports the other.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

ACTIVE_BARS: list[Any] = []  # the tqdm bars being shown (the last one is drawn at the bottom)


def print_line(line: str, stream: TextIO | None = None) -> None:
    """Prints `line` to `stream` (stdout), above the progress bar when one is shown.

    Usage: `print_line("step 100 | loss 0.3")`.
    """
    stream = stream or sys.stdout
    if ACTIVE_BARS and stream in (sys.stdout, sys.stderr):
        ACTIVE_BARS[-1].write(line, file=stream)
        stream.flush()
    else:
        print(line, file=stream, flush=True)
