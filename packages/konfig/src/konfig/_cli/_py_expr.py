"""`py::` values: a Python expression read with `ast` into config nodes, never evaluated.

    parse_py_expression("flax.linen.Dense(features=12)")
    # {'__qualname__': 'flax.linen:Dense', 'features': 12}

Supported: calls with positional and keyword arguments (`module.Name(1, x=2)`),
constants (`module.Name` -> `{'__const__': 'module:Name'}`), an explicit module
boundary with a colon (`mylib.models:Trainer.eval_only(...)`, the only way to
reach a classmethod or an enum member), the aliases `repr(cfg)` prints
(`nn.Dense` is `flax.linen:Dense`), literals, negative numbers, `inf` and
`nan`, lists, tuples, sets and dicts of those. Without a colon the last dotted name is the
attribute and the rest the module; a bare name is a builtin (`dict(a=1)`).
Nothing is evaluated, imported or called while parsing (the text is read
with `ast.parse`, never `eval`): a name in a module already imported is
checked by looking it up without running code (`vars(module)`,
`inspect.getattr_static`), and a typo suggests the closest name. The nodes
are built by `konfig.resolve`, whose `allowed=[...]` limits what they may
name. Text too long or nested too deeply for Python's parser is an
`OverrideError`.
"""

from __future__ import annotations

import sys

from .. import _repr
from .._config_dict import ConfigDict, unchecked_node
from .._errors import OverrideError, shown
from .._targets import NoAttribute, find_imported

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from typing import Any

__all__ = ["PY_PREFIX", "parse_py_expression"]

PY_PREFIX = "py::"
_COLON = "__konfig_module_boundary__"


def parse_py_expression(expr: str, *, check: bool = True) -> Any:
    """Parses a `py::` expression (without the prefix) into config values.

    Usage: `cfg.model = parse_py_expression("mylib.Dense(features=12)")`; a printed node
    (`<ConfigDict[mylib.Dense(features=12)]>`, what `repr(node)` gives) reads as its inside.
    `check=False` reads the text only: no name or argument is checked against a module already imported
    (Kauldron's `py_flag_parser`); `konfig.resolve` checks them later.
    """
    import ast

    text = expr.strip()
    if text.startswith("<ConfigDict[") and text.endswith("]>"):
        text = text[len("<ConfigDict[") : -len("]>")]
    source = _mark_module_boundaries(text)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as e:
        raise OverrideError(f"`py::{shown(expr)}` is not a Python expression: {e.msg}.") from e
    except (MemoryError, RecursionError, ValueError):  # the parser's own limits on nesting
        raise OverrideError(
            f"`py::{shown(expr)}` ({len(expr):,} characters) is nested too deeply for Python's parser."
        ) from None
    try:
        return _Reader(expr, check=check).read(tree.body)
    except RecursionError:
        raise OverrideError(
            f"`py::{shown(expr)}` is nested deeper than konfig can read within Python's recursion "
            f"limit ({sys.getrecursionlimit()})."
        ) from None


