"""Which checkpoints to keep: the newest few, every `keep_period`-th, and the best by a metric.

kept = steps_to_keep([100, 200, 300, 400], max_to_keep=2, keep_period=200,
                     metric={100: 0.9, 300: 0.7}, best_mode="max")
# {300, 400} newest, {200, 400} period, {100} best  ->  {100, 200, 300, 400}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

BEST_MODES = ("max", "min")


def best_step(metric: Mapping[int, float], *, best_mode: str) -> int | None:
    """The step with the best value (`max` or `min`); the newest among equals; None when there is none."""
    candidates = [(value, step) for step, value in metric.items() if value == value]  # NaN never wins
    if not candidates:
        return None
    if best_mode == "max":
        return max(candidates)[1]
    return min(candidates, key=lambda vs: (vs[0], -vs[1]))[1]


def steps_to_keep(
    steps: Iterable[int],
    *,
    max_to_keep: int | None,
    keep_period: int | None,
    metric: Mapping[int, float] | None = None,
    best_mode: str = "max",
) -> set[int]:
    """The steps retention keeps: the newest `max_to_keep` (all when None), the multiples of `keep_period`,
    and the best step by `metric` (step -> value, for the steps that have one)."""
    ordered = sorted(set(steps))
    kept = set(ordered if max_to_keep is None else ordered[max(0, len(ordered) - max_to_keep) :])
    if keep_period is not None:
        kept.update(s for s in ordered if s % keep_period == 0)
    if metric:
        best = best_step({s: v for s, v in metric.items() if s in set(ordered)}, best_mode=best_mode)
        if best is not None:
            kept.add(best)
    return kept
