"""Operations and plain values' methods under safe mode: what each builds and reads, known before it runs.

`check_operation` (`a * n`, `a + b`, `a | b`, `a ** b`, `template % values`) and `plain_call` (a method or
constructor of a plain value: `"x".join(items)`, `s.replace(a, b)`, `set(items)`, `b.decode("idna")`) compute
the size of the result from the operands and charge it, with what the operation reads, to the resolve's
`Budget` before anything runs: `"a" * 10**10` is refused without being built. Iterators a method consumes are
read into a bounded list first; sets and dicts of values that flood one hash, codecs whose module is not
loaded yet (they would import it) and array functions given a huge shape (`check_array_sizes`) are refused.

    >>> from konfig._safe_budget import Budget
    >>> check_operation("mul", ["ab", 10**9], Budget())
    Traceback (most recent call last):
    ...
    konfig._errors.DisallowedTargetError: safe mode refused str * 1000000000: it would hold 2,000,000,000 items (limit 10,000,000)
"""

from __future__ import annotations

import encodings
import encodings.aliases
import itertools
import re
import sys

from ._errors import safe_mode_refused
from ._hash_spread import MAX_SAME_HASH, crowded_hash
from ._refs import BINARY_SYMBOLS
from ._safe_budget import MAX_INT_BITS, MAX_ITEMS, SIZED, char_width, length
from ._safe_policy import object_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._safe_budget import Budget

_SEQUENCES = (str, bytes, list, tuple)
_SETS_AND_DICTS = (set, frozenset, dict)


def check_operation(op: str, args: list[Any], budget: Budget) -> None:
    """Before an operator on values: the work it reads charged, the result's size computed from the operands."""
    if len(args) != 2:
        return
    a, b = args
    ta, tb = type(a), type(b)
    # `==`, `<`, `%` read both operands whole; `x[key]` only hashes and compares the key.
    budget.charge_read((b,) if op == "getitem" else args, lambda: _op_name(op, ta, tb))
    if op == "mul":
        if (tb is int and ta in _SEQUENCES) or (ta is int and tb in _SEQUENCES):
            seq, n = (a, b) if tb is int else (b, a)
            budget.expect(type(seq), len(seq) * max(n, 0), f"{type(seq).__name__} * {n}", char_width(seq))
        elif ta is int and tb is int:
            _check_bits(a.bit_length() + b.bit_length(), "int * int")
    elif op == "add" and ta is tb and ta in _SEQUENCES:
        budget.expect(ta, len(a) + len(b), f"{ta.__name__} + {ta.__name__}", char_width(a, b))
    elif op in ("or", "xor", "sub", "and") and ta in _SETS_AND_DICTS and tb in _SETS_AND_DICTS:
        budget.expect(ta, len(a) + len(b), f"{ta.__name__} {op} {tb.__name__}")
    elif op == "pow":
        if ta is int and tb is int and b > 0 and abs(a) > 1:
            _check_bits(a.bit_length() * b, f"{a} ** {b}")
    elif op == "mod" and ta in (str, bytes):
        values = b.values() if tb is dict else b if tb is tuple else (b,)
        width = char_width(a, *values)  # wider characters inside nested reprs: counted once built
        budget.expect(ta, _percent_format_size(a, b), f"a %-format of a {ta.__name__}", width)


def _op_name(op: str, ta: type, tb: type) -> str:
    if op == "mod" and ta in (str, bytes):
        return f"a %-format of a {ta.__name__}"
    return f"{ta.__name__} {BINARY_SYMBOLS.get(op, op)} {tb.__name__}"


# Array libraries whose functions allocate what their arguments say (`jnp.ones((2**28,))`: 1 GB).
_ARRAY_MODULES = ("numpy", "jax.numpy", "jax._src.numpy", "jax.random", "jax._src.random", "jax._src.lax")
_COUNT_MODULES = ("numpy", "jax.numpy", "jax._src.numpy")  # where a lone int is a size (`jnp.arange(10**9)`)


