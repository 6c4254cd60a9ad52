"""`TreeMap` / `TreeReduce`: apply a metric to every leaf of a pytree (params, grads, ...).

kd.metrics.TreeMap(metric=kd.metrics.Norm(tensor="params", axis=None))  # {"dense.kernel": norm, ...}
kd.metrics.TreeReduce(metric=kd.metrics.Norm(tensor="grads.**.kernel", aggregation_type="concat"))
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import jax
import kontext

from . import _base, _errors, _state, _stats


@_state.state_dataclass
class TreeState(_state.State):
    """A tree of per-leaf states: `compute()` is the same tree of each state's `compute()`.

    Usage: `TreeMap(...).get_state(tensor=params).compute()["dense"]["kernel"]`.
    """

    tree: Any = dataclasses.field(default_factory=dict)

    @classmethod
    def empty(cls) -> TreeState:
        return cls()

    def merge(self, other: TreeState) -> TreeState:
        if not self.tree:
            return other
        if not other.tree:
            return self
        mine, theirs = _state_paths(self.tree), _state_paths(other.tree)
        if mine != theirs:
            raise _errors.StateMergeError(
                f"Cannot merge TreeStates of different leaves: only in the first {sorted(set(mine) - set(theirs))}, "
                f"only in the second {sorted(set(theirs) - set(mine))}."
            )
        merged = jax.tree.map(lambda a, b: a.merge(b), self.tree, other.tree, is_leaf=_state.State.isinstance)
        return dataclasses.replace(self, tree=merged)

    def finalize(self) -> TreeState:
        return dataclasses.replace(
            self, tree=jax.tree.map(lambda s: s.finalize(), self.tree, is_leaf=_state.State.isinstance)
        )

    def compute(self) -> Any:
        return jax.tree.map(lambda s: s.compute(), self.tree, is_leaf=_state.State.isinstance)


def _state_paths(tree: Any) -> list[str]:
    leaves = jax.tree_util.tree_leaves_with_path(tree, is_leaf=_state.State.isinstance)
    return [jax.tree_util.keystr(path) for path, _ in leaves]


def _dotted(key_path: Any) -> str:
    """A jax key path as a kontext-style path: `dense.kernel`, `layers[0].bias`."""
    out = ""
    for key in key_path:
        if isinstance(key, jax.tree_util.SequenceKey):
            out += f"[{key.idx}]"
        else:
            name = getattr(key, "key", getattr(key, "name", key))
            out += f".{name}" if out else str(name)
    return out


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

    def _leaf_states(self, trees: dict[str, Any]) -> Any:
        """A tree of inner metric states, shaped like the trees given at the keys' wildcard-free prefixes."""
        keypaths = {
            name: path for name, path in kontext.get_keypaths(self.metric).items() if path is not None
        }
        selected: dict[str, Any] = {}
        for name, tree in trees.items():
            glob = _split_glob(keypaths[name])[1] if name in keypaths else None
            selected[name] = tree if glob is None else kontext.filter_by_path(tree, glob)
        owner = f"{type(self).__name__}({type(self.metric).__name__})"
        flat = {name: kontext.flatten_with_path(tree) for name, tree in selected.items()}
        # A single leaf at the root (a scalar `step`) is passed to every leaf's metric.
        shared = {name: selected[name] for name, leaves in flat.items() if list(leaves) == [""]}
        mapped = {name: tree for name, tree in selected.items() if name not in shared}
        if not mapped:  # Every tree is a single array: one state, for that array.
            mapped, shared = shared, {}
        first_name = next(iter(mapped))
        if not any(flat[name] for name in mapped):
            paths = ", ".join(f"{name}={str(keypaths.get(name, name))!r}" for name in mapped)
            raise kontext.PathNotFoundError(
                f"{owner}: no leaf of the context matches {paths}.", path=str(keypaths.get(first_name, ""))
            )
        for name in mapped:
            if flat[name].keys() != flat[first_name].keys():
                raise ValueError(
                    f"{owner}: the trees of {first_name!r} and {name!r} have different leaves: "
                    f"{sorted(flat[first_name])} and {sorted(flat[name])}."
                )
        names = list(mapped)

        def leaf_state(key_path: Any, *leaves: Any) -> _state.State:
            leaf = _dotted(key_path)
            try:
                return self.metric.get_state(**shared, **dict(zip(names, leaves)))
            except Exception as e:
                e.add_note(f"(raised by {owner} on the leaf {leaf!r})")
                raise

        try:
            return jax.tree_util.tree_map_with_path(leaf_state, *mapped.values())
        except ValueError as e:
            if "structure" not in str(e) and "Custom node" not in str(e):
                raise
            raise ValueError(
                f"{owner}: the trees of {names} have different structures (dict vs list, or "
                f"different containers) though the same leaf paths: {sorted(flat[first_name])}."
            ) from e


@dataclasses.dataclass(frozen=True, kw_only=True)
class TreeMap(_TreeMetric):
    """Applies `metric` to every leaf of the tree its keys point at; computes a tree of the same shape.

    Usage: `kd.metrics.TreeMap(metric=kd.metrics.Norm(tensor="params", axis=None))` computes
    `{"dense": {"kernel": ..., "bias": ...}}` (the tree at `params`, each leaf's value).

    A key may be a glob (`"grads.**.kernel"`, `"params.*.bias"`): only the matching leaves are
    kept, in the tree under the part before the first wildcard (`{"dense": {"kernel": ...}}`).
    With several keys (`L2(preds=..., targets=...)`) the trees must have the same leaves; a key
    that points at a single array (`step`) is given to every leaf.

    Attributes:
      metric: the metric applied to each leaf; its keys name the trees.
    """

    def get_state(self, **trees: Any) -> TreeState:
        """The per-leaf states of the inner metric; `trees` are given at the keys' wildcard-free prefixes."""
        return TreeState(tree=self._leaf_states(trees))

    State = TreeState


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
        states = jax.tree.leaves(self._leaf_states(trees), is_leaf=_state.State.isinstance)
        return functools.reduce(lambda a, b: a.merge(b), states)

    def empty(self) -> _state.State:
        """The inner metric's empty state (its parent is the inner metric, like the states emitted)."""
        return self.metric.empty()
