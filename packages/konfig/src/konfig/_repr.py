"""`repr(cfg)`: a readable Python-like call tree, laid out as Kauldron lays it out.

    <ConfigDict[{
        'steps': 10,
        'model': fake_lib.Model(
            encoder=None,
            num_layers=cfg.ref.steps // 2,
        ),
    }]>

`repr(cfg)` wraps the tree in `<ConfigDict[...]>`; inside, a container is on one line when it
holds at most one item, or items of at most 20 characters in all, and has no item of several
lines; else one item per line. Module aliases shorten targets (`flax.linen:Dense` -> `nn.Dense`);
a node or list reached twice is printed once as `&id001 ...` and then as `*id001` (also for
cycles); references print as references (`cfg.ref.a.b * 2`).
"""

from __future__ import annotations

import sys

from ._config_dict import CONST, LEAF_TYPES, QUALNAME, UNION_QUALNAME, ConfigDict
from ._errors import NestingError, linked_path, nesting_message
from ._keys import is_positional_key
from ._paths import format_path
from ._refs import BINARY_SYMBOLS, UNARY_SYMBOLS, OpRef, PathRef, Ref

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_ALIASES: dict[str, str] = {
    "numpy": "np",
    "jax.numpy": "jnp",
    "tensorflow": "tf",
    "flax.linen": "nn",
}
_DISPLAY_CACHE: dict[str, str] = {}
# Keyword name -> `"name="`, for the keyword arguments already printed once (bounded).
_KEYWORD_PREFIX: dict[str, str] = {}
_NOWHERE = object()
_COLLAPSE = 20  # Items of at most this many characters in all share one line (Kauldron's limit).
_INDENT = "    "


def register_aliases(aliases: dict[str, str]) -> None:
    """Shortens module names in `repr(cfg)`.

    Usage: `konfig.register_aliases({"jax.numpy": "jnp"})`.
    """
    _ALIASES.update(aliases)
    _DISPLAY_CACHE.clear()


def display_qualname(qualname: str) -> str:
    """`"flax.linen:Dense"` -> `"nn.Dense"` (longest registered alias wins)."""
    try:
        return _DISPLAY_CACHE[qualname]
    except KeyError:
        pass
    module, sep, attrs = qualname.partition(":")
    best = ""
    for name in _ALIASES:
        if (module == name or module.startswith(name + ".")) and len(name) > len(best):
            best = name
    if best:
        module = _ALIASES[best] + module[len(best) :]
    text = f"{module}.{attrs}" if sep and attrs else module
    _DISPLAY_CACHE[qualname] = text
    return text


