"""Kauldron's `ktyping.pytree`: our `PyTree` annotation (`_compile`), and `is_pytree_type`.

    from ktyping import pytree
    isinstance({"a": [1, 2]}, pytree.PyTree[int])     # True: every leaf is an int
    pytree.is_pytree_type(pytree.PyTree[int, "$S"])   # True

Leaves come from jax's flattening when the caller has imported jax, else from lists, tuples and
dicts (ktyping never imports jax). Kauldron's `jax_path_to_str` is not brought over: jax's
`jax.tree_util.keystr` writes a key path as text.
"""

from __future__ import annotations

from ._compile import PyTree as PyTree
from ._config import MISSING as MISSING

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MISSING", "PyTree", "is_pytree_type"]


def is_pytree_type(annotation: Any) -> bool:
    """Whether `annotation` is `PyTree` or a `PyTree[...]`."""
    return isinstance(annotation, type(PyTree))
