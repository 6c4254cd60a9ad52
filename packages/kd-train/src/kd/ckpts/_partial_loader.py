"""`PartialLoader`: start a run from another run's checkpoint, all of its params or chosen parts (warm start).

    cfg.init_transform = kd.ckpts.PartialLoader(
        workdir="/runs/pretrain", new_to_old={"params.decoder": "params.encoder"}
    )

Leaves are matched by path: the state's paths (`opt_state[0].mu.dense.kernel`) are compared with the
checkpoint's as orbax stores it (named tuples and dataclasses as dicts of fields, tuples as lists), so
any part of the state, the optimizer state included, can be loaded without a template of the old run.
"""

from __future__ import annotations

import abc
import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import konfig
import kontext
import numpy as np
from etils import epath

from kd import _path_trie
from kd.ckpts import _checkpointer, _errors, _structure

_T = TypeVar("_T")
Parts = _path_trie.Parts

_DEFAULT_NEW_TO_OLD = {"params": "params", "collections": "collections"}
_LATEST = -1


class InitTransform(abc.ABC):
    """Changes a fresh train state before training starts, e.g. loads pretrained weights.

        class ZeroBias(kd.ckpts.InitTransform):
            def transform(self, state):
                return state.replace(params=zero_biases(state.params))

        trainer = kd.train.Trainer(..., init_transform=ZeroBias())

    The Trainer applies it to a fresh state only (`trainer.init_state()`), never to one restored from
    the run's own checkpoints. `transform` returns a new state with the same structure, shapes and
    dtypes, each leaf placed (sharded) like the leaf it replaces.
    """

    @abc.abstractmethod
    def transform(self, state: _T) -> _T:
        """`state = init_transform.transform(state)`: the state with some values replaced."""

    def transform_after_optimizer(self, state: _T) -> _T:
        """Kauldron's second hook, run once the optimizer state exists: by default the state unchanged.

        The Trainer calls `transform`, then this (`apply_init_transform`). kd's own loaders load everything
        they are asked for, the optimizer state included, in `transform`, and the Trainer calls them once.
        """
        return state

    # kd's loaders: `transform` already did what `transform_after_optimizer` would (see apply_init_transform).
    _complete_in_transform = False


def apply_init_transform(transform: Any, state: _T) -> _T:
    """`transform`'s effect on a fresh state, as the Trainer applies it: a plain function is called; an
    `InitTransform` (or any object with `.transform`) gets `transform`, then `transform_after_optimizer`
    (Kauldron's two hooks, in Kauldron's order), but kd's own loaders `transform` alone (it loads the
    optimizer state too when asked), so a checkpoint is read once.

    Usage: `state = apply_init_transform(trainer.init_transform, state)`.
    """
    if isinstance(transform, MultiTransform):
        for name, each in transform.transforms.items():
            try:
                state = apply_init_transform(each, state)
            except Exception as e:
                e.add_note(f"(in MultiTransform: the init_transform {name!r} failed)")
                raise
        return state
    if not callable(getattr(transform, "transform", None)):
        return transform(state)
    state = transform.transform(state)
    after = getattr(transform, "transform_after_optimizer", None)
    if callable(after) and not getattr(transform, "_complete_in_transform", False):
        state = after(state)
    return state


