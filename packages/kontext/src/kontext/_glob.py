"""The glob walk: the nodes a path with ``*`` / ``**`` matches in a tree, and writing a value at each of them.

Usage: ``match_nodes({"a": {"w": 1}}, ("a", Wildcard.STAR))`` gives ``[(("a", "w"), 1)]``;
``set_parts(tree, ("a", "b"), 0, "a.b")`` writes ``tree["a"]["b"] = 0`` and returns ``["a.b"]``.
"""

from __future__ import annotations

from ._children import _ARRAY_KINDS, _ATOMS, _is_array, children_of, describe_available
from ._errors import GlobPathError, PathIndexError, PathMutationError, PathNotFoundError
from ._lookup import MISSING, not_found, step
from ._parser import DOUBLE_STAR, STAR, Wildcard, format_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Match = tuple  # (concrete parts, node)


def match_nodes(
    root: object, parts: tuple[object, ...], suffix: tuple[object, ...] = (), containers_only: bool = False
) -> list[Match]:
    """Every ``(concrete parts, node)`` of ``root`` matching ``parts``, in tree order, without duplicates.

    Steps before the first wildcard are strict: a missing key raises ``PathNotFoundError``. After a
    wildcard, branches that do not match (missing keys, leaves) are skipped. ``suffix`` completes the
    path named in errors (the part ``set_by_path`` is about to write); ``containers_only`` leaves out
    scalars and arrays reached through a wildcard (``set_by_path`` only writes into containers).

    The walk keeps its own stack (trees of any depth) and takes each (path, pattern position) once, so
    the work stays polynomial in the sizes of the tree and of the pattern, whatever the number of ``**``.
    In a cyclic tree a wildcard does not expand a node again inside its own expansion.
    """
    n = len(parts)
    first = 0
    while first < n and type(parts[first]) is not Wildcard:
        first += 1
    node = root
    for i in range(first):  # The strict steps: a plain lookup that explains a missing key.
        part = parts[i]
        child = MISSING
        if type(node) is dict:
            try:
                child = node.get(part, MISSING)  # type: ignore[attr-defined]
            except TypeError:  # An unhashable part (a slice).
                pass
        if child is MISSING:
            child = step(node, part)
            if child is MISSING:
                raise not_found(root, (*parts, *suffix), node, i)
        node = child
    if first == n:
        return [(parts, node)]
    pattern = parts
    if sum(p is DOUBLE_STAR for p in parts) > 1:
        pattern = _merge_double_stars(parts)
    found = _expand(node, pattern, first, containers_only, sum(p is DOUBLE_STAR for p in pattern) > 1)
    if found is None:
        raise PathNotFoundError(
            f"Cannot expand '*' in {format_parts((*parts, *suffix))!r} at {_where(parts[:first])}: "
            f"{type(node).__name__} is a leaf, not a container.",
            path=format_parts((*parts, *suffix)),
            failed_part=STAR,
            parent=format_parts(parts[:first]),
            available=describe_available(node),
        )
    return found


def _merge_double_stars(parts: tuple[object, ...]) -> tuple[object, ...]:
    """``parts`` with one ``**`` for each run of them: ``**.**`` matches what ``**`` does, in the same order."""
    return tuple(
        p for i, p in enumerate(parts) if not (p is DOUBLE_STAR and i and parts[i - 1] is DOUBLE_STAR)
    )


