"""Which keys of a call node are positional arguments: `"0"`, `"1"`, ... (canonical ASCII indices)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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
