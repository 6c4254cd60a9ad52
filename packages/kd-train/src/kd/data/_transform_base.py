"""The transform base classes of kd.data (Kauldron's names) and the transforms on an element's keys.

Usage:

    transforms = [kd.data.Elements(keep={"image", "label"}), kd.data.AddConstants({"weight": 1.0})]
    element = transforms[1].map(transforms[0].map({"image": img, "label": 3, "id": "x"}))

An element is a dict of features. Every transform returns a new dict and leaves its input as it was.
"""

from __future__ import annotations

import abc
import dataclasses
import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import kontext


class FrozenMapping(Mapping[str, Any]):
    """A read-only mapping that hashes (when its values do): the mapping fields of frozen transforms.

    It compares equal to a dict with the same items, so `transform.rename == {"a": "b"}` holds.
    """

    def __init__(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        self._items = dict(items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return repr(self._items)


class MissingKeyError(KeyError):
    """A key that a transform needs is not in the element (the message names the near miss)."""

    def __str__(self) -> str:
        # KeyError's own str() quotes the whole message.
        return str(self.args[0]) if self.args else ""


def describe(transform: object) -> str:
    """`Elements(keep={'a'})`: the transform's class and the fields that differ from their defaults."""
    if not dataclasses.is_dataclass(transform):
        return type(transform).__name__
    shown = []
    for field in dataclasses.fields(transform):
        if not field.init:
            continue
        value = getattr(transform, field.name)
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = dataclasses.MISSING
        if default is not dataclasses.MISSING and _same(value, default):
            continue
        shown.append(f"{field.name}={_short(field.name, value)}")
    return f"{type(transform).__name__}({', '.join(shown)})"


def _same(value: Any, default: Any) -> bool:
    """Whether a field holds its default; False when that cannot be told (an array compares per element)."""
    try:
        return bool(value == default or (not value and not default))
    except Exception:  # e.g. numpy's "truth value of an array is ambiguous"
        return False


def _short(name: str, value: Any) -> str:
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(repr(v) for v in sorted(value)) + "}" if value else "set()"
    if name == "key" and isinstance(value, Mapping) and all(k == v for k, v in value.items()):
        keys = list(value)
        return repr(keys[0]) if len(keys) == 1 else repr(tuple(keys))
    return repr(value)


def missing_keys_error(
    transform: object, missing: Iterable[str], available: Iterable[str], *, role: str = ""
) -> MissingKeyError:
    """The error for keys a transform needs that the element lacks, with the nearest key it has.

    Args:
      transform: the transform (named by `describe`).
      missing: the keys the element lacks.
      available: the keys the element has.
      role: what the keys are for, e.g. "keep" gives "keep-key 'x'".

    Returns:
      e.g. `Elements(keep={'imgae'}): keep-key 'imgae' not in the element; it has ['image', 'label'];
      did you mean 'image'?`
    """
    missing = sorted(missing)
    available = sorted(available)
    noun = f"{role}-key" if role else "key"
    named = f"{noun} {missing[0]!r}" if len(missing) == 1 else f"{noun}s {missing!r}"
    message = f"{describe(transform)}: {named} not in the element; it has {available!r}"
    hints = {k: difflib.get_close_matches(k, available, n=1) for k in missing}
    hints = {k: close[0] for k, close in hints.items() if close}
    if len(missing) == 1 and hints:
        message += f"; did you mean {next(iter(hints.values()))!r}?"
    elif hints:
        message += "; did you mean " + ", ".join(f"{v!r} for {k!r}" for k, v in hints.items()) + "?"
    return MissingKeyError(message)


class MapTransform(abc.ABC):
    """A 1:1 transform of elements. Calling it maps (so grain's `MapDataset.map` takes it as it is)."""

    @abc.abstractmethod
    def map(self, element: Any) -> Any:
        """The transformed element."""

    def __call__(self, element: Any) -> Any:
        return self.map(element)


class FilterTransform(abc.ABC):
    """A predicate on elements: a pipeline drops the elements for which `filter` is False."""

    @abc.abstractmethod
    def filter(self, element: Any) -> bool:
        """Whether to keep the element."""

    def __call__(self, element: Any) -> bool:
        return self.filter(element)


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class Elements(MapTransform):
    """Keeps or drops keys, renames and copies them; copies are made first, from the input element.

    Attributes:
      keep: the keys to keep (with the renamed and copied ones); the others are dropped.
      drop: the keys to drop; the others are kept. Not together with `keep`.
      rename: old key -> new key. A new key that is already in the element is an error.
      copy: key -> name of its copy. A copy's name that is already in the element is an error.
    """

    keep: Iterable[str] = ()
    drop: Iterable[str] = ()
    rename: Mapping[str, str] = FrozenMapping()
    copy: Mapping[str, str] = FrozenMapping()

    def __post_init__(self) -> None:
        # A single key is one key, not its characters (Kauldron's `set("image")` would keep 'i', 'm', ...).
        keep = frozenset([self.keep] if isinstance(self.keep, str) else self.keep)
        drop = frozenset([self.drop] if isinstance(self.drop, str) else self.drop)
        if keep and drop:
            raise ValueError(f"Elements: give `keep` or `drop`, not both (keep={keep!r}, drop={drop!r})")
        rename_from, rename_to = set(self.rename), set(self.rename.values())
        if both := keep & (rename_from | rename_to):
            raise KeyError(
                f"Elements: keys {sorted(both)!r} are in both `keep` and `rename` (its keys or values)"
            )
        if both := drop & rename_from:
            raise KeyError(f"Elements: keys {sorted(both)!r} are both dropped and renamed")
        copy_to = list(self.copy.values())
        if len(set(copy_to)) != len(copy_to):
            raise ValueError(
                f"Elements: the names of the copies must be unique; got copy={dict(self.copy)!r}"
            )
        if both := set(copy_to) & (keep | drop | rename_from | rename_to):
            raise KeyError(
                f"Elements: copy names {sorted(both)!r} are also in `keep`, `drop` or `rename` (keys or values)"
            )
        object.__setattr__(self, "keep", keep)
        object.__setattr__(self, "drop", drop)
        object.__setattr__(self, "rename", FrozenMapping(self.rename))
        object.__setattr__(self, "copy", FrozenMapping(self.copy))

    def _require(self, keys: Iterable[str], element: Mapping[str, Any], role: str) -> None:
        if missing := set(keys) - set(element):
            raise missing_keys_error(self, missing, element, role=role)

    def map(self, element: Mapping[str, Any]) -> dict[str, Any]:
        self._require(self.copy, element, "copy")
        if clash := set(self.copy.values()) & set(element):
            raise KeyError(
                f"{describe(self)}: copies {sorted(clash)!r} would overwrite keys of the element "
                f"{sorted(element)!r}; drop those first"
            )
        copies = {new: element[old] for old, new in self.copy.items()}
        if self.keep:
            self._require(self.keep, element, "keep")
            out = {k: v for k, v in element.items() if k in self.keep}
        else:
            self._require(self.drop, element, "drop")
            out = {k: v for k, v in element.items() if k not in self.drop and k not in self.rename}
        out.update(copies)
        self._require(self.rename, element, "rename")
        renamed = {self.rename[k]: v for k, v in element.items() if k in self.rename}
        if clash := sorted(set(renamed) & set(out)):
            sources = [k for k, v in self.rename.items() if v in clash]
            raise KeyError(
                f"{describe(self)}: renaming {sources!r} to {clash!r} would overwrite keys the element keeps; "
                "drop those explicitly first"
            )
        out.update(renamed)
        return out


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class ElementWise:
    """Mixin for transforms applied to some keys of an element, each on its own.

    Attributes:
      key: the keys to transform: one key, several, or {in_key: out_key}. With `{"a": "b"}` the
        element gains `b = f(a)` and keeps `a` as it was. Normalised to {in_key: out_key}.
    """

    key: str | Sequence[str] | Mapping[str, str]

    def __post_init__(self) -> None:
        if not self.key:
            raise KeyError(f"{type(self).__name__}: `key` is empty; name at least one key of the element")
        if isinstance(self.key, str):
            keys = {self.key: self.key}
        elif isinstance(self.key, Mapping):
            keys = dict(self.key)
        else:
            keys = {k: k for k in self.key}
        object.__setattr__(self, "key", FrozenMapping(keys))
        object.__setattr__(self, "_post_init_done", True)

    def _per_element(self, element: Mapping[str, Any]) -> Iterator[tuple[str, Any, bool]]:
        """(out_key, value, transform it?) for each entry of the output, in order.

        A renamed key comes twice: its new key (transformed) then its old key (as it was).
        """
        if not getattr(self, "_post_init_done", False):
            raise ValueError(
                f"{type(self).__qualname__} was not set up: its `__post_init__` must call "
                "`super().__post_init__()`"
            )
        if not any(k in self.key for k in element):
            raise missing_keys_error(self, self.key, element)
        for k, v in element.items():
            if k in self.key:
                yield self.key[k], v, True
                if self.key[k] != k:
                    yield k, v, False
            else:
                yield k, v, False


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class ElementWiseTransform(ElementWise, MapTransform):
    """A transform of each of the `key` entries of an element on its own: subclasses define `map_element`."""

    def map(self, element: Mapping[str, Any]) -> dict[str, Any]:
        return {k: self.map_element(v) if change else v for k, v, change in self._per_element(element)}

    @abc.abstractmethod
    def map_element(self, element: Any) -> Any:
        """The transformed value of one key."""


@dataclasses.dataclass(frozen=True, eq=True, kw_only=True)
class TreeFlattenWithPath(ElementWise, MapTransform):
    """Flattens the nested dicts under `key` into top-level keys joined by `separator`.

    `{"a": {"b": 2, "c": {"d": 3}}, "e": 5}` with key "a" becomes `{"a_b": 2, "a_c_d": 3, "e": 5}`.

    Attributes:
      separator: what joins the parts of a path.
    """

    separator: str = "_"

    def map(self, element: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        flattened: dict[str, Any] = {}
        for k, v, change in self._per_element(element):
            if change:
                flattened.update(kontext.flatten_with_path({k: v}, separator=self.separator))
            else:
                out[k] = v
        clashes = sorted(set(flattened) & set(out))
        if clashes:
            raise KeyError(
                f"{describe(self)}: flattening makes the key(s) {clashes} that the element already has; "
                "rename or drop those first (Elements) or pick another separator"
            )
        out.update(flattened)
        return out


@dataclasses.dataclass(frozen=True, eq=True)
class AddConstants(MapTransform):
    """Adds constant features, e.g. for the sets of a mixture that lack a field: `AddConstants({"w": 1.0})`.

    Attributes:
      values: key -> constant. A key already in the element is an error.
    """

    values: Mapping[str, Any] = FrozenMapping()

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", FrozenMapping(self.values))

    def map(self, element: Mapping[str, Any]) -> dict[str, Any]:
        if clash := sorted(set(self.values) & set(element)):
            raise KeyError(
                f"{describe(self)}: keys {clash!r} are already in the element; drop them first to replace them"
            )
        return {**element, **self.values}
