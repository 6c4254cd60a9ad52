"""Reading and writing path strings: a small hand-written recursive-descent parser.

Grammar (whitespace is allowed inside ``[]`` only)::

    path      := [ first ( "." name | "[" subscript "]" )* ]
    first     := name | "[" subscript "]"
    name      := identifier | integer | "*" | "**"
    subscript := item ( "," item )* [","]          # several items form a tuple key
    item      := literal | slice | "..."
    slice     := [int] ":" [int] [ ":" [int] ]
    literal   := int | float | complex | 'str' | "str" | None | True | False
               | "(" [literal ("," literal)* [","]] ")"

A complex key is written as Python writes it: ``x[2j]``, ``x[(1-2j)]`` (a parenthesised single literal is
that literal). Several items of one subscript are written without spaces, as Kauldron does:
``x[:,7,::-1,None]``.

``format_parts`` writes the canonical form, which ``parse_parts`` reads back to the same parts.
Syntax errors, all ``PathSyntaxError``, include what Python itself would refuse or only warn about:
tuples nested more than 100 deep, integers longer than ``sys.get_int_max_str_digits()`` digits,
escapes such as ``'\\d'``.
"""

from __future__ import annotations

import sys

from ._errors import GlobPathError, PathSyntaxError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_NAME_STOP = ".[]"
_MAX_NESTING = 100  # Tuple keys nest at most this deep: reading, writing, hashing them recurse per level.
_ESCAPES = frozenset("\n\r\\'\"abfnrtvxNuU01234567")
_TOKEN_STOP = ",:])([ \t\n\r"
_WHITESPACE = " \t\n\r"


class Wildcard:
    """A glob wildcard: ``Wildcard.STAR`` (``*``, one level) or ``Wildcard.DOUBLE_STAR`` (``**``, any depth)."""

    __slots__ = ("symbol",)
    symbol: str
    STAR: Wildcard
    DOUBLE_STAR: Wildcard

    def __new__(cls, symbol: str) -> Wildcard:
        existing = _WILDCARDS.get(symbol)
        if existing is not None:
            return existing
        if symbol not in ("*", "**") or _WILDCARDS_FROZEN:
            raise ValueError(f"Unknown wildcard {symbol!r}: expected '*' or '**'.")
        self = object.__new__(cls)
        self.symbol = symbol
        return self

    def __repr__(self) -> str:
        return "Wildcard.STAR" if self.symbol == "*" else "Wildcard.DOUBLE_STAR"

    def __str__(self) -> str:
        return self.symbol

    def __reduce__(self) -> tuple[type[Wildcard], tuple[str]]:
        return (Wildcard, (self.symbol,))


_WILDCARDS: dict[str, Wildcard] = {}
_WILDCARDS_FROZEN = False
STAR = _WILDCARDS["*"] = Wildcard("*")
DOUBLE_STAR = _WILDCARDS["**"] = Wildcard("**")
_WILDCARDS_FROZEN = True
Wildcard.STAR = STAR
Wildcard.DOUBLE_STAR = DOUBLE_STAR

_CACHE: dict[str, tuple[object, ...]] = {}
_CACHE_MAX = 8192
_CACHE_TEXT_MAX = 1000  # Longer texts are parsed each time: the cache stays small whatever it is given.


def parse_parts(text: str) -> tuple[object, ...]:
    """Parses a path string into its parts (cached): ``parse_parts("a[0].b") == ("a", 0, "b")``."""
    parts = _CACHE.get(text)
    if parts is None:
        parts = _parse_dotted(text)
        if parts is None:
            parts = _Parser(text).parse()
        if len(text) <= _CACHE_TEXT_MAX:
            if len(_CACHE) >= _CACHE_MAX:
                _CACHE.clear()
            _CACHE[text] = parts
    return parts


