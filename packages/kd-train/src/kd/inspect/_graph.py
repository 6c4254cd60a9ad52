"""`get_connection_graph`: which context path feeds which input of the model, the losses, metrics, summaries.

    graph = get_connection_graph(trainer)
    graph.edges          # (("batch.x", "model.x"), ("model", "preds"), ("preds", "l2.preds"), ...)
    print(graph.source)  # Graphviz DOT text: `dot -Tsvg`, or `graphviz.Source(graph.source)` in a notebook

Data only: no graphviz package or binary is needed to build it.
"""

from __future__ import annotations

import dataclasses
import html
from typing import TYPE_CHECKING, Any

import kontext

from kd.runtime import NnxModel, as_model

if TYPE_CHECKING:
    from kd.train import Trainer

_GROUPS = (
    ("train", "model"),
    ("losses", "train_losses"),
    ("metrics", "train_metrics"),
    ("summaries", "train_summaries"),
)


@dataclasses.dataclass(frozen=True)
class GraphNode:
    """An object with kontext keys (`inputs`: argument -> path), or a context field its keys read from (`outputs`:
    the paths below it that are read)."""

    name: str
    group: str
    inputs: dict[str, str] = dataclasses.field(default_factory=dict)
    outputs: tuple[str, ...] = ()

    @property
    def ports(self) -> list[str]:
        """The node's rows: its inputs and outputs, sorted."""
        return sorted(set(self.inputs) | set(self.outputs))


@dataclasses.dataclass(frozen=True)
class ConnectionGraph:
    """Nodes grouped as `train` (the model and the context fields), `losses`, `metrics`, `summaries`; each edge
    goes from a context path (`batch.x`) to an object's input (`model.x`)."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[str, str], ...]

    def node(self, name: str) -> GraphNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"ConnectionGraph: no node {name!r}; nodes: {[n.name for n in self.nodes]}")

    def to_dict(self) -> dict[str, Any]:
        """`{"nodes": [{"name", "group", "inputs", "outputs"}, ...], "edges": [[from, to], ...]}` (JSON)."""
        return {
            "nodes": [
                {"name": n.name, "group": n.group, "inputs": dict(n.inputs), "outputs": list(n.outputs)}
                for n in self.nodes
            ],
            "edges": [list(edge) for edge in self.edges],
        }

    @property
    def source(self) -> str:
        """The graph in Graphviz's DOT language: one cluster per group, one table per node, a row per port."""
        lines = ["digraph {", "  rankdir=LR;", "  node [shape=none];"]
        for group in dict.fromkeys(node.group for node in self.nodes):
            lines += [f"  subgraph cluster_{group} {{", f'    label="{group}";']
            lines += [f"    {_quoted(n.name)} [label=<{_table(n)}>];" for n in self.nodes if n.group == group]
            lines.append("  }")
        lines += [f"  {_endpoint(a)} -> {_endpoint(b)};" for a, b in self.edges]
        lines.append("}")
        return "\n".join(lines)


def get_connection_graph(trainer: Trainer) -> ConnectionGraph:
    """The wiring of `trainer`'s kontext keys: the model's inputs, each loss's, metric's and summary's.

    Usage: `get_connection_graph(trainer).edges`; keys reading `step` are left out, as in Kauldron.
    """
    nodes: list[GraphNode] = []
    for group, field in _GROUPS:
        objects = {"model": _keyed_model(trainer)} if field == "model" else dict(getattr(trainer, field))
        for name, obj in objects.items():
            inputs = {arg: str(path) for arg, path in _keypaths(obj).items() if path is not None}
            nodes.append(GraphNode(name=name, group=group, inputs=inputs))
    read: dict[str, dict[str, None]] = {}  # context field -> the paths below it that are read
    for node in nodes:
        for path in node.inputs.values():
            field, _, rest = path.partition(".")
            below = read.setdefault(field, {})
            if rest:
                below[rest] = None
    read.pop("step", None)
    read.setdefault("preds", {})  # what the model gives
    names = {node.name for node in nodes}
    nodes += [GraphNode(name=f, group="train", outputs=tuple(r)) for f, r in read.items() if f not in names]
    edges = [
        (path, f"{node.name}.{arg}")
        for node in nodes
        for arg, path in node.inputs.items()
        if path.partition(".")[0] != "step"
    ]
    edges.insert(0, ("model", "preds"))
    return ConnectionGraph(nodes=tuple(nodes), edges=tuple(dict.fromkeys(edges)))


def _keypaths(obj: Any) -> dict[str, Any]:
    try:
        return kontext.get_keypaths(obj)
    except (TypeError, ValueError):  # an object that declares no keys the usual way: no inputs shown
        return {}


def _keyed_model(trainer: Trainer) -> Any:
    """The object whose keys name the model's inputs (an NNX model: its instance, built abstractly)."""
    adapter = as_model(trainer.trainstep.model)
    if not isinstance(adapter, NnxModel):
        return adapter.module
    from flax import nnx  # an NNX model's code has loaded it already

    trainer.state_specs  # noqa: B018  (builds the model's templates)
    graphdef, *states = adapter._abstract
    return nnx.merge(graphdef, *states)


def _table(node: GraphNode) -> str:
    rows = [f"<tr><td><b>{html.escape(node.name)}</b></td></tr>"]
    rows += [f'<tr><td port="{_port(p)}">{html.escape(p)}</td></tr>' for p in node.ports]
    return f'<table border="0" cellborder="1" cellspacing="0">{"".join(rows)}</table>'


def _endpoint(path: str) -> str:
    """`batch.x` -> `"batch":"x"` (node and port); `model` -> `"model"`."""
    node, _, port = path.partition(".")
    return f"{_quoted(node)}:{_quoted(_port(port))}" if port else _quoted(node)


def _port(label: str) -> str:
    for char in ",: []'\".":
        label = label.replace(char, "_")
    return label


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
