"""The values a config stores as they are: immutable and cheap to copy, so no walker looks inside them.

`ConfigDict` stores these without a check, copies share them, and `_ref_value` computes with them.

    >>> type(0.1) in LEAF_TYPES, type([]) in LEAF_TYPES
    (True, False)
"""

LEAF_TYPES = frozenset({type(None), bool, int, float, complex, str, bytes, type(...), slice, range})