def _parse_dotted(text: str) -> tuple[object, ...] | None:
    """Fast path for the common ``a.b.0.c`` form; ``None`` hands over to the full parser."""
    if not text or "[" in text or "]" in text:
        return None
    parts: list[object] = []
    for name in text.split("."):
        if name.isidentifier():
            parts.append(name)
        elif name.isdigit() and name.isascii():
            try:
                parts.append(int(name))
            except ValueError:  # More digits than `int` reads: the full parser says so.
                return None
        else:
            return None
    return tuple(parts)


def _name_part(token: str) -> object:
    if token.isidentifier():
        return token
    if token == "*":
        return STAR
    if token == "**":
        return DOUBLE_STAR
    digits = token[1:] if token[:1] in "+-" else token
    if digits and digits.isascii() and digits.isdigit():
        try:
            return int(token)
        except ValueError:
            return _TOO_LONG
    return _INVALID


_INVALID = object()
_TOO_LONG = object()  # An integer with more digits than `int` reads (sys.get_int_max_str_digits).


def _too_long(token: str) -> str:
    digits = sum(c.isdigit() for c in token)
    return (
        f"expected an integer of at most {sys.get_int_max_str_digits()} digits, got one of {digits} digits "
        "(sys.set_int_max_str_digits raises the limit)"
    )


