"""Kauldron's `ktyping.shape_spec_parser`: `parse(text)` is our parser's `Spec` as a `shape_spec.ShapeSpec`.

    parse("*b h//2 c+1")           # ShapeSpec: repr '*b h//2 c+1', == ShapeSpec(NamedDims("b", length=None), ...)
    parse("a + 1")                 # WhiteSpaceError, a ktyping.ShapeSpecSyntaxError

Kauldron's grammar is ktyping's without whitespace inside a dim (ktyping allows it within parentheses:
`sum(a, b)`): that, and the four mistakes Kauldron names (`WhiteSpaceError`, `InvalidCommaError`,
`PostModifierError` for `a*`, the anonymous `_4` / `_#a`), are found by one scan before our parser runs;
every other error is our parser's `ShapeSpecSyntaxError`. `{...}` values, ktyping's own, are accepted.
"""

from __future__ import annotations

import functools

from . import _parser
from ._errors import ShapeSpecSyntaxError as ShapeSpecSyntaxError
from .shape_spec import ShapeSpec

__all__ = [
    "AnonymousBroadcastableDimError",
    "AnonymousFixedDimError",
    "InvalidCommaError",
    "PostModifierError",
    "ShapeSpecSyntaxError",
    "WhiteSpaceError",
    "parse",
]


class _NamedMistake(ShapeSpecSyntaxError):
    """A syntax error Kauldron names; the message says so, and where ("at position N")."""

    label = ""
    explanation = ""

    def __init__(self, spec: str, column: int) -> None:
        super().__init__(spec, column, self.explanation)

    def __str__(self) -> str:
        caret = " " * (self.column - 1) + "^"
        where = f"{self.label} at position {self.column} of shape spec {self.spec!r}"
        return f"{where}: {self.explanation}\n    {self.spec}\n    {caret}"


class WhiteSpaceError(_NamedMistake):
    label = "Unexpected whitespace"
    explanation = "whitespace only separates dims: write 'a+1', not 'a + 1', and no '(a b)'"


class InvalidCommaError(_NamedMistake):
    label = "Invalid comma"
    explanation = "dims are separated by whitespace, not commas"


class PostModifierError(_NamedMistake):
    label = "Dimension modifier after the name"
    explanation = "'*', '+' and '#' come before the name: '*b' and '#c', not 'b*' or 'c#'"


class AnonymousFixedDimError(_NamedMistake):
    label = "Fixed anonymous dimension"
    explanation = "a dim is either a number or anonymous: '4' or '_', not '_4'"


class AnonymousBroadcastableDimError(_NamedMistake):
    label = "Anonymous broadcastable dimension"
    explanation = "an anonymous dim takes any size already: '_a', not '_#a' or '#_a'"


@functools.lru_cache(maxsize=4096)
def parse(spec: str) -> ShapeSpec:
    """Parses `spec` in Kauldron's grammar; raises `ShapeSpecSyntaxError` (one of the subclasses above if named)."""
    mistake = _named_mistake(spec)
    if mistake is not None:
        raise mistake
    return ShapeSpec(*_parser.parse(spec).dims)


_OPERATORS = frozenset("+-*/%|")


def _named_mistake(spec: str) -> ShapeSpecSyntaxError | None:
    """The first mistake Kauldron names in `spec`, scanning left to right; None if there is none."""
    depth = 0
    at_dim_start = True
    i, n = 0, len(spec)
    while i < n:
        c = spec[i]
        if c == "{":  # ktyping's `{python expression}`: opaque here, checked by our parser
            close = spec.find("}", i)
            i = n if close < 0 else close + 1
            at_dim_start = False
            continue
        if c.isspace():
            if depth > 0:
                return WhiteSpaceError(spec, i + 1)
            at_dim_start = True
            i += 1
            continue
        if at_dim_start:
            at_dim_start = False
            end = next((k for k in range(i, n) if spec[k].isspace()), n)
            if all(ch in _OPERATORS for ch in spec[i:end]):  # `a + 1`: an operator standing alone
                return WhiteSpaceError(spec, i + 1)
            j = i
            while j < n and spec[j] in "*+":
                j += 1
            if spec.startswith(("_#", "#_"), j):
                return AnonymousBroadcastableDimError(spec, j + 1)
            if spec[j : j + 1] == "_" and spec[j + 1 : j + 2].isdecimal():
                return AnonymousFixedDimError(spec, j + 1)
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            return InvalidCommaError(spec, i + 1)
        elif c.isalnum() or c == "_":
            j = i + 1
            while j < n and spec[j] in "*#":
                j += 1
            if j > i + 1 and (j == n or spec[j].isspace() or spec[j] in ",)"):
                return PostModifierError(spec, i + 2)
        elif c in _OPERATORS and i + 1 < n and spec[i + 1].isspace():  # `a+ 1`
            return WhiteSpaceError(spec, i + 2)
        i += 1
    return None
