"""Kauldron's module path `konfig.py_flag_parser`: a `py::` flag's text read into config values, never run.

Usage: `py_flag_parser.parse("nn.Dense(features=12)") == ConfigDict({"__qualname__": "flax.linen:Dense",
"features": 12})`. It is konfig's own `py::` reader (see `konfig._cli._py_expr`) with Kauldron's two
differences: a text that cannot be read is a `ValueError` ("Invalid py:: expression"), names and arguments are not checked against
modules already imported (as Kauldron's, `konfig.resolve` checks them), and Kauldron's module
aliases are expanded as Kauldron does (`kd.data.X` is `kauldron.kd:data.X`: under kd's `kauldron` alias, kd).
"""

from __future__ import annotations

from ._cli._py_expr import _mark_module_boundaries, parse_py_expression
from ._config_dict import ConfigDict
from ._errors import OverrideError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Kauldron's short module names (its `configdict_base` display aliases) beyond konfig's own (`np`, `nn`, ...).
KAULDRON_ALIASES = {
    "kd": "kauldron.kd",
    "kxm": "kauldron.kxm",
    "gm": "gemma.gm",
    "tfds": "tensorflow_datasets",
}
_TARGET_KEYS = ("__qualname__", "__const__")


def parse(expr: str) -> Any:
    """The config values `expr` (a Python expression, without the `py::` prefix) stands for: calls become
    `ConfigDict({"__qualname__": "module:Name", ...})`, names `{"__const__": ...}`, literals and collections
    themselves. Raises ValueError for a text that is no such expression."""
    try:
        value = parse_py_expression(expr, check=False)  # as Kauldron's: text only, checked at resolve
    except OverrideError as e:
        raise ValueError(f"Invalid py:: expression: {expr!r} ({e})") from e
    bare = _bare_name(expr)
    if bare is not None:  # konfig reads `dict(a=1)` as a builtin; Kauldron's grammar wants `module.Name`
        raise ValueError(f"Invalid py:: expression: {expr!r} (`{bare}` names no module: write `module.{bare}`)")
    return _expand_aliases(value)


def _bare_name(expr: str) -> str | None:
    """The first name in `expr` that is not part of a dotted name (`inf` and `nan` are numbers), or None."""
    import ast

    tree = ast.parse(_mark_module_boundaries(expr.strip()), mode="eval")
    dotted = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in dotted and node.id not in ("inf", "nan"):
            return node.id
    return None


def _expand_aliases(value: Any) -> Any:
    if isinstance(value, ConfigDict):
        for key in list(value.keys()):
            item = value[key]
            value[key] = _expanded(item) if key in _TARGET_KEYS else _expand_aliases(item)
        return value
    if isinstance(value, list):
        return [_expand_aliases(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_expand_aliases(v) for v in value)
    if isinstance(value, dict):
        return {k: _expand_aliases(v) for k, v in value.items()}
    return value


def _expanded(qualname: Any) -> Any:
    """`"kd.data:X"` -> `"kauldron.kd:data.X"`; any other target as it is."""
    if not isinstance(qualname, str):
        return qualname
    module, sep, attrs = qualname.partition(":")
    first, _, rest = module.partition(".")
    if first not in KAULDRON_ALIASES:
        return qualname
    attrs = ".".join(part for part in (rest, attrs) if part)
    return f"{KAULDRON_ALIASES[first]}:{attrs}" if sep or rest else KAULDRON_ALIASES[first]


__all__ = ["KAULDRON_ALIASES", "parse"]
