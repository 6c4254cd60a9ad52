"""`repr(cfg)`: a readable Python-like call tree.

Module aliases shorten targets (`flax.linen:Dense` -> `nn.Dense`); a node or
list reached twice is printed once as `&id001 ...` and then as `*id001`
(also for cycles); references print as references (`cfg.ref.a.b * 2`).
"""

from __future__ import annotations

import sys

from ._config_dict import CONST, LEAF_TYPES, QUALNAME, UNION_QUALNAME, ConfigDict
from ._errors import NestingError, nesting_message
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
_WIDTH = 80
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
    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.paths: dict[int, tuple[Any, ...]] = {}
        self.ids: dict[int, int] = {}

    # Pass 1: count how often each container is reached, remember its path.
    def scan(self, value: Any, path: tuple[Any, ...]) -> None:
        t = type(value)
        if t in LEAF_TYPES:
            return
        if isinstance(value, ConfigDict) or t is list:
            key = id(value)
            seen = self.counts.get(key, 0)
            self.counts[key] = seen + 1
            if seen:
                return
            self.paths[key] = path
            if t is list:
                for i, item in enumerate(value):
                    self.scan(item, (*path, i))
            else:
                fields = value._fields
                is_node = QUALNAME in fields
                for k, item in fields.items():
                    if type(item) not in LEAF_TYPES:
                        if is_node and type(k) is str and k.isdigit() and is_positional_key(k):
                            k = int(k)
                        self.scan(item, (*path, k))
        elif t is tuple:
            for i, item in enumerate(value):
                self.scan(item, (*path, i))

    # Pass 2: render.
    def render(self, value: Any) -> str:
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
                return f"&id{number:03} " + self._render_container(value)
            return self._render_container(value)
        if t is tuple:
            items = [self.render(v) for v in value]
            if len(items) == 1:
                return f"({items[0]},)"
            return _block("(", items, ")")
        if t is set or t is frozenset:
            # Sorted so that the text does not depend on hashing order.
            items = sorted(self.render(v) for v in value)
            if t is set:
                return _block("{", items, "}") if items else "set()"
            return "frozenset(" + _block("{", items, "}") + ")" if items else "frozenset()"
        if isinstance(value, Ref):
            return format_ref(value, self.root_name, self.render)
        return repr(value)  # Placeholders print as `konfig.required(int)`.

    def _render_container(self, value: Any) -> str:
        if type(value) is list:
            return _block("[", [self.render(v) for v in value], "]")
        fields = value._fields
        const = fields.get(CONST)
        if const is not None and len(fields) == 1:
            return display_qualname(str(const))
        qualname = fields.get(QUALNAME)
        if qualname is None:
            items = [f"{k!r}: {self.render(v)}" for k, v in fields.items()]
            return _block("{", items, "}")
        if qualname == UNION_QUALNAME and len(fields) == 3:
            return f"{self.render(fields.get('0'))} | {self.render(fields.get('1'))}"
        args: list[str] = []
        kwargs: list[str] = []
        for k, v in fields.items():
            if k == QUALNAME:
                continue
            text = self.render(v)
            if type(k) is str and k.isdigit() and is_positional_key(k):
                args.append(text)
            elif type(k) is str and k.isidentifier():
                kwargs.append(f"{k}={text}")
            else:
                kwargs.append(f"**{{{k!r}: {text}}}")
        return _block(display_qualname(str(qualname)) + "(", args + kwargs, ")")

    def root_name(self, root: Any) -> str:
        path = self.paths.get(id(root))
        # A root outside the printed tree is usually the enclosing `cfg`.
        return "cfg" if path is None else format_path(path)


def _block(opening: str, items: list[str], closing: str) -> str:
    if not items:
        return opening + closing
    one_line = opening + ", ".join(items) + closing
    if len(one_line) <= _WIDTH and "\n" not in one_line:
        return one_line
    inner = _INDENT + ",\n".join(items).replace("\n", "\n" + _INDENT)
    return f"{opening}\n{inner},\n{closing}"


def config_repr(cfg: Any) -> str:
    """The Python-like text of a config tree.

    A tree nested deeper than Python's recursion limit lets the printer follow is a
    `NestingError` naming its depth and deepest path.
    """
    printer = _Printer()
    try:
        printer.scan(cfg, ())
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
