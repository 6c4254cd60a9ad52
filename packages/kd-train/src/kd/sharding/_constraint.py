"""`with_sharding_constraint`: `jax.lax.with_sharding_constraint` over a tree of optional, lazy shardings.

x = kd.sharding.with_sharding_constraint(x, {"a": kd.sharding.replicated(), "b": None})
"""

from __future__ import annotations

import difflib
from typing import Any, TypeVar

import jax
import numpy as np
from jax.sharding import PartitionSpec

from kd.sharding import _strategy

_T = TypeVar("_T")

ShardingTree = Any
"""A sharding tree: a prefix of a value's tree whose leaves are None (keep what JAX infers), a
`jax.sharding.Sharding` (or a PartitionSpec, `FIRST_DIM`, `REPLICATED`) for the whole subtree, or a function
of the subtree returning a sharding tree for it (Kauldron's `kd.sharding.ShardingTree`)."""


def device_put(arrays: _T, sharding: Any) -> _T:
    """Kauldron's: `arrays` (a tree of host or device arrays, Python scalars too) as global arrays laid out
    by `sharding` (a `jax.sharding.Sharding`, `kd.sharding.FIRST_DIM` / `REPLICATED`, or None: JAX's default
    device). On several processes each gives its own rows of a `FIRST_DIM` array, or the whole of a
    replicated one.

    Usage: `tokens = kd.sharding.device_put(tokens, kd.sharding.FIRST_DIM)`.
    """
    if sharding is None:
        return jax.device_put(arrays)
    resolved = _as_sharding(sharding)
    if isinstance(resolved, PartitionSpec):
        raise TypeError(
            f"device_put: a PartitionSpec ({resolved}) names no devices; give a jax.sharding.NamedSharding "
            "(a mesh and the spec), or kd.sharding.FIRST_DIM / REPLICATED"
        )

    def put(leaf: Any) -> Any:
        if isinstance(leaf, (bool, int, float, complex)):
            leaf = np.asarray(leaf)
        if jax.process_count() == 1 or (isinstance(leaf, jax.Array) and not leaf.is_fully_addressable):
            return jax.device_put(leaf, resolved)  # one host, or already a global array: JAX lays it out
        with jax.transfer_guard("allow"):
            return jax.make_array_from_process_local_data(resolved, np.asarray(leaf))

    return jax.tree.map(put, arrays)


def with_sharding_constraint(x: _T, sharding: ShardingTree) -> _T:
    """`x` with each of its arrays constrained to the sharding the `sharding` tree gives it.

    Usage:

        x = kd.sharding.with_sharding_constraint(
            {"a": a, "b": {"inner": b}, "c": c},
            {"a": kd.sharding.first_dim(), "b": None, "c": lambda subtree: kd.sharding.replicated()},
        )

    `sharding` is a prefix of `x`'s tree; each of its leaves applies to the whole subtree of `x`
    under it and is one of:

    * `None`: the subtree is returned as it is (JAX propagates its sharding);
    * a `jax.sharding.Sharding`, or `kd.sharding.FIRST_DIM` / `REPLICATED` (over all devices): every
      array of the subtree gets it (`jax.lax.with_sharding_constraint`, in or out of `jit`); a
      `PartitionSpec` too, as JAX takes it, on the mesh of `jax.set_mesh(mesh)`;
    * a function: called with the subtree, it returns the sharding tree for it (a lazy sharding).

    A `jax.ShapeDtypeStruct` is not constrained but returned with its `sharding` replaced, so a tree
    of specs (a restore template, `jax.eval_shape`'s output) is laid out the same way as arrays.
    """

    def constrain(leaf_sharding: Any, subtree: Any) -> Any:
        if leaf_sharding is None:
            return subtree
        if callable(leaf_sharding) and not isinstance(leaf_sharding, jax.sharding.Sharding):
            return with_sharding_constraint(subtree, leaf_sharding(subtree))
        resolved = _as_sharding(leaf_sharding)
        return jax.tree.map(lambda leaf: _constrain_leaf(leaf, resolved), subtree)

    treedef = jax.tree.structure(sharding, is_leaf=_is_none)
    try:
        subtrees = treedef.flatten_up_to(x)
    except (ValueError, TypeError) as e:
        raise ValueError(
            "with_sharding_constraint: the sharding tree must be a prefix of the value's tree (each of "
            f"its leaves covering a subtree), got sharding {treedef} for a value of {jax.tree.structure(x)}: "
            f"{str(e)[:200]}"
        ) from None
    leaves = jax.tree.leaves(sharding, is_leaf=_is_none)
    return treedef.unflatten([constrain(s, sub) for s, sub in zip(leaves, subtrees, strict=True)])


def _is_none(node: Any) -> bool:
    return node is None


def _as_sharding(value: Any) -> jax.sharding.Sharding | PartitionSpec:
    if isinstance(value, (jax.sharding.Sharding, PartitionSpec)):
        return value
    if _strategy.name_of(value) is not None:
        return _strategy.named_sharding(value)
    near = difflib.get_close_matches(value, list(_strategy._NAMED), n=1) if isinstance(value, str) else []
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise TypeError(
        "with_sharding_constraint: a sharding tree leaf must be None, a jax.sharding.Sharding, a "
        f"PartitionSpec, {_strategy.FIRST_DIM!r} / {_strategy.REPLICATED!r} or a function of the subtree, "
        f"got {value!r}{hint}"
    )


def _constrain_leaf(leaf: Any, sharding: jax.sharding.Sharding | PartitionSpec) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct):
        return leaf.update(sharding=sharding)
    return jax.lax.with_sharding_constraint(leaf, sharding)
