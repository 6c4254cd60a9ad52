"""Checks of argument values shared by the pipelines.

Usage:

    is_int(3, at_least=1)  # True; False for 0, 2.0, True, "3"
"""

from __future__ import annotations

import numbers
from typing import Any


def is_int(value: Any, *, at_least: int) -> bool:
    """Whether `value` is an integer (Python or numpy, not a bool) of at least `at_least`."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= at_least
