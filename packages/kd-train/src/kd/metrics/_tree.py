"""`TreeMap` / `TreeReduce`: apply a metric to every leaf of a pytree (params, grads, ...).

kd.metrics.TreeMap(metric=kd.metrics.Norm(tensor="params", axis=None))  # {"dense.kernel": norm, ...}
kd.metrics.TreeReduce(metric=kd.metrics.Norm(tensor="grads.**.kernel", aggregation_type="concat"))
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import kontext

from . import _base, _errors, _state, _stats


@_state.state_dataclass
class TreeState(_state.State):
    """A flat dict of per-leaf states: `compute()` is `{leaf path: leaf state's compute()}`.

    Usage: `TreeMap(...).get_state(tensor=params).compute()["dense.kernel"]`.
    """

    tree: dict[str, _state.State] = dataclasses.field(default_factory=dict)

    def merge(self, other: TreeState) -> TreeState:
        if not self.tree:
            return other
        if not other.tree:
            return self
        if list(self.tree) != list(other.tree):
            only_self = sorted(set(self.tree) - set(other.tree))
            only_other = sorted(set(other.tree) - set(self.tree))
            raise _errors.StateMergeError(
                f"Cannot merge TreeStates of different leaves: only in the first {only_self}, "
                f"only in the second {only_other}."
            )
        return TreeState(tree={k: s.merge(other.tree[k]) for k, s in self.tree.items()})

    def compute(self) -> dict[str, Any]:
        return {path: state.compute() for path, state in self.tree.items()}


def _split_glob(path: Any) -> tuple[str, kontext.GlobPath | None]:
    """`"grads.**.kernel"` -> `("grads", GlobPath("**.kernel"))`; a path without wildcards -> `(path, None)`."""
    if isinstance(path, (dict, list, tuple)):
        raise TypeError(
            f"TreeMap / TreeReduce take metrics whose keys are single paths, got a tree: {path!r}."
        )
    glob = kontext.GlobPath.from_str(str(path))
    prefix = glob.first_non_glob_parent
    rest = glob.parts[len(prefix.parts) :]
    return str(prefix), (kontext.GlobPath(*rest) if rest else None)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _TreeMetric(_base.Metric):
    """Shared by `TreeMap` and `TreeReduce`: resolves the inner metric's keys as trees of leaves."""

    metric: _base.Metric

    def __kontext_keys__(self) -> dict[str, Any]:
        """The inner metric's keys, each cut before its first wildcard (`grads.**.kernel` -> `grads`).

        These are the paths looked up in the context; the rest of a glob selects leaves inside them.
        """
        return {
            name: None if path is None else _split_glob(path)[0]
            for name, path in kontext.get_keypaths(self.metric).items()
        }

    def get_state_from_context(self, context: Any) -> _state.State:
        kwargs = kontext.resolve_from_keyed_obj(context, self, func=self.metric.get_state)
        return self.get_state(**kwargs)

    def _leaf_states(self, trees: dict[str, Any]) -> dict[str, _state.State]:
        """`{leaf path: inner metric state}` for trees given at the keys' wildcard-free prefixes."""
        keypaths = {
            name: path for name, path in kontext.get_keypaths(self.metric).items() if path is not None
        }
        flat: dict[str, dict[str, Any]] = {}
        for name, tree in trees.items():
            glob = _split_glob(keypaths[name])[1] if name in keypaths else None
            if glob is not None:
                tree = kontext.filter_by_path(tree, glob)
            flat[name] = kontext.flatten_with_path(tree)
        owner = f"{type(self).__name__}({type(self.metric).__name__})"
        # A single leaf at the root (a scalar `step`) is passed to every leaf's metric.
        shared = {name: leaves[""] for name, leaves in flat.items() if list(leaves) == [""]}
        mapped = {name: leaves for name, leaves in flat.items() if name not in shared}
        if not mapped:  # Every tree is a single array: one state, under the path "".
            mapped, shared = {name: {"": value} for name, value in shared.items()}, {}
        first_name, first = next(iter(mapped.items()))
        if not any(mapped.values()):
            paths = ", ".join(f"{name}={str(keypaths.get(name, name))!r}" for name in mapped)
            raise kontext.PathNotFoundError(
                f"{owner}: no leaf of the context matches {paths}.", path=str(keypaths.get(first_name, ""))
            )
        for name, leaves in mapped.items():
            if leaves.keys() != first.keys():
                raise ValueError(
                    f"{owner}: the trees of {first_name!r} and {name!r} have different leaves: "
                    f"{sorted(first)} and {sorted(leaves)}."
                )
        states = {}
        for leaf in first:
            inputs = {**shared, **{name: leaves[leaf] for name, leaves in mapped.items()}}
            try:
                states[leaf] = self.metric.get_state(**inputs)
            except Exception as e:
                e.add_note(f"(raised by {owner} on the leaf {leaf!r})")
                raise
        return states


@dataclasses.dataclass(frozen=True, kw_only=True)
class TreeMap(_TreeMetric):
    """Applies `metric` to every leaf of the tree its keys point at; computes a flat dict.

    Usage: `kd.metrics.TreeMap(metric=kd.metrics.Norm(tensor="params", axis=None))` computes
    `{"dense.kernel": ..., "dense.bias": ...}` (leaf paths relative to `params`).

    A key may be a glob (`"grads.**.kernel"`, `"params.*.bias"`): only the matching leaves are
    used, and result keys are relative to the part before the first wildcard (`"dense.kernel"`).
    With several keys (`L2(preds=..., targets=...)`) the trees must have the same leaves; a key
    that points at a single array (`step`) is given to every leaf.

    Attributes:
      metric: the metric applied to each leaf; its keys name the trees.
    """

    def get_state(self, **trees: Any) -> TreeState:
        """The per-leaf states of the inner metric; `trees` are given at the keys' wildcard-free prefixes."""
        return TreeState(tree=self._leaf_states(trees))


@dataclasses.dataclass(frozen=True, kw_only=True)
class TreeReduce(_TreeMetric):
    """Applies `metric` to every leaf like `TreeMap`, then merges the leaf states into one.

    Usage: `kd.metrics.TreeReduce(metric=kd.metrics.Norm(tensor="grads.**.kernel"))` averages
    the norms of all the kernels' rows (Norm's axis=-1); with `aggregation_type="concat"` it is
    the kernels' global norm.

    Attributes:
      metric: the metric applied to each leaf; how its state merges is the reduction.
    """

    def __post_init__(self) -> None:
        metric = self.metric
        if isinstance(metric, _stats.Norm) and metric.axis is None and metric.aggregation_type is None:
            warnings.warn(
                "TreeReduce(Norm(axis=None)) averages the norms of the individual leaves; it is not "
                'the norm of all the leaves concatenated. Set aggregation_type="concat" for that '
                'norm, or aggregation_type="average" to keep the average without this warning.',
                UserWarning,
                stacklevel=3,
            )

    def get_state(self, **trees: Any) -> _state.State:
        """The merge of the inner metric's per-leaf states (of the inner metric's state type)."""
        states = self._leaf_states(trees).values()
        return functools.reduce(lambda a, b: a.merge(b), states)
