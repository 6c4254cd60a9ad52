"""kd.kdash: Kauldron's dashboard descriptions, accepted so Kauldron evaluators run (nothing is built).

    def __dashboards__(self) -> kd.kdash.DashboardsBase:
        return kd.kdash.NoopDashboard()

Kauldron turns these into Flatboard dashboards inside Google; kd's values go to the writers (terminal,
metrics.jsonl, TensorBoard), where every logged name already has its curve.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any


class DashboardsBase:
    """What an evaluator's `__dashboards__` returns; `normalize()` gives the dashboards by name."""

    def normalize(self) -> MultiDashboards:
        raise NotImplementedError(f"{type(self).__name__}.normalize")


@dataclasses.dataclass(frozen=True)
class NoopDashboard(DashboardsBase):
    """No dashboard (an evaluator that reports no scalar)."""

    def normalize(self) -> MultiDashboards:
        return MultiDashboards(dashboards={})


@dataclasses.dataclass(frozen=True, kw_only=True)
class SingleDashboard(DashboardsBase):
    """One dashboard: `name`, `title` and the logged names it plots (`y_keys`)."""

    name: str
    title: str = ""
    y_keys: Sequence[str] = ()

    @classmethod
    def from_y_keys(cls, *, name: str, title: str = "", y_keys: Sequence[str], **_: Any) -> SingleDashboard:
        return cls(name=name, title=title or name, y_keys=tuple(y_keys))

    def normalize(self) -> MultiDashboards:
        return MultiDashboards(dashboards={self.name: self})


@dataclasses.dataclass(frozen=True, kw_only=True)
class MetricDashboards(DashboardsBase):
    """The losses and metrics of a collection (`train`, an evaluator's name), one dashboard each."""

    collection: str
    losses: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    metrics: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def normalize(self) -> MultiDashboards:
        boards = {
            f"{kind}/{name}": SingleDashboard(
                name=f"{kind}/{name}",
                title=f"{self.collection} {name}",
                y_keys=(f"{self.collection}/{kind}/{name}",),
            )
            for kind, names in (("losses", self.losses), ("metrics", self.metrics))
            for name in names
        }
        return MultiDashboards(dashboards=boards)


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultiDashboards(DashboardsBase):
    """Dashboards by name."""

    dashboards: Mapping[str, SingleDashboard] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_iterable(cls, dashboards: Sequence[DashboardsBase]) -> MultiDashboards:
        merged: dict[str, SingleDashboard] = {}
        for board in dashboards:
            merged.update(board.normalize().dashboards)
        return cls(dashboards=merged)

    def normalize(self) -> MultiDashboards:
        return self


__all__ = ["DashboardsBase", "MetricDashboards", "MultiDashboards", "NoopDashboard", "SingleDashboard"]
