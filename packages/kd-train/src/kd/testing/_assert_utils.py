"""`assert_trees_all_same_type(a, b)`: two trees of the same structure whose leaves have the same types."""

from __future__ import annotations

from typing import Any

import jax


def assert_trees_all_same_type(a: Any, b: Any) -> None:
    """Asserts that `a` and `b` have the same tree structure and that each leaf of `a` has the type of the
    leaf of `b` at the same place (an `np.ndarray` where a `jax.Array` was is a failure).

    Usage: `kd.testing.assert_trees_all_same_type(init_state, loader.transform(init_state))`.
    """

    def same_type(path: Any, x: Any, y: Any) -> None:
        assert type(x) is type(y), f"at {jax.tree_util.keystr(path)}: {type(x).__name__} != {type(y).__name__}"

    jax.tree_util.tree_map_with_path(same_type, a, b)