def check_array_sizes(fn: Any, values: tuple[Any, ...]) -> None:
    """Refuses, before the call, an array function given a shape (or, for numpy-like functions, a count) of
    more than MAX_ITEMS elements."""
    module = object_name(fn).partition(":")[0]
    if not module.startswith(_ARRAY_MODULES):
        return
    for value in values:
        t = type(value)
        if t is int and module.startswith(_COUNT_MODULES) and abs(value) > MAX_ITEMS:
            raise safe_mode_refused(
                f"{object_name(fn)} with the size {value:,} (limit {MAX_ITEMS:,} elements)"
            )
        if t in (tuple, list) and 0 < len(value) <= 64 and all(type(v) is int for v in value):
            elements = 1
            for v in value:
                elements *= max(v, 0)
                if elements > MAX_ITEMS:
                    raise safe_mode_refused(
                        f"{object_name(fn)} with the shape {tuple(value)} (more than {MAX_ITEMS:,} elements)"
                    )


def _check_bits(bits: int, what: str) -> None:
    if bits > MAX_INT_BITS:
        raise safe_mode_refused(f"{what}: the result would have ~{bits:,} bits (limit {MAX_INT_BITS:,})")


# Methods that read their arguments but not their owner (`d.get(key)` hashes the key only).
_OWNER_NOT_READ = frozenset(
    "append add get pop popitem setdefault discard keys values items insert clear".split()
)
# Methods of plain values (and plain constructors) that consume an iterable argument: an iterator is read
# into a list first, at most MAX_ITEMS items, so its size is known before the method runs.
_CONSUMING = frozenset(
    {
        "join",
        "extend",
        "update",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "intersection_update",
        "difference_update",
        "symmetric_difference_update",
        "issubset",
        "issuperset",
        "isdisjoint",
        "fromkeys",
    }
)
_HASHING = frozenset({"update", "union", "symmetric_difference", "fromkeys", "intersection", "difference"})
_CASE_METHODS = frozenset({"upper", "lower", "casefold", "swapcase", "title", "capitalize"})
_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})
_SPLIT_METHODS = frozenset({"split", "rsplit", "splitlines", "partition", "rpartition"})


def plain_call(
    fn: Any, owner: Any, args: list[Any], kwargs: dict[str, Any], budget: Budget
) -> tuple[list[Any], dict[str, Any]]:
    """Methods and constructors of plain values: arguments bounded, the result's size known before the call."""
    name = getattr(fn, "__name__", "?")
    constructor = isinstance(fn, type)
    for i, arg in enumerate(args):
        if _consumes(name, constructor, i, arg):
            args[i] = _bounded_list(arg, f"{name}() of a {type(arg).__name__}", budget)
    for arg in (*args, *kwargs.values()):
        if type(arg) is int and abs(arg) > MAX_ITEMS:
            raise safe_mode_refused(f"{name}() with the size argument {arg:,} (limit {MAX_ITEMS:,})")
        if type(arg) in (range, *SIZED):
            size = length(arg)
            if size > MAX_ITEMS:
                raise safe_mode_refused(
                    f"{name}() of a {type(arg).__name__}: it holds {size:,} items (limit {MAX_ITEMS:,})"
                )
    read = [*args, *kwargs.values()]
    if owner is not None and name not in _OWNER_NOT_READ:
        read.append(owner)
    # A sort compares each item ~log2(n) times; any other method reads its operands about once.
    times = max(length(owner), 1).bit_length() if name == "sort" and type(owner) is list else 1
    budget.charge_read(
        read, lambda: f"{type(owner).__name__}.{name}()" if owner is not None else f"{name}()", times
    )
    if constructor:
        _expect_constructed(fn, args, kwargs, budget)
    elif type(owner) in (str, bytes):
        _expect_text_method(name, owner, args, kwargs, budget)
    elif type(owner) in (list, tuple, dict, set, frozenset):
        _expect_container_method(name, owner, args, budget)
    return args, kwargs


def _consumes(name: str, constructor: bool, index: int, arg: Any) -> bool:
    """Is `arg` an iterator (or other unsized iterable) that the call reads to its end?"""
    if type(arg) in (range, *SIZED) or callable(arg) or not hasattr(type(arg), "__iter__"):
        return False
    if constructor:
        return index == 0 and not hasattr(type(arg), "keys")
    return name in _CONSUMING and not (name == "update" and hasattr(type(arg), "keys"))


def _bounded_list(iterable: Any, what: str, budget: Budget) -> list[Any]:
    items = list(itertools.islice(iter(iterable), MAX_ITEMS + 1))
    if len(items) > MAX_ITEMS:
        raise safe_mode_refused(f"{what}: it yields more than {MAX_ITEMS:,} items")
    budget.expect(list, len(items), what)
    return items


