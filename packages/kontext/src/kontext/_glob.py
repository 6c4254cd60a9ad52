"""The glob walk: the nodes a path with ``*`` / ``**`` matches in a tree, and writing a value at each of them.

Usage: ``match_nodes({"a": {"w": 1}}, ("a", Wildcard.STAR))`` gives ``[(("a", "w"), 1)]``;
``set_parts(tree, ("a", "b"), 0, "a.b")`` writes ``tree["a"]["b"] = 0`` and returns ``["a.b"]``;
``parts_match(("a", Wildcard.STAR), ("a", "w"))`` is ``True`` (one path, no tree).

The walk names the node it is at by a link ``(link to the parent, part)`` (``None`` for the root), not by
a tuple of parts: a step costs the same at any depth, and a path is spelled out (``spell``) only for a
match, so that a ``**`` down a chain 20,000 deep takes linear time and memory.
"""

from __future__ import annotations

from ._children import _ARRAY_KINDS, _ATOMS, REPEAT_LIMIT, _is_array, children_of, describe_available
from ._errors import GlobPathError, PathIndexError, PathMutationError, PathNotFoundError
from ._lookup import MISSING, is_dunder, not_found, step
from ._parser import DOUBLE_STAR, STAR, Wildcard, format_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ._children import Children

Match = tuple  # (concrete parts, node)


