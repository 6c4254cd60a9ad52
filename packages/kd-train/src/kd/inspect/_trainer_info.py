"""`show_trainer_info`: Kauldron's overview of a Trainer (config, data, parameters, wiring, sharding) as text.

print(show_trainer_info(trainer))
print(show_trainer_info(trainer, inspect_dataset=False, profile_statix=True))   # + the compiled step's cost
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kd._human_text import aligned, human_bytes, human_flops
from kd.inspect import _batch, _graph, _schedules
from kd.inspect._cost import step_cost
from kd.inspect._tables import context_table, sharding_table
from kd.runtime import get_batch_stats, parameter_table

if TYPE_CHECKING:
    from kd.inspect._cost import StepCost
    from kd.inspect._schedules import Schedules
    from kd.runtime import BatchStats
    from kd.train import Trainer


def show_trainer_info(
    trainer: Trainer,
    *,
    print_cfg: bool = False,
    inspect_dataset: bool = True,
    inspect_params: bool = True,
    inspect_sharding: bool = True,
    inspect_connected: bool = True,
    profile_statix: bool = False,
) -> str:
    """The sections asked for, each `== Title ==` and its text; returned, not printed.

    Usage: `print(show_trainer_info(trainer))`. Flags (Kauldron's names):
      print_cfg: the konfig config the Trainer was resolved from (as JSON).
      inspect_dataset: statistics of the first training batch (pulls one batch) and its image leaves.
      inspect_params: the parameter table, the context's paths and the schedules' values.
      inspect_sharding: where each array of the train state lives.
      inspect_connected: which path feeds which input (`get_connection_graph`).
      profile_statix: XLA's static cost of one compiled train step (compiles it; nothing runs).
    """
    sections: list[tuple[str, str]] = []
    if print_cfg:
        config = trainer.config_json
        sections.append(("Config", config or "(none: this Trainer was not resolved from a konfig config)"))
    if inspect_dataset:
        batch = next(iter(trainer.train_ds))
        sections.append(("Batch statistics", _stats_table(get_batch_stats(batch))))
        images = _batch.image_leaves(batch)
        if images:
            listed = ", ".join(f"{name} ({kind})" for name, (kind, _) in images.items())
            sections.append(("Batch images", f"{listed}; draw them with kd.inspect.plot_batch(batch)"))
    if inspect_params:
        specs = trainer.state_specs
        sections.append(("Parameters", parameter_table(specs.params)))
        sections.append(("Structure of the context", context_table(trainer.context_specs)))
        if trainer.schedules:
            sections.append(("Schedules", _schedules_table(trainer.schedules, trainer.num_train_steps)))
    if inspect_connected:
        graph = _graph.get_connection_graph(trainer)
        sections.append(("Connections (path -> input)", "\n".join(f"{a} -> {b}" for a, b in graph.edges)))
    if inspect_sharding:
        sections.append(("Sharding", sharding_table(trainer)))
    if profile_statix:
        sections.append(("Compiled train step (static cost)", _cost_text(step_cost(trainer))))
    return "\n\n".join(f"== {title} ==\n{body}" for title, body in sections)


def _stats_table(rows: BatchStats) -> str:
    columns = ("Name", "Dtype", "Shape", "Min", "Max", "Mean", "StdDev")
    cells = [columns] + [tuple(_cell(row[c]) for c in columns) for row in rows]
    return "\n".join(aligned(cells))


def _cell(value: str | tuple[int, ...] | float) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _schedules_table(schedules: Schedules, num_steps: int) -> str:
    steps, values = _schedules.schedule_values(schedules, num_steps)
    shown = sorted({int(steps[round(i * (len(steps) - 1) / 4)]) for i in range(5)})
    at = [int(np.searchsorted(steps, step)) for step in shown]
    header = ("Schedule", *(f"step {step:,}" for step in shown))
    rows = [(name, *(f"{ys[i]:.4g}" for i in at)) for name, ys in values.items()]
    return "\n".join(aligned([header, *rows]))


def _cost_text(cost: StepCost) -> str:
    flops, total = cost["flops"], cost["total_bytes"]
    rows = [
        ("compute", "unknown" if flops is None else f"{human_flops(flops)} per step"),
        ("memory per device", "unknown" if total is None else human_bytes(total)),
    ]
    return "\n".join(aligned(rows))