def _check_hash_spread(values: Any, what: str) -> None:
    crowded = crowded_hash(values)
    if crowded is not None:
        raise safe_mode_refused(
            f"{what}: more than {MAX_SAME_HASH} distinct values share the hash of {_short_repr(crowded)}"
            " (a set or dict of them takes quadratic time)"
        )


def _short_repr(value: Any) -> str:
    text = repr(value) if type(value) in (int, float, bool, type(None)) else f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."


def _expect_constructed(fn: type, args: list[Any], kwargs: dict[str, Any], budget: Budget) -> None:
    """`str(x)`, `list(it)`, `set(it)`, `dict(pairs)`, `bytes(s, "idna")`: size, codec and hash spread checked."""
    first = args[0] if args else None
    if fn is str or fn is bytes:
        encoding = args[1] if len(args) > 1 else kwargs.get("encoding")
        if encoding is not None:
            _check_codec(encoding)
            budget.expect(
                fn,
                10 * length(first) + 4 if type(first) in SIZED else 0,
                f"{fn.__name__}(..., {encoding!r})",
            )
        elif fn is str and args and type(first) is not str:
            budget.expect(str, _text_size(first, "r"), f"str() of a {type(first).__name__}")
        elif fn is bytes and type(first) in SIZED:
            budget.expect(bytes, len(first), "bytes()")
    elif fn in (list, tuple, set, frozenset) and type(first) in (range, *SIZED):
        budget.expect(fn, length(first), f"{fn.__name__}() of a {type(first).__name__}")
        if fn in (set, frozenset):
            _check_hash_spread(first, f"{fn.__name__}()")
    elif fn is dict and args and type(first) in SIZED:
        budget.expect(dict, len(first) + len(kwargs), "dict()")
        if type(first) is not dict:
            _check_hash_spread((pair[0] for pair in first if type(pair) in (tuple, list) and pair), "dict()")


def _expect_text_method(
    name: str, owner: str | bytes, args: list[Any], kwargs: dict[str, Any], budget: Budget
) -> None:
    """The size of what a str / bytes method returns, computed before it runs."""
    kind, n = type(owner), len(owner)
    what = f"{kind.__name__}.{name}"
    if name == "join" and args and type(args[0]) in SIZED:
        items = args[0]
        k = len(items)
        if type(items) in (str, bytes):  # the items are its characters (bytes.join of bytes raises itself)
            joined, width = k, char_width(owner, items)
        else:
            texts = [x for x in (items.keys() if type(items) is dict else items) if type(x) in (str, bytes)]
            joined, width = sum(map(len, texts)), char_width(owner, *texts)
        budget.expect(kind, n * max(k - 1, 0) + joined, what, width)
    elif name == "replace" and len(args) >= 2 and type(args[0]) is kind and type(args[1]) is kind:
        old, new = args[0], args[1]
        count = owner.count(old) if old else n + 1
        if len(args) > 2 and type(args[2]) is int and args[2] >= 0:
            count = min(count, args[2])
        budget.expect(kind, n + count * max(len(new) - len(old), 0), what, char_width(owner, new))
    elif name == "translate" and args:
        width = 4 if kind is str and type(args[0]) is not str else char_width(owner, args[0])
        budget.expect(kind, n * _largest_replacement(args[0], what), what, width)
    elif name == "expandtabs":
        tab = args[0] if args and type(args[0]) is int else kwargs.get("tabsize", 8)
        tabs = owner.count("\t" if kind is str else b"\t")
        grown = n + tabs * max(tab if type(tab) is int else 8, 0)
        budget.expect(kind, grown, f"{what}({tab})", char_width(owner))
    elif name in _WIDTH_METHODS and args and type(args[0]) is int:
        budget.expect(kind, max(n, args[0]), what, char_width(owner, *args[1:2]))
    elif name in _CASE_METHODS:  # only Latin-1 characters change width, to 2 bytes (`"ÿ".upper()` is `"Ÿ"`)
        width = char_width(owner)
        budget.expect(kind, 3 * n, what, width if width > 1 or kind is not str or owner.isascii() else 2)
    elif name in _SPLIT_METHODS:
        budget.expect(list, n + 1, what)
    elif name in ("encode", "decode"):
        encoding = args[0] if args else kwargs.get("encoding")
        if encoding is not None:
            _check_codec(encoding)
        budget.expect(bytes if name == "encode" else str, 10 * n + 4, what)
    elif name == "hex":
        budget.expect(str, 3 * n, what)


