"""The checkpointer a run with a workdir gets when its config names none: resuming is the default.

    checkpointer = default_checkpointer(workdir="/tmp/run", num_train_steps=30_000, log_every=100)
    checkpointer.save_interval_steps  # 3000: about every tenth of the run, on a logging step

`Trainer(checkpointer=None)` (or a `NoopCheckpointer`) opts out; `Trainer(checkpointer=kd.ckpts.Checkpointer(
save_interval_steps=...))` chooses the cadence.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from kd.ckpts._checkpointer import Checkpointer
from kd.ckpts._noop import NoopCheckpointer

# Between these many steps, about a tenth of the run: a kill loses little, and a short run saves rarely.
MIN_INTERVAL = 1_000
MAX_INTERVAL = 10_000
MAX_TO_KEEP = 3


@dataclasses.dataclass(frozen=True, kw_only=True)
class DefaultCheckpointer(Checkpointer):
    """A `kd.ckpts.Checkpointer` the Trainer chose (see `default_checkpointer`); built again, for the new
    workdir and length, by a `dataclasses.replace` of the Trainer."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoWorkdirCheckpointer(NoopCheckpointer):
    """What the Trainer chose without a workdir (nothing to save into): chosen again by a
    `dataclasses.replace` of the Trainer that sets one."""


def default_checkpointer(*, workdir: Any, num_train_steps: int, log_every: int) -> DefaultCheckpointer:
    """Saves asynchronously about every tenth of the run (between 1,000 and 10,000 steps, on a logging
    step), the last step, and a SIGTERM's or Ctrl-C's; keeps the 3 newest."""
    tenth = min(max(math.ceil(num_train_steps / 10), MIN_INTERVAL), MAX_INTERVAL)
    interval = max(log_every, math.ceil(tenth / log_every) * log_every)
    return DefaultCheckpointer(workdir=workdir, save_interval_steps=interval, max_to_keep=MAX_TO_KEEP)