def _expand(
    start: object, pattern: tuple[object, ...], first: int, containers_only: bool, memo: bool
) -> list[Match] | None:
    """``match_nodes`` from the first wildcard on: a depth-first walk with its own stack, in tree order.

    A task ``(node, i, prefix, prefix id)`` matches ``pattern[i:]`` at ``node``, reached by ``prefix``;
    ``i < 0`` is the expansion of the ``**`` at ``~i``, done after its zero-level match, and a ``prefix``
    of ``None`` ends the expansion of ``node`` (for cycles). With two ``**`` or more (``memo``), many
    routes reach the same task (``**.a.**`` on ``a.a.a``): ids number the prefixes so that each task is
    done once, which also keeps each path out of the result twice. (With fewer, a path has one route.)

    Returns ``None`` when the first wildcard is a ``*`` on a leaf.
    """
    out: list[Match] = []
    n = len(pattern)
    # An atom or array (a leaf, known without probing) reached at `i` matches only if `pattern[i:]` is
    # empty or `**` (`i >= leaves_from`): it is then a result directly, otherwise it is left out.
    leaves_from = n - 1 if pattern[-1] is DOUBLE_STAR else n
    ancestors: set[int] = set()  # Nodes being expanded: a cycle comes back to one of them.
    done: set[tuple[int, int]] | None = set() if memo else None
    ids: dict[tuple[object, ...], int] = {}
    stack: list[tuple[Any, int, Any, int]] = [(start, first, pattern[:first], 0)]
    strict = pattern[first] is STAR  # A `*` first: expanding a leaf there is an error.
    while stack:
        node, i, prefix, pid = stack.pop()
        if prefix is None:
            ancestors.discard(id(node))
            continue
        if i < 0:
            i = ~i
        else:
            expand = False
            pushed = 0  # The stack size after pushing the last `**` expansion, if any.
            while True:  # Match `pattern[i:]` at `node`, up to a `*` to expand.
                while i < n:  # Concrete steps.
                    part = pattern[i]
                    if type(part) is Wildcard:
                        break
                    if type(node) is dict:
                        try:
                            child = node.get(part, MISSING)  # type: ignore[attr-defined]
                        except TypeError:  # An unhashable part (a slice).
                            child = MISSING
                    elif children_of(node) is None:  # After a wildcard, no attributes of leaves.
                        child = MISSING
                    else:
                        child = step(node, part)
                    if child is MISSING:
                        break
                    node = child
                    prefix = (*prefix, part)
                    if done is not None:
                        pid = _prefix_id(ids, pid, part)
                    i += 1
                else:
                    if done is None or _first_time(done, pid, n):
                        out.append((prefix, node))
                    break
                if type(part) is not Wildcard or (done is not None and not _first_time(done, pid, i)):
                    break  # A missing key, or a task already done.
                if part is STAR:
                    i += 1
                    expand = True
                    break
                if i + 1 == n:  # A last `**`: the node itself, then its expansion.
                    if done is None or _first_time(done, pid, n):
                        out.append((prefix, node))
                    expand = True
                    break
                stack.append((node, ~i, prefix, pid))  # `**`: zero levels first, then one level more.
                pushed = len(stack)
                i += 1
            if not expand:
                if not pushed or pushed != len(stack):
                    continue
                node, i, prefix, pid = stack.pop()  # The `**` expansion is next: no need to wait.
                i = ~i
        found = children_of(node)
        if found is None:
            if strict:
                return None
            continue
        strict = False
        ident = id(node)
        if ident in ancestors:
            continue  # A cycle: this node is already being expanded higher up.
        if i == n:  # A last `*`: every child is a result.
            for key, child in found:
                if containers_only and (type(child) in _ATOMS or type(child) in _ARRAY_KINDS):
                    continue
                if done is None or _first_time(done, _prefix_id(ids, pid, key), n):
                    out.append(((*prefix, key), child))
            continue
        mark = len(stack)
        nested = False
        leaves = not containers_only and i >= leaves_from
        for key, child in reversed(found):
            kind = type(child)
            if kind in _ATOMS or kind in _ARRAY_KINDS:
                if not leaves:
                    continue
                task = (child, n, (*prefix, key), 0 if done is None else _prefix_id(ids, pid, key))
            else:
                nested = True
                task = (child, i, (*prefix, key), 0 if done is None else _prefix_id(ids, pid, key))
            stack.append(task)
        if nested:  # Only a container child can lead back here.
            ancestors.add(ident)
            stack.insert(mark, (node, 0, None, 0))
    return out


def _first_time(done: set[tuple[int, int]], pid: int, i: int) -> bool:
    """Whether the task at position ``i`` of the prefix ``pid`` is new (it is then recorded)."""
    if (pid, i) in done:
        return False
    done.add((pid, i))
    return True


def _prefix_id(ids: dict[tuple[object, ...], int], parent: int, part: object) -> int:
    """A number for the prefix ``parent`` + ``part``, the same for equal prefixes (``ids`` remembers them)."""
    key: tuple[object, ...] = (parent, part)
    try:
        found = ids.get(key)
    except TypeError:  # An unhashable part (a slice): equal slices are written alike.
        key = (parent, slice, format_parts((part,)))
        found = ids.get(key)
    if found is None:
        found = ids[key] = len(ids) + 1
    return found


def set_parts(obj: Any, parts: tuple[object, ...], value: Any, text: str) -> list[str]:
    """Sets ``value`` at every place ``parts`` match in ``obj``; the canonical paths written, in tree order.

    ``text`` is the path as the caller wrote it, for error messages. The rules: ``set_by_path``'s.
    """
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
    replaced: list[tuple[object, ...]] = []  # The paths written so far.
    trie: dict[Any, Any] = {}  # The first `in_trie` of them (part -> sub-trie, `_END` ends a path).
    in_trie = 0
    for prefix, parent in targets:
        if lenient and type(parent) is not dict and children_of(parent) is None:
            continue  # A leaf reached through a wildcard: globs write into containers only, as `match` reads.
        if replaced and last in prefix:  # Only then can `prefix` be inside a path written (ending in `last`).
            for concrete in replaced[in_trie:]:
                node = trie
                for part in concrete:
                    node = node.setdefault(_trie_key(part), {})
                node[_END] = True
            in_trie = len(replaced)
            if _inside(prefix, trie):
                continue  # Inside a sub-tree that was just replaced.
        if _assign(obj, parent, prefix, last, value, lenient):
            concrete = (*prefix, last)
            written.append(format_parts(concrete))
            replaced.append(concrete)
    return written


_END = object()


def _trie_key(part: object) -> object:
    try:
        hash(part)
    except TypeError:  # An unhashable part (a slice): equal ones are written alike.
        return (slice, format_parts((part,)))
    return part


def _inside(prefix: tuple[object, ...], replaced: dict[Any, Any]) -> bool:
    """Whether ``prefix`` or one of its own prefixes is a path in the trie ``replaced``."""
    node = replaced
    for part in prefix:
        node = node.get(_trie_key(part))
        if node is None:
            return False
        if _END in node:
            return True
    return False


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
