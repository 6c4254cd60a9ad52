"""kd.inspect: Kauldron's inspection helpers, as data and matplotlib figures (no notebook needed).

    kd.inspect.get_batch_stats(next(iter(trainer.train_ds)))   # one row per leaf: dtype, shape, min, max, ...
    kd.inspect.plot_schedules(trainer.schedules, num_steps=trainer.num_train_steps).savefig("lr.png")
    kd.inspect.plot_context(trainer)["batch"]                  # {"x": "f32[8 2]", "y": "f32[8 1]"}
    print(kd.inspect.get_connection_graph(trainer).source)     # Graphviz DOT text of the keys' wiring
    print(kd.inspect.show_trainer_info(trainer))               # the whole overview as text

matplotlib is imported only by the functions that draw (`plot_batch`, `plot_schedules`).
"""

from kd.train import Profiler as Profiler
from kd.train import lower_trainstep as lower_trainstep

from ._batch import get_batch_stats as get_batch_stats
from ._batch import plot_batch as plot_batch
from ._graph import ConnectionGraph as ConnectionGraph
from ._graph import GraphNode as GraphNode
from ._graph import get_connection_graph as get_connection_graph
from ._schedules import plot_schedules as plot_schedules
from ._specs import json_spec_like as json_spec_like
from ._specs import plot_context as plot_context
from ._specs import plot_sharding as plot_sharding
from ._trainer_info import show_trainer_info as show_trainer_info

__all__ = [
    "ConnectionGraph",
    "GraphNode",
    "Profiler",
    "get_batch_stats",
    "get_connection_graph",
    "json_spec_like",
    "lower_trainstep",
    "plot_batch",
    "plot_context",
    "plot_schedules",
    "plot_sharding",
    "show_trainer_info",
]
