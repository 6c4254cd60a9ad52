"""What the first batch's values tell before the first compile: integer labels within the logits' classes.

    check_label_ranges({"train_losses": losses}, specs, batch, seen="the first batch", model=trainstep.model)

Each loss and metric declaring `label_range_keys` (`kd._label_range`) whose labels are a batch path:
its labels (where its mask, when set, is not 0) against the number of classes, the last axis of its logits in
`specs` (shapes from `jax.eval_shape`). A `ConfigError` names the loss, both keys, the values found and the
model's field that sets the number of outputs. numpy on the host only: nothing compiles.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

import jax
import kontext
import numpy as np

from kd import _label_range
from kd.runtime import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd._interfaces import Auxiliary, PyTree
    from kd.runtime import Context, LinenModel, NnxModel

# A model field whose name says it sets the number of outputs (`num_classes`, `features`, `dout`, ...).
_OUTPUT_FIELD = re.compile(r"class|feature|out|label|vocab")


def reads_int_labels(groups: Mapping[str, Mapping[str, Auxiliary]]) -> bool:
    """Whether a loss or metric of `groups` declares `label_range_keys` with its labels in the batch."""
    return any(_labels_in_batch(obj) for objects in groups.values() for obj in objects.values())


def check_label_ranges(
    groups: Mapping[str, Mapping[str, Auxiliary]],
    specs: Context,
    batch: PyTree,
    *,
    seen: str,
    stacked: int = 0,
    model: LinenModel | NnxModel | None = None,
) -> None:
    """Raises a `ConfigError` for the first loss or metric whose labels in `batch` fall outside its logits'
    classes. `groups`: `{"train_losses": {name: loss}, ...}` (the names the message gives); `specs`: a
    context of shapes holding the logits; `batch`: host (or device) arrays, with `stacked` a stack of batches
    on a new first axis of which the first `stacked` are checked (the rest pad a call); `seen`: what `batch`
    is, for the message; `model`: the Trainer's, whose fields the advice names.
    """
    for field, objects in groups.items():
        for name, obj in objects.items():
            if _labels_in_batch(obj):
                where = f"{field}[{name!r}] ({type(obj).__name__})"
                _check(where, obj, specs, batch, seen=seen, stacked=stacked, model=model)


def _check(
    where: str,
    obj: Auxiliary,
    specs: Context,
    batch: PyTree,
    *,
    seen: str,
    stacked: int,
    model: LinenModel | NnxModel | None,
) -> None:
    logits_key, labels_key, *rest = (getattr(obj, field, None) for field in type(obj).label_range_keys)
    mask_key = rest[0] if rest else None
    logits = kontext.get_by_path(specs, logits_key, default=None)
    labels = _batch_value(batch, labels_key, stacked)
    if not getattr(logits, "shape", None) or labels is None or not np.issubdtype(labels.dtype, np.integer):
        return  # a missing key or a wrong dtype is the step's to name (KeyPathError, ShapeMismatchError)
    ndim = len(logits.shape) + (1 if stacked else 0)
    flat = _label_range.class_labels(labels, ndim)
    keep = np.ones(flat.shape, bool)
    if mask_key is not None:
        mask = _batch_value(batch, mask_key, stacked)
        if mask is None:
            return  # a mask the model computes: which labels it leaves out is not known here
        if mask.ndim == flat.ndim + 1 and mask.shape[-1] == 1:
            mask = mask[..., 0]
        try:
            keep = np.broadcast_to(mask, flat.shape) != 0
        except ValueError:
            return  # the loss names a mask that does not fit
    kept = flat[keep]
    num_classes = logits.shape[-1]
    outside = int(np.count_nonzero((kept < 0) | (kept >= num_classes)))
    if not outside:
        return
    classes = f"{num_classes} class" if num_classes == 1 else f"{num_classes} classes"
    padding = (
        "; a padding label such as -1 needs a mask (`mask=`) that is 0 there"
        if kept.min() < 0 and mask_key is None and len(rest) > 0
        else ""
    )
    raise ConfigError(
        f"{where}: the labels at {labels_key} hold values {kept.min()}..{kept.max()} ({seen}), but the "
        f"logits at {logits_key} have {classes} on their last axis: a label must be in 0..{num_classes - 1} "
        f"({outside} of {kept.size} are not){padding}. Check the model's number of outputs "
        f"({_output_fields(model, num_classes)}) or the labels."
    )


def _labels_in_batch(obj: Auxiliary) -> bool:
    keys = getattr(type(obj), "label_range_keys", None)
    return keys is not None and _batch_parts(getattr(obj, keys[1], None)) is not None


def _batch_parts(key: object) -> tuple[object, ...] | None:
    """The parts after `batch` of a key that is a batch path (`"batch.label"` -> `("label",)`), else None."""
    if not isinstance(key, str):
        return None
    parts = kontext.Path.from_str(key).parts
    return tuple(parts[1:]) if parts and parts[0] == "batch" else None


def _batch_value(batch: PyTree, key: object, stacked: int) -> np.ndarray | None:
    """The host values at `key` (a batch path) in `batch` (the first `stacked` of a stack); None when it is
    not a batch path or not there. Of an array split over several hosts, this host's first shard (the labels'
    and the mask's are the same rows)."""
    parts = _batch_parts(key)
    value = None if parts is None else kontext.get_by_path(batch, parts, default=None)
    if value is None:
        return None
    if isinstance(value, jax.Array) and not value.is_fully_addressable:
        value = value.addressable_shards[0].data
    value = np.asarray(value)  # sliced on the host: an array's slice on the device would compile
    return value[:stacked] if stacked else value


def _output_fields(model: LinenModel | NnxModel | None, num_classes: int) -> str:
    """`cfg.model.features is 1`: the model's fields that look like its number of outputs and hold
    `num_classes` (the last of a sequence), one level of submodules down; else where to look."""
    module = getattr(model, "module", None)  # a linen model's module; an NNX model's keyword arguments
    found = [f"cfg.model.{path} is {num_classes}" for path in _matching_fields(module, num_classes, depth=2)]
    keywords = getattr(getattr(model, "build", None), "keywords", None) or {}
    found += [
        f"cfg.model.{name} is {num_classes}"
        for name, value in keywords.items()
        if _OUTPUT_FIELD.search(name) and _last_int(value) == num_classes
    ]
    return ", ".join(found) if found else "the features of its last layer"


def _matching_fields(module: object, num_classes: int, *, depth: int) -> list[str]:
    if module is None or depth == 0 or not dataclasses.is_dataclass(module):
        return []
    found = []
    for field in dataclasses.fields(module):
        if field.name in ("parent", "name"):
            continue
        value = getattr(module, field.name, None)
        if _OUTPUT_FIELD.search(field.name) and _last_int(value) == num_classes:
            found.append(field.name)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            found += [
                f"{field.name}.{path}" for path in _matching_fields(value, num_classes, depth=depth - 1)
            ]
    return found


def _last_int(value: object) -> int | None:
    """`value` if an int, the last item of a sequence of ints, else None."""
    if isinstance(value, (list, tuple)) and value:
        value = value[-1]
    return value if isinstance(value, int) and not isinstance(value, bool) else None
