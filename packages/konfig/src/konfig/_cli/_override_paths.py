"""Override paths of the CLI grammar: `a.b[0].c`, globs `*` / `**`, creation with `+`.

    keys = parse_override_path("model.layers[0].features")  # ('model', 'layers', 0, 'features')
    set_override(cfg, "**.batch_size", 32)                  # every existing `batch_size`

A path is a sequence of keys: attribute names, `[literal]` items (ints index
lists and positional arguments; `.0` means `[0]`), `*` (any one key) and `**`
(any depth, including none). A leading `+` lets the final key be created on a
plain (non-call) node, or appended to a list or tuple (`+layers[3]` on three
items); without it an unknown key is an error that names the closest existing
paths. Call nodes accept new keys their signature allows, and `[i]` reaches
the `i`-th parameter whether it was passed by position or by keyword.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

from .._config_dict import stored_item
from .._errors import OverrideError, shown
from .._keys import is_positional_key
from .._paths import ANY, ANY_DEPTH, Glob, closing_bracket, format_keys
from .._signature import params_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

__all__ = ["ANY", "ANY_DEPTH", "expand_override_path", "format_keys", "parse_override_path", "set_override"]


_SPECIAL_KEYS = frozenset({"__qualname__", "__const__"})


def parse_override_path(text: str) -> tuple[Any, ...]:
    """Parses `a.b[0]['k'].*` into `('a', 'b', 0, 'k', ANY)`.

    Usage: `parse_override_path("**.batch_size") == (ANY_DEPTH, "batch_size")`.
    """
    import ast

    keys: list[Any] = []
    i, n = 0, len(text)
    expect_name = True
    while i < n:
        char = text[i]
        if char == "[":
            end = closing_bracket(text, i)
            if end < 0:
                raise OverrideError(f"In override path {text!r}: `[` at position {i} is never closed.")
            literal = text[i + 1 : end].strip()
            if len(literal) > _MAX_LITERAL:
                raise OverrideError(
                    f"In override path {shown(text)!r}: the key in `[...]` at position {i} is "
                    f"{len(literal):,} characters long; a key is a literal of at most {_MAX_LITERAL} characters."
                )
            try:
                key = ast.literal_eval(literal)
                hash(key)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
                raise OverrideError(
                    f"In override path {shown(text)!r}: `[{shown(literal)}]` is not a hashable Python literal; "
                    "expected an index like `[0]` or a quoted key like `['my key']`."
                ) from e
            keys.append(key)
            i = end + 1
            expect_name = False
            continue
        if char == ".":
            if expect_name:
                raise OverrideError(f"In override path {text!r}: empty key at position {i}.")
            i += 1
            expect_name = True
            continue
        if not expect_name:
            raise OverrideError(
                f"In override path {text!r}: expected `.` or `[` at position {i}, found {char!r}."
            )
        end = i
        while end < n and text[end] not in ".[":
            end += 1
        keys.append(_name_key(text, text[i:end]))
        i = end
        expect_name = False
    if expect_name:
        raise OverrideError(f"Override path {shown(text)!r} is empty or ends with `.`.")
    if keys[-1] is ANY_DEPTH:
        raise OverrideError(
            f"Override path {shown(text)!r} ends with `**`; name the key to set after it, as in `**.batch_size`."
        )
    return tuple(keys)


# Characters of a `[literal]` key, digits of a `.N` index: paths are short.
_MAX_LITERAL = 1000
_MAX_INDEX_DIGITS = 18


def _name_key(text: str, name: str) -> Any:
    if name == "*":
        return ANY
    if name == "**":
        return ANY_DEPTH
    if name.isdigit():  # Unicode digits too: `²`, `٣`
        if name.isascii() and len(name) > _MAX_INDEX_DIGITS:
            raise OverrideError(
                f"In override path {shown(text)!r}: the index `.{shown(name)}` has {len(name):,} digits, "
                "more than any list or call could have items."
            )
        if not is_positional_key(name):
            canonical = (name.lstrip("0") or "0") if name.isascii() else None
            hint = f": write `.{canonical}`" if canonical is not None and len(canonical) <= 20 else ""
            raise OverrideError(
                f"In override path {shown(text)!r}: `.{shown(name)}` is neither an index (ASCII digits "
                f"without leading zeros{hint}) nor a key (quote a key as `[{shown(name)!r}]`)."
            )
        return int(name)
    if not name.isidentifier():
        raise OverrideError(
            f"In override path {shown(text)!r}: {shown(name)!r} is not a valid key; quote it as `[{shown(name)!r}]`."
        )
    return name


def _children(node: Any) -> Iterator[tuple[Any, Any]]:
    """Yields `(key, child)` of a config container; nothing for leaves."""
    if isinstance(node, Mapping):
        is_call = "__qualname__" in node
        for key, value in node.items():
            if key in _SPECIAL_KEYS:
                continue
            # Positional arguments are stored as "0", "1", ...; they are addressed as ints.
            yield (int(key) if is_call and is_positional_key(key) else key), value
    elif isinstance(node, (list, tuple)):
        yield from enumerate(node)


def _is_container(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple))


def _num_args(node: Mapping[str, Any]) -> int:
    count = 0
    while str(count) in node:
        count += 1
    return count


def _normalize(node: Any, key: Any) -> Any:
    """The stored key for `key` in `node`, or `None` if absent."""
    if isinstance(node, Mapping):
        if isinstance(key, int) and not isinstance(key, bool) and "__qualname__" in node:
            index = key if key >= 0 else _num_args(node) + key
            stored = str(index)
            return stored if stored in node else _keyword_by_index(node, index)
        if key in node:
            return key
        if isinstance(key, str) and "__qualname__" in node:
            return _positional_by_name(node, key)
        return None
    if isinstance(node, (list, tuple)):
        if isinstance(key, int) and not isinstance(key, bool) and -len(node) <= key < len(node):
            return key
    return None


def _positional_by_name(node: Mapping[str, Any], name: str) -> str | None:
    """`"0"` when `name` is the target's first parameter and was passed positionally."""
    params = params_for(node["__qualname__"])
    if params is None or name not in params.positional:
        return None
    stored = str(params.positional.index(name))
    return stored if stored in node else None


