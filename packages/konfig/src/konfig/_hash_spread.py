"""Hash-flooding check: do many distinct values share one hash (a set of them would take quadratic time)?

Python's sets and dicts compare every value of a hash with every other: 60,000 distinct ints that all hash
alike (`k * (2**61 - 1) + 1`) take half a minute to put in a set. Equal values are cheap (they collapse
on first compare), so only values that differ from the first of their hash group count.

    crowded = crowded_hash(items)   # None, or a value whose hash more than MAX_SAME_HASH others share
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# Distinct values one hash may hold: far more than chance gives (a 64-bit hash), far below quadratic cost.
MAX_SAME_HASH = 64


def crowded_hash(values: Iterable[Any], limit: int = MAX_SAME_HASH) -> Any:
    """The first value of a hash that more than `limit` distinct values share, else None.

    Linear time: values are grouped by `hash()` in a dict keyed by the hash (an int, whose own hash is
    itself), and each value is compared with its group's first value only. Unhashable values are
    skipped (building the set raises for them anyway).

    Usage: `crowded_hash([1, 2, 3]) is None`.
    """
    firsts: dict[int, Any] = {}
    others: dict[int, int] = {}
    for value in values:
        try:
            h = hash(value)
        except TypeError:
            continue
        first = firsts.setdefault(h, value)
        if first is value:
            continue
        try:
            same = first == value
        except Exception:
            same = False
        if same is not True:
            count = others.get(h, 0) + 1
            if count > limit:
                return first
            others[h] = count
    return None
