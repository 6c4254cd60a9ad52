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

    Linear time: when fewer than `limit` hashes repeat at all (almost every set) nothing more is
    done; else values are grouped by `hash()` in a dict keyed by the hash (an int, whose own hash is
    itself) and each is compared with the at most `limit` distinct values of its group. Unhashable
    values are skipped (building the set raises for them anyway).

    Usage: `crowded_hash([1, 2, 3]) is None`.
    """
    hashable: list[Any] = []
    hashes: list[int] = []
    for value in values:
        try:
            hashes.append(hash(value))
        except TypeError:
            continue
        hashable.append(value)
    if len(hashes) - len(set(hashes)) < limit:
        return None  # too few repeated hashes for any hash to hold more than `limit` values
    groups: dict[int, list[Any]] = {}  # hash -> its distinct values
    for value, h in zip(hashable, hashes):
        group = groups.setdefault(h, [])
        if not any(_same(value, other) for other in group):
            group.append(value)
            if len(group) > limit:
                return group[0]
    return None


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return (a == b) is True
    except Exception:
        return False
