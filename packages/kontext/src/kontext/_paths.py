"""The path types: ``Path`` (concrete) and ``GlobPath`` (with ``*`` / ``**``), parsed, hashable and ordered.

Usage: ``Path.from_str("interms.encoder.__call__[0][..., :3]")``. ``to_parts`` reads any form of path (a
string, a path object, a tuple of parts, a JAX key path, a path builder) into its parts.
"""

from __future__ import annotations

from ._children import part_from_jax_key
from ._errors import GlobPathError
from ._glob import match_nodes, parts_match, set_parts
from ._lookup import lookup, not_found
from ._parser import Wildcard, check_part, format_parts, parse_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, TypeVar

    Context = Any  # A nested structure: dicts, lists, dataclasses, pytrees, plain objects...
    Part = Any  # str | int | float | complex | bool | None | ... | slice | tuple | Wildcard
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
        return cls(*(part_from_jax_key(entry) for entry in jax_path))

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._text = format_parts(self.parts)
        return text

    def __repr__(self) -> str:
        # Kauldron's: the canonical string, so that `Path.from_str(repr(path)) == path`.
        return str(self)

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
            raise ValueError(f"{self} is not a subpath of {other}.")
        return type(self)._trusted(self.parts[n:])

    def set_in(self, context: Context, value: Any) -> list[str]:
        """Sets ``value`` at this path inside ``context`` (in place); returns the changed paths."""
        return set_parts(context, self.parts, value, str(self))


class Path(AbstractPath):
    """A concrete path (no wildcards).

    Usage:
      >>> Path.from_str("batch.image").get_from({"batch": {"image": 1}})
      1
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


class GlobPath(AbstractPath):
    """A path that may contain ``*`` (exactly one level) and ``**`` (zero or more levels).

    Usage:
      >>> GlobPath.from_str("*.bias").match({"dense": {"bias": 0}, "out": {"bias": 1}})
      [dense.bias, out.bias]
    """

    __slots__ = ()
    _GLOB_OK = True

    @property
    def first_non_glob_parent(self) -> Path:
        """The longest wildcard-free prefix: ``GlobPath.from_str("a.b.*.c")`` gives ``Path("a.b")``."""
        prefix = []
        for part in self.parts:
            if type(part) is Wildcard:
                break
            prefix.append(part)
        return Path._trusted(tuple(prefix))

    def match(self, context: Context) -> list[Path]:
        """The concrete paths of ``context`` this glob matches, in tree order.

        Only what exists is matched: after a wildcard, branches without the next step (and leaves) are
        skipped. ``set_by_path`` and ``filter_by_path`` follow Kauldron's stricter rules instead.
        """
        return [Path._trusted(parts) for parts, _ in match_nodes(context, self.parts)]

    def matches(self, path: Path | str | tuple[Part, ...]) -> bool:
        """Whether this glob matches the concrete ``path``, without a tree: ``*`` takes one part, ``**`` any
        number (none included), any other part must equal the path's (``[0]`` and ``.0`` are the same index).

        Usage: ``GlobPath.from_str("params.**.kernel").matches("params.dense.kernel")`` is ``True``.

        ``path`` is read as ``get_by_path`` reads one (a string, a ``Path``, a tuple of parts, a JAX key
        path). Of a tree's nodes, ``self.match(tree)`` gives those whose path ``matches`` (but an index from
        the end, ``[-1]``, matches only the part ``-1`` here: no tree says which index is last).
        """
        parts = to_parts(path, glob_ok=True)
        if any(type(p) is Wildcard for p in parts):
            raise GlobPathError(
                f"GlobPath.matches takes a concrete path, got the glob {format_parts(parts)!r} "
                "(GlobPath.match gives the concrete paths a glob matches in a tree)."
            )
        return parts_match(self.parts, parts)


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
