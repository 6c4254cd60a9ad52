"""`ImmutableDict`: the frozen mapping `konfig.resolve(cfg, freeze=True)` returns."""

from __future__ import annotations

import sys
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any


class ImmutableDict(Mapping):
    """A hashable, read-only dict with attribute access.

    A JAX pytree whenever JAX is imported, before or after the dict was made;
    konfig itself never imports JAX (see `register_pytree_if_jax_imported`).

    Usage: `d = ImmutableDict(a=1); d.a == d["a"] == 1`; `d.unfreeze()` for a plain `dict`.
    """

    __slots__ = ("_data", "_hash")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_data", dict(*args, **kwargs))
        object.__setattr__(self, "_hash", None)
        if not _pytree_registered:
            register_pytree_if_jax_imported()

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

    def __ror__(self, other: Any) -> Any:
        """`a_dict | frozen`: a plain dict, as the left operand's type (Kauldron's immutabledict does so)."""
        if not isinstance(other, Mapping):
            return NotImplemented
        return {**other, **self._data}

    def __repr__(self) -> str:
        """Kauldron's layout: one `key: value,` line per item, unless all fit in a few characters.

        `ImmutableDict({'a': 1})`, and for more or longer items::

            ImmutableDict({
                'z': 1,
                'w': 'a long string',
            })
        """
        return _block_repr(self, set())

    def unfreeze(self) -> dict[Any, Any]:
        """A plain `dict` of the items, with the `ImmutableDict`s inside (also in lists and tuples) as dicts.

        Usage: `params = konfig.resolve(cfg).unfreeze(); params["lr"] = 0.1`.
        """
        return _unfreeze(self)

    def __reduce__(self) -> Any:
        return (ImmutableDict, (self._data,))

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self._data if isinstance(k, str)})


# As Kauldron's repr (etils' `epy.Lines.make_block`): items stay on one line when there is at
# most one, or when their text adds up to at most this many characters.
_COLLAPSE_LIMIT = 20


def _block_repr(d: ImmutableDict, active: set[int]) -> str:
    if id(d) in active:
        return "ImmutableDict({...})"
    active.add(id(d))
    try:
        parts = [f"{k!r}: {_pretty(v, active)}" for k, v in d._data.items()]
    finally:
        active.discard(id(d))
    return _block("ImmutableDict({", parts, "})")


def _pretty(value: Any, active: set[int]) -> str:
    """`repr(value)`, laid out like `_block_repr` for the containers Kauldron's repr lays out."""
    t = type(value)
    if t is ImmutableDict:
        return _block_repr(value, active)
    if t is dict or t is list or t is tuple:
        if id(value) in active:
            return "{...}" if t is dict else ("[...]" if t is list else "(...)")
        active.add(id(value))
        try:
            if t is dict:
                return _block("{", [f"{k!r}: {_pretty(v, active)}" for k, v in value.items()], "}")
            parts = [_pretty(v, active) for v in value]
        finally:
            active.discard(id(value))
        if t is list:
            return _block("[", parts, "]")
        return _block("(", parts, ",)" if len(parts) == 1 else ")")
    return repr(value)


def _block(start: str, parts: list[str], end: str) -> str:
    multi_line = any("\n" in p for p in parts)
    if not multi_line and (len(parts) <= 1 or sum(map(len, parts)) <= _COLLAPSE_LIMIT):
        return start + ", ".join(parts) + end
    lines = [start]
    for p in parts:
        lines.append("    " + p.replace("\n", "\n    ") + ",")
    lines.append(end)
    return "\n".join(lines)


def unfreeze(value: Any) -> Any:
    """`value` with every `ImmutableDict` in it (also inside dicts, lists and tuples) a plain `dict`.

    Usage: `params = konfig.unfreeze(konfig.resolve(cfg.params))` (Kauldron's `immutabledict.unfreeze`).
    """
    return _unfreeze(value)


def freeze_dict_attrs(obj: Any, attributes: Iterable[str]) -> None:
    """Replaces each named attribute of `obj` that holds a dict by an `ImmutableDict` (in place, frozen
    dataclasses included); other values (None, a reference still to be filled) are left as they are, as
    Kauldron's `immutabledict.freeze_dict_attrs` does.

    Usage: in `__post_init__`: `konfig.freeze_dict_attrs(self, ["losses", "metrics"])`.
    """
    for name in attributes:
        value = getattr(obj, name)
        if isinstance(value, dict):
            object.__setattr__(obj, name, ImmutableDict(value))


def _unfreeze(value: Any) -> Any:
    t = type(value)
    if isinstance(value, ImmutableDict):
        return {k: _unfreeze(v) for k, v in value._data.items()}
    if t is dict:
        return {k: _unfreeze(v) for k, v in value.items()}
    if t is list or t is tuple:
        return t(_unfreeze(v) for v in value)
    return value


_pytree_registered = False
_watching = False


def register_pytree_if_jax_imported() -> None:
    """Makes `ImmutableDict` a JAX pytree now if JAX is imported, else once it is.

    Without JAX, a finder at the front of `sys.meta_path` waits for
    `import jax` and registers right after JAX's own import finishes (then
    removes itself); other imports only pay one string comparison.
    """
    global _watching
    if _pytree_registered:
        return
    if "jax" in sys.modules:
        _register()
    elif not _watching:
        _watching = True
        sys.meta_path.insert(0, _JaxImportWatcher())


def _register() -> None:
    global _pytree_registered
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


class _JaxImportWatcher:
    """Meta path finder: hands out JAX's own spec, registering after it runs."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "jax":
            return None
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            if finder is self or find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


class _RegisteringLoader:
    """Runs JAX's loader, restores it on the module, then registers the pytree."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        loader = self._loader
        module.__loader__ = loader
        if module.__spec__ is not None:
            module.__spec__.loader = loader
        loader.exec_module(module)
        global _watching
        for finder in [f for f in sys.meta_path if type(f) is _JaxImportWatcher]:
            sys.meta_path.remove(finder)
        _watching = False
        if not _pytree_registered:
            try:
                _register()
            except Exception:  # Never break `import jax`; `resolve` retries.
                pass
