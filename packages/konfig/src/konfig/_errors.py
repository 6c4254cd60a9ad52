"""Exception types raised by konfig, and the helpers that word their messages.

Each refines the builtin a caller would naturally catch, so
`except ValueError` still works around `konfig.resolve(...)`. Every konfig module
raises these (the CLI's `OverrideError` and `from_json`'s `JsonFormatError` too).

    raise OverrideError(f"Unknown key {shown(key)!r}{did_you_mean(key, existing_keys)}")
"""

from __future__ import annotations

import sys

from ._keys import QUALNAME, is_positional_key
from ._paths import format_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


class ConfigValueError(TypeError):
    """A value that is not configurable was put into a `ConfigDict`.

    Usage: `cfg.model = MyModel()` (a live object) raises this; capture the
    import with `konfig.imports()` and write `cfg.model = MyModel()` there.
    """


class ArgumentError(TypeError):
    """A node got an argument its target's signature does not accept."""


class TargetNotFoundError(ImportError):
    """A captured import or attribute does not exist (typo, missing module)."""


class RelativeImportError(ImportError):
    """A relative import was used inside `konfig.imports()`."""


class CapturedSubclassError(TypeError):
    """A class tried to subclass a captured (fake) class."""


class RefControlFlowError(TypeError, NotImplementedError):
    """A lazy reference was used where Python needs a concrete bool.

    A `TypeError` (the value has no truth yet) and, as Kauldron raises, a `NotImplementedError`.
    """


class ResolveError(ValueError):
    """Building the objects of a config failed; names the failing path."""


_RESOLVE_ERRORS: dict[type, type[ResolveError]] = {}


def resolve_error(message: str, cause: BaseException | None) -> ResolveError:
    """A `ResolveError` that is also an instance of `cause`'s builtin type (`except TypeError:` still
    catches a target's `TypeError`, as with Kauldron, which re-raises the original type).

    Usage: `raise resolve_error("In cfg.model: ...", e) from e`.
    """
    t = type(cause)
    if cause is None or isinstance(cause, ResolveError) or t.__module__ != "builtins":
        return ResolveError(message)
    cls = _RESOLVE_ERRORS.get(t)
    if cls is None:
        try:
            cls = type(
                "ResolveError", (ResolveError, t), {"__str__": BaseException.__str__, "__module__": "konfig"}
            )
        except TypeError:  # An incompatible layout (OSError): a plain ResolveError.
            cls = ResolveError
        _RESOLVE_ERRORS[t] = cls
    try:
        return cls(message)
    except Exception:  # A type whose constructor takes more (UnicodeDecodeError).
        return ResolveError(message)


class MissingValueError(ResolveError):
    """Required values (`konfig.required(...)`) are unset at resolve time."""


class CycleError(ResolveError):
    """A config node (or reference) depends on itself."""


class DisallowedTargetError(ResolveError):
    """Safe mode refused targets outside the `allowed=[...]` list."""


def safe_mode_refused(what: str) -> DisallowedTargetError:
    """The error of safe mode refusing `what` (a bound passed, an attribute no config may read, ...)."""
    return DisallowedTargetError(f"safe mode refused {what}")


