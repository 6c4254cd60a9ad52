"""Structural equality of config values: `cfg == other`, `konfig.diff`, `register_default_values`.

Nodes and mappings compare field by field, lists and tuples item by item (a structure that holds
itself compares once), references by their expression (not by their roots), placeholders by their
type, default and `required`; anything else with `==`.

    config_equal(konfig.ConfigDict(a=[1, 2]), {"a": [1, 2]})  # True
"""

from __future__ import annotations

from collections.abc import Mapping

from ._config_dict import LEAF_TYPES, ConfigDict
from ._placeholder import Placeholder
from ._refs import Ref, refs_equal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def config_equal(a: Any, b: Any, memo: set[tuple[int, int]] | None = None) -> bool:
    """Structural equality of config values; refs compare by expression."""
    if a is b:
        return True
    if memo is None:
        memo = set()
    ta, tb = type(a), type(b)
    if isinstance(a, Mapping) and isinstance(b, Mapping) and not (ta in LEAF_TYPES or tb in LEAF_TYPES):
        pair = (id(a), id(b))
        if pair in memo:
            return True
        memo.add(pair)
        fa = a._fields if isinstance(a, ConfigDict) else a
        fb = b._fields if isinstance(b, ConfigDict) else b
        if len(fa) != len(fb):
            return False
        for k, v in fa.items():
            if k not in fb or not config_equal(v, fb[k], memo):
                return False
        return True
    if isinstance(a, Ref) or isinstance(b, Ref):
        return refs_equal(a, b, lambda x, y: config_equal(x, y, memo))
    if (ta is list or ta is tuple) and ta is tb:
        if ta is list:
            pair = (id(a), id(b))
            if pair in memo:
                return True  # Already being compared (a list containing itself).
            memo.add(pair)
        return len(a) == len(b) and all(config_equal(x, y, memo) for x, y in zip(a, b))
    if ta is not tb:
        return False
    if ta is Placeholder:  # Its default may be a reference, which `==` would turn into one more.
        return a.type == b.type and a.required == b.required and config_equal(a.default, b.default, memo)
    result = a == b
    return result if type(result) is bool else bool(result)
