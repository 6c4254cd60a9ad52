"""`select` / `exclude`: boolean masks over a param tree, picked by key patterns, for `optax.masked` & co.

optimizer = kd.optim.partial_updates(optax.adam(1e-3), mask=kd.optim.select("lora"))
optax.add_decayed_weights(1e-4, mask=kd.optim.exclude(["bias", "**.scale"]))

A leaf's path is its keys joined by dots (`encoder.layers.0.kernel`). A pattern is one of:

* a plain name or dotted names (`lora`, `lora.more`): matches those whole keys, in that order, anywhere
  in the path (`lora` matches `a.lora.x`, not `a.notlora`);
* a regular expression, when it holds one of `( ) [ ] ? + * ^ $ | \\` (`lora[0-9]+`, `a\\.b`): it must
  also match whole keys, anywhere in the path (escape a literal dot as `\\.`);
* a kontext glob, when one of its dot-separated parts is `**` (any number of keys, none included) or its
  first is `*` (one key), the others names or `*`: `**.kernel`, `*.bias`, matched from the root. Otherwise a
  pattern with `*` is Kauldron's regex (`.*` is every key, `encoder.*` any key starting `encoder`).

In all three, a matched node selects every leaf below it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import kontext

PyTree = Any
MaskFn = Callable[[PyTree], PyTree]

_REGEX_CHARS = frozenset("()[]?+*^$|\\")
_WILDCARDS = ("*", "**")


def select(pattern: str | Sequence[str]) -> MaskFn:
    """A function from a tree to the same tree of bools: True for the leaves some pattern matches.

    Usage: `kd.optim.select("lora")({"lora": {"a": w}, "bias": b}) == {"lora": {"a": True}, "bias": False}`.

    Args:
      pattern: one pattern, or several (a leaf is selected when any matches); see the module docstring.

    Returns:
      The mask function (what `optax.masked(..., mask=)` and `partial_updates(..., mask=)` take).

    Raises:
      TypeError: a pattern is not a string.
      ValueError: a pattern is empty, or not a valid regular expression.
    """
    matchers = [_matcher(p) for p in _patterns(pattern)]

    def make_mask(tree: PyTree) -> PyTree:
        leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
        flags = []
        for path, _ in leaves:
            text = ".".join(_key_text(entry) for entry in path)
            flags.append(any(match(text) for match in matchers))
        return jax.tree_util.tree_unflatten(treedef, flags)

    return make_mask


def exclude(pattern: str | Sequence[str]) -> MaskFn:
    """The opposite of `select(pattern)`: True for every leaf except those a pattern matches.

    Usage: `optax.add_decayed_weights(1e-4, mask=kd.optim.exclude("bias"))` (no decay on the biases).
    """
    selected = select(pattern)

    def make_mask(tree: PyTree) -> PyTree:
        return jax.tree_util.tree_map(lambda flag: not flag, selected(tree))

    return make_mask


def _patterns(pattern: str | Sequence[str]) -> list[str]:
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    for each in patterns:
        if not isinstance(each, str):
            raise TypeError(
                f"select/exclude: pattern must be a string or a sequence of strings, got {each!r} "
                f"of type {type(each).__name__} (in {pattern!r})."
            )
        if not each:
            raise ValueError(
                f"select/exclude: empty pattern in {pattern!r}; name a key, e.g. 'bias' or '**.kernel'."
            )
    return patterns


def _matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a dotted leaf path is matched by `pattern` (a name, a regex or a glob: the module docstring)."""
    parts = pattern.split(".")
    # A glob with a `**` part (`**.kernel`) or a leading `*` (`*.bias`, no regex): `.*` and `encoder.*` stay
    # Kauldron's regexes.
    if ("**" in parts or parts[0] == "*") and all(
        p in _WILDCARDS or (p and not _REGEX_CHARS & set(p)) for p in parts
    ):
        # The names stay names (`0` is a key, not an index); the `**` added matches the leaves below.
        glob = kontext.GlobPath(
            *(kontext.Wildcard(p) if p in _WILDCARDS else p for p in parts), kontext.Wildcard.DOUBLE_STAR
        )
        return lambda text: glob.matches(_keys(text))
    body = pattern if _REGEX_CHARS & set(pattern) else re.escape(pattern)
    try:
        regex = re.compile(rf"(?:^|\.)(?:{body})(?:$|\.)")
    except re.error as e:
        hint = ""
        if any(p in _WILDCARDS for p in parts):
            hint = "; a glob's parts are plain names, '*' or '**' (a regex part cannot follow a wildcard)"
        raise ValueError(
            f"select/exclude: pattern {pattern!r} is not a valid regular expression ({e}){hint}."
        ) from None
    return lambda text: regex.search(text) is not None


def _keys(text: str) -> tuple[str, ...]:
    """The keys of a dotted leaf path, up to the first empty one (which no glob part matches)."""
    keys = text.split(".")
    if "" in keys:
        del keys[keys.index("") :]
    return tuple(keys)


def _key_text(entry: Any) -> str:
    """A JAX key-path entry as the key it names: `DictKey('w')` -> `w`, `SequenceKey(0)` -> `0`."""
    for attribute in ("key", "idx", "name"):  # DictKey / FlattenedIndexKey, SequenceKey, GetAttrKey
        if hasattr(entry, attribute):
            return str(getattr(entry, attribute))
    raise TypeError(f"select/exclude: cannot name the pytree key {entry!r} of type {type(entry).__name__}.")