def module_getattr(module: Any, name: str, missing: Any) -> tuple[Any, str | None]:
    """`(module.name, None)`, or `(missing, why)` when it has none: `why` is the message of the module's own
    `__getattr__` when that explains the refusal (e.g. "not ported; use ..."), else None.

    >>> import types; module_getattr(types.ModuleType("m"), "x", None)
    (None, None)
    """
    try:
        return getattr(module, name), None
    except AttributeError as e:
        default = f"module {getattr(module, '__name__', '?')!r} has no attribute {name!r}"
        import types

        own = isinstance(module, types.ModuleType) and "__getattr__" in vars(module)
        return missing, (str(e) if own and str(e) and str(e) != default else None)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Returns `"; did you mean 'x'?"` for the closest candidates, else `""`.

    >>> did_you_mean("featurs", ["features", "dtype"])
    "; did you mean 'features'?"
    """
    import difflib

    matches = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=3)
    if not matches:
        return ""
    return "; did you mean " + " or ".join(repr(m) for m in matches) + "?"


class JsonFormatError(ValueError):
    """The text is not konfig (or Kauldron) config JSON, or was written by a newer konfig."""


class OverrideError(ValueError):
    """A CLI override or sweep item names a path or value that does not fit the config.

    Usage: `except konfig.OverrideError as e: print(e)`; the message names the path
    and the closest existing paths.
    """


def shown(text: str) -> str:
    """Input as messages quote it: long text (a hostile flag) cut in the middle.

    Usage: `OverrideError(f"In override path {shown(path)!r}: ...")`.
    """
    return text if len(text) <= 200 else f"{text[:120]}…({len(text) - 180:,} characters)…{text[-60:]}"


class NestingError(RecursionError):
    """A config is nested deeper than konfig can walk it recursively (Python's recursion limit).

    The message names the depth and the deepest path; `konfig.from_json` and the CLI raise
    their own error types (`JsonFormatError`, `OverrideError`) with the same wording.
    """


def nesting_message(value: Any, subject: str) -> str:
    """Why walking `value` ran out of Python's recursion limit: how deep it nests, and where.

    `"{subject} is nested 600 levels deep (deepest at cfg.a.a…), deeper than konfig can
    follow ..."`, or, for a plain dict, list or tuple holding itself, `"{subject} contains
    itself at cfg.a[0]..."`. Walks ConfigDicts, dicts, lists and tuples without recursion;
    only called to word errors.
    """
    depth, path, cycle = deepest_path(value)
    if cycle is not None:
        return (
            f"{subject} contains itself at {shorten_path(cycle)}: a plain dict, list or tuple that "
            "holds itself has no end to follow (use a ConfigDict to build a cycle)."
        )
    return (
        f"{subject} is nested {depth} levels deep (deepest at {shorten_path(path)}), deeper than konfig "
        f"can follow within Python's recursion limit ({sys.getrecursionlimit()})."
    )


def deepest_path(value: Any) -> tuple[int, tuple[Any, ...], tuple[Any, ...] | None]:
    """`(depth, keys of the deepest container, keys where a plain container holds itself)`.

    The operands of a reference expression (`cfg.ref.x + 1 + ...`) count as one level
    more, at the path of the field holding the expression. Time and memory are linear in
    the size of `value`: each container keeps a link to its parent's path, and only the
    two paths returned are spelled out.
    """
    best_depth, best_link = 0, None
    cycle: Any = None
    on_path: set[int] = set()  # containers being walked (their ancestors included)
    done: set[int] = set()
    # (item, link, depth, leaving); a link is `(parent's link, key)`, None at the root.
    stack: list[tuple[Any, Any, int, bool]] = [(value, None, 1, False)]
    while stack:
        item, link, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            done.add(id(item))
            continue
        t = type(item)
        children: Any
        if t is dict or t is list or t is tuple:
            fields: Any = item if t is dict else None
        else:
            try:  # A ConfigDict; not `getattr`, which a reference or a captured import would answer.
                fields = object.__getattribute__(item, "_fields")
            except AttributeError:
                fields = None
            if type(fields) is not dict:
                fields = None
                try:  # A reference expression: its operands, one level deeper at the same path.
                    operands = object.__getattribute__(item, "_konfig_args")
                    operands += tuple(object.__getattribute__(item, "_konfig_kwargs").values())
                except (AttributeError, TypeError):
                    continue
                if depth > best_depth:
                    best_depth, best_link = depth, link
                stack.extend((o, link, depth + 1, False) for o in operands)
                continue
        if fields is not None:
            is_call = QUALNAME in fields
            children = ((int(k) if is_call and is_positional_key(k) else k, v) for k, v in fields.items())
        elif isinstance(item, (list, tuple)):
            children = enumerate(item)
        else:
            continue
        if id(item) in on_path:
            if cycle is None and t in (dict, list, tuple):  # a ConfigDict may hold itself
                cycle = (link,)
            continue
        if id(item) in done:
            continue
        on_path.add(id(item))
        stack.append((item, link, depth, True))
        if depth > best_depth:
            best_depth, best_link = depth, link
        stack.extend((child, (link, key), depth + 1, False) for key, child in children)
    return best_depth, linked_path(best_link), None if cycle is None else linked_path(cycle[0])


def linked_path(link: Any) -> tuple[Any, ...]:
    """The keys of a parent link `(parent's link, key)` (None at the root), root first.

    Walkers of deep trees keep one such link per container instead of a tuple of keys per
    container (which costs memory quadratic in the depth), and spell out only the paths they report.
    """
    keys = []
    while link is not None:
        link, key = link
        keys.append(key)
    keys.reverse()
    return tuple(keys)


def shorten_path(path: tuple[Any, ...], root: str = "cfg") -> str:
    """`cfg.a.a.a.a.a.a…(588 more keys)….a.a.a` for very long paths; short ones in full."""
    if len(path) <= 16:
        return format_path(path, root)
    head, tail = path[:8], path[-4:]
    return f"{format_path(head, root)}…({len(path) - 12} more keys)…{format_path(tail, root='')}"


def text_nesting_message(text: str | bytes, subject: str) -> str:
    """How deep, and where, JSON or Python text nests its brackets (found without parsing it)."""
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8", "replace")
    depth = deepest = line = column = 0
    row, row_start = 1, 0
    quote, escaped = "", False  # the quote of the string being read
    for i, c in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c == '"' or c == "'":
            quote = c
        elif c in "[{(":
            depth += 1
            if depth > deepest:
                deepest, line, column = depth, row, i - row_start + 1
        elif c in "]})":
            depth -= 1
        elif c == "\n":
            row, row_start = row + 1, i + 1
    return (
        f"{subject} is nested {deepest} levels deep (deepest at line {line}, column {column}), deeper "
        f"than konfig can read within Python's recursion limit ({sys.getrecursionlimit()})."
    )
