"""`new_to_old`: which leaf of a checkpoint fills which leaf of a new state, and `load_partial`, which does it.

    state = load_partial(state, ckpt.restore_raw(step=100), new_to_old={"params.decoder": "params.encoder"})

Leaves are matched by path: the state's paths (`opt_state[0].mu.dense.kernel`) are compared with the
checkpoint's as orbax stores it (named tuples and dataclasses as dicts of fields, tuples as lists), so
any part of the state, the optimizer state included, can be loaded without a template of the old run.
Every problem is found before anything is loaded and reported at once (`PartialLoadError`).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import konfig
import kontext
import numpy as np

from kd import _path_trie
from kd.ckpts import _errors, _structure

_T = TypeVar("_T")
Parts = _path_trie.Parts
Problem = tuple[str, str]  # (path, what is wrong)

DEFAULT_NEW_TO_OLD = {"params": "params", "collections": "collections"}


class PartialLoadError(_errors.CheckpointStructureError):
    """A checkpoint cannot fill the parts of the state a `PartialLoader` was asked to load.

    try:
        loader.transform(state)
    except kd.ckpts.PartialLoadError as e:
        e.problems  # (("params.out.kernel", "shape (16, 1) float32 in the model, ..."), ...)

    `problems` lists every problem found, as (path, what is wrong) pairs; `path` is the first one's.
    """

    def __init__(self, message: str, *, problems: tuple[Problem, ...]) -> None:
        super().__init__(message, path=problems[0][0], differences=tuple(f"'{p}': {w}" for p, w in problems))
        self.problems = problems


def load_partial(
    state: _T,
    restored: Any,
    *,
    new_to_old: Mapping[str, str] = DEFAULT_NEW_TO_OLD,
    ignore_model_keys: Sequence[str] = (),
    ignore_restored_keys: Sequence[str] = (),
    source: str = "the checkpoint",
) -> _T:
    """`state = load_partial(state, ckpt.restore_raw(step=100), new_to_old={"params": "params"})`.

    What `PartialLoader.transform` does once the checkpoint is read: `restored` is the saved tree as
    orbax gives it back without a template. `source` names it in errors. The input state is not changed.
    """
    mapping = checked_new_to_old(new_to_old)
    model_globs = _glob_paths("ignore_model_keys", ignore_model_keys)
    restored_globs = _glob_paths("ignore_restored_keys", ignore_restored_keys)
    model, ckpt = _path_trie.PathTrie.of(state), _path_trie.PathTrie.of(restored)
    reads = _reads(mapping, model, ckpt, model_globs)
    assigned, leaf_problems = _assignments(reads, model, ckpt, model_globs)
    problems = (*reads.problems, *leaf_problems, *_unused(reads, ckpt, restored_globs))
    if problems:
        raise PartialLoadError(_message(problems, source), problems=problems)
    return _filled(state, ckpt, assigned)


@dataclasses.dataclass
class _Reads:
    """What the `new_to_old` entries ask of the checkpoint, before any leaf is compared."""

    problems: list[Problem] = dataclasses.field(default_factory=list)
    """the entries that name nothing (in the model, or, for a leaf that must be read, in the checkpoint)."""
    requests: dict[int, tuple[Parts, Parts]] = dataclasses.field(default_factory=dict)
    """model leaf -> (checkpoint path, path below the key); a later entry overrides an earlier one."""
    in_scope: dict[int, Parts] = dataclasses.field(default_factory=dict)
    """checkpoint leaf below a mapped path -> its path below that path."""
    consumed: set[int] = dataclasses.field(default_factory=set)
    """checkpoint leaves some entry reads (an overridden one included)."""


def _reads(
    mapping: Mapping[str, str],
    model: _path_trie.PathTrie,
    ckpt: _path_trie.PathTrie,
    model_globs: Sequence[kontext.GlobPath],
) -> _Reads:
    """The checkpoint path each selected model leaf is read from, entry by entry."""
    reads = _Reads()
    for new_text, old_text in mapping.items():
        new, old = kontext.GlobPath.from_str(new_text), kontext.GlobPath.from_str(old_text)
        old_prefix = old.first_non_glob_parent.parts
        selected = model.select(new)
        if selected is None:
            reads.problems.append((new_text, _not_in(new, model, "model", "a new_to_old key")))
            continue
        if ckpt.node(old_prefix) is None:
            if any(not _matches_any(model.paths[i], rel, model_globs) for i, rel in selected):
                role = f"the new_to_old value for {new_text!r}"
                reads.problems.append((old_text, _not_in(old, ckpt, "checkpoint", role)))
            continue
        for i, rel in selected:
            old_parts = (*old_prefix, *rel)
            reads.requests[i] = (old_parts, rel)
            j = ckpt.leaf_at(old_parts)
            if j is not None:
                reads.consumed.add(j)
        for j, rel in ckpt.select(old) or ():
            reads.in_scope.setdefault(j, rel)
    return reads


def _assignments(
    reads: _Reads, model: _path_trie.PathTrie, ckpt: _path_trie.PathTrie, model_globs: Sequence[kontext.GlobPath]
) -> tuple[dict[int, int], list[Problem]]:
    """model leaf -> checkpoint leaf for each request that fits; a problem for each other one, except a
    leaf the checkpoint lacks that `ignore_model_keys` lets keep its init value."""
    assigned: dict[int, int] = {}
    problems: list[Problem] = []
    unread = functools.cache(
        lambda: [_path_trie.text(p) for k, p in enumerate(ckpt.paths) if k not in reads.consumed]
    )
    for i in sorted(reads.requests):
        old_parts, rel = reads.requests[i]
        leaf, j = model.leaves[i], ckpt.leaf_at(old_parts)
        if j is not None and _structure._shape(leaf) == _structure._shape(ckpt.leaves[j]):
            assigned[i] = j
        elif j is not None or not _matches_any(model.paths[i], rel, model_globs):
            what = _mismatch(model.paths[i], leaf, ckpt, j, old_parts, unread)
            problems.append((_path_trie.text(model.paths[i]), what))
    return assigned, problems


def _mismatch(
    path: Parts,
    leaf: Any,
    ckpt: _path_trie.PathTrie,
    j: int | None,
    old_parts: Parts,
    unread: Callable[[], list[str]],
) -> str:
    """Why the model leaf at `path` cannot be read from `old_parts` (checkpoint leaf `j`, None when absent);
    `unread()`: the checkpoint paths nothing reads, where a missing leaf's suggestion is looked for (a
    leaf the checkpoint names differently is one nothing reads)."""
    looked_for = "" if path == old_parts else f" (looked for '{_path_trie.text(old_parts)}')"
    if j is not None:
        stored = _structure._describe(ckpt.leaves[j])
        return f"shape {_structure._describe(leaf)} in the model but {stored} in the checkpoint{looked_for}"
    if isinstance(ckpt.node(old_parts), dict):
        return f"an array in the model but a sub-tree in the checkpoint{looked_for}"
    suggestion = _did_you_mean(_path_trie.text(old_parts), unread())
    return f"in the model but not in the checkpoint{looked_for}{suggestion}"


def _unused(reads: _Reads, ckpt: _path_trie.PathTrie, restored_globs: Sequence[kontext.GlobPath]) -> list[Problem]:
    """The checkpoint leaves below a mapped path that nothing reads and `ignore_restored_keys` does not name."""
    return [
        (_path_trie.text(ckpt.paths[j]), "in the checkpoint below a mapped path, but loaded into nothing")
        for j in sorted(reads.in_scope)
        if j not in reads.consumed and not _matches_any(ckpt.paths[j], reads.in_scope[j], restored_globs)
    ]


def _filled(state: _T, ckpt: _path_trie.PathTrie, assigned: Mapping[int, int]) -> _T:
    """A new `state` whose leaf `i` is checkpoint leaf `assigned[i]`, in the dtype and placement of the old one."""
    leaves, treedef = jax.tree.flatten(state)
    new_leaves = list(leaves)
    with jax.transfer_guard("allow"):  # placing the loaded arrays on the devices is the point
        for i, j in assigned.items():
            new_leaves[i] = _like(leaves[i], ckpt.leaves[j])
    return jax.tree.unflatten(treedef, new_leaves)


# ---------------------------------------------------------------------------------------------- trees


def _matches_any(parts: Parts, rel: Parts, globs: Sequence[kontext.GlobPath]) -> bool:
    """Whether a glob matches the leaf's full path or its path below the mapped prefix."""
    for candidate in {parts, rel}:
        tree: Any = 0
        for part in reversed(candidate):
            tree = {part: tree}
        for glob in globs:
            try:
                if glob.match(tree):
                    return True
            except kontext.PathNotFoundError:
                pass
    return False


