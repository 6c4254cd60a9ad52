"""What one safe resolve may build and read: the per-result bounds and the budgets of the whole resolve.

Each result of an operation or a plain value's method holds at most `MAX_ITEMS` items (an int at most
`MAX_INT_BITS` bits); all the plain values one resolve creates share `MAX_TOTAL_BYTES`, and all it reads
(`read_size`: `==`, `in`, `count`, hashing and sorting read their operands whole) `MAX_TOTAL_WORK`. A
`Budget` keeps both counts and refuses, before the operation runs, what would pass them.

    >>> budget = Budget()
    >>> budget.expect(str, 1000, "str * 1000")  # fits: nothing is counted until the result exists
    >>> budget.count_result("a" * 1000); budget.spent
    1000
"""

from __future__ import annotations

import sys

from ._errors import safe_mode_refused
from ._immutable_dict import ImmutableDict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Bounds on what operations on plain values may produce in safe mode.
MAX_ITEMS = 10_000_000  # characters of a str/bytes, items of a container
MAX_INT_BITS = 10_000  # ~3,000 decimal digits

SIZED = (str, bytes, list, tuple, dict, set, frozenset, bytearray)
# What one item of a result costs (a character, a list slot and a new element, a hash table entry).
BYTES_PER_ITEM: dict[type, int] = {
    str: 1,
    bytes: 1,
    bytearray: 1,
    list: 40,
    tuple: 40,
    set: 64,
    frozenset: 64,
    dict: 96,
}
# Estimated bytes of plain values one resolve may create by operations and plain calls.
MAX_TOTAL_BYTES = 256 * 1024 * 1024
# Bytes of plain values one resolve's operations and plain calls may read in all (`read_size`): about a
# a few seconds of scanning at worst (`str.count("ab")` reads ~2.5 ns a byte): ~100 reads of a 10 MB text.
MAX_TOTAL_WORK = 1024 * 1024 * 1024

# Values `read_size` takes at `sys.getsizeof` (the builtins' own, exact types only): a str at its width.
_READ_LEAVES = frozenset({bool, int, float, complex, str, bytes, bytearray, type(None)})
_READ_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, ImmutableDict})
_OTHER_READ = 64  # an object that is not a plain value: what it reads is its own methods' business
# The header of a str that is not ASCII (its characters take 1, 2 or 4 bytes, and one more for the end).
_WIDE_STR_HEADER = sys.getsizeof("\xe9") - 2


