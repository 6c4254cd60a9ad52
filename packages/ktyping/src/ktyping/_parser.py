"""Parsing shape spec strings into `Spec`s, with column-precise syntax errors.

    >>> parse("*b n+1").dims
    (VariadicDim('*b'), SingleDim('n+1'))

A recursive-descent parser over the characters: whitespace separates dims except
inside parentheses; each dim is a variadic (`*b`, `+#b`, `...`), a broadcastable or
anonymous dim, or `|`-separated expressions with an optional `?`.

Hostile specs fail here, with the column: numbers beyond 2**64, constant expressions
that divide by zero or exceed 2**64 (`9**9**8`), and nesting deeper than `MAX_NESTING`
(which also keeps matching from recursing deeply).
"""

from __future__ import annotations

from ._errors import ShapeSpecSyntaxError, ValueTooLargeError
from ._spec import Spec
from ._spec_tree import (
    _FUNCS,
    MAX_VALUE,
    BinOp,
    Call,
    Const,
    Dim,
    Expr,
    Name,
    Neg,
    PyExpr,
    SingleDim,
    VariadicDim,
    VarRef,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_NESTING", "parse"]


def parse(source: str) -> Spec:
    """Parses a shape spec string (use the cached `_spec_cache.parse_spec`)."""
    parser = _Parser(source)
    try:
        return parser.parse()
    except RecursionError:  # only when called with little stack left: nesting is bounded
        raise parser.error(f"a spec nested less deeply (at most {MAX_NESTING} levels)") from None


_FUNC_NAMES = frozenset(_FUNCS)

# The deepest nesting of parentheses, calls, unary minus and `**` in one dim, and the
# deepest expression tree: evaluating a dim recurses once per level.
MAX_NESTING = 64

_DIVISIONS = ("//", "/", "%")


def _text(expr: Expr) -> str:
    """`9**9**8` for the fully parenthesised `(9**(9**8))`."""
    text = str(expr)
    return text[1:-1] if isinstance(expr, BinOp) else text


class _Parser:
    __slots__ = ("consts", "depth", "has_pyexpr", "heights", "nesting", "pos", "src")

    def __init__(self, src: str) -> None:
        self.src = src
        self.pos = 0
        self.depth = 0  # parenthesis depth: whitespace is only a separator at depth 0
        self.nesting = 0  # parentheses, calls, unary minus and `**` being parsed
        self.has_pyexpr = False
        self.consts: dict[Expr, Any] = {}  # value of each constant sub-expression
        self.heights: dict[Expr, int] = {}  # height of each operator node (leaves: 1)

    def error(self, expected: str, pos: int | None = None) -> ShapeSpecSyntaxError:
        return ShapeSpecSyntaxError(self.src, (self.pos if pos is None else pos) + 1, expected)

    def enter(self, pos: int) -> None:
        """One level deeper (a parenthesis, call, unary minus or `**` at `pos`)."""
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise self.error(f"at most {MAX_NESTING} levels of parentheses, calls, '-' and '**'", pos)

    def built(self, node: Expr, pos: int, *children: Expr) -> Expr:
        """Registers operator `node` (written at `pos`): its height, and its value if constant."""
        heights = self.heights
        height = 1 + max(heights.get(c, 1) for c in children)
        if height > MAX_NESTING:
            raise self.error(f"an expression at most {MAX_NESTING} operators deep", pos)
        heights[node] = height
        consts = self.consts
        if isinstance(node, BinOp) and node.op in _DIVISIONS and consts.get(node.right, 1) == 0:
            raise self.error(f"a divisor that is not 0 in {_text(node)}", pos)
        if all(c in consts for c in children):
            values = [consts[c] for c in children]
            try:
                if isinstance(node, BinOp):
                    consts[node] = node._fn(*values)
                elif isinstance(node, Neg):
                    consts[node] = -values[0]
            except ValueTooLargeError:
                raise self.error(
                    f"a value of at most 2**64 (an axis size), but {_text(node)} is larger", pos
                ) from None
            except ZeroDivisionError:
                raise self.error(f"a defined value, but {_text(node)} divides by zero", pos) from None
        return node

    def peek(self, k: int = 0) -> str:
        p = self.pos + k
        return self.src[p] if p < len(self.src) else ""

    def skip_inner_ws(self) -> None:
        if self.depth:
            while self.peek().isspace():
                self.pos += 1

    def parse(self) -> Spec:
        dims: list[Dim] = []
        src = self.src
        while True:
            while self.peek().isspace():
                self.pos += 1
            if self.pos >= len(src):
                break
            start = self.pos
            dim = self.parse_dim()
            dim.text = src[start : self.pos]
            dims.append(dim)
            if self.pos < len(src) and not self.peek().isspace():
                raise self.error("whitespace between dims or an operator (+ - * // % ** |)")
        return Spec(src, tuple(dims), self.has_pyexpr)

    def parse_name(self) -> str:
        src, start = self.src, self.pos
        if not (self.peek().isascii() and self.peek().isalpha()):
            raise self.error("a dim name")
        self.pos += 1
        while self.peek() and (self.peek().isascii() and (self.peek().isalnum() or self.peek() == "_")):
            self.pos += 1
        return src[start : self.pos]

    def parse_dim(self) -> Dim:
        src = self.src
        if src.startswith("...", self.pos):
            self.pos += 3
            return VariadicDim("...", None, 0, False)
        c = self.peek()
        if c in "*+":
            self.pos += 1
            broadcast = self.peek() == "#"
            if broadcast:
                self.pos += 1
            if self.peek() == "_":
                self.pos += 1
                if self.peek().isalpha():
                    self.parse_name()
                return VariadicDim("", None, 0 if c == "*" else 1, broadcast)
            if not self.peek().isalpha():
                raise self.error(f"a dim name after '{c}' (as in '{c}batch')")
            name = self.parse_name()
            return VariadicDim("", name, 0 if c == "*" else 1, broadcast)
        if c == "#":
            self.pos += 1
            if self.peek().isdecimal():
                expr: Expr = self.parse_int()
            elif self.peek().isalpha():
                expr = Name(self.parse_name())
            else:
                raise self.error("a dim name or a number after '#'")
            return SingleDim("", (expr,), True, self.parse_optional_mark())
        if c == "_":
            self.pos += 1
            if self.peek().isalpha():
                self.parse_name()
            return SingleDim("", (), False, self.parse_optional_mark())
        options = [self.parse_expr()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.parse_expr())
        return SingleDim("", tuple(options), False, self.parse_optional_mark())

    def parse_optional_mark(self) -> bool:
        if self.peek() == "?":
            self.pos += 1
            return True
        return False

    def parse_int(self) -> Const:
        start = self.pos
        while self.peek().isdecimal():
            self.pos += 1
        digits = self.src[start : self.pos]
        value = int(digits) if len(digits) <= 100 else None  # `int` refuses past 4300 digits
        if value is None or value > MAX_VALUE:
            raise self.error("a number of at most 2**64 (an axis size)", start)
        const = Const(value)
        self.consts[const] = value
        return const

    def parse_expr(self) -> Expr:
        left = self.parse_term()
        while True:
            self.skip_inner_ws()
            c = self.peek()
            if c not in ("+", "-"):
                return left
            pos = self.pos
            self.pos += 1
            self.skip_inner_ws()
            right = self.parse_term()
            left = self.built(BinOp(c, left, right), pos, left, right)

    def parse_term(self) -> Expr:
        left = self.parse_unary()
        while True:
            self.skip_inner_ws()
            src = self.src
            if src.startswith("**", self.pos):
                return left  # handled in parse_power; here it can only follow a closed unary
            if src.startswith("//", self.pos):
                op = "//"
            elif self.peek() in ("*", "%", "/"):
                op = self.peek()
            else:
                return left
            pos = self.pos
            self.pos += len(op)
            self.skip_inner_ws()
            right = self.parse_unary()
            left = self.built(BinOp(op, left, right), pos, left, right)

    def parse_unary(self) -> Expr:
        pos = self.pos
        if self.peek() == "-":
            self.enter(pos)
            self.pos += 1
            operand = self.parse_unary()
            self.nesting -= 1
            return self.built(Neg(operand), pos, operand)
        base = self.parse_atom()
        self.skip_inner_ws()
        if self.src.startswith("**", self.pos):
            pos = self.pos
            self.enter(pos)
            self.pos += 2
            self.skip_inner_ws()
            exponent = self.parse_unary()
            self.nesting -= 1
            return self.built(BinOp("**", base, exponent), pos, base, exponent)
        return base

    def parse_atom(self) -> Expr:
        c = self.peek()
        if c.isdecimal():
            return self.parse_int()
        if c.isascii() and c.isalpha():
            start = self.pos
            name = self.parse_name()
            if self.peek() == "(":
                if name not in _FUNC_NAMES:
                    raise self.error(f"one of the functions {', '.join(sorted(_FUNC_NAMES))}", start)
                return self.parse_call(name)
            return Name(name)
        if c == "(":
            self.enter(self.pos)
            self.pos += 1
            self.depth += 1
            self.skip_inner_ws()
            inner = self.parse_expr()
            self.skip_inner_ws()
            if self.peek() != ")":
                raise self.error("')' to close the '('")
            self.pos += 1
            self.depth -= 1
            self.nesting -= 1
            return inner
        if c == "{":
            return self.parse_pyexpr()
        if c == "":
            raise self.error("a dim name, a number, '(' or '{' but the spec ended")
        raise self.error(f"a dim name, a number, '(' or '{{' but found {c!r}")

    def parse_call(self, func: str) -> Expr:
        start = self.pos
        self.enter(start)
        self.pos += 1  # '('
        self.depth += 1
        args: list[Expr] = []
        while True:
            self.skip_inner_ws()
            if self.peek() == "*":
                self.pos += 1
                args.append(VarRef(self.parse_name()))
            else:
                args.append(self.parse_expr())
            self.skip_inner_ws()
            if self.peek() == ",":
                self.pos += 1
                continue
            if self.peek() == ")":
                self.pos += 1
                self.depth -= 1
                self.nesting -= 1
                return self.built(Call(func, tuple(args)), start, *args)
            raise self.error(f"',' or ')' in the arguments of {func}(...)")

    def parse_pyexpr(self) -> Expr:
        start = self.pos
        depth = 0
        src = self.src
        while self.pos < len(src):
            ch = src[self.pos]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            self.pos += 1
        else:
            raise self.error("'}' to close the '{'", start)
        inner = src[start + 1 : self.pos].strip()
        self.pos += 1
        if not inner:
            raise self.error("a Python expression inside '{}'", start + 1)
        try:
            code = compile(inner, "<shape spec>", "eval")
        except SyntaxError as e:
            raise self.error(f"a valid Python expression inside '{{}}' ({e.msg})", start + 1) from None
        except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, too deeply nested
            raise self.error(f"a valid Python expression inside '{{}}' ({e})", start + 1) from None
        self.has_pyexpr = True
        return PyExpr(inner, code)