# ---------------------------------------------------------------------------------------------- values


def _like(template: Any, value: Any) -> Any:
    """`value` with `template`'s dtype and placement (a device array goes to the template's sharding)."""
    if isinstance(template, jax.Array):
        return jax.device_put(jnp.asarray(value, dtype=template.dtype), template.sharding)
    if isinstance(template, jax.ShapeDtypeStruct):
        array = jnp.asarray(value, dtype=template.dtype)
        return array if template.sharding is None else jax.device_put(array, template.sharding)
    if isinstance(template, np.ndarray):
        return np.asarray(value, dtype=template.dtype)
    if isinstance(template, np.generic):
        return template.dtype.type(np.asarray(value))
    if isinstance(template, (bool, int, float, complex)):
        return type(template)(np.asarray(value).item())
    return value


# ---------------------------------------------------------------------------------------------- config


def checked_new_to_old(new_to_old: Any) -> konfig.ImmutableDict:
    """`new_to_old` checked (path strings, globs that end alike) and frozen: a loader's field stays hashable."""
    if not isinstance(new_to_old, Mapping) or not new_to_old:
        raise ValueError(
            "PartialLoader.new_to_old: expected a non-empty mapping of new-state path -> checkpoint path, "
            f"e.g. {{'params.decoder': 'params.encoder'}}; got {new_to_old!r}."
        )
    checked = {}
    for new, old in new_to_old.items():
        new_text, old_text = _checked_path("new_to_old key", new), _checked_path(f"new_to_old[{new!r}]", old)
        new_glob, old_glob = kontext.GlobPath.from_str(new_text), kontext.GlobPath.from_str(old_text)
        new_rest = new_glob[len(new_glob.first_non_glob_parent) :]
        old_rest = old_glob[len(old_glob.first_non_glob_parent) :]
        if str(new_rest) != str(old_rest):
            raise ValueError(
                f"PartialLoader.new_to_old[{new_text!r}] = {old_text!r}: with wildcards, both paths must "
                f"end alike after their fixed prefix (here {str(new_rest) or 'nothing'!r} and "
                f"{str(old_rest) or 'nothing'!r}), e.g. {{'params.decoder.**.kernel': 'params.encoder.**.kernel'}}."
            )
        checked[new_text] = old_text
    return konfig.ImmutableDict(checked)