class _Printer:
    def __init__(self, top: Any) -> None:
        self.top = top
        self.counts: dict[int, int] = {}
        # id -> link `(parent's link, key)` to its first path (see `linked_path`), filled when a
        # reference needs a root's path
        self.paths: dict[int, Any] | None = None
        self.ids: dict[int, int] = {}

    # Pass 1: count how often each container is reached (its children are visited once).
    def scan(self) -> None:
        counts = self.counts
        leaves = LEAF_TYPES
        stack = [self.top]
        while stack:
            value = stack.pop()
            t = type(value)
            if t is ConfigDict or t is list or isinstance(value, ConfigDict):
                key = id(value)
                seen = counts.get(key, 0)
                counts[key] = seen + 1
                if seen:
                    continue
                items = value if t is list else value._fields.values()
            elif t is tuple:
                items = value
            elif t is OpRef:  # an operand may be a container printed elsewhere too (or the tree itself)
                items = (*value._konfig_args, *value._konfig_kwargs.values())
            else:
                continue
            for item in items:
                if type(item) not in leaves:
                    stack.append(item)

    def path_of(self, target: Any) -> tuple[Any, ...] | None:
        """The first path (depth first, in field order) that reaches `target`, or None."""
        if self.paths is None:
            paths: dict[int, Any] = {}
            stack: list[tuple[Any, Any]] = [(self.top, None)]
            while stack:
                value, link = stack.pop()
                t = type(value)
                if isinstance(value, ConfigDict) or t is list:
                    if id(value) in paths:
                        continue
                    paths[id(value)] = link
                    if t is list:
                        children = list(enumerate(value))
                    else:
                        is_node = QUALNAME in value._fields
                        children = [
                            (
                                int(k)
                                if is_node and type(k) is str and k.isdigit() and is_positional_key(k)
                                else k,
                                v,
                            )
                            for k, v in value._fields.items()
                        ]
                elif t is tuple:
                    children = list(enumerate(value))
                else:
                    continue
                stack.extend((v, (link, k)) for k, v in reversed(children) if type(v) not in LEAF_TYPES)
            self.paths = paths
        link = self.paths.get(id(target), _NOWHERE)
        return None if link is _NOWHERE else linked_path(link)

    # Pass 2: render. `indent` is the indentation of the line the value starts on: multi-line
    # blocks are written indented as they are built (no re-indenting of nested text).
    def render(self, value: Any, indent: str = "") -> str:
        t = type(value)
        if t in LEAF_TYPES:
            return "..." if value is ... else repr(value)
        if isinstance(value, ConfigDict) or t is list:
            key = id(value)
            if self.counts.get(key, 0) > 1:
                number = self.ids.get(key)
                if number is not None:
                    return f"*id{number:03}"
                number = self.ids[key] = len(self.ids) + 1
                return f"&id{number:03} " + self._render_container(value, indent)
            return self._render_container(value, indent)
        inner = indent + _INDENT
        if t is tuple:
            items = [self.render(v, inner) for v in value]
            if len(items) == 1:
                return f"({items[0]},)"
            return _block("(", items, ")", indent)
        if t is set or t is frozenset:
            # Sorted so that the text does not depend on hashing order.
            items = sorted(self.render(v, inner) for v in value)
            if t is set:
                return _block("{", items, "}", indent) if items else "set()"
            return "frozenset(" + _block("{", items, "}", indent) + ")" if items else "frozenset()"
        if isinstance(value, Ref):
            return format_ref(value, self.root_name, lambda v: self.render(v, indent))
        return repr(value)  # Placeholders print as `konfig.required(int)`.

    def _render_container(self, value: Any, indent: str) -> str:
        inner = _DEEPER.get(indent) or _deeper(indent)
        render = self.render
        leaves = LEAF_TYPES
        if type(value) is list:
            items = [render(v, inner) if type(v) not in leaves or v is ... else repr(v) for v in value]
            return _block("[", items, "]", indent)
        fields = value._fields
        const = fields.get(CONST)
        if const is not None and len(fields) == 1:
            return display_qualname(str(const))
        qualname = fields.get(QUALNAME)
        if qualname is None:
            items = [
                f"{k!r}: {render(v, inner) if type(v) not in leaves or v is ... else repr(v)}"
                for k, v in fields.items()
            ]
            return _block("{", items, "}", indent)
        if qualname == UNION_QUALNAME and len(fields) == 3:
            return f"{render(fields.get('0'), indent)} | {render(fields.get('1'), indent)}"
        args: list[str] = []
        kwargs: list[str] = []
        prefixes = _KEYWORD_PREFIX
        for k, v in fields.items():
            # Leaves inline (most fields): a `render` call per field costs ~20% of the printer's time.
            text = render(v, inner) if type(v) not in leaves or v is ... else repr(v)
            prefix = prefixes.get(k) if type(k) is str else None
            if prefix is not None:
                kwargs.append(prefix + text)
            elif k == QUALNAME:
                continue
            elif type(k) is str and k.isdigit() and is_positional_key(k):
                args.append(text)
            elif type(k) is str and k.isidentifier():
                if len(prefixes) < 100_000:
                    prefixes[k] = k + "="
                kwargs.append(f"{k}={text}")
            else:
                kwargs.append(f"**{{{k!r}: {text}}}")
        name = _DISPLAY_CACHE.get(qualname) or display_qualname(str(qualname))
        return _block(name + "(", args + kwargs if args else kwargs, ")", indent)

    def root_name(self, root: Any) -> str:
        path = () if root is self.top else self.path_of(root)
        # A root outside the printed tree is usually the enclosing `cfg`.
        return "cfg" if path is None else format_path(path)


# indent -> the next indentation / the separators of a block's lines at that indentation (few).
_DEEPER: dict[str, str] = {}
_LINES: dict[str, tuple[str, str, str]] = {}


