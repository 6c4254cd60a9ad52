"""``GlobPath`` (``*`` one level, ``**`` any depth), matching it against a tree, and ``set_by_path``."""

from __future__ import annotations

from ._children import _ARRAY_KINDS, _ATOMS, _is_array, children_of, describe_available
from ._errors import GlobPathError, PathIndexError, PathMutationError, PathNotFoundError
from ._lookup import MISSING, not_found, step
from ._parser import DOUBLE_STAR, STAR, Wildcard, format_parts
from ._paths import AbstractPath, Path, to_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._paths import Context

Match = tuple  # (concrete parts, node)


class GlobPath(AbstractPath):
    """A path that may contain ``*`` (exactly one level) and ``**`` (zero or more levels).

    Usage: ``set_by_path(params, GlobPath.from_str("**.bias"), 0.0)``.
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
        """The concrete paths of ``context`` this glob matches, in tree order."""
        return [Path._trusted(parts) for parts, _ in match_nodes(context, self.parts)]


def match_nodes(
    root: object, parts: tuple[object, ...], suffix: tuple[object, ...] = (), containers_only: bool = False
) -> list[Match]:
    """Every ``(concrete parts, node)`` of ``root`` matching ``parts``, in tree order, without duplicates.

    Steps before the first wildcard are strict: a missing key raises ``PathNotFoundError``. After a
    wildcard, branches that do not match (missing keys, leaves) are skipped. ``suffix`` completes the
    path named in errors (the part ``set_by_path`` is about to write); ``containers_only`` leaves out
    scalars and arrays reached through a wildcard (``set_by_path`` only writes into containers).
    """
    out: list[Match] = []
    # Only two or more wildcards can reach the same node twice (e.g. `**.**`, `**.*`).
    seen: set[Any] | None = set() if sum(type(p) is Wildcard for p in parts) > 1 else None
    _match(root, root, parts, suffix, 0, (), False, out, seen, set(), containers_only)
    return out


def _match(
    root: object,
    node: object,
    parts: tuple[object, ...],
    suffix: tuple[object, ...],
    i: int,
    prefix: tuple[object, ...],
    lenient: bool,
    out: list[Match],
    seen: set[Any] | None,
    ancestors: set[int],
    containers_only: bool,
) -> None:
    if i == len(parts):
        if seen is not None:
            try:
                if prefix in seen:
                    return
                seen.add(prefix)
            except TypeError:  # An unhashable part (a slice): cannot be a duplicate of a glob expansion.
                pass
        out.append((prefix, node))
        return
    part = parts[i]
    if part is DOUBLE_STAR or part is STAR:
        if part is DOUBLE_STAR:
            _match(root, node, parts, suffix, i + 1, prefix, True, out, seen, ancestors, containers_only)
        found = children_of(node)
        if found is None:
            if lenient or part is DOUBLE_STAR:
                return
            raise PathNotFoundError(
                f"Cannot expand '*' in {format_parts((*parts, *suffix))!r} at {_where(prefix)}: "
                f"{type(node).__name__} is a leaf, not a container.",
                path=format_parts((*parts, *suffix)),
                failed_part=part,
                parent=format_parts(prefix),
                available=describe_available(node),
            )
        ident = id(node)
        if ident in ancestors:
            return  # A cycle: this node is already being expanded higher up.
        ancestors.add(ident)
        next_i = i if part is DOUBLE_STAR else i + 1
        for key, child in found:
            if containers_only and (type(child) in _ATOMS or type(child) in _ARRAY_KINDS):
                continue
            _match(
                root,
                child,
                parts,
                suffix,
                next_i,
                (*prefix, key),
                True,
                out,
                seen,
                ancestors,
                containers_only,
            )
        ancestors.discard(ident)
        return
    if type(node) is dict:
        try:
            child = node.get(part, MISSING)  # type: ignore[attr-defined]
        except TypeError:  # An unhashable part (a slice).
            child = MISSING
        if child is MISSING and not lenient:
            child = step(node, part)
    elif lenient and children_of(node) is None:
        child = MISSING  # After a wildcard only containers are entered (no attributes of leaves).
    else:
        child = step(node, part)
    if child is MISSING:
        if lenient:
            return
        raise not_found(root, (*prefix, *parts[i:], *suffix), node, len(prefix))
    _match(root, child, parts, suffix, i + 1, (*prefix, part), lenient, out, seen, ancestors, containers_only)


def set_by_path(obj: Context, path: Any, value: Any) -> list[str]:
    """Sets ``value`` at every place ``path`` (a glob) matches inside ``obj``, in place.

    Usage: ``set_by_path(tree, "**.bias", 0.0)`` returns ``["dense.bias", "out.bias"]``.

    Dict-like nodes get the key set, lists the index (which must exist), dataclasses and objects the
    attribute. A path without wildcards before its last part may create a new dict key; after a
    wildcard only existing keys are written and non-matching branches are skipped (the result may be
    empty). Matching happens before any write; a match inside a sub-tree being replaced is not reported.

    Returns:
      The canonical paths that were written, in tree order.

    Raises:
      GlobPathError: the path ends with a wildcard.
      PathMutationError: a write into a leaf, a tuple or a frozen / immutable object.
      PathNotFoundError: a step before the last does not exist (``PathIndexError``: list index out of range).
    """
    parts = to_parts(path, glob_ok=True)
    return set_parts(obj, parts, value, format_parts(parts))


def set_parts(obj: Context, parts: tuple[object, ...], value: Any, text: str) -> list[str]:
    if not parts:
        raise PathMutationError("Cannot set the empty path: it names the tree itself.")
    last = parts[-1]
    if type(last) is Wildcard:
        raise GlobPathError(
            f"Cannot set {text!r}: a wildcard cannot be the last part of a path to set "
            f"(it would replace whole containers); name the key, e.g. {format_parts((*parts[:-1], 'key'))!r}."
        )
    lenient = any(type(p) is Wildcard for p in parts[:-1])
    targets = match_nodes(obj, parts[:-1], (last,), containers_only=lenient)
    written: list[str] = []
    done: set[Any] = set()
    for prefix, parent in targets:
        if lenient and type(parent) is not dict and children_of(parent) is None:
            continue  # A leaf reached through a wildcard: globs write into containers only, as `match` reads.
        concrete = (*prefix, last)
        if done and last in prefix and _inside(concrete, done):
            continue  # Inside a sub-tree that was just replaced.
        if _assign(obj, parent, prefix, last, value, lenient):
            written.append(format_parts(concrete))
            done.add(_key(concrete))
    return written


def _key(parts: tuple[object, ...]) -> Any:
    try:
        hash(parts)
    except TypeError:
        return format_parts(parts)
    return parts


def _inside(parts: tuple[object, ...], done: set[Any]) -> bool:
    return any(_key(parts[:j]) in done for j in range(1, len(parts)))


def _assign(
    root: object, parent: object, prefix: tuple[object, ...], part: object, value: Any, lenient: bool
) -> bool:
    """Writes ``parent[part]`` / ``parent.part``; ``False`` for a glob match with nothing to write.

    Error messages are formatted only when raised: this runs once per written path.
    """
    kind = type(parent)
    if kind is dict:
        if lenient and not _has_key(parent, part):
            return False
        try:
            parent[part] = value  # type: ignore[index]
        except TypeError:
            raise _cannot(prefix, part, f"dict keys must be hashable, got {part!r}") from None
        return True
    if kind in _ATOMS or _is_array(kind):
        if lenient:
            return False
        reason = f"{_where(prefix)} is a leaf ({kind.__name__}), not a container that can be written into"
        raise _cannot(prefix, part, reason)
    if isinstance(parent, tuple):
        if lenient and step(parent, part) is MISSING:
            return False
        raise _cannot(prefix, part, f"{_where(prefix)} is a {kind.__name__}, which is immutable; rebuild it")
    if hasattr(kind, "keys") and hasattr(kind, "__getitem__"):
        if lenient and not _has_key(parent, part):
            return False
        try:
            parent[part] = value  # type: ignore[index]
        except (TypeError, ValueError, AttributeError, NotImplementedError) as e:  # FrozenDict, mappingproxy
            reason = f"the {kind.__name__} at {_where(prefix)} refused the write ({type(e).__name__}: {e})"
            raise _cannot(prefix, part, reason + "; build a new one instead") from None
        return True
    if isinstance(parent, list) or (hasattr(kind, "__setitem__") and hasattr(kind, "__len__")):
        n = len(parent)  # type: ignore[arg-type]
        if type(part) is not int:
            if lenient:
                return False
            raise _cannot(prefix, part, f"{kind.__name__} indices are integers, got {part!r}")
        if not -n <= part < n:
            if lenient:
                return False
            raise PathIndexError(
                f"Cannot set {_where((*prefix, part))}: index {part} is out of range for the {kind.__name__} "
                f"of length {n} at {_where(prefix)} (valid: 0..{n - 1} or -{n}..-1).",
                path=format_parts((*prefix, part)),
                failed_part=part,
                parent=format_parts(prefix),
                available=(f"indices 0..{n - 1}",) if n else (),
            )
        parent[part] = value  # type: ignore[index]
        return True
    if type(part) is not str:
        if lenient:
            return False
        raise _cannot(prefix, part, f"{kind.__name__} has attributes, not item {part!r}")
    if not hasattr(parent, part):
        if step(parent, part) is not MISSING:  # A pytree child with no attribute behind it.
            reason = f"{kind.__name__} at {_where(prefix)} exposes {part!r} only through JAX's flattening"
            raise _cannot(prefix, part, reason + "; rebuild the node (jax.tree_util.tree_unflatten)")
        if lenient:
            return False
        raise not_found(root, (*prefix, part), parent, len(prefix))
    try:
        setattr(parent, part, value)
    except AttributeError as e:  # Frozen dataclasses, flax structs, slots without the name.
        reason = f"{kind.__name__} at {_where(prefix)} does not allow setting attributes ({e})"
        raise _cannot(
            prefix,
            part,
            reason + "; it is probably frozen: build a new one (dataclasses.replace / .replace(...))",
        ) from None
    return True


def _cannot(prefix: tuple[object, ...], part: object, reason: str) -> PathMutationError:
    return PathMutationError(f"Cannot set {_where((*prefix, part))}: {reason}.")


def _where(parts: tuple[object, ...]) -> str:
    """A path for an error message: ``'a.b'``, or ``the root``."""
    return repr(format_parts(parts)) if parts else "the root"


def _has_key(mapping: Any, key: object) -> bool:
    try:
        return key in mapping.keys()
    except TypeError:
        return False
