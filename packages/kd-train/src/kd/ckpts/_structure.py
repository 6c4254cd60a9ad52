"""Compare a state template with the tree a checkpoint holds, before orbax reads any array.

orbax's own error for a changed model is a dump of both trees (and a shape mismatch leaves
half-read arrays behind); this names the first path that differs and what each side has.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from kd.ckpts import _errors

_MORE_SHOWN = 3


def _key_part(key: Any) -> str | int:
    if isinstance(key, jax.tree_util.DictKey):
        return key.key if isinstance(key.key, int) else str(key.key)
    if isinstance(key, jax.tree_util.GetAttrKey):
        return key.name
    if isinstance(key, jax.tree_util.SequenceKey):
        return key.idx
    if isinstance(key, jax.tree_util.FlattenedIndexKey):
        return key.key
    return str(key)


def _path_str(parts: tuple[str | int, ...]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _flatten(tree: Any) -> dict[tuple[str, ...], tuple[tuple[str | int, ...], Any]]:
    """{comparable path: (display path, leaf)}; orbax writes every key as a string."""
    flat = {}
    for keys, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        parts = tuple(_key_part(k) for k in keys)
        flat[tuple(str(p) for p in parts)] = (parts, leaf)
    return flat


def _shape(leaf: Any) -> tuple[int, ...]:
    return tuple(leaf.shape) if hasattr(leaf, "shape") else np.shape(leaf)


def _describe(leaf: Any) -> str:
    dtype = getattr(leaf, "dtype", None)
    return str(_shape(leaf)) + (f" {np.dtype(dtype).name}" if dtype is not None else "")


def differences(template: Any, on_disk: Any) -> list[tuple[str, str]]:
    """[(path, what differs)]: in the template's order, then the paths only the checkpoint has.

    `on_disk` is orbax's metadata tree (nested dicts and lists of array metadata).
    Dtypes are not compared: orbax casts to the template's dtype on restore.
    """
    expected, found = _flatten(template), _flatten(on_disk)
    diffs = []
    for key, (parts, leaf) in expected.items():
        if key not in found:
            diffs.append((_path_str(parts), "is in the template but not in the checkpoint"))
            continue
        stored = found[key][1]
        if _shape(leaf) != _shape(stored):
            diffs.append(
                (
                    _path_str(parts),
                    f"has shape {_describe(leaf)} in the template but {_describe(stored)} in the checkpoint",
                )
            )
    for key, (parts, _) in found.items():
        if key not in expected:
            diffs.append((_path_str(parts), "is in the checkpoint but not in the template"))
    return diffs


def check_matches(template: Any, on_disk: Any, *, where: str) -> None:
    """Raise CheckpointStructureError naming the first difference, if there is one.

    check_matches(state, mgr.item_metadata(step)["state"].tree, where="step 100 in /run/checkpoints")
    """
    diffs = differences(template, on_disk)
    if not diffs:
        return
    described = [f"'{p}' {w}" for p, w in diffs]
    message = f"The checkpoint at {where} does not match the state template: {described[0]}."
    if len(diffs) > 1:
        rest = described[1 : 1 + _MORE_SHOWN]
        more = f", and {len(diffs) - 1 - _MORE_SHOWN} more" if len(diffs) - 1 > _MORE_SHOWN else ""
        message += f" {len(diffs) - 1} more difference(s): {'; '.join(rest)}{more}."
    message += " Restore onto the state of the model that wrote it, or train in a new workdir."
    raise _errors.CheckpointStructureError(message, path=diffs[0][0], differences=tuple(described))