def _keyword_by_index(node: Mapping[str, Any], index: int) -> str | None:
    """`"features"` for `[0]` when the target's first parameter was passed by keyword."""
    params = params_for(node["__qualname__"])
    if params is None or not 0 <= index < len(params.positional):
        return None
    name = params.positional[index]
    return name if name in node else None


def iter_override_paths(node: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Yields `(keys, value)` for every node below `node`, depth first, each container once."""
    seen: set[int] = set()
    stack: list[tuple[tuple[Any, ...], Any]] = [((), node)]
    while stack:
        keys, value = stack.pop()
        if keys:
            yield keys, value
        if _is_container(value):
            if id(value) in seen:
                continue
            seen.add(id(value))
            stack.extend(reversed([((*keys, k), v) for k, v in _children(value)]))


def expand_override_path(root: Any, pattern: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Returns the existing concrete paths matching a pattern with `*` / `**` globs."""
    results: list[tuple[Any, ...]] = []
    visited: set[tuple[int, int]] = set()
    # Depth first, without recursion (configs may nest deeply): (node, pattern index, keys).
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(root, 0, ())]
    while stack:
        node, index, keys = stack.pop()
        state = (id(node), index)
        if state in visited:
            continue
        visited.add(state)
        if index == len(pattern):
            results.append(keys)
            continue
        key = pattern[index]
        found: list[tuple[Any, int, tuple[Any, ...]]] = []
        if key is ANY_DEPTH:
            found.append((node, index + 1, keys))
            for child_key, child in _children(node):
                if _is_container(child):
                    found.append((child, index, (*keys, child_key)))
        elif key is ANY:
            for child_key, child in _children(node):
                found.append((child, index + 1, (*keys, child_key)))
        else:
            stored = _normalize(node, key)
            if stored is not None:
                found.append((stored_item(node, stored), index + 1, (*keys, key)))
        stack.extend(reversed(found))
    return results


def set_override(
    root: Any,
    path: str | tuple[Any, ...],
    value: Any,
    *,
    adapt: Callable[[Any, Any], Any] | None = None,
) -> list[tuple[Any, ...]]:
    """Sets `value` at `path` in `root` (in place) and returns the concrete paths set.

    Every key but the last must exist; the last must exist too unless the node is
    a call (its signature decides) or the path starts with `+`. Globs set every
    existing match and fail when nothing matches. Tuples are rebuilt in their
    parent. `adapt(old, value)`, if given, gives the value to store in place of
    each existing `old` one.

    Usage: `set_override(cfg, "optimizer.learning_rate", 1e-3)`.
    """
    create = False
    if isinstance(path, str):
        text = path
        if text.startswith("+"):
            create, text = True, text[1:]
        keys = parse_override_path(text)
    else:
        keys = tuple(path)
    if not keys:
        raise OverrideError("Cannot override the root of the config; give a path like `a.b`.")
    if any(isinstance(k, Glob) for k in keys):
        matches = expand_override_path(root, keys)
        if not matches:
            raise OverrideError(f"No existing path matches `{format_keys(keys)}`." + _suggestion(root, keys))
        # Deepest first: a match inside another match is set, then replaced with it.
        for match in sorted(matches, key=len, reverse=True):
            _set_concrete(root, match, value, create=False, adapt=adapt)
        return matches
    _set_concrete(root, keys, value, create=create, adapt=adapt)
    return [keys]


