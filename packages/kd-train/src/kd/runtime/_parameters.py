"""A model's parameters at a glance: one row per module with its leaves' shapes and dtypes, and the counts.

    print(parameter_table(trainer.state_specs.params))   # what a run prints at its start and keeps in params.txt
    parameter_counts(trainer.state_specs.params)["total"]

Real arrays and `jax.ShapeDtypeStruct` leaves work alike: nothing is allocated. Here, below the Trainer, because
a run prints the table (`kd.train`); `kd.inspect` lists both functions with its other reports.
"""

from __future__ import annotations

from kd._human_text import (
    aligned,
    byte_count,
    counted,
    human_bytes,
    leaves_by_module,
    shape_dtype,
    value_count,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kd._interfaces import PyTree


def parameter_table(params: PyTree, *, label: str = "parameters") -> str:
    """One row per module (its leaves' shapes and dtypes, its count), then the total count and bytes.

    Usage: `print(parameter_table(trainer.state_specs.params))`; real arrays work as well as
    `jax.ShapeDtypeStruct` leaves. A module is a leaf's path without its last key (`dense0` for
    `dense0.kernel`); leaves at the top level are under `(root)`. `label` names the values (`"values"` for
    non-trained collections such as batch statistics).
    """
    modules = leaves_by_module(params)
    rows = [
        (
            name,
            ", ".join(f"{key} {shape_dtype(leaf)}" for key, leaf in leaves),
            value_count(leaf for _, leaf in leaves),
        )
        for name, leaves in modules.items()
    ]
    lines = aligned(
        [("Module", label.capitalize(), "Count")] + [(n, p, f"{c:,}") for n, p, c in rows], right=(2,)
    )
    leaves = [leaf for group in modules.values() for _, leaf in group]
    total, nbytes = value_count(leaves), byte_count(leaves)
    lines.append(f"Total: {counted(total, label)} ({human_bytes(nbytes)})")
    return "\n".join(lines)


def parameter_counts(params: PyTree) -> dict[str, int]:
    """`{module: count, ..., "total": count}`, the numbers of `parameter_table`, for JSON.

    Usage: `parameter_counts(trainer.state_specs.params)["total"]`.
    """
    modules = leaves_by_module(params)
    counts = {name: value_count(leaf for _, leaf in leaves) for name, leaves in modules.items()}
    counts["total"] = sum(counts.values())
    return counts
