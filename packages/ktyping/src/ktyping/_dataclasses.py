"""`@typechecked` on a dataclass: fields checked after `__init__`, each instance in a scope of its own.

    @ktyping.typechecked
    @dataclasses.dataclass
    class Batch:
        x: Float["b n"]
        y: Int["b"]

The wrapped `__init__` calls `_compile.check_dataclass_fields`: the fields' checks live with
the compiler, which also checks a decorated dataclass used as an annotation.
"""

from __future__ import annotations

import sys

from ._compile import check_dataclass_fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["wrap_dataclass"]

# Pytree dataclasses (flax.struct, chex) are rebuilt through `__init__` when JAX unflattens
# them: under vmap with per-example shapes, or with placeholder leaves (`jax.tree.map(lambda
# x: None, ...)`). Those rebuilds are not the user's constructions and are not checked.
_PYTREE_LIBRARIES = ("jax.", "jaxlib.", "flax.", "chex.", "equinox.")


def _built_by_pytree_library(frame: Any) -> bool:
    module = frame.f_globals.get("__name__", "")
    return module.startswith(_PYTREE_LIBRARIES)


def wrap_dataclass(cls: type, localns: dict[str, Any] | None) -> type:
    """`@typechecked` on a dataclass: its fields are checked after each `__init__` it runs.

    `localns` holds the names of the decorating function, for string hints.
    """
    import functools

    cls.__ktyping_dataclass__ = cls  # type: ignore[attr-defined]
    if localns is not None:
        cls.__ktyping_localns__ = localns  # type: ignore[attr-defined]
    original_init = cls.__init__  # type: ignore[misc]

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if type(self) is cls and not _built_by_pytree_library(sys._getframe(1)):
            check_dataclass_fields(self)

    cls.__init__ = __init__  # type: ignore[misc]
    return cls
