"""`ImmutableDict`: the frozen mapping `konfig.resolve(cfg, freeze=True)` returns."""

from __future__ import annotations

import sys
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class ImmutableDict(Mapping):
    """A hashable, read-only dict with attribute access.

    Registered as a JAX pytree by `konfig.resolve` once JAX is imported
    (konfig itself never imports JAX).

    Usage: `d = ImmutableDict(a=1); d.a == d["a"] == 1`.
    """

    __slots__ = ("_data", "_hash")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_data", dict(*args, **kwargs))
        object.__setattr__(self, "_hash", None)

    @classmethod
    def _wrap(cls, data: dict[Any, Any]) -> ImmutableDict:
        self = object.__new__(cls)
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_hash", None)
        return self

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __getattr__(self, name: str) -> Any:
        if name in ("_data", "_hash"):
            raise AttributeError(name)
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(f"ImmutableDict has no key {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ImmutableDict is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ImmutableDict is immutable: cannot delete {name!r}")

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(frozenset(self._data.items()))
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ImmutableDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __or__(self, other: Any) -> ImmutableDict:
        if not isinstance(other, Mapping):
            return NotImplemented
        return ImmutableDict._wrap({**self._data, **other})

    def __repr__(self) -> str:
        return f"ImmutableDict({self._data!r})"

    def __reduce__(self) -> Any:
        return (ImmutableDict, (self._data,))

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self._data if isinstance(k, str)})


_pytree_registered = False


def register_pytree_if_jax_imported() -> None:
    """Registers `ImmutableDict` with JAX if (and only if) JAX is already imported."""
    global _pytree_registered
    if _pytree_registered or "jax" not in sys.modules:
        return
    import jax

    def flatten_with_keys(d: ImmutableDict) -> Any:
        keys = tuple(d._data)
        return [(jax.tree_util.DictKey(k), d._data[k]) for k in keys], keys

    def flatten(d: ImmutableDict) -> Any:
        keys = tuple(d._data)
        return [d._data[k] for k in keys], keys

    def unflatten(keys: Any, values: Any) -> ImmutableDict:
        return ImmutableDict._wrap(dict(zip(keys, values)))

    jax.tree_util.register_pytree_with_keys(ImmutableDict, flatten_with_keys, unflatten, flatten)
    _pytree_registered = True