def _deeper(indent: str) -> str:
    _DEEPER[indent] = indent + _INDENT
    return _DEEPER[indent]


def _lines(indent: str) -> tuple[str, str, str]:
    inner = indent + _INDENT
    _LINES[indent] = ("\n" + inner, ",\n" + inner, ",\n" + indent)
    return _LINES[indent]


def _block(opening: str, items: list[str], closing: str, indent: str) -> str:
    """`opening` + items + `closing`: on one line if short (Kauldron's rule), else one item per line."""
    if not items:
        return opening + closing
    if len(items) == 1 or sum(map(len, items)) <= _COLLAPSE:
        one_line = ", ".join(items)
        if "\n" not in one_line:
            return opening + one_line + closing
    first, later, last = _LINES.get(indent) or _lines(indent)
    return opening + first + later.join(items) + last + closing


def config_repr(cfg: Any) -> str:
    """The Python-like text of a config tree.

    A tree nested deeper than Python's recursion limit lets the printer follow is a
    `NestingError` naming its depth and deepest path.
    """
    printer = _Printer(cfg)
    try:
        printer.scan()
        return printer.render(cfg)
    except NestingError:
        raise
    except RecursionError:
        raise NestingError(nesting_message(cfg, "This config (printed by repr)")) from None


def format_ref(
    ref: Any,
    root_name: Callable[[Any], str] | None = None,
    render: Callable[[Any], str] | None = None,
) -> str:
    """`cfg.ref.a.b`, `cfg.ref.x * 2`, `konfig.ref_fn(f, cfg.ref.x)`."""
    if root_name is None:
        root_name = _default_root_name
    if render is None:
        render = _default_render

    def operand(value: Any, wrap: bool) -> str:
        if isinstance(value, Ref):
            text = fmt(value)
            if (
                wrap
                and type(value) is OpRef
                and (value._konfig_op in BINARY_SYMBOLS or value._konfig_op in UNARY_SYMBOLS)
            ):
                return f"({text})"
            return text
        return render(value)

    def fmt(r: Any) -> str:
        if type(r) is PathRef:
            return root_name(r._konfig_root) + ".ref" + format_path(r._konfig_path, root="")
        op: str = r._konfig_op
        args: tuple[Any, ...] = r._konfig_args
        kwargs: dict[str, Any] = r._konfig_kwargs
        if op in BINARY_SYMBOLS:
            return f"{operand(args[0], True)} {BINARY_SYMBOLS[op]} {operand(args[1], True)}"
        if op in UNARY_SYMBOLS:
            return f"{UNARY_SYMBOLS[op]}{operand(args[0], True)}"
        if op == "abs":
            return f"abs({operand(args[0], False)})"
        if op == "getattr":
            if type(args[1]) is str:
                return f"{operand(args[0], True)}.{args[1]}"
            return f"getattr({operand(args[0], False)}, {operand(args[1], False)})"
        if op == "getitem":
            return f"{operand(args[0], True)}[{args[1]!r}]"
        call_args = [operand(a, False) for a in args[1:]]
        call_args += [f"{k}={operand(v, False)}" for k, v in kwargs.items()]
        fn = args[0]
        if isinstance(fn, Ref):
            return f"{operand(fn, True)}({', '.join(call_args)})"
        if isinstance(fn, ConfigDict):
            name = render(fn)
        else:
            name = getattr(fn, "__qualname__", None) or repr(fn)
        return f"konfig.ref_fn({', '.join([name, *call_args])})"

    try:
        return fmt(ref)
    except NestingError:
        raise
    except RecursionError:
        raise NestingError(
            f"This reference expression nests {_ref_depth(ref)} operations deep, deeper than konfig can "
            f"print within Python's recursion limit ({sys.getrecursionlimit()})."
        ) from None


def _ref_depth(ref: Any) -> int:
    """How many operations deep a reference expression nests (without recursion)."""
    deepest = 0
    stack = [(ref, 1)]
    while stack:
        r, depth = stack.pop()
        if type(r) is OpRef:
            deepest = max(deepest, depth)
            stack.extend((a, depth + 1) for a in (*r._konfig_args, *r._konfig_kwargs.values()))
    return deepest


def _default_root_name(root: Any) -> str:
    return "cfg"


def _default_render(value: Any) -> str:
    return config_repr(value)
