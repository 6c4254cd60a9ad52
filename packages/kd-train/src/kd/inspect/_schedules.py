"""`plot_schedules`: each schedule of a run (learning rate, ...) over its steps, as a matplotlib Figure.

fig = plot_schedules(trainer.schedules, num_steps=trainer.num_train_steps)
fig.savefig("schedules.png")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import jax
import kontext
import numpy as np

if TYPE_CHECKING:
    import optax
    from matplotlib.figure import Figure

    Schedules = Mapping[str, optax.Schedule | "Schedules"]
    """Schedules by name, nested dicts of them too (`{"lr": ..., "model": {"temperature": ...}}`)."""

NUM_POINTS = 1000
"""Steps at which each schedule is evaluated (fewer for a shorter run: each step once)."""


def schedule_values(schedules: Schedules, num_steps: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """`(steps, {name: values})`: every schedule of a (nested) dict at up to 1,000 steps from 0 to `num_steps`.

    Usage: `steps, values = schedule_values({"lr": optax.linear_schedule(1.0, 0.0, 100)}, 100)`. Names are the
    schedules' paths (`lr`, `model.temperature`). A schedule that `jax.vmap` cannot trace (Python control flow)
    is called step by step.
    """
    if hasattr(schedules, "to_dict"):  # a konfig / ml_collections ConfigDict
        schedules = schedules.to_dict()
    steps = np.unique(np.round(np.linspace(0, num_steps, num=NUM_POINTS)).astype(np.int32))
    flat = kontext.flatten_with_path(schedules)
    return steps, {str(name): _evaluated(schedule, steps) for name, schedule in flat.items()}


def plot_schedules(schedules: Schedules, num_steps: int) -> Figure:
    """One line per schedule (`schedule(step)` for steps 0 ... `num_steps`), labelled by its path.

    Usage: `plot_schedules({"lr": optax.cosine_decay_schedule(1e-3, 1000)}, num_steps=1000).savefig(...)`.
    The lines' data are the values (`fig.axes[0].get_lines()[0].get_ydata()`).
    """
    steps, values = schedule_values(schedules, num_steps)
    from matplotlib.figure import Figure  # heavy: only when drawing

    fig = Figure(figsize=(7, 3.5))
    ax = fig.subplots()
    for name, ys in values.items():
        ax.plot(steps, ys, label=name)
    ax.set_xlabel("Step")
    ax.set_ylabel("Value")
    if values:
        ax.legend(title="Schedule")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _evaluated(schedule: optax.Schedule, steps: np.ndarray) -> np.ndarray:
    try:
        return np.asarray(jax.vmap(schedule)(steps), dtype=np.float64)
    except (jax.errors.JAXTypeError, TypeError):  # Python control flow on the step: one call per step
        return np.asarray([float(schedule(int(step))) for step in steps])
