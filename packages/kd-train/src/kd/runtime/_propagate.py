"""Fill every `ROOT_CFG_REF.<path>` default found under the Trainer's fields with the Trainer's value.

    evals = fill_from_root(trainer, trainer.evals, "Trainer.evals", memo={})   # each Evaluator's ds = eval_ds, ...

Walks dicts, lists, tuples and dataclasses of any depth; models (flax linen / NNX modules) and arrays are not
entered. An object that was filled remembers which fields came from the root (`__kd_inherited__`), so filling
again from another Trainer (after `dataclasses.replace(trainer, seed=1)`) takes the new values, while values the
user set explicitly are never touched. (A dataclass with `__slots__` cannot remember: it is filled once, and
keeps those values when filled again.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from flax import linen as nn

from kd._root_ref import INHERITED_ATTR, RootRef
from kd.runtime._errors import ConfigError
from kd.runtime._model import is_nnx_module


def fill_from_root(root: object, value: object, where: str, memo: dict[int, object]) -> object:
    """`value` with every RootRef under it replaced by the value it names in `root`."""
    if isinstance(value, RootRef):
        return _lookup(root, value, where, memo)
    vid = id(value)
    if vid in memo:
        return memo[vid]
    memo[vid] = value  # cycles stop here
    result = value
    kind = type(value)
    if kind is dict or (isinstance(value, Mapping) and hasattr(kind, "_wrap")):
        items = {k: fill_from_root(root, v, f"{where}[{k!r}]", memo) for k, v in value.items()}
        if any(items[k] is not v for k, v in value.items()):
            result = dict(items) if kind is dict else kind._wrap(items)
    elif kind is list or kind is tuple:
        items_list = [fill_from_root(root, v, f"{where}[{i}]", memo) for i, v in enumerate(value)]
        if any(a is not b for a, b in zip(items_list, value)):
            result = kind(items_list)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type) and not _is_opaque(value):
        result = _fill_dataclass(root, value, where, memo)
    memo[vid] = result
    return result


def _fill_dataclass(root: object, obj: object, where: str, memo: dict[int, object]) -> object:
    inherited: dict[str, RootRef] = dict(getattr(obj, INHERITED_ATTR, {}))
    changes: dict[str, object] = {}
    for field in dataclasses.fields(obj):
        if not field.init:
            continue
        current = getattr(obj, field.name, None)
        ref = inherited.get(field.name)
        if isinstance(current, RootRef):
            ref = current
            inherited[field.name] = ref
        if ref is not None:
            new = _lookup(root, ref, f"{where}.{field.name}", memo)
        else:
            new = fill_from_root(root, current, f"{where}.{field.name}", memo)
        if new is not current:
            changes[field.name] = new
    if not changes:
        return obj
    try:
        filled = dataclasses.replace(obj, **changes)
    except Exception as e:
        raise ConfigError(
            f"{where}: could not fill {sorted(changes)} from the Trainer into {type(obj).__name__}: "
            f"{type(e).__name__}: {e}"
        ) from e
    if inherited:
        try:
            object.__setattr__(filled, INHERITED_ATTR, inherited)
        except (AttributeError, TypeError):
            pass  # a dataclass with __slots__ holds no marker: filled now, kept as is by a later replace
    # What an object caches independently of the filled fields (a one-shot iterator already started, loaded
    # examples) goes to the copy, which replaces it: `__kd_keep_on_fill__` names those attributes.
    kept = getattr(obj, "__dict__", {})
    for name in getattr(type(obj), "__kd_keep_on_fill__", ()):
        if name in kept:
            filled.__dict__[name] = kept[name]
    return filled


def _lookup(root: object, ref: RootRef, where: str, memo: dict[int, object]) -> object:
    """The value `ref` names in `root`, itself filled: the root's fields may not be filled yet (field order)."""
    current = root
    for i, name in enumerate(ref.path):
        try:
            current = current[name] if isinstance(current, Mapping) else getattr(current, name)
        except (KeyError, AttributeError):
            head = "Trainer" + "".join(f".{p}" for p in ref.path[:i])
            raise ConfigError(
                f"{where} = {ref!r}: {head} has no field {name!r}; set {where.rsplit('.', 1)[-1]} explicitly "
                f"or add {name!r} to the Trainer (e.g. in `aux`)."
            ) from None
    if current is root:
        return current
    return fill_from_root(root, current, "Trainer" + "".join(f".{p}" for p in ref.path), memo)


def _is_opaque(value: object) -> bool:
    """Models and arrays: never entered (a linen module's fields include its parent)."""
    module = type(value).__module__ or ""
    return module.startswith(("flax.", "jax", "numpy")) or hasattr(value, "__array__") or _is_model(value)


def _is_model(value: object) -> bool:
    return isinstance(value, nn.Module) or is_nnx_module(value)