def _expect_container_method(name: str, owner: Any, args: list[Any], budget: Budget) -> None:
    """The size of what a list / tuple / dict / set method builds, and the hash spread of what it hashes."""
    kind, n = type(owner), len(owner)
    what = f"{kind.__name__}.{name}"
    sized = [a for a in args if type(a) in (range, *SIZED)]
    if name in (
        "extend",
        "update",
        "union",
        "symmetric_difference",
        "fromkeys",
        "copy",
        "intersection",
        "difference",
    ):
        added = sum(length(a) for a in sized)
        budget.expect(kind, (0 if name == "fromkeys" else n) + added, what)
        if name in _HASHING and kind in _SETS_AND_DICTS:
            for arg in sized:
                _check_hash_spread(arg, what)


def _largest_replacement(table: Any, what: str) -> int:
    """The longest text one character can become under a translate table (at least 1)."""
    t = type(table)
    if t in (str, bytes, type(None)):
        return 1
    if t is dict:
        values: Any = table.values()
    elif t in (list, tuple):
        values = table
    else:
        raise safe_mode_refused(
            f"{what} with a table of type {t.__name__} (safe mode takes a dict, str, list or tuple)"
        )
    return max([1, *(len(v) for v in values if type(v) in (str, bytes))])


# `%[(key)][flags][width][.precision][length]conversion`: a width or precision of `*` comes from the arguments.
_PERCENT_FIELD = re.compile(rb"%(?:\(([^)]*)\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.?)")


def _percent_format_size(template: str | bytes, values: Any) -> int:
    """An upper bound on `len(template % values)`, computed without formatting anything."""
    text = template.encode("utf-8", "surrogatepass") if type(template) is str else template
    size = len(text)
    positional = iter(values if type(values) is tuple else (values,))
    mapping = values if type(values) is dict else None
    for match in _PERCENT_FIELD.finditer(text):
        key, width, precision, conversion = match.groups()
        for number in (width, precision):
            if number == b"*":
                raise safe_mode_refused("a `%*` width taken from the arguments in a %-format")
            if number and (len(number) > 8 or int(number) > MAX_ITEMS):
                raise safe_mode_refused(f"a %-format width of {number.decode()} (limit {MAX_ITEMS:,})")
        if conversion == b"%":
            continue
        if key is not None and mapping is not None:
            value = mapping.get(key.decode("utf-8", "replace"))
        else:
            value = next(positional, None)
        field = _text_size(value, conversion.decode("ascii", "replace"))
        size += max(int(width or 0), field + int(precision or 0))
        if size > MAX_ITEMS:
            break
    return size


def _text_size(value: Any, conversion: str) -> int:
    """An upper bound on the length of `str(value)` (`conversion` "s") or `repr(value)` ("r", "a"), or of a
    number's digits; stops counting past MAX_ITEMS. Objects that are not plain values count as 64."""
    total = 0
    stack = [(value, conversion)]
    while stack and total <= MAX_ITEMS:
        item, conv = stack.pop()
        t = type(item)
        if t is str:
            total += len(item) if conv == "s" else 10 * len(item) + 2
        elif t is bytes:
            total += 4 * len(item) + 3
        elif t is int:
            total += item.bit_length() // 3 + 2
        elif t in (float, complex):
            total += 330 if conv not in "sra" else 64
        elif t in (list, tuple, set, frozenset):
            total += 2 + 2 * len(item)
            stack.extend((x, "r") for x in item)
        elif t is dict:
            total += 2 + 4 * len(item)
            stack.extend((x, "r") for pair in item.items() for x in pair)
        else:
            total += 64
    return total


# Codecs the interpreter encodes and decodes without looking anything up (nothing is imported for them).
_BUILTIN_CODECS = frozenset(
    {"utf_8", "utf8", "ascii", "us_ascii", "latin_1", "latin1", "iso_8859_1", "iso8859_1", "utf_16", "utf_32"}
)


def _check_codec(encoding: Any) -> None:
    """A codec whose module is not loaded yet would be imported (`"idna"` imports `stringprep`, `unicodedata`)."""
    if type(encoding) is not str:
        return  # the call raises TypeError itself
    normalized = encodings.normalize_encoding(encoding).lower()
    if normalized in _BUILTIN_CODECS:
        return
    module = encodings.aliases.aliases.get(normalized, normalized)
    if f"encodings.{module}" not in sys.modules:
        raise safe_mode_refused(
            f"the codec {encoding!r}: its module encodings.{module} is not loaded, and safe mode imports"
            " nothing outside allowed="
        )
