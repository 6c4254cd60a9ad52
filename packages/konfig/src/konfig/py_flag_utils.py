"""Kauldron's module path `konfig.py_flag_utils`: `py::` flag values (see `konfig.py_flag_parser`).

Usage: `py_flag_utils.maybe_parse_py_flag_value("py::np.int32") == ConfigDict({"__const__": "numpy:int32"})`;
any other value is returned as it is.
"""

from __future__ import annotations

from .py_flag_parser import parse as parse_py_flag_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PY_PREFIX = "py::"


def maybe_parse_py_flag_value(value: Any) -> Any:
    """A `py::...` string read as config values (`parse_py_flag_value`); anything else unchanged."""
    if isinstance(value, str) and value.startswith(PY_PREFIX):
        return parse_py_flag_value(value[len(PY_PREFIX) :])
    return value


__all__ = ["PY_PREFIX", "maybe_parse_py_flag_value", "parse_py_flag_value"]
