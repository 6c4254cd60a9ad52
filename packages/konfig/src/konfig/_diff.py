"""`konfig.diff(a, b)`: the paths added, removed and changed between two configs.

    d = konfig.diff(base, tuned)
    d.changed            # ['cfg.optimizer.learning_rate']
    print(d)             # ~ cfg.optimizer.learning_rate: 0.001 -> 0.0003

Mappings are compared key by key, lists and tuples index by index; a node
whose target (`__qualname__` / `__const__`) changed is one change, not a
change per argument. References compare by what they point to, never by evaluating them; values of
different types differ (`1` vs `1.0` vs `True`).

A pair of nodes met at several paths (shared nodes) is compared once: its changes are listed at each
of its paths while those repeats add at most `REPEAT_LIMIT` changes in all; past that, a repeat is one
`"shared"` entry pointing to the first path (`= cfg.b: shared with cfg.a, whose 3 change(s) are listed
there`), so that the work and the output stay linear in the number of distinct nodes (configs where
each node is shared by the next have exponentially many paths).
"""

from __future__ import annotations

from collections.abc import Mapping

from ._config_dict import ConfigDict, stored_item
from ._equality import config_equal
from ._errors import NestingError, deepest_path, nesting_message
from ._json_decode import decode
from ._keys import is_positional_key
from ._paths import format_keys as format_path
from ._refs import Ref
from ._repr import config_repr

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

__all__ = ["Change", "ConfigDiff", "diff"]

_TARGET_KEYS = ("__qualname__", "__const__")
# Changes listed again at the later paths of shared nodes, in all; later repeats are `"shared"` entries.
REPEAT_LIMIT = 10_000


class Change:
    """One difference: `kind` is `"added"`, `"removed"` or `"changed"`.

    Or `"shared"`: the nodes at `keys` (`old`, `new`) are the pair compared first at `first`
    (keys), whose `count` changes are listed there only (see `REPEAT_LIMIT`).
    """

    __slots__ = ("count", "first", "keys", "kind", "new", "old", "root")

    def __init__(
        self,
        kind: str,
        keys: tuple[Any, ...],
        old: Any,
        new: Any,
        root: str,
        first: tuple[Any, ...] | None = None,
        count: int = 0,
    ) -> None:
        self.kind = kind
        self.keys = keys
        self.old = old
        self.new = new
        self.root = root
        self.first = first
        self.count = count

    @property
    def path(self) -> str:
        """The changed path, formatted as `cfg.a.b[0]`."""
        return format_path(self.keys, self.root)

    def __str__(self) -> str:
        if self.kind == "added":
            return f"+ {self.path}: {_show(self.new)}"
        if self.kind == "removed":
            return f"- {self.path}: {_show(self.old)}"
        if self.kind == "shared":
            first = format_path(self.first or (), self.root)
            return f"= {self.path}: shared with {first}, whose {self.count} change(s) are listed there"
        return f"~ {self.path}: {_show(self.old)} -> {_show(self.new)}"

    def __repr__(self) -> str:
        return f"Change({self.kind!r}, {self.path!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Change):
            return NotImplemented
        return (
            (self.kind, self.path) == (other.kind, other.path)
            and _equal(self.old, other.old)
            and _equal(self.new, other.new)
        )

    __hash__ = None  # type: ignore[assignment]


def _show(value: Any) -> str:
    text = config_repr(value) if isinstance(value, ConfigDict) else repr(value)  # No `<ConfigDict[...]>`.
    return text.replace("\n", "\n    ")


class ConfigDiff:
    """The list of `Change`s between two configs; empty (falsy) when they are equal."""

    __slots__ = ("changes",)

    def __init__(self, changes: list[Change]) -> None:
        self.changes = changes

    def _paths(self, kind: str) -> list[str]:
        return [c.path for c in self.changes if c.kind == kind]

    @property
    def added(self) -> list[str]:
        """Paths only in the second config."""
        return self._paths("added")

    @property
    def removed(self) -> list[str]:
        """Paths only in the first config."""
        return self._paths("removed")

    @property
    def changed(self) -> list[str]:
        """Paths in both whose values differ."""
        return self._paths("changed")

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.changes) if self.changes else "(no differences)"

    def __repr__(self) -> str:
        return f"ConfigDiff(added={self.added}, removed={self.removed}, changed={self.changed})"


