"""Lazy references: `cfg.ref.a.b`, operators on them, `ref_fn`.

Data model
----------
A reference is an immutable expression tree evaluated by `konfig.resolve`:

* `PathRef`: `ref._konfig_root` is the `ConfigDict` whose `.ref` was used and
  `ref._konfig_path` a tuple of keys (`str` fields/attributes, `int` list
  items or positional arguments). It is evaluated at resolve time by walking
  the *current* content of the root, so `cfg.x = 2` after `y = cfg.ref.x`
  is seen. Where the walk reaches a call node that has no such field, the
  node is built and the rest of the path is attribute/item access on the
  object. Build one with `PathRef(root, ("a", "b"))`.
* `OpRef`: `ref._konfig_op` names an operation in `OPS` (`"add"`, `"neg"`,
  `"getattr"`, `"getitem"`, `"call"`, ...); `ref._konfig_args` is the tuple of
  operands and `ref._konfig_kwargs` a dict (only for `"call"`). Operands may
  be refs, plain values, config nodes (built first), or, for `"call"`, a
  callable as first operand (`konfig.ref_fn`). Build one with
  `OpRef("add", (ref, 1))`; `OPS[op](*args, **kwargs)` evaluates it.

Every attribute, item, call and operator on a ref returns a new ref, so
internal names are prefixed `_konfig_` to stay out of the way. `konfig.ref_copy`
(a config of refs) is in `_ref_copy`; the text of a ref comes from the printer (`_repr`).
"""

from __future__ import annotations

import operator

from . import _layers_above
from ._errors import RefControlFlowError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


# Operation name -> the function that evaluates it (see `_repr.format_ref` for display).
OPS: dict[str, Callable[..., Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "matmul": operator.matmul,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": operator.abs,
    "invert": operator.invert,
    "getattr": getattr,
    "getitem": operator.getitem,
    "call": _call,
}

BINARY_SYMBOLS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "**",
    "matmul": "@",
    "and": "&",
    "or": "|",
    "xor": "^",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
}
UNARY_SYMBOLS = {"neg": "-", "pos": "+", "invert": "~"}


def _binary(name: str) -> tuple[Callable[[Ref, Any], OpRef], Callable[[Ref, Any], OpRef]]:
    def forward(self: Ref, other: Any) -> OpRef:
        return OpRef(name, (self, other))

    def reverse(self: Ref, other: Any) -> OpRef:
        return OpRef(name, (other, self))

    forward.__name__ = f"__{name}__"
    reverse.__name__ = f"__r{name}__"
    return forward, reverse


def _unary(name: str) -> Callable[[Ref], OpRef]:
    def method(self: Ref) -> OpRef:
        return OpRef(name, (self,))

    return method


class Ref:
    """Base of lazy references. Operators build new references."""

    __slots__ = ()

    __add__, __radd__ = _binary("add")
    __sub__, __rsub__ = _binary("sub")
    __mul__, __rmul__ = _binary("mul")
    __truediv__, __rtruediv__ = _binary("truediv")
    __floordiv__, __rfloordiv__ = _binary("floordiv")
    __mod__, __rmod__ = _binary("mod")
    __pow__, __rpow__ = _binary("pow")
    __matmul__, __rmatmul__ = _binary("matmul")
    __and__, __rand__ = _binary("and")
    __or__, __ror__ = _binary("or")
    __xor__, __rxor__ = _binary("xor")
    __eq__ = _binary("eq")[0]  # type: ignore[assignment]
    __ne__ = _binary("ne")[0]  # type: ignore[assignment]
    __lt__ = _binary("lt")[0]
    __le__ = _binary("le")[0]
    __gt__ = _binary("gt")[0]
    __ge__ = _binary("ge")[0]
    __neg__ = _unary("neg")
    __pos__ = _unary("pos")
    __abs__ = _unary("abs")
    __invert__ = _unary("invert")

    __hash__ = object.__hash__

    def __getattr__(self, name: str) -> Ref:
        if (name[:2] == "__" and name[-2:] == "__") or name.startswith("_konfig_"):
            raise AttributeError(name)
        return OpRef("getattr", (self, name))

    def __getitem__(self, key: Any) -> Ref:
        return OpRef("getitem", (self, key))

    def __call__(self, *args: Any, **kwargs: Any) -> Ref:
        return OpRef("call", (self, *args), kwargs)

    def __bool__(self) -> bool:
        raise RefControlFlowError(
            f"The reference `{ref_repr(self)}` has no value until `konfig.resolve`, so it"
            " cannot be used for control flow (`if`, `and`, `or`, `not`, `bool()`). Combine references"
            " lazily with the logical operators `&` / `|` / `~`, or compute with `konfig.ref_fn(fn, ref)`."
        )

    def __iter__(self) -> Any:
        raise TypeError(f"The reference `{ref_repr(self)}` is not iterable before resolve")

    def __format__(self, format_spec: str) -> str:
        # `f"run_{cfg.ref.steps}"` would freeze the reference's text into a plain str.
        raise TypeError(
            f"The reference `{ref_repr(self)}` has no value until `konfig.resolve`, so it cannot"
            " be formatted into a string now; build the string lazily, e.g."
            " `konfig.ref_fn(lambda steps: f'run_{steps}', cfg.ref.steps)` (or `repr(ref)` for its text)"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"References are read-only: cannot set {name!r} on `{ref_repr(self)}`")

    def __repr__(self) -> str:
        return ref_repr(self)