def _set_concrete(
    root: Any, keys: tuple[Any, ...], value: Any, *, create: bool, adapt: Callable[[Any, Any], Any] | None
) -> None:
    parents = [root]
    stored_keys = []
    for depth, key in enumerate(keys[:-1]):
        node = parents[-1]
        stored = _normalize(node, key)
        if stored is None:
            raise _unknown_path(root, keys, depth)
        stored_keys.append(stored)
        parents.append(stored_item(node, stored))
    node = parents[-1]
    last = keys[-1]
    stored = _normalize(node, last)
    if last in _SPECIAL_KEYS and type(last) is str:
        _check_target_override(node, keys, stored, value)
    if stored is None:
        is_call = isinstance(node, Mapping) and "__qualname__" in node
        appends = create and isinstance(node, (list, tuple)) and last == len(node) and type(last) is int
        if not appends and (not (create or is_call) or not isinstance(node, MutableMapping)):
            raise _unknown_path(root, keys, len(keys) - 1)
        stored = last
    elif adapt is not None:
        value = adapt(stored_item(node, stored), value)
    new = _assign(node, stored, value, keys)
    # Rebuild immutable tuples upwards until a mutable container takes the new value.
    for depth in range(len(keys) - 2, -1, -1):
        if new is parents[depth + 1]:
            return
        new = _assign(parents[depth], stored_keys[depth], new, keys[: depth + 1])


def _check_target_override(node: Any, keys: tuple[Any, ...], stored: Any, value: Any) -> None:
    """`--cfg.model.__qualname__=mylib:Other` swaps a node's target; it cannot add one."""
    if stored is None:
        raise OverrideError(
            f"Cannot set `{format_keys(keys)}`: `{keys[-1]}` marks a call or constant node, and this "
            "node has none to replace (set the whole node instead, e.g. with a `py::` value)."
        )
    if type(value) is not str:
        raise OverrideError(
            f"Cannot set `{format_keys(keys)}` to {value!r}: a target is a `module:Name` string."
        )


def _assign(node: Any, key: Any, value: Any, keys: tuple[Any, ...]) -> Any:
    if isinstance(node, tuple):
        items = list(node)
        if key == len(items):
            items.append(value)
        else:
            items[key] = value
        return tuple(items) if type(node) is tuple else type(node)(*items)
    if isinstance(node, list) and key == len(node):
        node.append(value)
        return node
    if isinstance(node, (list, MutableMapping)):
        try:
            node[key] = value
        except IndexError as e:  # an argument index past a call node's arguments
            raise OverrideError(f"Cannot set `{format_keys(keys)}`: {e}.") from None
        return node
    raise OverrideError(
        f"Cannot set `{format_keys(keys)}`: its parent is a {type(node).__name__}, not a config node, list or tuple."
    )


def _unknown_path(root: Any, keys: tuple[Any, ...], depth: int) -> OverrideError:
    node = root
    for key in keys[:depth]:
        node = stored_item(node, _normalize(node, key))
    missing = keys[depth]
    where = format_keys(keys[:depth])
    if isinstance(node, (list, tuple)):
        found = f"it has {len(node)} items"
        if missing == len(node) and depth == len(keys) - 1:
            path = format_keys(keys)
            found += f"; write `+{path[4:] if path.startswith('cfg.') else path[3:]}` to append"
    elif isinstance(node, Mapping):
        names = [k for k, _ in _children(node)]
        listed = ", ".join(f"`{k}`" for k in names[:30]) + (
            f" and {len(names) - 30} more" if len(names) > 30 else ""
        )
        found = "its keys are " + listed if names else "it is empty"
    else:
        found = f"it is a leaf value ({type(node).__name__})"
    message = f"Unknown config path `{shown(format_keys(keys))}`: `{where}` has no key {shown(repr(missing))}; {found}."
    return OverrideError(message + _suggestion(root, keys))


def _suggestion(root: Any, keys: tuple[Any, ...]) -> str:
    import difflib

    if any(isinstance(k, Glob) for k in keys):
        # For globs, compare the concrete tail against the existing final keys.
        tail = [k for k in keys if not isinstance(k, Glob)]
        names = {str(k[-1]) for k, _ in iter_override_paths(root)}
        close = difflib.get_close_matches(str(tail[-1]) if tail else "", names, n=3)
        return f" Did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else ""
    candidates = [format_keys(k) for k, _ in iter_override_paths(root)]
    close = difflib.get_close_matches(format_keys(keys), candidates, n=3, cutoff=0.6)
    return " Did you mean " + " or ".join(f"`{c}`" for c in close) + "?" if close else ""