def _mark_module_boundaries(expr: str) -> str:
    """Rewrites `a.b:C.D` (no spaces around `:`) as an attribute chain with a marker."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(expr).readline))
    except (tokenize.TokenError, SyntaxError):
        return expr
    line_starts = [0]
    for line in expr.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    offsets = []
    for prev, tok, nxt in zip(tokens, tokens[1:], tokens[2:]):
        if (
            tok.type == tokenize.OP
            and tok.string == ":"
            and prev.type == tokenize.NAME
            and nxt.type == tokenize.NAME
            and prev.end == tok.start
            and tok.end == nxt.start
        ):
            row, col = tok.start
            offsets.append(line_starts[row - 1] + col)
    for offset in reversed(offsets):
        expr = f"{expr[:offset]}.{_COLON}.{expr[offset + 1 :]}"
    return expr


class _Reader:
    def __init__(self, expr: str, *, check: bool = True) -> None:
        self.expr = expr
        self.check = check

    def error(self, node: ast.AST, what: str) -> OverrideError:
        col = getattr(node, "col_offset", 0)
        return OverrideError(
            f"`py::{shown(self.expr)}`: {what} (at column {col}). A `py::` value may hold calls "
            "`module.Name(...)`, constants `module.Name`, literals, lists, tuples, sets and dicts."
        )

    def node(self, fields: dict[str, Any]) -> Any:
        """The config node, its target checked when its module is already loaded (never imported)."""
        if not self.check:
            return unchecked_node(fields)
        target = str(fields.get("__qualname__", fields.get("__const__")))
        try:
            find_imported(target)  # No module `__getattr__`, property or other descriptor is run.
        except NoAttribute as e:
            import difflib

            public = [n for n in dir(e.owner) if not n.startswith("_")]
            close = difflib.get_close_matches(e.name, public, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else "."
            module = target.partition(":")[0]
            raise OverrideError(f"`py::{shown(self.expr)}`: `{module}` has no `{e.name}`{hint}") from None
        try:
            return ConfigDict(fields)
        except (TypeError, ValueError) as e:  # arguments the target's signature refuses
            raise OverrideError(f"`py::{shown(self.expr)}`: {e}") from None

    def read(self, node: ast.expr) -> Any:
        import ast

        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.read(node.operand)
            if isinstance(operand, (int, float, complex)) and not isinstance(operand, bool):
                return -operand if isinstance(node.op, ast.USub) else operand
            raise self.error(node, "a sign applies only to a number")
        if isinstance(node, ast.List):
            return [self.read(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.read(e) for e in node.elts)
        if isinstance(node, (ast.Set, ast.Dict)):
            try:
                if isinstance(node, ast.Set):
                    return {self.read(e) for e in node.elts}
                if any(k is None for k in node.keys):
                    raise self.error(node, "`**` unpacking is not supported")
                return {self.read(k): self.read(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
            except TypeError as e:  # unhashable
                raise self.error(node, f"a dict key or set item must be a hashable literal ({e})") from None
        if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
            return float(node.id)  # as `repr` prints them
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.node({"__const__": self.qualname(node)})
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.error(node, f"`{ast.unparse(node)}` ({type(node).__name__}) is not supported")

    def call(self, node: ast.Call) -> Any:
        import ast

        fields: dict[str, Any] = {"__qualname__": self.qualname(node.func)}
        for index, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                raise self.error(arg, "`*args` unpacking is not supported")
            fields[str(index)] = self.read(arg)
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.error(keyword.value, "`**kwargs` unpacking is not supported")
            if keyword.arg in ("__qualname__", "__const__"):
                raise self.error(
                    keyword.value, f"`{keyword.arg}` is a konfig node marker, not a keyword argument"
                )
            if keyword.arg in fields:
                raise self.error(keyword.value, f"keyword argument `{keyword.arg}` given twice")
            fields[keyword.arg] = self.read(keyword.value)
        return self.node(fields)

    def qualname(self, node: ast.expr) -> str:
        import ast

        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            raise self.error(node, f"`{ast.unparse(node)}` is not a dotted name")
        parts.append(node.id)
        parts.reverse()
        if parts.count(_COLON) > 1:
            raise self.error(node, "a name has at most one `:` (between the module and the attribute)")
        if _COLON in parts:
            index = parts.index(_COLON)
            module, attr = parts[:index], parts[index + 1 :]
        elif len(parts) == 1:
            module, attr = ["builtins"], parts
        else:
            module, attr = parts[:-1], parts[-1:]
        return _expand_alias(".".join(module), ".".join(attr))


def _expand_alias(module: str, attr: str) -> str:
    """`nn` -> `flax.linen` for the aliases `repr(cfg)` prints, so printed nodes parse back."""
    if module not in sys.modules:
        for full, alias in _repr._ALIASES.items():
            if module == alias or module.startswith(alias + "."):
                module = full + module[len(alias) :]
                break
    return f"{module}:{attr}"