class PathRef(Ref):
    """`cfg.ref.a.b`: the value at a path of a root config, read at resolve."""

    __slots__ = ("_konfig_path", "_konfig_root")

    _konfig_root: Any
    _konfig_path: tuple[Any, ...]

    def __init__(self, root: Any, path: tuple[Any, ...]) -> None:
        object.__setattr__(self, "_konfig_root", root)
        object.__setattr__(self, "_konfig_path", path)

    def __getattr__(self, name: str) -> Ref:
        if (name[:2] == "__" and name[-2:] == "__") or name.startswith("_konfig_"):
            raise AttributeError(name)
        return PathRef(self._konfig_root, (*self._konfig_path, name))

    def __getitem__(self, key: Any) -> Ref:
        return PathRef(self._konfig_root, (*self._konfig_path, key))

    def __deepcopy__(self, memo: dict[int, Any]) -> PathRef:
        import copy

        return PathRef(copy.deepcopy(self._konfig_root, memo), self._konfig_path)

    def __copy__(self) -> PathRef:
        return self

    def __reduce__(self) -> Any:
        return (PathRef, (self._konfig_root, self._konfig_path))


class OpRef(Ref):
    """An operation on references (`cfg.ref.x * 2`, `ref_fn(f, cfg.ref.x)`)."""

    __slots__ = ("_konfig_args", "_konfig_kwargs", "_konfig_loaded", "_konfig_op")

    _konfig_op: str
    _konfig_args: tuple[Any, ...]
    _konfig_kwargs: dict[str, Any]
    # True for an operation read from text (`konfig.from_json`): only `konfig.resolve` (where safe
    # mode can check it) computes it, never a field read (see `_ref_value`).
    _konfig_loaded: bool

    def __init__(
        self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, loaded: bool = False
    ) -> None:
        if op not in OPS:
            raise ValueError(f"Unknown reference operation {op!r}; expected one of {sorted(OPS)}")
        object.__setattr__(self, "_konfig_op", op)
        object.__setattr__(self, "_konfig_args", args)
        object.__setattr__(self, "_konfig_kwargs", kwargs or {})
        object.__setattr__(self, "_konfig_loaded", loaded)

    def __deepcopy__(self, memo: dict[int, Any]) -> OpRef:
        import copy

        return OpRef(
            self._konfig_op,
            copy.deepcopy(self._konfig_args, memo),
            copy.deepcopy(self._konfig_kwargs, memo),
            self._konfig_loaded,
        )

    def __copy__(self) -> OpRef:
        return self

    def __reduce__(self) -> Any:
        return (OpRef, (self._konfig_op, self._konfig_args, self._konfig_kwargs, self._konfig_loaded))


def ref_repr(ref: Any, root_name: Callable[[Any], str] | None = None) -> str:
    """`cfg.ref.a.b * 2`-style text of a reference expression (the printer's, see `_layers_above`)."""
    return _layers_above.format_ref(ref, root_name)


def refs_equal(a: Any, b: Any, equal: Callable[[Any, Any], bool]) -> bool:
    """Structural equality of two reference expressions (roots not compared)."""
    if type(a) is not type(b):
        return False
    if type(a) is PathRef:
        return a._konfig_path == b._konfig_path
    if a._konfig_op != b._konfig_op or len(a._konfig_args) != len(b._konfig_args):
        return False
    if a._konfig_kwargs.keys() != b._konfig_kwargs.keys():
        return False
    return all(equal(x, y) for x, y in zip(a._konfig_args, b._konfig_args)) and all(
        equal(v, b._konfig_kwargs[k]) for k, v in a._konfig_kwargs.items()
    )


def ref_fn(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Calls `fn` lazily at resolve time, with references replaced by values.

    Usage:
        cfg.total = konfig.ref_fn(sum, cfg.ref.sizes)
        @konfig.ref_fn
        def join(parts): return "/".join(parts)
        cfg.path = join(cfg.ref.parts)
    """
    if not callable(fn):
        raise TypeError(f"ref_fn expects a callable, got {fn!r}")
    if args or kwargs:
        return OpRef("call", (fn, *args), kwargs)

    import functools

    @functools.wraps(fn)
    def lazy(*args: Any, **kwargs: Any) -> Any:
        return OpRef("call", (fn, *args), kwargs)

    return lazy
