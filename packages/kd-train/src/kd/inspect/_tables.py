"""Tables of what a run is made of, from shapes only: its context paths, its intermediates, its sharding.

    print(context_table(trainer.context_specs))   # every path a kontext key can name, with shape and dtype
    print(interms_report(trainer))                # every intermediate a key `interms.<...>` can name
    print(sharding_table(trainer))                # the mesh, and where each split array of the state lives

Nothing is allocated and no step runs (`trainer.state_specs`, `trainer.context_specs`, `jax.eval_shape`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax
import kontext
import numpy as np

from kd._human_text import (
    aligned,
    byte_count,
    counted,
    dtype_text,
    human_bytes,
    itemsize,
    leaves_by_module,
    shape_dtype,
    value_count,
)
from kd.runtime import Context, intermediate_specs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd.train import Trainer

# Context fields with one leaf per parameter (or several): shown one row per module when they are long.
COLLAPSIBLE = ("params", "grads", "updates", "opt_state", "collections")

# Context's fields, in their order: the rows of `context_table`.
_CONTEXT_FIELDS = tuple(field.name for field in dataclasses.fields(Context))


def context_table(context: Context, *, collapse: Sequence[str] = COLLAPSIBLE, max_leaves: int = 12) -> str:
    """Every path a kontext key can name in a train step, with its shape and dtype.

    Usage: `print(context_table(trainer.context_specs))` gives rows such as
    `batch.image  (32, 8, 8, 1) float32`. A field of `collapse` with more than `max_leaves` leaves is shown one
    row per module (`grads.dense0.*  2 leaves: bias, kernel; 8,320 values float32`) and the table ends with a
    line saying how many leaves were collapsed; `collapse=()` lists every leaf.
    """
    rows: list[tuple[str, str]] = []
    collapsed: dict[str, int] = {}
    for field in _CONTEXT_FIELDS:
        value = getattr(context, field, None)
        if value is None:
            continue
        flat = kontext.flatten_with_path(value, prefix=field)
        if field in collapse and len(flat) > max_leaves:
            collapsed[field] = len(flat)
            modules = leaves_by_module(value, prefix=field)
            rows.extend(_module_row(path, leaves) for path, leaves in modules.items())
        else:
            rows.extend((path, shape_dtype(leaf)) for path, leaf in flat.items())
    lines = aligned([("Path", "Shape and dtype"), *rows])
    if collapsed:
        fields = ", ".join(f"{field} ({n} leaves)" for field, n in collapsed.items())
        lines.append(
            f"Collapsed to one row per module: {fields}; `<module>.*` stands for the leaves listed after it."
        )
    return "\n".join(lines)


def _module_row(module: str, leaves: list[tuple[str, object]]) -> tuple[str, str]:
    if len(leaves) == 1:  # nothing to collapse: the leaf keeps its own path
        key, leaf = leaves[0]
        return _join(module, key), shape_dtype(leaf)
    keys = ", ".join(key for key, _ in leaves)
    dtypes = " ".join(dict.fromkeys(dtype_text(leaf) for _, leaf in leaves))
    values = value_count(leaf for _, leaf in leaves)
    return f"{module}.*", f"{len(leaves)} leaves: {keys}; {values:,} values {dtypes}"


def _join(module: str, key: str) -> str:
    return module + key if key.startswith("[") else f"{module}.{key}"


def interms_report(trainer: Trainer, *, width: int = 100) -> str:
    """A table of `intermediate_specs`: path, shape, dtype, one line each, at most `width` columns.

    Usage: `print(interms_report(trainer))` (for `kd-train inspect --interms`). A path too long for its column
    is shortened in the middle (`interms.encoder...dense.__call__[0]`); the last line counts the intermediates.
    """
    specs = intermediate_specs(trainer)
    if not specs:
        return "The model offers no intermediates (no module outputs or sown values to capture)."
    rows = [(str(tuple(leaf.shape)), dtype_text(leaf)) for leaf in specs.values()]
    shape_width = max(len("Shape"), *(len(shape) for shape, _ in rows))
    dtype_width = max(len("Dtype"), *(len(dtype) for _, dtype in rows))
    path_width = max(
        len("Path"), min(max(len(path) for path in specs), width - shape_width - dtype_width - 4)
    )
    table = [("Path", "Shape", "Dtype")] + [
        (_shortened(path, path_width), shape, dtype) for path, (shape, dtype) in zip(specs, rows)
    ]
    lines = aligned(table)
    lines.append(f"{counted(len(specs), 'intermediates')}; a key names one as its path (`interms.<...>`).")
    return "\n".join(lines)


def _shortened(text: str, width: int) -> str:
    """`text`, or its start and end around `...` in `width` characters."""
    if len(text) <= width:
        return text
    keep = max(width - 3, 2)
    return f"{text[: keep - keep // 2]}...{text[len(text) - keep // 2 :]}"


def sharding_table(trainer: Trainer) -> str:
    """The mesh, then each split array of the state with its PartitionSpec and bytes per device.

    Usage: `print(sharding_table(trainer))`. Replicated arrays are counted, not listed.
    """
    strategy = trainer.sharding
    mesh = strategy.device_mesh
    specs = trainer.state_specs
    shardings = strategy.state_shardings(specs)
    rows, replicated, per_device = [("Array", "Shape", "PartitionSpec", "Per device")], 0, 0
    flat_specs = kontext.flatten_with_path(specs)
    for (path, leaf), sharding in zip(flat_specs.items(), jax.tree.leaves(shardings), strict=True):
        local = sharding.shard_shape(leaf.shape) if hasattr(sharding, "shard_shape") else leaf.shape
        nbytes = int(np.prod(local, dtype=np.int64)) * itemsize(leaf)
        per_device += nbytes
        spec = getattr(sharding, "spec", None)
        if spec is not None and not any(entry is not None for entry in spec):
            replicated += 1
            continue
        rows.append(
            (path, shape_dtype(leaf), str(spec if spec is not None else sharding), human_bytes(nbytes))
        )
    axes = " x ".join(f"{name} {size}" for name, size in mesh.shape.items())
    lines = [
        f"mesh: {axes} ({counted(mesh.devices.size, 'devices')}); batches split along {strategy.data_axis!r}",
        f"train state per device: {human_bytes(per_device)} of {human_bytes(byte_count(jax.tree.leaves(specs)))}",
    ]
    if len(rows) > 1:
        lines += aligned(rows)
    lines.append(f"{counted(replicated, 'arrays')} replicated (a full copy on every device)")
    return "\n".join(lines)
