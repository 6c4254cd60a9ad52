"""A batch's images at a glance: `plot_batch` (its numbers: `kd.runtime.get_batch_stats`, also kd.inspect's).

fig = plot_batch(batch)                                # a matplotlib Figure, or None without images
fig.savefig("batch.png")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import kontext
import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from kd._interfaces import PyTree

MAX_SHOWN = 8
"""Examples (images) or frames (videos) shown per leaf."""


def image_leaves(batch: PyTree) -> dict[str, tuple[str, np.ndarray]]:
    """`{"batch.<path>": (kind, array)}` for the leaves drawn as images: `"images"` (b h w c) or `"videos"`
    (b t h w c), with c = 1, 3 or 4 (videos 1 or 3), floats or uint8."""
    found = {}
    for path, value in kontext.flatten_with_path(batch).items():
        shape, dtype = np.shape(value), np.dtype(getattr(value, "dtype", np.asarray(value).dtype))
        if not (dtype == np.uint8 or dtype.kind == "f" or str(dtype) == "bfloat16"):
            continue
        if len(shape) == 4 and shape[-1] in (1, 3, 4):
            found[f"batch.{path}"] = ("images", np.asarray(value))
        elif len(shape) == 5 and shape[-1] in (1, 3):
            found[f"batch.{path}"] = ("videos", np.asarray(value))
    return found


def plot_batch(batch: PyTree) -> Figure | None:
    """The batch's images and videos, one row per leaf, as a matplotlib Figure (None if it has none).

    Usage: `plot_batch(batch).savefig("batch.png")`. A row shows the first 8 images of an image leaf, or the first
    8 frames of the first video of a video leaf; its label is the leaf's path (`batch.image`). Float images are
    shown as they are when in [0, 1], else rescaled from their min and max.
    """
    leaves = image_leaves(batch)
    if not leaves:
        return None
    from matplotlib.figure import Figure  # heavy: only when drawing

    rows = {name: _frames(kind, array) for name, (kind, array) in leaves.items()}
    columns = max(len(frames) for frames in rows.values())
    fig = Figure(figsize=(1.6 * columns, 1.8 * len(rows)))
    axes = fig.subplots(len(rows), columns, squeeze=False)
    for row, (name, frames) in zip(axes, rows.items()):
        for column, ax in enumerate(row):
            ax.set_xticks([])
            ax.set_yticks([])
            if column >= len(frames):
                ax.set_visible(False)
                continue
            frame = frames[column]
            ax.imshow(
                frame[..., 0] if frame.shape[-1] == 1 else frame,
                cmap="gray" if frame.shape[-1] == 1 else None,
            )
        row[0].set_ylabel(name)
    fig.tight_layout()
    return fig


def _frames(kind: str, array: np.ndarray) -> list[np.ndarray]:
    """What a row shows, as images matplotlib draws (uint8, or floats in [0, 1])."""
    shown = array[:MAX_SHOWN] if kind == "images" else array[0, :MAX_SHOWN]
    if shown.dtype != np.uint8:
        shown = shown.astype(np.float32)
        low, high = float(shown.min()), float(shown.max())
        if low < 0 or high > 1:
            shown = (shown - low) / (high - low) if high > low else np.zeros_like(shown)
    return list(shown)