class _Parser:
    __slots__ = ("depth", "n", "pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.n = len(text)
        self.depth = 0  # Of the tuple being read.

    def error(self, expected: str, position: int | None = None) -> Exception:
        return PathSyntaxError(self.text, self.pos if position is None else position, expected)

    def parse(self) -> tuple[object, ...]:
        text, n = self.text, self.n
        parts: list[object] = []
        if n == 0:
            return ()
        if text[0] != "[":
            parts.append(self.name())
        while self.pos < n:
            c = text[self.pos]
            if c == ".":
                self.pos += 1
                parts.append(self.name())
            elif c == "[":
                self.pos += 1
                parts.append(self.subscript())
                if self.pos >= n or text[self.pos] != "]":
                    raise self.error("expected ',' or ']'")
                self.pos += 1
            else:
                raise self.error("expected '.' or '[' between parts")
        return tuple(parts)

    def name(self) -> object:
        text, start = self.text, self.pos
        end = start
        while end < self.n and text[end] not in _NAME_STOP:
            end += 1
        token = text[start:end]
        part = _name_part(token)
        if part is _TOO_LONG:
            raise self.error(_too_long(token))
        if part is _INVALID:
            what = "an empty name" if not token else f"{token!r}"
            raise self.error(f"expected a name (identifier, integer, '*' or '**'), got {what}")
        self.pos = end
        return part

    def skip_ws(self) -> None:
        while self.pos < self.n and self.text[self.pos] in _WHITESPACE:
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < self.n else ""

    def subscript(self) -> object:
        items: list[object] = []
        trailing_comma = False
        while True:
            self.skip_ws()
            items.append(self.item())
            self.skip_ws()
            if self.peek() != ",":
                break
            self.pos += 1
            self.skip_ws()
            if self.peek() == "]":
                trailing_comma = True
                break
        if len(items) == 1 and not trailing_comma:
            return items[0]
        return tuple(items)

    def item(self) -> object:
        start_pos = self.pos
        start: object = None
        if self.peek() != ":":
            start = self.literal()
            self.skip_ws()
            if self.peek() != ":":
                return start
        # A slice: [start] ":" [stop] [":" [step]]
        self.pos += 1
        self.skip_ws()
        stop: object = None
        step: object = None
        if self.peek() not in (":", ",", "]", ""):
            stop = self.literal()
            self.skip_ws()
        if self.peek() == ":":
            self.pos += 1
            self.skip_ws()
            if self.peek() not in (",", "]", ""):
                step = self.literal()
        for bound in (start, stop, step):
            if bound is not None and type(bound) is not int:
                raise self.error(f"slice bounds must be integers, got {bound!r}", start_pos)
        return slice(start, stop, step)

    def literal(self) -> object:
        c = self.peek()
        if c == "'" or c == '"':
            return self.string(c)
        if c == "(":
            return self.tuple_literal()
        text, start = self.text, self.pos
        end = start
        while end < self.n and text[end] not in _TOKEN_STOP:
            end += 1
        token = text[start:end]
        if not token:
            raise self.error(
                "expected a key (integer, quoted string, slice, ..., None, True, False or tuple)"
            )
        value = _literal_token(token)
        if value is _TOO_LONG:
            raise self.error(_too_long(token))
        if value is _INVALID:
            hint = f"; did you mean [{token!r}]?" if token.isidentifier() else ""
            raise self.error(f"expected a key, got {token!r} (strings need quotes inside []){hint}")
        self.pos = end
        return value

    def string(self, quote: str) -> str:
        text, start = self.text, self.pos
        end = start + 1
        escaped = False
        while end < self.n:
            ch = text[end]
            if ch == "\\":
                bad = _bad_escape(text, end)
                if bad:  # Python only warns (and keeps the backslash): a path must mean one thing.
                    raise self.error(f"invalid escape sequence '{bad}' in a string", end)
                escaped = True
                end += 2
                continue
            if ch == quote:
                break
            end += 1
        if end >= self.n:
            raise self.error("unterminated string", start)
        self.pos = end + 1
        if not escaped:
            return text[start + 1 : end]
        import ast  # Only escaped strings need Python's literal rules.

        try:
            value = ast.literal_eval(text[start : end + 1])
        except (ValueError, SyntaxError) as e:
            raise self.error(f"invalid string literal ({e})", start) from None
        return value

    def tuple_literal(self) -> object:
        if self.depth == _MAX_NESTING:
            raise self.error(f"tuples nested at most {_MAX_NESTING} deep, got a deeper one")
        self.depth += 1
        self.pos += 1
        items: list[object] = []
        trailing_comma = False
        self.skip_ws()
        while self.peek() != ")":
            items.append(self.literal())
            self.skip_ws()
            c = self.peek()
            if c == ",":
                self.pos += 1
                self.skip_ws()
                trailing_comma = True
            elif c == ")":
                trailing_comma = False
            else:
                raise self.error("expected ',' or ')' in a tuple")
        self.pos += 1
        self.depth -= 1
        if len(items) == 1 and not trailing_comma:
            return items[0]  # A parenthesised key, as in Python.
        return tuple(items)


def _bad_escape(text: str, i: int) -> str:
    """The escape sequence at ``text[i]`` (a backslash) if Python warns about it, else ``""``."""
    following = text[i + 1 : i + 2]
    if following and following not in _ESCAPES:
        return "\\" + following
    if following.isdigit():  # Octal: at most three digits, at most 0o377.
        digits = following
        while len(digits) < 3 and text[i + 1 + len(digits) : i + 2 + len(digits)] in _OCTAL:
            digits += text[i + 1 + len(digits)]
        if int(digits, 8) > 0o377:
            return "\\" + digits
    return ""


_OCTAL = frozenset("01234567")


def _literal_token(token: str) -> object:
    if token == "...":
        return ...
    if token == "None":
        return None
    if token == "True":
        return True
    if token == "False":
        return False
    if not token.isascii():
        return _INVALID
    try:
        return int(token)
    except ValueError:
        digits = token[1:] if token[:1] in "+-" else token
        if digits.replace("_", "").isdigit() and len(digits) > sys.get_int_max_str_digits() > 0:
            return _TOO_LONG
    try:
        value = float(token)
    except ValueError:
        if token[-1:] in "jJ" and token[-2:-1] in _IMAGINARY_END:  # `complex("j")` is 1j: a digit first.
            try:
                number = complex(token)
            except ValueError:
                return _INVALID
            return number if _is_finite(number.real) and _is_finite(number.imag) else _INVALID
        return _INVALID
    return value if _is_finite(value) else _INVALID


_IMAGINARY_END = frozenset("0123456789.")


_INF = float("inf")


def _is_finite(value: Any) -> bool:
    return value == value and value != _INF and value != -_INF


def format_parts(parts: tuple[Any, ...]) -> str:
    """Canonical string of a sequence of parts: ``format_parts(("a", 0, "b c")) == "a[0]['b c']"``."""
    out: list[str] = []
    for part in parts:
        kind = type(part)
        if kind is str:
            if part.isidentifier():
                out.append("." + part if out else part)
            else:
                out.append(f"[{part!r}]")
        elif kind is Wildcard:
            out.append("." + part.symbol if out else part.symbol)
        elif kind is tuple:
            if not part:
                out.append("[()]")
            elif len(part) == 1:
                out.append(f"[{_format_item(part[0])},]")
            else:
                out.append("[" + ",".join(_format_item(p) for p in part) + "]")
        else:
            out.append(f"[{_format_item(part)}]")
    return "".join(out)


def append_part(text: str, part: Any) -> str:
    """``format_parts((*parts, part))`` given ``text == format_parts(parts)``, without re-formatting."""
    kind = type(part)
    if kind is str and part.isidentifier():
        return f"{text}.{part}" if text else part
    if kind is Wildcard:
        return f"{text}.{part.symbol}" if text else part.symbol
    return text + format_parts((part,))


def _format_item(item: Any) -> str:
    kind = type(item)
    if kind is slice:
        start, stop, step = item.start, item.stop, item.step
        text = ("" if start is None else str(start)) + ":" + ("" if stop is None else str(stop))
        return text if step is None else f"{text}:{step}"
    if item is ...:
        return "..."
    if kind is tuple:
        if len(item) == 1:
            return f"({_format_item(item[0])},)"
        return "(" + ", ".join(_format_item(i) for i in item) + ")"
    return repr(item)


_KEY_TYPES = (str, int, float, complex, bool, type(None))


def check_part(part: Any, glob_ok: bool) -> Any:
    """Validates one part given to ``Path(*parts)`` and normalises int/str subclasses."""
    kind = type(part)
    if kind is str or kind is int or kind is bool or part is None or part is ...:
        return part
    if kind is Wildcard:
        if glob_ok:
            return part
        raise GlobPathError(f"Wildcard {part} is not allowed in a Path; use kontext.GlobPath.")
    if kind is slice:
        for bound in (part.start, part.stop, part.step):
            if bound is not None and (type(bound) is not int):
                raise TypeError(f"Invalid path part {part!r}: slice bounds must be int or None.")
        return part
    if kind is tuple:
        for item in part:
            if type(item) is not slice:
                _check_key(item, part)
        return part
    if kind is float or kind is complex:
        _check_key(part, part)
        return part
    if isinstance(part, bool):
        return bool(part)
    if isinstance(part, int):
        return int(part)
    if isinstance(part, str):
        return str(part)
    raise TypeError(
        f"Invalid path part {part!r} of type {kind.__name__}: expected str, int, float, complex, bool, None, "
        "..., slice or a tuple of those."
    )


def _check_key(item: Any, whole: Any) -> None:
    kind = type(item)
    if kind is tuple:
        for inner in item:
            _check_key(inner, whole)
    elif kind is float:
        if not _is_finite(item):
            raise TypeError(f"Invalid path part {whole!r}: floats must be finite.")
    elif kind is complex:
        if not (_is_finite(item.real) and _is_finite(item.imag)):
            raise TypeError(f"Invalid path part {whole!r}: complex numbers must be finite.")
    elif not (kind in _KEY_TYPES or item is ...):
        raise TypeError(
            f"Invalid path part {whole!r}: tuple items must be str, int, float, complex, bool, None, ... or "
            f"tuples (slices only at the top level), got {type(item).__name__}."
        )