class NoopTransform(InitTransform):
    """An `init_transform` that changes nothing: `kd.ckpts.NoopTransform().transform(state) is state`."""

    def transform(self, state: _T) -> _T:
        return state

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class MultiTransform(InitTransform):
    """Applies several `init_transform`s in turn, by name; an error names the one that failed.

    cfg.init_transform = kd.ckpts.MultiTransform(
        encoder=kd.ckpts.PartialLoader(workdir="/runs/a", new_to_old={"params.enc": "params.enc"}),
        decoder=kd.ckpts.PartialLoader(workdir="/runs/b", new_to_old={"params.dec": "params.dec"}),
    )
    """

    def __init__(self, **transforms: InitTransform) -> None:
        for name, transform in transforms.items():
            # An InitTransform, or anything with its two methods (kd.optim.UseEmaParams, which kd.optim
            # cannot subclass from here: kd.optim does not import kd.ckpts).
            if not isinstance(transform, InitTransform) and not (
                callable(getattr(transform, "transform", None))
                and callable(getattr(transform, "transform_after_optimizer", None))
            ):
                raise TypeError(
                    f"MultiTransform({name}=...): expected a kd.ckpts.InitTransform (or an object with its "
                    f"transform and transform_after_optimizer methods), got {type(transform).__name__}: "
                    f"{transform!r}."
                )
        self._transforms = dict(transforms)

    @property
    def transforms(self) -> dict[str, InitTransform]:
        """The transforms by name, in the order they run."""
        return dict(self._transforms)

    def transform(self, state: _T) -> _T:
        return self._each(state, "transform")

    def transform_after_optimizer(self, state: _T) -> _T:
        return self._each(state, "transform_after_optimizer")

    def _each(self, state: _T, method: str) -> _T:
        for name, transform in self._transforms.items():
            try:
                state = getattr(transform, method)(state)
            except Exception as e:
                e.add_note(f"(in MultiTransform: the init_transform {name!r} failed, in its {method})")
                raise
        return state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MultiTransform):
            return NotImplemented
        return list(self._transforms.items()) == list(other._transforms.items())

    def __hash__(self) -> int:
        return hash(tuple(self._transforms.items()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._transforms.items())
        return f"{type(self).__name__}({inner})"


class _ClosingLoader:
    """Kauldron's loaders are context managers (they hold a checkpointer); kd's open one per read, so
    `close` has nothing to release. Both spellings of `with loader:` work."""

    _complete_in_transform = True  # `transform` loads the optimizer state too when asked

    def close(self) -> None:
        """`loader.close()`: nothing stays open between reads."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __contextmanager__(self) -> Any:
        try:
            yield self
        finally:
            self.close()


class PartialLoadError(_errors.CheckpointStructureError):
    """A checkpoint cannot fill the parts of the state a `PartialLoader` was asked to load.

    try:
        loader.transform(state)
    except kd.ckpts.PartialLoadError as e:
        e.problems  # (("params.out.kernel", "shape (16, 1) float32 in the model, ..."), ...)

    `problems` lists every problem found, as (path, what is wrong) pairs; `path` is the first one's.
    """

    def __init__(self, message: str, *, problems: tuple[tuple[str, str], ...]) -> None:
        super().__init__(message, path=problems[0][0], differences=tuple(f"'{p}': {w}" for p, w in problems))
        self.problems = problems


@dataclasses.dataclass(frozen=True, kw_only=True)
class PartialLoader(_ClosingLoader, InitTransform):
    """Loads chosen parts of the state from another run's checkpoint (Kauldron's `PartialKauldronLoader`).

        cfg.init_transform = kd.ckpts.PartialLoader(
            workdir="/runs/pretrain",  # or "/runs/pretrain/checkpoints"
            new_to_old={"params.decoder": "params.encoder", "params.head.**.kernel": "params.head.**.kernel"},
            ignore_model_keys=("params.decoder.extra.**",),  # keep their init values
        )
        state = konfig.resolve(cfg).init_state()  # the decoder holds the pretrained encoder

    Each entry of `new_to_old` maps a path of the new state (a sub-tree or a leaf) to a path of the
    checkpoint; every leaf below the new path is read from the same relative path below the old one,
    converted to the state leaf's dtype and placed like it (its sharding). Everything else keeps its
    value. A new path may be a kontext glob (`"params.**.kernel"`: the leaves it selects); the old path
    then has the same wildcards after its own fixed prefix (`"params.encoder.**.kernel"`), which the
    new path's fixed prefix replaces. Later entries override earlier ones where they overlap.

    The optimizer state is loaded only when mapped (`{"opt_state": "opt_state"}`), the step likewise.
    Every problem is reported at once in a `PartialLoadError` (a ValueError): a shape that differs,
    a model leaf the checkpoint lacks (with the closest checkpoint path), a checkpoint leaf below a
    mapped path that nothing loads, a `new_to_old` path that matches nothing in the model. No
    checkpoint there raises FileNotFoundError. The checkpoints are only read: none is deleted.

    Attributes:
      workdir: The run to load from: its workdir (holding `checkpoints/`) or its `checkpoints` folder.
      step: Which checkpoint; -1 (the default) loads the latest.
      new_to_old: New-state path (or glob) -> checkpoint path. Default: all `params` and `collections`.
      ignore_model_keys: Globs of new-state leaves that may be absent from the checkpoint (they keep
        their init values). A glob matches a leaf's full path (`"params.head.**"`) or its path below
        the `new_to_old` key that selected it (`"head.**"`, Kauldron's way).
      ignore_restored_keys: Globs of checkpoint leaves below a mapped path that may stay unused, matched
        the same way (full path, or the path below the `new_to_old` value).
    """

    workdir: epath.PathLike
    step: int = _LATEST
    new_to_old: Mapping[str, str] = dataclasses.field(default_factory=lambda: dict(_DEFAULT_NEW_TO_OLD))
    ignore_model_keys: Sequence[str] = ()
    ignore_restored_keys: Sequence[str] = ()

    def __post_init__(self) -> None:
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < _LATEST:
            raise ValueError(
                f"PartialLoader.step: expected a checkpointed step (an int >= 0) or -1 for the latest, "
                f"got {self.step!r}."
            )
        # Frozen, hashable forms: the loader is a config value (konfig resolves it, the Trainer hashes it).
        object.__setattr__(self, "new_to_old", _checked_new_to_old(self.new_to_old))
        for name in ("ignore_model_keys", "ignore_restored_keys"):
            object.__setattr__(self, name, _checked_globs(name, getattr(self, name)))

    def transform(self, state: _T) -> _T:
        """`state = loader.transform(state)`: a new state with the mapped leaves read from the checkpoint."""
        return self._load(state, self.new_to_old)

    def transform_after_optimizer(self, state: _T) -> _T:
        """Kauldron's hook: loads again only the `opt_state` entries of `new_to_old` (none: unchanged)."""
        opt_state = {new: old for new, old in self.new_to_old.items() if _is_opt_state(new)}
        return self._load(state, opt_state) if opt_state else state

    def _load(self, state: _T, new_to_old: Mapping[str, str]) -> _T:
        restored, source = read_checkpoint(self.workdir, self.step, owner="PartialLoader")
        return load_partial(
            state,
            restored,
            new_to_old=new_to_old,
            ignore_model_keys=self.ignore_model_keys,
            ignore_restored_keys=self.ignore_restored_keys,
            source=source,
        )


def _is_opt_state(path: str) -> bool:
    return path == "opt_state" or path.startswith(("opt_state.", "opt_state["))


def read_checkpoint(workdir: epath.PathLike, step: int, *, owner: str) -> tuple[Any, str]:
    """`(tree, "step 100 of /runs/a/checkpoints")`: a step (-1: the latest) of another run, read without a
    template and without changing anything there (the run may still be training)."""
    folder = _checkpoints_folder(workdir)
    with _checkpointer.Checkpointer(
        workdir=folder.parent, save_interval_steps=1, read_only=True, enable_async_checkpointing=False
    ) as source:
        steps = source.all_steps()
        if not steps:
            raise FileNotFoundError(f"{owner}(workdir={workdir!r}): no checkpoint in {folder}.")
        chosen = steps[-1] if step == _LATEST else step
        if chosen not in steps:
            raise FileNotFoundError(
                f"{owner}(step={chosen}): no checkpoint for step {chosen} in {folder} "
                f"(available steps: {', '.join(map(str, steps))})."
            )
        return source.restore_raw(step=chosen), f"step {chosen} of {folder}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SimpleCheckpointLoader(_ClosingLoader, InitTransform):
    """Loads `params` and `collections` (and, asked, `opt_state`) as they are from another run's checkpoint.

        cfg.init_transform = kd.ckpts.SimpleCheckpointLoader(workdir="/runs/pretrain", load_opt_state=True)

    The model must be the one that wrote the checkpoint (same paths and shapes); to load parts of it,
    or under other names, use `PartialLoader`. Each value takes the dtype and sharding of the leaf it
    replaces. kd's Trainer calls `transform` only, with the optimizer state already built, so
    `transform` loads `opt_state` too when `load_opt_state`; `transform_after_optimizer` (Kauldron's
    second hook) loads `opt_state` alone when `load_opt_state`.

    Attributes:
      workdir: The run to load from: its workdir (holding `checkpoints/`) or its `checkpoints` folder.
      step: Which checkpoint; -1 (the default) loads the latest.
      load_opt_state: Load the optimizer state as well.
    """

    workdir: epath.PathLike
    step: int = _LATEST
    load_opt_state: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < _LATEST:
            raise ValueError(
                f"SimpleCheckpointLoader.step: expected a checkpointed step (an int >= 0) or -1 for the "
                f"latest, got {self.step!r}."
            )

    def transform(self, state: _T) -> _T:
        """`state = loader.transform(state)`: params and collections (and opt_state, when asked) loaded."""
        keys = ("params", "collections", "opt_state") if self.load_opt_state else ("params", "collections")
        return self._load(state, keys)

    def transform_after_optimizer(self, state: _T) -> _T:
        """`state = loader.transform_after_optimizer(state)`: opt_state loaded when `load_opt_state`."""
        return self._load(state, ("opt_state",)) if self.load_opt_state else state

    def _load(self, state: _T, keys: Sequence[str]) -> _T:
        present = [key for key in keys if jax.tree.leaves(_field(state, key))]
        if not present:
            return state
        restored, source = read_checkpoint(self.workdir, self.step, owner="SimpleCheckpointLoader")
        return load_partial(state, restored, new_to_old={key: key for key in present}, source=source)


def _field(state: Any, key: str) -> Any:
    return state.get(key) if isinstance(state, Mapping) else getattr(state, key, None)


def workdir_from_xid(xid: int, wid: int = 1) -> epath.Path:
    """Kauldron's XManager look-up of a run's workdir: there is no XManager here, so it always raises.

    Pass the run's workdir itself instead: `kd.ckpts.PartialLoader(workdir="/runs/pretrain", ...)`.
    """
    raise NotImplementedError(
        f"kd.ckpts.workdir_from_xid(xid={xid!r}, wid={wid!r}): kd has no XManager to ask for an "
        "experiment's workdir. Pass the workdir path of the run to load from instead, e.g. "
        "PartialLoader(workdir='/runs/pretrain') (the folder holding checkpoints/)."
    )


PartialKauldronLoader = PartialLoader
"""Kauldron's name for `PartialLoader`."""


def _checkpoints_folder(workdir: epath.PathLike) -> epath.Path:
    """`_checkpoints_folder("/runs/pretrain")` -> `/runs/pretrain/checkpoints`; FileNotFoundError if absent.

    A path that is itself a `checkpoints` folder is returned as is.
    """
    path = epath.Path(workdir)
    if (path / _checkpointer.CHECKPOINT_FOLDER_NAME).is_dir():
        return path / _checkpointer.CHECKPOINT_FOLDER_NAME
    if path.name == _checkpointer.CHECKPOINT_FOLDER_NAME and path.is_dir():
        return path
    raise FileNotFoundError(
        f"PartialLoader(workdir={str(workdir)!r}): no checkpoint folder: "
        f"{path / _checkpointer.CHECKPOINT_FOLDER_NAME} does not exist. Pass the workdir of the run to load "
        f"from (the folder holding `{_checkpointer.CHECKPOINT_FOLDER_NAME}/`) or that folder itself."
    )


def load_partial(
    state: _T,
    restored: Any,
    *,
    new_to_old: Mapping[str, str] = _DEFAULT_NEW_TO_OLD,
    ignore_model_keys: Sequence[str] = (),
    ignore_restored_keys: Sequence[str] = (),
    source: str = "the checkpoint",
) -> _T:
    """`state = load_partial(state, ckpt.restore_raw(step=100), new_to_old={"params": "params"})`.

    What `PartialLoader.transform` does once the checkpoint is read: `restored` is the saved tree as
    orbax gives it back without a template. `source` names it in errors. The input state is not changed.
    """
    mapping = _checked_new_to_old(new_to_old)
    model_globs = [
        kontext.GlobPath.from_str(g) for g in _checked_globs("ignore_model_keys", ignore_model_keys)
    ]
    restored_globs = [
        kontext.GlobPath.from_str(g) for g in _checked_globs("ignore_restored_keys", ignore_restored_keys)
    ]
    model, ckpt = _path_trie.PathTrie.of(state), _path_trie.PathTrie.of(restored)
    mapping_problems: list[tuple[str, str]] = []
    requests: dict[int, tuple[Parts, Parts]] = {}  # model leaf -> (checkpoint path, path below the key)
    in_scope: dict[int, Parts] = {}  # checkpoint leaf below a mapped path -> its path below that path
    consumed: set[int] = set()  # checkpoint leaves some entry reads (an overridden one included)

    for new_text, old_text in mapping.items():
        new, old = kontext.GlobPath.from_str(new_text), kontext.GlobPath.from_str(old_text)
        old_prefix = old.first_non_glob_parent.parts
        selected = model.select(new)
        if selected is None:
            mapping_problems.append((new_text, _not_in(new, model, "model", "a new_to_old key")))
            continue
        if ckpt.node(old_prefix) is None:
            if any(not _matches_any(model.paths[i], rel, model_globs) for i, rel in selected):
                role = f"the new_to_old value for {new_text!r}"
                mapping_problems.append((old_text, _not_in(old, ckpt, "checkpoint", role)))
            continue
        for i, rel in selected:
            old_parts = (*old_prefix, *rel)
            requests[i] = (old_parts, rel)
            j = ckpt.leaf_at(old_parts)
            if j is not None:
                consumed.add(j)
        for j, rel in ckpt.select(old) or ():
            in_scope.setdefault(j, rel)

    leaf_problems: list[tuple[str, str]] = []
    assigned: dict[int, int] = {}
    unread: list[str] | None = None  # where a missing leaf's suggestion is looked for: unread leaves
    for i in sorted(requests):
        old_parts, rel = requests[i]
        leaf, j = model.leaves[i], ckpt.leaf_at(old_parts)
        if j is not None and _structure._shape(leaf) == _structure._shape(ckpt.leaves[j]):
            assigned[i] = j
            continue
        if j is None and _matches_any(model.paths[i], rel, model_globs):
            continue
        looked_for = "" if model.paths[i] == old_parts else f" (looked for '{_path_trie.text(old_parts)}')"
        if j is not None:
            stored = _structure._describe(ckpt.leaves[j])
            what = (
                f"shape {_structure._describe(leaf)} in the model but {stored} in the checkpoint{looked_for}"
            )
        elif isinstance(ckpt.node(old_parts), dict):
            what = f"an array in the model but a sub-tree in the checkpoint{looked_for}"
        else:
            if unread is None:  # a leaf the checkpoint names differently is one nothing reads
                unread = [_path_trie.text(p) for k, p in enumerate(ckpt.paths) if k not in consumed]
            what = f"in the model but not in the checkpoint{looked_for}{_did_you_mean(_path_trie.text(old_parts), unread)}"
        leaf_problems.append((_path_trie.text(model.paths[i]), what))

    unused_problems = [
        (_path_trie.text(ckpt.paths[j]), "in the checkpoint below a mapped path, but loaded into nothing")
        for j in sorted(in_scope)
        if j not in consumed and not _matches_any(ckpt.paths[j], in_scope[j], restored_globs)
    ]
    problems = (*mapping_problems, *leaf_problems, *unused_problems)
    if problems:
        raise PartialLoadError(_message(problems, source), problems=problems)

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


def _checked_new_to_old(new_to_old: Any) -> konfig.ImmutableDict:
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


def _checked_globs(name: str, globs: Any) -> tuple[str, ...]:
    if isinstance(globs, (str, kontext.AbstractPath)):
        globs = (globs,)
    if not isinstance(globs, (Sequence, set, frozenset)):
        raise TypeError(f"PartialLoader.{name}: expected a tuple of glob strings, got {globs!r}.")
    return tuple(_checked_path(f"{name}[{i}]", g) for i, g in enumerate(globs))


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