def diff(a: Any, b: Any, *, root: str = "cfg") -> ConfigDiff:
    """Compares two configs (ConfigDicts, dicts, lists, JSON-loaded data) path by path.

    Usage: `print(konfig.diff(base_cfg, sweep_item.config))`.
    """
    changes: list[Change] = []
    # Parsed JSON (`json.loads(cfg.to_json())`) is read as the config it describes.
    a, b = (decode(x) if type(x) in (dict, list) else x for x in (a, b))
    try:
        _Differ(changes, root).walk(a, b, ())
    except RecursionError:
        deeper = max((a, b), key=lambda x: deepest_path(x)[0])
        raise NestingError(nesting_message(deeper, "A config given to konfig.diff")) from None
    return ConfigDiff(changes)


class _Differ:
    def __init__(self, changes: list[Change], root: str) -> None:
        self.changes = changes
        self.root = root
        # (id(a), id(b)) of mapping pairs being compared (a cycle) or compared at `keys`,
        # with the slice of `changes` they gave (replayed where the pair is met again).
        self.active: set[tuple[int, int]] = set()
        self.done: dict[tuple[int, int], tuple[tuple[Any, ...], int, int]] = {}
        self.repeats_left = REPEAT_LIMIT  # changes that may still be listed again at a later path

    def add(self, kind: str, keys: tuple[Any, ...], old: Any, new: Any) -> None:
        self.changes.append(Change(kind, keys, old, new, self.root))

    def walk(self, a: Any, b: Any, keys: tuple[Any, ...]) -> None:
        if a is b:
            return
        if isinstance(a, Ref) or isinstance(b, Ref):
            if not _equal(a, b):
                self.add("changed", keys, a, b)
            return
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            pair = (id(a), id(b))
            done = self.done.get(pair)
            if done is not None:  # Shared nodes: their changes, listed at this path too (up to a limit).
                at, start, end = done
                if start == end:
                    return
                if end - start > self.repeats_left:
                    self.repeats_left = 0  # From now on, every repeat is one entry.
                    self.changes.append(Change("shared", keys, a, b, self.root, at, end - start))
                    return
                self.repeats_left -= end - start
                for change in self.changes[start:end]:
                    self.add(change.kind, keys + change.keys[len(at) :], change.old, change.new)
                return
            if pair in self.active:  # A cycle.
                return
            start = len(self.changes)
            # The fields themselves: `ConfigDict.get` of a missing key words an error (a did-you-mean).
            fa = a._fields if isinstance(a, ConfigDict) else a
            fb = b._fields if isinstance(b, ConfigDict) else b
            if any(fa.get(k) != fb.get(k) for k in _TARGET_KEYS):
                self.add("changed", keys, a, b)
            else:
                self.active.add(pair)
                self.walk_mapping(a, b, keys)
                self.active.discard(pair)
            self.done[pair] = (keys, start, len(self.changes))
            return
        if isinstance(a, (list, tuple)) and type(a) is type(b):
            common = min(len(a), len(b))
            for index in range(common):
                self.walk(a[index], b[index], (*keys, index))
            for index in range(common, len(a)):
                self.add("removed", (*keys, index), a[index], None)
            for index in range(common, len(b)):
                self.add("added", (*keys, index), None, b[index])
            return
        if not _equal(a, b):
            self.add("changed", keys, a, b)

    def walk_mapping(self, a: Mapping[Any, Any], b: Mapping[Any, Any], keys: tuple[Any, ...]) -> None:
        # Positional arguments ("0", "1", ... of a call node) are shown as indices: `cfg.opt[0]`.
        is_call = "__qualname__" in a

        def at(key: Any) -> tuple[Any, ...]:
            return (*keys, int(key) if is_call and is_positional_key(key) else key)

        for key, value in a.items():
            if key in _TARGET_KEYS:
                continue
            if key in b:
                self.walk(value, stored_item(b, key), at(key))
            else:
                self.add("removed", at(key), value, None)
        for key, value in b.items():
            if key not in a and key not in _TARGET_KEYS:
                self.add("added", at(key), None, value)


def _equal(a: Any, b: Any) -> bool:
    """Equality that never evaluates lazy references and tells `1`, `1.0` and `True` apart."""
    if isinstance(a, float) and type(b) is float and a != a and b != b:  # nan
        return True
    return config_equal(a, b)
