"""The values that pass between the loop's parts, named once: a step's loss states, a fused call's, a logged value.

    out.losses.append((step, aux.loss_states))        # UpdateLosses: LossStates, or StackedLosses of a fused call
    logged: dict[str, LoggedValue] = aux.compute()     # a float, or a metric's array

Annotations only: each name is a type built from kd's Protocols (`kd._interfaces`), numpy and the standard
library.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from kd._interfaces import MetricState

LossStates = Mapping[str, MetricState]
"""An update's loss states by loss name (`AuxState.loss_states`), on the device until read."""

StackedLosses = tuple[int, LossStates]
"""A fused call's: `(updates, loss states stacked on a first axis)` (entries past `updates` are zeros)."""

UpdateLosses = LossStates | StackedLosses
"""What one entry of `CallOutput.losses` holds: a single update's states or a fused group's."""

LoggedValue = float | np.ndarray
"""A value written at a step: a number (losses, schedules, `perf/...`), or the array a metric gives."""
