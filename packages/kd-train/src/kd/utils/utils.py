"""Kauldron's `kauldron.utils.utils`: `enum_iter`, the numbered iteration its evaluators use.

for i, batch in kd.utils.utils.enum_iter(ds, desc="eval"):
    ...
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")


def enum_iter(
    iter: Iterable[_T],
    *,
    init_step: int = 0,
    total_steps: int | None = None,
    desc: str | None = None,
    log_xm: bool = False,
    **progress_kwargs: Any,
) -> Iterator[tuple[int, _T]]:
    """`(index, element)` pairs numbered from `init_step`, stopping at `total_steps` (exclusive) when given.

    Usage: `for step, batch in enum_iter(ds, init_step=10, total_steps=100): ...`. `desc`, `log_xm` and
    the progress-bar arguments are accepted for Kauldron code; no bar is drawn (the Trainer draws its own).
    """
    del desc, log_xm, progress_kwargs
    steps = (
        itertools.count(init_step)
        if total_steps is None or total_steps < 0
        else range(init_step, total_steps)
    )
    return zip(steps, iter)


__all__ = ["enum_iter"]