def _checked_path(where: str, path: Any) -> str:
    if isinstance(path, kontext.AbstractPath):
        path = str(path)
    if not isinstance(path, str):
        raise TypeError(
            f"PartialLoader.{where}: expected a path string, got {type(path).__name__}: {path!r}."
        )
    try:
        kontext.GlobPath.from_str(path)
    except ValueError as e:  # kontext.PathSyntaxError
        raise ValueError(f"PartialLoader.{where}: {e}") from None
    return path


def checked_globs(name: str, globs: Any) -> tuple[str, ...]:
    """`ignore_model_keys` / `ignore_restored_keys` (`name`) as a tuple of checked glob strings."""
    if isinstance(globs, (str, kontext.AbstractPath)):
        globs = (globs,)
    if not isinstance(globs, (Sequence, set, frozenset)):
        raise TypeError(f"PartialLoader.{name}: expected a tuple of glob strings, got {globs!r}.")
    return tuple(_checked_path(f"{name}[{i}]", g) for i, g in enumerate(globs))


def _glob_paths(name: str, globs: Any) -> list[kontext.GlobPath]:
    return [kontext.GlobPath.from_str(g) for g in checked_globs(name, globs)]


# ---------------------------------------------------------------------------------------------- errors


def _did_you_mean(target: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(target, candidates, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _not_in(path: kontext.GlobPath, tree: _path_trie.PathTrie, what: str, role: str) -> str:
    """Why `path` names nothing in `tree`: "not in the model (a new_to_old key); did you mean ...?"."""
    prefix = path.first_non_glob_parent.parts
    if len(prefix) < len(path.parts) and tree.node(prefix) is not None:
        return f"matches nothing in the {what} below '{_path_trie.text(prefix)}' ({role})"
    if len(prefix) < len(path.parts):
        return f"'{_path_trie.text(prefix)}' is not in the {what} ({role}){_did_you_mean(_path_trie.text(prefix), tree.node_paths())}"
    return f"not in the {what} ({role}){_did_you_mean(_path_trie.text(prefix), tree.node_paths())}"


def _message(problems: Sequence[tuple[str, str]], source: str) -> str:
    lines = "\n".join(f"  '{path}': {what}" for path, what in problems)
    return (
        f"PartialLoader cannot load {source}: {len(problems)} problem(s):\n{lines}\n"
        "Fix new_to_old, or list model leaves to keep at their init values in ignore_model_keys and "
        "checkpoint leaves to leave unused in ignore_restored_keys."
    )
