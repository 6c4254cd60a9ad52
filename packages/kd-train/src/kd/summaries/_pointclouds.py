"""`ShowPointCloud`: the points (and colours) seen, as a `PointCloud` a writer shows in 3-d.

kd.summaries.ShowPointCloud(point_clouds="preds.points", point_colors="preds.colors", num_points=4096)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax.numpy as jnp
import kontext
import numpy as np

from kd import metrics

from . import _base

DEFAULT_CONFIGS: Mapping[str, Mapping[str, Any]] = {
    "camera": {"cls": "PerspectiveCamera", "near": 1e-4},
    "material": {"cls": "PointsMaterial", "size": 0.03},
}
"""The three.js scene settings TensorBoard's mesh dashboard reads, when `configs` is not given."""


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class PointCloud:
    """What `ShowPointCloud` computes: points `(n, 3)`, optional colours `(n, 3)`, the viewer's settings.

    Usage: `writer.write_summaries(step, {"summaries/points": kd.summaries.PointCloud(point_clouds=xyz)})`.

    Attributes:
      point_clouds: the points' coordinates, float `(n, 3)`.
      point_colors: optional RGB per point, float `(n, 3)` in [0, 1] (integers: in [0, 255]).
      configs: optional three.js settings (`{"camera": {...}, "material": {...}}`) for the viewer.
    """

    point_clouds: np.ndarray
    point_colors: np.ndarray | None = None
    configs: Mapping[str, Any] | None = None


@metrics.state_dataclass
class PointCloudState(metrics.CollectingState):
    """Every point (and colour) seen, concatenated across merges; `compute()` gives a `PointCloud`.

    Usage: `ShowPointCloud(point_clouds="x").get_state(point_clouds=xyz).merge(other).compute()`.
    """

    point_clouds: Any = None
    point_colors: Any = None
    configs: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] | None = metrics.static_field(default=None)

    def compute(self) -> PointCloud:
        """The collected points as a `PointCloud` (host only); raises ValueError when there is none."""
        points = None if self.point_clouds is None else np.asarray(self.point_clouds)
        if points is None or points.size == 0:
            shape = None if points is None else points.shape
            raise ValueError(
                f"ShowPointCloud: no points to show, the collected point_clouds are empty ({shape})."
            )
        colors = None if self.point_colors is None else np.asarray(self.point_colors)
        if colors is not None and colors.shape != points.shape:
            raise ValueError(
                "ShowPointCloud: point_colors must give one colour per point; collected "
                f"{colors.shape} colours for {points.shape} points (some batches had no colours?)."
            )
        configs = DEFAULT_CONFIGS if self.configs is None else {k: dict(v) for k, v in self.configs}
        return PointCloud(
            point_clouds=points, point_colors=colors, configs={k: dict(v) for k, v in configs.items()}
        )


def _frozen_configs(configs: Mapping[str, Any] | None) -> Any:
    """`{"camera": {...}}` as nested sorted tuples (a hashable static field)."""
    if configs is None:
        return None
    return tuple((str(k), tuple(sorted(dict(v).items()))) for k, v in sorted(configs.items()))


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShowPointCloud(_base.Summary):
    """Shows a point cloud: the points of every batch seen, optionally coloured.

    Usage: `kd.summaries.ShowPointCloud(point_clouds="preds.xyz", rearrange="b n d -> (b n) d")`.

    The TensorBoard writer shows it in the mesh dashboard (a point cloud, no faces).

    Attributes:
      point_clouds: key of the points, float `(n, 3)` (after `rearrange`).
      point_colors: optional key of their colours, float `(n, 3)` in [0, 1].
      configs: optional three.js settings of the viewer (default: `DEFAULT_CONFIGS`).
      rearrange: optional einops pattern giving `(n, 3)`, applied to the points and the colours.
      rearrange_kwargs: the pattern's axis sizes.
      num_points: optional number of points kept of each batch (the first ones).
    """

    point_clouds: kontext.Key = kontext.REQUIRED
    point_colors: kontext.Key | None = None
    configs: Mapping[str, Any] | None = None
    rearrange: str | None = None
    rearrange_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    num_points: int | None = None

    def __post_init__(self) -> None:
        if self.num_points is not None and not (isinstance(self.num_points, int) and self.num_points >= 1):
            raise ValueError(
                f"ShowPointCloud: num_points must be a positive int or None, got {self.num_points!r}."
            )
        if self.configs is not None and not all(isinstance(v, Mapping) for v in self.configs.values()):
            raise ValueError(
                "ShowPointCloud: configs must map names to settings dicts, e.g. "
                f"{{'material': {{'cls': 'PointsMaterial', 'size': 0.03}}}}, got {self.configs!r}."
            )

    def _arrange(self, array: Any) -> Any:
        if array is None or not self.rearrange:
            return array
        import einops

        return einops.rearrange(array, self.rearrange, **dict(self.rearrange_kwargs))

    def get_state(self, point_clouds: Any, point_colors: Any = None) -> PointCloudState:
        point_clouds, point_colors = self._arrange(point_clouds), self._arrange(point_colors)
        for name, array in (("point_clouds", point_clouds), ("point_colors", point_colors)):
            if array is not None and (
                array.ndim != 2 or array.shape[1] != 3 or not jnp.issubdtype(array.dtype, jnp.floating)
            ):
                raise ValueError(
                    f"ShowPointCloud: argument {name} must be float (n, 3) (after rearrange), got "
                    f"{array.dtype} of shape {tuple(array.shape)}."
                )
        keep = self.num_points or point_clouds.shape[0]
        return PointCloudState(
            point_clouds=point_clouds[:keep],
            point_colors=None if point_colors is None else point_colors[:keep],
            configs=_frozen_configs(self.configs),
        )