class Budget:
    """What one safe resolve may still create and read, charged before each operation runs.

    A nested resolve's budget has the budget of the resolve it runs in as `parent`: it is charged together
    with every budget above it, and refuses what any of them cannot hold.

    Usage: `budget.expect(str, n * k, "str * k")` before an operation builds its result,
    `budget.count_result(result)` after, `budget.charge_read(operands, lambda: "str.count")` before it reads.
    """

    __slots__ = ("parent", "spent", "worked")

    def __init__(self, parent: Budget | None = None) -> None:
        self.parent = parent
        self.spent = 0  # estimated bytes of plain values created by operations and plain calls
        self.worked = 0  # bytes of plain values read by operations and plain calls (`read_size`)

    def expect(self, kind: type, items: int, what: str, width: int = 1) -> None:
        """Refuses, before it is built, a result of `items` items, or one the resolve's budget cannot hold.

        A str's characters cost `width` bytes each (1, 2 or 4: its widest character's, as Python stores it).
        """
        if items > MAX_ITEMS:
            raise safe_mode_refused(f"{what}: it would hold {items:,} items (limit {MAX_ITEMS:,})")
        cost = items * BYTES_PER_ITEM.get(kind, 8) * (width if kind is str else 1)
        budget: Budget | None = self
        while budget is not None:
            if budget.spent + cost > MAX_TOTAL_BYTES:
                raise safe_mode_refused(
                    f"{what}: the plain values this resolve creates would pass ~{MAX_TOTAL_BYTES >> 20} MB"
                    f" ({budget.spent >> 20} MB so far)"
                )
            budget = budget.parent

    def count_result(self, value: Any) -> None:
        """After an operation or call on plain values: its result's size bounded, then counted."""
        t = type(value)
        if t is int:
            if value.bit_length() > MAX_INT_BITS:
                raise safe_mode_refused(f"an int of {value.bit_length():,} bits (limit {MAX_INT_BITS:,})")
        elif t in SIZED:
            size = len(value)
            width = char_width(value) if t is str else 1
            self.expect(t, size, f"a {t.__name__} result", width)
            budget: Budget | None = self
            while budget is not None:
                budget.spent += size * BYTES_PER_ITEM.get(t, 8) * width
                budget = budget.parent

    def charge_read(self, values: Any, what: Callable[[], str], times: int = 1) -> None:
        """Before an operation that reads `values` (`times` over: a sort's comparisons): their `read_size`
        counted in the resolve's work budget, refused past `MAX_TOTAL_WORK` (a thousand `big.count("ab")`).
        `what()` names the operation in the refusal."""
        budget: Budget | None = self
        done = 0
        while budget is not None:
            done = max(done, budget.worked)
            budget = budget.parent
        if set(map(type, values)) <= _READ_LEAVES:  # scalars and texts, the common case
            work = sum(map(sys.getsizeof, values)) * times
        else:
            work = read_size(values, (MAX_TOTAL_WORK - done) // times + 1) * times
        if done + work > MAX_TOTAL_WORK:
            raise safe_mode_refused(
                f"{what()}: the operations of this resolve would read more than {MAX_TOTAL_WORK >> 20:,} MB of"
                f" plain values in all ({done / 2**20:,.1f} MB so far; this one reads {work / 2**20:,.1f} MB"
                " or more)"
            )
        budget = self
        while budget is not None:
            budget.worked += work
            budget = budget.parent


def char_width(*values: Any) -> int:
    """The bytes per character of a str holding the characters of the strs among `values`: 1, 2 or 4."""
    width = 1
    for value in values:
        if type(value) is str and not value.isascii():  # both O(1): the kind is read off its size
            kind = (sys.getsizeof(value) - _WIDE_STR_HEADER) // (len(value) + 1)
            width = max(width, kind if kind in (1, 2, 4) else 4)
    return width


def length(value: Any) -> int:
    """`len(value)` for a sized plain value; a `range` too long for `len` counts as unbounded."""
    try:
        return len(value)
    except OverflowError:
        return MAX_ITEMS + 1


def read_size(values: Any, limit: int) -> int:
    """Bytes a full read of `values` goes through, as `==`, `in`, `count`, hashing or sorting read them.

    Each plain value counts its own size (`sys.getsizeof`: a str's characters at their width), a container
    that and everything in it, a part shared by several places every time it is reached (a comparison of
    two copies reads it each time: `[x] * 1000 == [y] * 1000`); a `range` 8 bytes an item. Each distinct
    container is measured once (a chain of shared nodes with 2**30 paths takes 30 steps), and counting
    stops past `limit`.

    Usage: `read_size(("a" * 100, [1, 2]), 10**9)` is about 150 + 56 + 2 * 28.
    """
    total = 0
    memo: dict[int, int] = {}  # id of a container -> its size; -1 while its items are measured (a cycle)
    for value in values:
        t = type(value)
        if t in _READ_LEAVES:
            total += sys.getsizeof(value)
        elif t in _READ_CONTAINERS:
            size = _flat_read_size(value)
            total += size if size >= 0 else _container_read_size(value, memo, limit - total)
        elif t is range:  # `range(10**20).count(0.5)` iterates it
            n = length(value)
            total += 8 * n if n <= MAX_ITEMS else limit + 1
        else:
            total += _OTHER_READ
        if total > limit:
            break
    return total


def _container_read_size(root: Any, memo: dict[int, int], limit: int) -> int:
    """`read_size` of one container: its containers measured first (a stack of its own), then added up."""
    stack = [root]
    while stack:
        item = stack[-1]
        key = id(item)
        if key not in memo:
            memo[key] = -1
            inner = [
                child
                for group in _read_groups(item)
                if not set(map(type, group)) <= _READ_LEAVES
                for child in group
                if type(child) in _READ_CONTAINERS and id(child) not in memo
            ]
            if inner:
                stack.extend(inner)
                continue
        stack.pop()
        if memo[key] == -1:
            memo[key] = _items_read_size(item, memo, limit)
    return max(memo[id(root)], 0)


def _flat_read_size(item: Any) -> int:
    """`read_size` of a container that holds only leaves (the common case, at C speed), else -1."""
    total = sys.getsizeof(item._data if type(item) is ImmutableDict else item)
    for group in _read_groups(item):
        if not set(map(type, group)) <= _READ_LEAVES:
            return -1
        total += sum(map(sys.getsizeof, group))
    return total


def _read_groups(item: Any) -> tuple[Any, ...]:
    """What a read of a container goes through: its items, a dict's keys and values."""
    t = type(item)
    if t is dict:
        return (item, item.values())
    if t is ImmutableDict:  # resolved config nodes (`freeze=True`), compared by their dicts
        return (item._data, item._data.values())
    return (item,)


def _items_read_size(item: Any, memo: dict[int, int], limit: int) -> int:
    """`read_size` of a container whose inner containers are measured already (`memo`)."""
    total = sys.getsizeof(item._data if type(item) is ImmutableDict else item)
    for group in _read_groups(item):
        if set(map(type, group)) <= _READ_LEAVES:  # the common case, at C speed
            total += sum(map(sys.getsizeof, group))
        else:
            for child in group:
                t = type(child)
                if t in _READ_LEAVES:
                    total += sys.getsizeof(child)
                elif t in _READ_CONTAINERS:
                    total += max(memo.get(id(child), 0), 0)  # 0: a cycle back (comparing it raises)
                else:
                    total += read_size((child,), limit)
                if total > limit:
                    return total
    return total
