"""`ShowBoxes`: the first few images with their bounding boxes drawn as 1-pixel outlines.

kd.summaries.ShowBoxes(images="batch.image", boxes="batch.boxes", boxes_mask="batch.boxes_mask")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax.numpy as jnp
import kontext
import ktyping
import numpy as np
from ktyping import Bool, Float

from kd import metrics

from . import _base, _layout


def uniform_colors(num_colors: int) -> np.ndarray:
    """`(num_colors, 3)` RGB of fully saturated hues evenly spaced from red."""
    hues = np.arange(num_colors) / num_colors
    return _layout.hsv_to_rgb(np.stack([hues, np.ones(num_colors), np.ones(num_colors)], axis=-1))


def draw_boxes(images: np.ndarray, boxes: np.ndarray, valid: np.ndarray, colors: np.ndarray) -> np.ndarray:
    """`images (n, h, w, c)` with the outline of each valid box `[y_min, x_min, y_max, x_max]` (relative)
    drawn in `colors[box index % len(colors)]`, as TensorFlow's `draw_bounding_boxes` does: corners at
    `trunc(coordinate * (size - 1))`, sides outside the image not drawn, inverted boxes skipped."""
    out = np.array(images, np.float32, copy=True)
    n, h, w, c = out.shape
    for i in range(n):
        for j, box in enumerate(boxes[i]):
            if not valid[i, j]:
                continue
            top, bottom = np.trunc(box[0] * (h - 1)), np.trunc(box[2] * (h - 1))
            left, right = np.trunc(box[1] * (w - 1)), np.trunc(box[3] * (w - 1))
            if top > bottom or left > right or top >= h or bottom < 0 or left >= w or right < 0:
                continue
            top, bottom, left, right = int(top), int(bottom), int(left), int(right)
            color = colors[j % len(colors)][:c]
            rows = slice(max(top, 0), min(bottom, h - 1) + 1)
            cols = slice(max(left, 0), min(right, w - 1) + 1)
            if top >= 0:
                out[i, top, cols] = color
            if bottom < h:
                out[i, bottom, cols] = color
            if left >= 0:
                out[i, rows, left] = color
            if right < w:
                out[i, rows, right] = color
    return out


@metrics.state_dataclass
class BoxesState(metrics.CollectFirstState):
    """The first `keep_first` images `(n, h, w, c)`, their boxes `(n, k, 4)` and which boxes to draw
    `(n, k)`; `compute()` draws them.

    Usage: `ShowBoxes(images="x", boxes="b").get_state(images=x, boxes=b).merge(other).compute()`.
    """

    images: Any = None
    boxes: Any = None
    valid: Any = None
    num_colors: int = metrics.static_field(default=16)
    rearrange: str | None = metrics.static_field(default=None)
    rearrange_kwargs: tuple[tuple[str, Any], ...] = metrics.static_field(default=())

    def compute(self) -> np.ndarray:
        """The images with their boxes, float32 `(n, h, w, c)` clipped to [0, 1] (host only)."""
        if self.images is None:
            return np.zeros((0, 0, 0, 3), np.float32)
        images = np.asarray(self.images, np.float32)[: self.keep_first]
        boxes = np.asarray(self.boxes, np.float32)[: self.keep_first]
        valid = np.asarray(self.valid, bool)[: self.keep_first]
        drawn = draw_boxes(images, boxes, valid, uniform_colors(self.num_colors))
        drawn = _layout.maybe_rearrange(drawn, self.rearrange, dict(self.rearrange_kwargs))
        return np.clip(drawn, 0.0, 1.0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShowBoxes(_base.ImageSummary):
    """Shows the first `num_images` images with their boxes outlined, box `j` in colour `j % num_colors`.

    Usage: `kd.summaries.ShowBoxes(images="batch.image", boxes="preds.boxes", num_images=5)`.

    Boxes are `[y_min, x_min, y_max, x_max]` relative to the image's height and width (in [0, 1]).
    A box masked out by `boxes_mask` is not drawn (Kauldron zeroes it, which marks the pixel (0, 0)).

    Attributes:
      images: key of the images, float `(n, h, w, c)` with c in {1, 3} (grey images take the first
        channel of the colours).
      boxes: key of the boxes, `(n, k, 4)`.
      boxes_mask: optional key of which boxes to draw, `(n, k, 1)` or `(n, k)`.
      num_images: how many images to keep.
      num_colors: how many hues the boxes cycle through.
      in_vrange: optional `(vmin, vmax)` of the image values: clipped to it and rescaled to [0, 1].
      rearrange: optional einops pattern applied to the drawn images `(n, h, w, c)`; the result must be
        `(n', h', w', c)`.
      rearrange_kwargs: the pattern's axis sizes.
    """

    images: kontext.Key = kontext.REQUIRED
    boxes: kontext.Key = kontext.REQUIRED
    boxes_mask: kontext.Key | None = None
    num_images: int = 5
    num_colors: int = 16
    in_vrange: tuple[float, float] | None = None
    rearrange: str | None = None
    rearrange_kwargs: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        for name in ("num_images", "num_colors"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"ShowBoxes: {name} must be a positive int, got {value!r}.")
        if self.in_vrange is not None and not self.in_vrange[0] < self.in_vrange[1]:
            raise ValueError(
                f"ShowBoxes: in_vrange must be (vmin, vmax) with vmin < vmax, got {self.in_vrange!r}."
            )

    @ktyping.typechecked
    def get_state(
        self,
        images: Float["n h w 1|3"],
        boxes: Float["n k 4"],
        boxes_mask: (Bool | Float)["n k 1"] | (Bool | Float)["n k"] | None = None,
    ) -> BoxesState:
        images = images.astype(jnp.float32)
        if self.in_vrange is not None:
            vmin, vmax = self.in_vrange
            images = (jnp.clip(images, vmin, vmax) - vmin) / (vmax - vmin)
        valid = (
            jnp.ones(boxes.shape[:2], bool)
            if boxes_mask is None
            else jnp.reshape(boxes_mask, boxes.shape[:2]) != 0
        )
        keep = self.num_images
        return BoxesState(
            images=images[:keep],
            boxes=boxes[:keep].astype(jnp.float32),
            valid=valid[:keep],
            keep_first=keep,
            num_colors=self.num_colors,
            rearrange=self.rearrange,
            rearrange_kwargs=tuple(sorted(dict(self.rearrange_kwargs or {}).items())),
        )
