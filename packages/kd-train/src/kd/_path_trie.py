"""A tree's leaves by kontext path, and a trie of those paths that kontext globs match against.

    trie = PathTrie.of(state)
    trie.select(kontext.GlobPath.from_str("params.**.kernel"))   # [(leaf index, path below the prefix)]
    trie.paths[i], trie.leaves[i]                                 # in `jax.tree.flatten` order

Shared by the checkpoint partial loader (which leaves to load) and the sharding rules (which leaves a
rule lays out).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax
import kontext

Parts = tuple[Any, ...]  # the parts of a kontext path: str names, int indices


def is_empty_node(x: Any) -> bool:
    # Kept as nodes so that a path to an empty sub-tree (`collections` = {}) still exists.
    return x is None or (isinstance(x, (Mapping, list, tuple)) and len(x) == 0)


@dataclasses.dataclass(frozen=True)
class PathTrie:
    """A tree's leaves by path, and a trie of the paths (nested dicts, a leaf is its index) for globs.

    Leaf indices follow `jax.tree.flatten`'s order. Empty sub-trees (`{}`, `None`, `EmptyState()`) are
    empty dicts in the trie: they exist as paths but hold no leaf.
    """

    paths: list[Parts]
    leaves: list[Any]
    trie: dict[Any, Any]
    by_key: dict[tuple[str, ...], int]

    @classmethod
    def of(cls, tree: Any) -> PathTrie:
        tree_ = cls([], [], {}, {})
        for jax_path, leaf in jax.tree_util.tree_flatten_with_path(tree, is_leaf=is_empty_node)[0]:
            parts = kontext.Path.from_jax_path(jax_path).parts
            node = tree_.trie
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            if is_empty_node(leaf):
                if parts:
                    node.setdefault(parts[-1], {})
                continue
            index = len(tree_.leaves)
            if parts:
                node[parts[-1]] = index
            tree_.by_key[key(parts)] = index
            tree_.paths.append(parts)
            tree_.leaves.append(leaf)
        return tree_

    def node(self, parts: Parts) -> Any:
        """The trie node at `parts` (a dict, or a leaf's index), None if there is none."""
        node: Any = self.trie
        for part in parts:
            if not isinstance(node, dict):
                return None
            child = node.get(part)
            if child is None:  # orbax writes dict keys as strings: "0" and 0 are the same key on disk
                child = next((v for k, v in node.items() if str(k) == str(part)), None)
            if child is None:
                return None
            node = child
        return node

    def leaf_at(self, parts: Parts) -> int | None:
        return self.by_key.get(key(parts))

    def select(self, path: kontext.GlobPath) -> list[tuple[int, Parts]] | None:
        """[(leaf index, its path below `path`'s fixed prefix)] of the leaves `path` names, in tree order.

        None when `path` names nothing (an existing empty sub-tree names something: no leaves).
        """
        prefix = path.first_non_glob_parent.parts
        if len(prefix) == len(path.parts):
            node = self.node(prefix)
            if node is None:
                return None
            return [(i, self.paths[i][len(prefix) :]) for i in leaves_under(node)]
        try:
            matches = path.match(self.trie)
        except kontext.PathNotFoundError:
            return None
        if not matches:
            return None
        found = sorted({i for m in matches for i in leaves_under(self.node(m.parts))})
        return [(i, self.paths[i][len(prefix) :]) for i in found]

    def node_paths(self) -> list[str]:
        """Every path of the trie (sub-trees and leaves), for suggestions."""
        out, stack = [], [((), self.trie)]
        while stack:
            parts, node = stack.pop()
            if parts:
                out.append(text(parts))
            if isinstance(node, dict):
                stack.extend(((*parts, k), v) for k, v in node.items())
        return out


def leaves_under(node: Any) -> list[int]:
    if not isinstance(node, dict):
        return [node]
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        for child in current.values():
            if isinstance(child, dict):
                stack.append(child)
            else:
                out.append(child)
    return out


def key(parts: Parts) -> tuple[str, ...]:
    return tuple(str(p) for p in parts)


def text(parts: Parts) -> str:
    return str(kontext.Path(*parts)) if parts else "<the whole state>"
