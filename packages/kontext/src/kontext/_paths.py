"""``Path``: a parsed, hashable, ordered string path such as ``"interms.encoder.__call__[0][..., :3]"``."""

from __future__ import annotations

from ._errors import GlobPathError
from ._lookup import lookup, not_found
from ._parser import Wildcard, check_part, format_parts, parse_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, TypeVar

    Context = Any  # A nested structure: dicts, lists, dataclasses, pytrees, plain objects...
    Part = Any  # str | int | float | bool | None | ... | slice | tuple | Wildcard
    _P = TypeVar("_P", bound="AbstractPath")


class AbstractPath:
    """A sequence of parts with one canonical string form; base of ``Path`` and ``GlobPath``.

    Behaves as a read-only sequence of its parts (``len``, iteration, indexing, slicing).
    """

    __slots__ = ("_text", "parts")
    _GLOB_OK = False

    def __init__(self, *parts: Part) -> None:
        glob_ok = self._GLOB_OK
        self.parts: tuple[Part, ...] = tuple(check_part(part, glob_ok) for part in parts)
        self._text: str | None = None

    @classmethod
    def _trusted(cls: type[_P], parts: tuple[Part, ...]) -> _P:
        self = object.__new__(cls)
        self.parts = parts
        self._text = None
        return self

    @classmethod
    def from_str(cls: type[_P], text: str) -> _P:
        """Parses a path string: ``Path.from_str("a[0]['b.c']").parts == ("a", 0, "b.c")``."""
        if not isinstance(text, str):
            raise TypeError(f"{cls.__name__}.from_str expects a str, got {type(text).__name__}: {text!r}.")
        parts = parse_parts(text)
        if not cls._GLOB_OK and any(type(p) is Wildcard for p in parts):
            raise GlobPathError(
                f"Path {text!r} contains a wildcard; use kontext.GlobPath.from_str for globs."
            )
        return cls._trusted(parts)

    @classmethod
    def from_jax_path(cls: type[_P], jax_path: Sequence[Any]) -> _P:
        """From a JAX key path (``jax.tree_util.tree_flatten_with_path``); JAX is never imported here."""
        from ._children import part_from_jax_key

        return cls(*(part_from_jax_key(entry) for entry in jax_path))

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._text = format_parts(self.parts)
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __hash__(self) -> int:
        return hash(str(self))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return str(self) == str(other)

    def _order(self, other: object) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        if type(other) is not type(self):
            raise TypeError(f"Cannot order {type(self).__name__} and {type(other).__name__}.")
        return _sort_key(self.parts), _sort_key(other.parts)  # type: ignore[attr-defined]

    def __lt__(self, other: object) -> bool:
        a, b = self._order(other)
        return a < b

    def __le__(self, other: object) -> bool:
        a, b = self._order(other)
        return a <= b

    def __gt__(self, other: object) -> bool:
        a, b = self._order(other)
        return a > b

    def __ge__(self, other: object) -> bool:
        a, b = self._order(other)
        return a >= b

    def __len__(self) -> int:
        return len(self.parts)

    def __iter__(self) -> Iterator[Part]:
        return iter(self.parts)

    def __getitem__(self, key):  # type: ignore[no-untyped-def,override]
        if isinstance(key, slice):
            return type(self)._trusted(self.parts[key])
        return self.parts[key]

    def __contains__(self, part: object) -> bool:
        return part in self.parts

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self.parts)

    def relative_to(self: _P, other: AbstractPath) -> _P:
        """``Path.from_str("a.b.c").relative_to(Path.from_str("a")) == Path.from_str("b.c")``."""
        n = len(other.parts)
        if self.parts[:n] != other.parts or len(self.parts) < n:
            raise ValueError(f"{self} is not inside {other}.")
        return type(self)._trusted(self.parts[n:])

    def set_in(self, context: Context, value: Any) -> list[str]:
        """Sets ``value`` at this path inside ``context`` (in place); returns the changed paths."""
        from ._glob import set_parts

        return set_parts(context, self.parts, value, str(self))


class Path(AbstractPath):
    """A concrete path (no wildcards).

    Usage: ``Path.from_str("batch.image").get_from({"batch": {"image": 1}}) == 1``.
    """

    __slots__ = ()

    def get_from(self, context: Context, *, default: Any = ..., err_spec: bool = False) -> Any:
        """The value at this path; ``default`` if given and the path is missing, else ``PathNotFoundError``.

        ``err_spec`` is accepted for Kauldron compatibility: the error always describes the failing node.
        """
        value, failed = lookup(context, self.parts)
        if failed < 0:
            return value
        if default is not ...:
            return default
        raise not_found(context, self.parts, value, failed)


def _sort_key(parts: tuple[Part, ...]) -> tuple[Any, ...]:
    key = []
    for part in parts:
        kind = type(part)
        if kind is str:
            key.append((0, part, ""))
        elif kind is int:
            key.append((1, part, ""))
        else:
            key.append((2, 0, format_parts((part,))))
    return tuple(key)


def to_parts(path: Any, glob_ok: bool = False) -> tuple[Part, ...]:
    """Parts of a path given as str, Path, path builder, tuple of parts or JAX key path."""
    kind = type(path)
    if kind is str:
        parts = parse_parts(path)
    elif isinstance(path, AbstractPath):
        parts = path.parts
    elif kind is tuple:
        if path and type(path[0]).__module__.startswith("jax"):
            from ._children import part_from_jax_key

            path = tuple(part_from_jax_key(entry) for entry in path)
        parts = tuple(check_part(part, glob_ok) for part in path)
    elif hasattr(kind, "__kontext_path__"):
        parts = parse_parts(path.__kontext_path__())
    elif isinstance(path, str):
        parts = parse_parts(str(path))
    else:
        raise TypeError(
            f"Invalid path {path!r} of type {kind.__name__}: expected a str, a kontext.Path, a tuple of parts "
            "or a JAX key path."
        )
    if not glob_ok and any(type(p) is Wildcard for p in parts):
        raise GlobPathError(
            f"Path {format_parts(parts)!r} contains a wildcard; use set_by_path/filter_by_path for globs."
        )
    return parts


def get_by_path(obj: Context, path: Any, default: Any = ...) -> Any:
    """The value at ``path`` in ``obj``; at each step item access is tried first, then attribute access.

    Usage: ``get_by_path({"a": [{"b": 1}]}, "a[0].b") == 1``.

    Args:
      obj: the tree: dicts, lists, tuples, named tuples, dataclasses, flax structs, ConfigDicts, objects.
      path: a path string, a ``Path``, a tuple of parts, a JAX key path or a path builder; ``None``
        returns ``None`` (or ``default``), for optional keys.
      default: returned when the path does not exist; without it a ``PathNotFoundError`` is raised.

    Raises:
      PathNotFoundError: (a ``KeyError``) naming the path, the failing step, what was available there
        and the closest existing paths.
    """
    if path is None:
        return None if default is ... else default
    parts = parse_parts(path) if type(path) is str else to_parts(path)
    value, failed = lookup(obj, parts)
    if failed < 0:
        return value
    if type(parts[failed]) is Wildcard:  # A mistake even with a default: it could never be found.
        raise GlobPathError(
            f"get_by_path got the glob {format_parts(parts)!r}; use kontext.filter_by_path to select by wildcard."
        )
    if default is not ...:
        return default
    raise not_found(obj, parts, value, failed)