def match_nodes(
    root: object,
    parts: tuple[object, ...],
    suffix: tuple[object, ...] = (),
    containers_only: bool = False,
    strict: bool = False,
    spelled: bool = True,
) -> list[Match]:
    """Every ``(concrete parts, node)`` of ``root`` matching ``parts``, in tree order, without duplicates.

    Steps before the first wildcard must exist: a missing key raises ``PathNotFoundError``. After a
    wildcard, branches that do not match (missing keys, leaves) are skipped (``GlobPath.match``), or,
    with ``strict`` (``set_by_path``, ``filter_by_path``: Kauldron's rules), only at the steps that
    ``optional_steps`` marks (after a ``**``, up to the first concrete step): any other step must exist
    wherever it is reached, and a ``*`` must find a container. ``suffix`` completes the path named in
    errors (the part ``set_by_path`` is about to write); ``containers_only`` leaves out scalars and
    arrays reached through a wildcard. ``spelled=False`` gives each match's path as a link (``spell``
    makes it the tuple): callers that keep few of many matches spell out only those.

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
        return [(parts if spelled else _link(parts), node)]
    pattern = parts
    if sum(p is DOUBLE_STAR for p in parts) > 1:
        pattern = _merge_double_stars(parts)
    memo = sum(p is DOUBLE_STAR for p in pattern) > 1
    checked = (root, suffix, optional_steps(pattern)) if strict else None
    found = _expand(node, pattern, first, containers_only, memo, checked)
    if found is None:
        raise _star_on_leaf((*parts, *suffix), parts[:first], node)
    if spelled:
        known: dict[int, tuple[object, ...]] = {}  # id of a link spelled already -> its parts
        return [(spell(link, known), match) for link, match in found]
    return found


def parts_match(pattern: tuple[object, ...], parts: tuple[object, ...]) -> bool:
    """Whether the concrete ``parts`` name a node that ``pattern`` matches, the tree aside: ``*`` takes one
    part, ``**`` any number (none included), and any other part must equal the one it meets.

    Usage: ``parts_match(("a", Wildcard.DOUBLE_STAR, "c"), ("a", "b", "b", "c"))`` is ``True``.

    Greedy, going back only to the last ``**`` met (it takes one part more): a later ``**`` can take
    whatever an earlier one would. Time ``len(pattern) * len(parts)`` at worst, whatever the ``**``.
    """
    n, m = len(pattern), len(parts)
    i = j = 0
    star = -1  # The position of the last `**` met, and the part where what it takes ends.
    star_end = 0
    while j < m:
        if i < n:
            part = pattern[i]
            if part is DOUBLE_STAR:
                star, star_end = i, j
                i += 1
                continue
            if part is STAR or part == parts[j]:
                i += 1
                j += 1
                continue
        if star < 0:
            return False
        star_end += 1
        i, j = star + 1, star_end
    while i < n and pattern[i] is DOUBLE_STAR:
        i += 1
    return i == n


Link = tuple  # (the parent's link, part), or None for the root


def spell(link: Link | None, known: dict[int, tuple[object, ...]] | None = None) -> tuple[object, ...]:
    """The parts of the path a link names: ``spell(((None, "a"), 0)) == ("a", 0)``.

    ``known`` (id of a link -> its parts) saves walking up the links spelled before: a match below
    another (``**`` matches every node of a chain) is its parts and a few more.
    """
    top = link
    parts = []
    while link is not None and (known is None or id(link) not in known):
        link, part = link
        parts.append(part)
    parts.reverse()
    spelled = tuple(parts) if link is None else known[id(link)] + tuple(parts)  # type: ignore[index]
    if known is not None and top is not None:
        known[id(top)] = spelled
    return spelled


def _link(parts: tuple[object, ...]) -> Link | None:
    link = None
    for part in parts:
        link = (link, part)
    return link


def optional_steps(parts: tuple[object, ...]) -> tuple[bool, ...]:
    """For each part, whether a glob takes it only where it exists (Kauldron's rules): the parts after a
    ``**`` up to and including the first concrete one. ``**.b.c``: ``b`` is optional, ``c`` is not.

    Usage: ``optional_steps(("**", "b", "c")) == (True, True, False)`` (with ``Wildcard.DOUBLE_STAR``).
    """
    out = []
    after = False  # Inside a run of wildcards that began with (or holds) a `**`.
    for part in parts:
        if part is DOUBLE_STAR:
            after = True
            out.append(True)
        elif part is STAR:
            out.append(after)
        else:
            out.append(after)
            after = False
    return tuple(out)


def _star_on_leaf(path: tuple[object, ...], prefix: tuple[object, ...], node: object) -> PathNotFoundError:
    """The error for a ``*`` (``path[len(prefix)]``) that must expand ``node``, a leaf."""
    return PathNotFoundError(
        f"Cannot expand '*' in {format_parts(path)!r} at {_where(prefix)}: "
        f"{type(node).__name__} is a leaf, not a container.",
        path=format_parts(path),
        failed_part=STAR,
        parent=format_parts(prefix),
        available=describe_available(node),
    )


def _required(
    checked: tuple[Any, tuple[object, ...], tuple[bool, ...]],
    prefix: tuple[object, ...],
    pattern: tuple[object, ...],
    i: int,
    node: object,
    star: bool,
) -> PathNotFoundError:
    """The error for ``pattern[i]``, a step that must exist, missing at ``node`` (``star``: ``*`` on a leaf).

    ``checked`` is ``_expand``'s ``(root, suffix, optional steps)``; ``prefix``, the path to ``node``.
    """
    root, suffix = checked[0], checked[1]
    path = (*prefix, *pattern[i:], *suffix)
    return _star_on_leaf(path, prefix, node) if star else not_found(root, path, node, len(prefix))


def _merge_double_stars(parts: tuple[object, ...]) -> tuple[object, ...]:
    """``parts`` with one ``**`` for each run of them: ``**.**`` matches what ``**`` does, in the same order."""
    return tuple(
        p for i, p in enumerate(parts) if not (p is DOUBLE_STAR and i and parts[i - 1] is DOUBLE_STAR)
    )


def _expand(
    start: object,
    pattern: tuple[object, ...],
    first: int,
    containers_only: bool,
    memo: bool,
    checked: tuple[object, tuple[object, ...], tuple[bool, ...]] | None,
) -> list[Match] | None:
    """``match_nodes`` from the first wildcard on: a depth-first walk with its own stack, in tree order.

    ``memo``: the pattern has two ``**`` or more. ``checked``, ``(root, suffix, optional_steps(pattern))``,
    applies ``match_nodes``' strict rules: a step that is not optional raises where it is missing. Returns
    ``None`` when the first wildcard is a ``*`` on a leaf; else the matches, each path a link.
    """
    return _Walk(pattern, containers_only, memo, checked).run(start, first)


class _Walk:
    """One glob walk: its stack of tasks and the matches so far; ``expand_node`` opens a container.

    A task ``(node, i, prefix, prefix id)`` matches ``pattern[i:]`` at ``node``, reached by ``prefix`` (a
    link); ``i < 0`` is the expansion of the ``**`` at ``~i``, done after its zero-level match, and a
    ``prefix`` of ``_LEAVE`` ends the expansion of ``node`` (for cycles). With two ``**`` or more
    (``memo``), many routes reach the same task (``**.a.**`` on ``a.a.a``): ids number the prefixes so that
    each task is done once, which also keeps each path out of the result twice. (With fewer, a path has one
    route.)
    """

    __slots__ = ("ancestors", "checked", "done", "expand_node", "ids", "n", "out", "pattern", "stack")

    def __init__(
        self,
        pattern: tuple[object, ...],
        containers_only: bool,
        memo: bool,
        checked: tuple[object, tuple[object, ...], tuple[bool, ...]] | None,
    ) -> None:
        self.pattern = pattern
        self.n = len(pattern)
        self.checked = checked
        self.ancestors: set[int] = set()  # Nodes being expanded: a cycle comes back to one of them.
        self.done: set[tuple[int, int]] | None = set() if memo else None
        self.ids: dict[tuple[object, ...], int] = {}
        self.out: list[Match] = []
        self.stack: list[tuple[Any, int, Any, int]] = []
        self.expand_node = _node_expander(self, containers_only)

    def run(self, start: object, first: int) -> list[Match] | None:
        """The matches of ``pattern[first:]`` (a wildcard) at ``start``; ``None`` for a ``*`` on a leaf."""
        pattern, n, checked, done, ids = self.pattern, self.n, self.checked, self.done, self.ids
        out, stack, ancestors, expand_node = self.out, self.stack, self.ancestors, self.expand_node
        stack.append((start, first, _link(pattern[:first]), 0))
        star_first = pattern[first] is STAR  # A `*` first: expanding a leaf there is an error.
        while stack:
            node, i, prefix, pid = stack.pop()
            if prefix is _LEAVE:
                ancestors.discard(id(node))
                continue
            # `expand`: 0 nothing to expand, 1 a `**`'s expansion (`pattern[i]`), 2 a `*`'s (`pattern[i-1]`).
            if i < 0:
                i = ~i
                expand = 1
            else:
                expand = 0
                pending = None  # The last `**` expansion, not pushed yet: it may be the next task.
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
                        elif children_of(node) is None and (checked is None or checked[2][i]):
                            child = MISSING  # No attributes of leaves after a wildcard, unless required.
                        else:
                            child = step(node, part)
                        if child is MISSING:
                            if checked is not None and not checked[2][i]:
                                raise _required(checked, spell(prefix), pattern, i, node, False)
                            break
                        node = child
                        prefix = (prefix, part)
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
                        expand = 2
                        break
                    if i + 1 == n:  # A last `**`: the node itself, then its expansion.
                        if done is None or _first_time(done, pid, n):
                            out.append((prefix, node))
                        expand = 1
                        break
                    if pending is not None:
                        stack.append(pending)
                    pending = (node, ~i, prefix, pid)  # `**`: zero levels first, then one level more.
                    i += 1
                if not expand:
                    if pending is None:
                        continue
                    node, i, prefix, pid = pending  # The `**` expansion is next: no need to wait.
                    i = ~i
                elif pending is not None:
                    stack.append(pending)  # After the expansion that comes first.
            found = children_of(node)
            if found is None:
                if star_first:
                    return None
                if expand == 2 and checked is not None and not checked[2][i - 1]:
                    raise _required(checked, spell(prefix), pattern, i - 1, node, True)
                continue
            star_first = False
            expand_node(node, found, i, expand, prefix, pid)
        return out


def _node_expander(
    walk: _Walk, containers_only: bool
) -> Callable[[object, Children, int, int, Link | None, int], None]:
    """The expansion of one node in ``walk``: a closure over the walk's parts, which it reads for each
    container (a closure's reads are the cheapest Python has), and over what bounds the work.

    ``expand_node(node, found, i, expand, prefix, pid)`` expands ``node``, a container with children
    ``found``, for a wildcard (``expand``, as in ``_Walk.run``): each child is a task, or a match after a
    last ``*``.
    """
    pattern, n, checked, done, ids = walk.pattern, walk.n, walk.checked, walk.done, walk.ids
    out, stack, ancestors = walk.out, walk.stack, walk.ancestors
    # An atom or array (a leaf, known without probing) reached at `i` matches only if `pattern[i:]` is
    # empty or `**` (`i >= leaves_from`): it is then a result directly, otherwise it is left out.
    leaves_from = n - 1 if pattern[-1] is DOUBLE_STAR else n
    # (id, position, kind) of each expansion -> its node (kept: ids stay unique). In a tree, one path
    # leads to a node: an expansion done again is a shared container's, reached by another path.
    expanded: dict[tuple[int, int, int], object] = {}
    repeats = 0  # Children reached again that way.

    def expand_node(
        node: object, found: Children, i: int, expand: int, prefix: Link | None, pid: int
    ) -> None:
        nonlocal repeats
        ident = id(node)
        if ident in ancestors:
            return  # A cycle: this node is already being expanded higher up.
        expansion = (ident, i, expand)
        if expansion in expanded:
            repeats += len(found)
            if repeats > REPEAT_LIMIT:
                suffix = checked[1] if checked is not None else ()
                raise _repeated((*pattern, *suffix), spell(prefix))
        else:
            expanded[expansion] = node
        if i == n:  # A last `*`: every child is a result.
            for key, child in found:
                if containers_only and (type(child) in _ATOMS or type(child) in _ARRAY_KINDS):
                    continue
                if done is None or _first_time(done, _prefix_id(ids, pid, key), n):
                    out.append(((prefix, key), child))
            return
        mark = len(stack)
        nested = False
        leaves = not containers_only and i >= leaves_from
        # An atom child is a result (`leaves`), skipped, or (strict rules: the step after this `*` must
        # exist in every child) a task at `i`, which raises.
        skip_atoms = not leaves and not (expand == 2 and checked is not None and not checked[2][i])
        at = n if leaves else i
        for key, child in reversed(found):
            kind = type(child)
            if kind in _ATOMS or kind in _ARRAY_KINDS:
                if skip_atoms:
                    continue
                task = (child, at, (prefix, key), 0 if done is None else _prefix_id(ids, pid, key))
            else:
                nested = True
                task = (child, i, (prefix, key), 0 if done is None else _prefix_id(ids, pid, key))
            stack.append(task)
        if nested:  # Only a container child can lead back here.
            ancestors.add(ident)
            stack.insert(mark, (node, 0, _LEAVE, 0))

    return expand_node


_LEAVE = object()  # a task's prefix that ends the expansion of its node


def _repeated(pattern: tuple[object, ...], prefix: tuple[object, ...]) -> GlobPathError:
    return GlobPathError(
        f"Cannot match {format_parts(pattern)!r}: shared containers repeat more than {REPEAT_LIMIT:,} children"
        f" (at {_where(prefix)}); a tree whose containers share sub-trees can have exponentially many paths."
    )


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
            f"Wildcards cannot be located at the end of a path to set: {text!r} ends with {str(last)!r} (it "
            f"would replace whole containers); name the key, e.g. {format_parts((*parts[:-1], 'key'))!r}."
        )
    # Kauldron's rules: an optional last part (`**.bias`) is written only where it exists, in containers;
    # any other is written wherever the rest matched (`*.bias` creates dict keys, fails on leaves).
    # `optional_steps(parts)[-1]`, without a pass over a concrete path: a `**` before the last part,
    # with only `*` in between.
    i = len(parts) - 2
    while i >= 0 and parts[i] is STAR:
        i -= 1
    lenient = i >= 0 and parts[i] is DOUBLE_STAR
    targets = match_nodes(obj, parts[:-1], (last,), containers_only=lenient, strict=True, spelled=False)
    if not lenient and len(targets) > 1:  # Every check first, so that a failing write writes nothing.
        _write(obj, targets, last, value, lenient, False)
    return _write(obj, targets, last, value, lenient, True)


def _write(obj: Any, targets: list[Match], last: object, value: Any, lenient: bool, write: bool) -> list[str]:
    """Writes ``last`` in each target (``write=False``: only the checks that can fail); the paths written.

    A target's path (a link) is spelled out only where it may be written: ``**.bias`` down a deep chain
    skips the many containers without a ``bias`` at no cost per level.
    """
    written: list[str] = []
    replaced: list[tuple[object, ...]] = []  # The paths written so far.
    trie: dict[Any, Any] = {}  # The first `in_trie` of them (part -> sub-trie, `_END` ends a path).
    in_trie = 0
    for link, parent in targets:
        if lenient and (_lacks(parent, last) or (type(parent) is not dict and children_of(parent) is None)):
            continue  # A leaf reached through a wildcard: globs write into containers only, as `match` reads.
        prefix = spell(link)
        if replaced and last in prefix:  # Only then can `prefix` be inside a path written (ending in `last`).
            for concrete in replaced[in_trie:]:
                node = trie
                for part in concrete:
                    node = node.setdefault(_trie_key(part), {})
                node[_END] = True
            in_trie = len(replaced)
            if _inside(prefix, trie):
                continue  # Inside a sub-tree that was just replaced.
        if _assign(obj, parent, prefix, last, value, lenient, write):
            concrete = (*prefix, last)
            if write:
                written.append(format_parts(concrete))
            replaced.append(concrete)
    return written


_END = object()


def _lacks(parent: object, part: object) -> bool:
    """Whether ``parent`` is a dict or list without ``part``, which a lenient write skips."""
    kind = type(parent)
    if kind is dict:  # `_has_key`, without a call: this runs once per target.
        try:
            return part not in parent  # type: ignore[operator]
        except TypeError:  # An unhashable part (a slice).
            return True
    if kind is list:
        return type(part) is not int or not -len(parent) <= part < len(parent)  # type: ignore[arg-type]
    return False


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
    root: object,
    parent: object,
    prefix: tuple[object, ...],
    part: object,
    value: Any,
    lenient: bool,
    write: bool = True,
) -> bool:
    """Writes ``parent[part]`` / ``parent.part``; ``False`` for a glob match with nothing to write.

    ``write=False`` makes every check but writes nothing (a refusal only the write reveals, such as a
    frozen object's, is then not seen). Error messages are formatted only when raised: this runs once
    per written path.
    """
    kind = type(parent)
    if kind is dict:
        if lenient:  # `_has_key`, without a call.
            try:
                if part not in parent:  # type: ignore[operator]
                    return False
            except TypeError:  # An unhashable part (a slice).
                return False
        try:
            if write:
                parent[part] = value  # type: ignore[index]
            else:
                hash(part)
        except TypeError:
            raise _cannot(prefix, part, f"dict keys must be hashable, got {part!r}") from None
        return True
    if kind in _ATOMS or _is_array(kind):
        if lenient:
            return False
        raise PathMutationError(
            f"Cannot mutate leaf {kind.__name__} at {_where(prefix)}: setting {_where((*prefix, part))} "
            "needs a container there (a dict, a list or an object with attributes)."
        )
    if isinstance(parent, tuple):
        if lenient and step(parent, part) is MISSING:
            return False
        raise _cannot(prefix, part, f"{_where(prefix)} is a {kind.__name__}, which is immutable; rebuild it")
    if hasattr(kind, "keys") and hasattr(kind, "__getitem__"):
        return _assign_key(parent, prefix, part, value, lenient, write)
    if isinstance(parent, list) or (hasattr(kind, "__setitem__") and hasattr(kind, "__len__")):
        return _assign_index(parent, prefix, part, value, lenient, write)
    return _assign_attribute(root, parent, prefix, part, value, lenient, write)


def _assign_key(
    parent: object, prefix: tuple[object, ...], part: object, value: object, lenient: bool, write: bool
) -> bool:
    """``_assign`` into a mapping other than a dict (a FrozenDict, a mappingproxy, a user's mapping)."""
    if lenient and not _has_key(parent, part):
        return False
    if not write:
        return True
    try:
        parent[part] = value  # type: ignore[index]
    except (TypeError, ValueError, AttributeError, NotImplementedError) as e:  # FrozenDict, mappingproxy
        kind = type(parent).__name__
        reason = f"the {kind} at {_where(prefix)} refused the write ({type(e).__name__}: {e})"
        raise _cannot(prefix, part, reason + "; build a new one instead") from None
    return True


def _assign_index(
    parent: object, prefix: tuple[object, ...], part: object, value: object, lenient: bool, write: bool
) -> bool:
    """``_assign`` into a list or another sequence that takes item assignment: an integer index in range."""
    kind = type(parent)
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
    if write:
        parent[part] = value  # type: ignore[index]
    return True


def _assign_attribute(
    root: object,
    parent: object,
    prefix: tuple[object, ...],
    part: object,
    value: object,
    lenient: bool,
    write: bool,
) -> bool:
    """``_assign`` into an object's attribute (a dataclass, a flax struct, a plain object)."""
    kind = type(parent)
    if type(part) is not str:
        if lenient:
            return False
        raise _cannot(prefix, part, f"{kind.__name__} has attributes, not item {part!r}")
    if is_dunder(part):
        raise _cannot(prefix, part, f"{part!r} is a Python internal, not data (key paths never follow dunders)")
    if not hasattr(parent, part):
        if step(parent, part) is not MISSING:  # A pytree child with no attribute behind it.
            reason = f"{kind.__name__} at {_where(prefix)} exposes {part!r} only through JAX's flattening"
            raise _cannot(prefix, part, reason + "; rebuild the node (jax.tree_util.tree_unflatten)")
        if lenient:
            return False
        raise not_found(root, (*prefix, part), parent, len(prefix))
    if not write:
        return True
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
