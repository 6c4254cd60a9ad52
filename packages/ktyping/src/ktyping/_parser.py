"""Parsing shape spec strings into `Spec`s, with column-precise syntax errors.

    >>> parse("*b n+1").dims
    (VariadicDim('*b'), SingleDim('n+1'))

A recursive-descent parser over the characters: whitespace separates dims except
inside parentheses; each dim is a variadic (`*b`, `+#b`, `...`), a broadcastable or
anonymous dim, or `|`-separated expressions with an optional `?`.
"""

from __future__ import annotations

from ._errors import ShapeSpecSyntaxError
from ._spec import (
    _FUNCS,
    BinOp,
    Call,
    Const,
    Dim,
    Expr,
    Name,
    Neg,
    PyExpr,
    SingleDim,
    Spec,
    VariadicDim,
    VarRef,
)

__all__ = ["parse"]


def parse(source: str) -> Spec:
    """Parses a shape spec string (use the cached `_spec.parse_spec`)."""
    return _Parser(source).parse()


_FUNC_NAMES = frozenset(_FUNCS)


class _Parser:
    __slots__ = ("depth", "has_pyexpr", "pos", "src")

    def __init__(self, src: str) -> None:
        self.src = src
        self.pos = 0
        self.depth = 0  # parenthesis depth: whitespace is only a separator at depth 0
        self.has_pyexpr = False

    def error(self, expected: str, pos: int | None = None) -> ShapeSpecSyntaxError:
        return ShapeSpecSyntaxError(self.src, (self.pos if pos is None else pos) + 1, expected)

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
            if self.peek().isdigit():
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
        while self.peek().isdigit():
            self.pos += 1
        return Const(int(self.src[start : self.pos]))

    def parse_expr(self) -> Expr:
        left = self.parse_term()
        while True:
            self.skip_inner_ws()
            c = self.peek()
            if c not in ("+", "-"):
                return left
            self.pos += 1
            self.skip_inner_ws()
            left = BinOp(c, left, self.parse_term())

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
            self.pos += len(op)
            self.skip_inner_ws()
            left = BinOp(op, left, self.parse_unary())

    def parse_unary(self) -> Expr:
        if self.peek() == "-":
            self.pos += 1
            return Neg(self.parse_unary())
        base = self.parse_atom()
        self.skip_inner_ws()
        if self.src.startswith("**", self.pos):
            self.pos += 2
            self.skip_inner_ws()
            return BinOp("**", base, self.parse_unary())
        return base

    def parse_atom(self) -> Expr:
        c = self.peek()
        if c.isdigit():
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
            self.pos += 1
            self.depth += 1
            self.skip_inner_ws()
            inner = self.parse_expr()
            self.skip_inner_ws()
            if self.peek() != ")":
                raise self.error("')' to close the '('")
            self.pos += 1
            self.depth -= 1
            return inner
        if c == "{":
            return self.parse_pyexpr()
        if c == "":
            raise self.error("a dim name, a number, '(' or '{' but the spec ended")
        raise self.error(f"a dim name, a number, '(' or '{{' but found {c!r}")

    def parse_call(self, func: str) -> Expr:
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
                return Call(func, tuple(args))
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
        self.has_pyexpr = True
        return PyExpr(inner, code)
