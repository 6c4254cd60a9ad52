"""`SkipIfMissing`: a metric that emits an `EmptyState` when one of its keys is missing.

kd.metrics.SkipIfMissing(kd.metrics.Norm(tensor="grads"))  # no grads in eval: nothing reported
"""

from __future__ import annotations

import dataclasses
from typing import Any

import kontext

from . import _base, _state


@dataclasses.dataclass(frozen=True)
class SkipIfMissing(_base.Metric):
    """Wraps a metric; where a path of its keys is missing from the context, emits an `EmptyState`.

    Usage: `kd.metrics.SkipIfMissing(metric=kd.metrics.Norm(tensor="grads.encoder"))`.

    Only "missing" errors are caught (`kontext.UnresolvedKeysError`, `kontext.PathNotFoundError`,
    e.g. a `TreeMap` glob matching nothing); an unset key or a shape error still raises. An
    `EmptyState` merges with anything as a no-op and computes to `{}`.

    Attributes:
      metric: the wrapped metric (may also be given positionally, as in Kauldron).
    """

    metric: _base.Metric

    def __kontext_keys__(self) -> dict[str, Any]:
        return kontext.get_keypaths(self.metric)

    def get_state(self, **inputs: Any) -> _state.State:
        return self.metric.get_state(**inputs)

    def get_state_from_context(self, context: Any) -> _state.State:
        try:
            return self.metric.get_state_from_context(context)
        except (kontext.UnresolvedKeysError, kontext.PathNotFoundError):
            return _state.EmptyState()
