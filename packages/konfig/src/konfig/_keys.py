"""The keys of a config node: the markers `__qualname__` (a call) and `__const__` (a constant), and
the positional arguments of a call, stored as `"0"`, `"1"`, ... (canonical ASCII indices).

    >>> is_positional_key("1"), is_positional_key("01"), is_positional_key("lr")
    (True, False, False)
    >>> path_key({"__qualname__": "optax:adam", "0": 0.1}, "0")
    0
    >>> num_args({"__qualname__": "optax:adam", "0": 0.1, "b1": 0.9})
    1
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

QUALNAME = "__qualname__"
CONST = "__const__"
# `A | B` of captured types is stored as a call of this.
UNION_QUALNAME = "operator:or_"


def is_positional_key(key: Any) -> bool:
    """True for `"0"`, `"12"`; False for keyword names and for `"00"`, `"٣"`, `"²"` (not indices).

    Usage: `args = [fields[k] for k in fields if is_positional_key(k)]`.
    """
    return (
        type(key) is str
        and key.isdigit()
        and key.isascii()
        and (key[0] != "0" or len(key) == 1)
        and len(key) <= 18
    )


def path_key(fields: dict[Any, Any], key: Any) -> Any:
    """How a path names `key` of a node with `fields`: a call's positional argument `"1"` is `1`."""
    if QUALNAME in fields and type(key) is str and key.isdigit() and is_positional_key(key):
        return int(key)
    return key


def num_args(fields: dict[Any, Any]) -> int:
    """Number of contiguous positional arguments `"0"`, `"1"`, ... in `fields`."""
    n = 0
    while str(n) in fields:
        n += 1
    return n
