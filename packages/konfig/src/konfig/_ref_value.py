"""The current value of a reference, from a config's plain data: what reading a field that holds one gives.

    cfg.a = 10
    cfg.x = cfg.ref.a + 15 > 20  # the field keeps the reference (resolve, JSON and repr see it)
    cfg.x                        # -> True: current_value(ref, ConfigDict), computed at each read
    cfg.a = 0
    cfg.x                        # -> False

As with Kauldron and ml_collections, a read follows the config's current content. konfig's
references can also reach what only `konfig.resolve` builds (`cfg.model.ref.depth`, an attribute of the
object a call node builds; a `konfig.required` field; a config node as an operand, which resolve would
build first); there, and for a path that does not exist (yet) or a cycle, the read gives `NOT_YET`
and the field read hands out the reference itself, which resolve computes (or reports).

Nothing is imported or built here. Operations read from text (`konfig.from_json`, flagged
`_konfig_loaded`) are never computed by a read, only by resolve, where safe mode can check them.
"""

from __future__ import annotations

from ._keys import CONST, QUALNAME
from ._leaf_types import LEAF_TYPES
from ._placeholder import Placeholder
from ._refs import OPS, OpRef, PathRef, Ref

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["NOT_YET", "current_value"]

# Immutable leaves an operation may take as they are (and sets).
_PLAIN = LEAF_TYPES | {frozenset, set}


class _NotYet(Exception):
    """Internal: the value exists only at resolve time (or not at all)."""


NOT_YET: Any = _NotYet  # The marker `current_value` returns.


def current_value(ref: Ref, node_type: type) -> Any:
    """The value `ref` has now (`node_type` is `ConfigDict`), or `NOT_YET`.

    Usage: `value = current_value(cfg._fields["x"], ConfigDict)`.
    """
    try:
        return _Reader(node_type).ref(ref)
    except (_NotYet, RecursionError):
        return NOT_YET


class _Reader:
    __slots__ = ("active", "node_type")

    def __init__(self, node_type: type) -> None:
        self.node_type = node_type
        self.active: set[int] = set()  # ids of the references being computed (a cycle -> NOT_YET)

    def ref(self, r: Ref) -> Any:
        rid = id(r)
        if rid in self.active:
            raise _NotYet
        self.active.add(rid)
        try:
            return self.path(r) if type(r) is PathRef else self.operation(r)  # type: ignore[arg-type]
        finally:
            self.active.discard(rid)

    def path(self, r: PathRef) -> Any:
        try:
            current = self.walk(r._konfig_root, r._konfig_path)
        except (LookupError, AttributeError, TypeError):
            raise _NotYet from None  # Resolve reports it with the path.
        if isinstance(current, Ref):
            current = self.ref(current)
        return current

    def walk(self, current: Any, path: tuple[Any, ...]) -> Any:
        for key in path:
            if isinstance(current, Ref):
                current = self.ref(current)
            if type(current) is self.node_type:
                fields = current._fields
                if key in fields:
                    current = fields[key]
                    continue
                if QUALNAME not in fields:
                    raise _NotYet  # A missing field (or a constant's attribute): resolve says which.
                stored = current._arg_key(key) if type(key) is int else current._positional_name(key)
                if stored is None or stored not in fields:
                    raise _NotYet  # An attribute of the object the node builds.
                current = fields[stored]
            elif type(current) is list or type(current) is tuple:
                if type(key) is not int:
                    raise _NotYet
                current = current[key]
            elif type(current) in _PLAIN:
                current = getattr(current, key) if type(key) is str else current[key]
            else:
                raise _NotYet  # A placeholder, or a node built at resolve.
        return current

    def operation(self, r: OpRef) -> Any:
        if r._konfig_loaded:
            raise _NotYet
        args = [self.operand(a) for a in r._konfig_args]  # A `ref_fn` function passes as it is.
        kwargs = {k: self.operand(v) for k, v in r._konfig_kwargs.items()}
        try:
            return OPS[r._konfig_op](*args, **kwargs)
        except Exception:
            raise _NotYet from None  # E.g. a `konfig.required` operand: resolve reports it.

    def operand(self, value: Any) -> Any:
        if isinstance(value, Ref):
            value = self.ref(value)
            if type(value) is self.node_type:
                fields = value._fields
                if QUALNAME in fields or CONST in fields:
                    raise _NotYet  # Resolve passes the object it builds.
            return value
        t = type(value)
        if t in _PLAIN:
            return value
        if t is Placeholder or t is self.node_type or t is list or t is tuple or t is dict:
            raise _NotYet  # Resolve passes what it builds from it (a frozen copy, an object).
        return value
