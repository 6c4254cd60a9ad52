"""kd.inspect: a Trainer before it runs, as text, data and matplotlib figures (Kauldron's kd.inspect, and more).

    print(kd.inspect.inspect_report(trainer))                   # what `kd-train inspect --cfg=...` prints
    print(kd.inspect.context_table(trainer.context_specs))      # every path a kontext key can name
    kd.inspect.step_cost(trainer)["flops"]                      # one compiled train step (never run)
    kd.inspect.get_batch_stats(next(iter(trainer.train_ds)))    # one row per leaf: dtype, shape, min, max, ...
    kd.inspect.plot_schedules(trainer.schedules, num_steps=trainer.num_train_steps).savefig("lr.png")
    print(kd.inspect.show_trainer_info(trainer))                # Kauldron's overview as text

Everything works on shapes (`trainer.state_specs`, `trainer.context_specs`): no state is allocated and no step
runs. `parameter_table`, `parameter_counts` and `intermediate_specs` are `kd.runtime`'s (a run prints the
parameter table; the Trainer lists the intermediates when a key names a missing one). matplotlib is imported only
by the functions that draw (`plot_batch`, `plot_schedules`).
"""

from kd.runtime import get_batch_stats as get_batch_stats
from kd.runtime import intermediate_specs as intermediate_specs
from kd.runtime import parameter_counts as parameter_counts
from kd.runtime import parameter_table as parameter_table
from kd.train import Profiler as Profiler

from ._batch import plot_batch as plot_batch
from ._cost import lower_trainstep as lower_trainstep
from ._cost import step_cost as step_cost
from ._graph import ConnectionGraph as ConnectionGraph
from ._graph import GraphNode as GraphNode
from ._graph import get_connection_graph as get_connection_graph
from ._report import inspect_report as inspect_report
from ._schedules import plot_schedules as plot_schedules
from ._specs import json_spec_like as json_spec_like
from ._specs import plot_context as plot_context
from ._specs import plot_sharding as plot_sharding
from ._tables import context_table as context_table
from ._tables import interms_report as interms_report
from ._tables import sharding_table as sharding_table
from ._trainer_info import show_trainer_info as show_trainer_info

__all__ = [
    "ConnectionGraph",
    "GraphNode",
    "Profiler",
    "context_table",
    "get_batch_stats",
    "get_connection_graph",
    "inspect_report",
    "intermediate_specs",
    "interms_report",
    "json_spec_like",
    "lower_trainstep",
    "parameter_counts",
    "parameter_table",
    "plot_batch",
    "plot_context",
    "plot_schedules",
    "plot_sharding",
    "sharding_table",
    "show_trainer_info",
    "step_cost",
]
