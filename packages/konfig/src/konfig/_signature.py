"""Argument validation against a target's signature, cached per qualname.

`inspect.signature` is slow (tens of microseconds), so each target is
inspected once and reduced to a small `Params` record. Checking a node is
then a few set lookups.
"""

from __future__ import annotations

import sys

from ._errors import ArgumentError, did_you_mean
from ._keys import is_positional_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    import inspect
    from collections.abc import Container
    from typing import Any


class Params:
    """What a callable accepts, reduced for fast checks."""

    __slots__ = ("keywords", "max_positional", "positional", "var_keyword")

    def __init__(self, signature: inspect.Signature) -> None:
        import inspect

        kinds = inspect.Parameter
        keywords: set[str] = set()
        positional: list[str] = []
        max_positional: int | None = 0
        var_keyword = False
        for p in signature.parameters.values():
            kind = p.kind
            if kind is kinds.POSITIONAL_ONLY or kind is kinds.POSITIONAL_OR_KEYWORD:
                positional.append(p.name)
                if kind is kinds.POSITIONAL_OR_KEYWORD:
                    keywords.add(p.name)
            elif kind is kinds.VAR_POSITIONAL:
                max_positional = None
            elif kind is kinds.KEYWORD_ONLY:
                keywords.add(p.name)
            else:
                var_keyword = True
        self.keywords = frozenset(keywords)
        self.positional = tuple(positional)
        self.max_positional = len(positional) if max_positional is not None else None
        self.var_keyword = var_keyword


# qualname -> Params, or None when the target cannot be inspected.
_CACHE: dict[str, Params | None] = {}


def params_for(qualname: str, target: Any = None) -> Params | None:
    """Returns the cached `Params` of `qualname` (inspecting `target` once).

    Without `target`, the target is looked up only if its module is already
    imported: validation never imports anything.
    """
    try:
        return _CACHE[qualname]
    except KeyError:
        pass
    if target is None:
        target = lookup_imported(qualname)
        if target is None:
            return None  # Not cached: the module may be imported later.
    import inspect

    try:
        params: Params | None = Params(inspect.signature(target))
    except (TypeError, ValueError):
        params = None
    _CACHE[qualname] = params
    return params


def lookup_imported(qualname: str) -> Any:
    """The callable `qualname` names if its module is imported, else None (imports nothing)."""
    module_name, sep, attrs = qualname.partition(":")
    if not sep:
        return None
    obj: Any = sys.modules.get(module_name)
    if obj is None:
        return None
    import inspect

    for attr in attrs.split("."):
        # Static lookup: no property or module `__getattr__` runs for validation.
        value = inspect.getattr_static(obj, attr, None)
        if value is None:
            return None
        if isinstance(value, (classmethod, staticmethod)):
            value = getattr(obj, attr)  # Bound: `cls` is not a parameter.
        obj = value
    return obj if callable(obj) else None


def display_name(qualname: str) -> str:
    return qualname.replace(":", ".")


def check_key(
    params: Params, qualname: str, key: str, num_positional: int, given: Container[Any] = ()
) -> None:
    """Checks that `key` (a kwarg name or a positional index "3") is accepted.

    `given` holds the node's existing keys: a new positional argument must not name a
    parameter that is already given by keyword.
    """
    if key.isdigit() and is_positional_key(key):
        index = int(key)
        if params.max_positional is not None and index >= params.max_positional:
            raise ArgumentError(
                f"{display_name(qualname)}() takes at most {params.max_positional}"
                f" positional argument(s), got argument [{index}]"
            )
        if index < len(params.positional) and params.positional[index] in given:
            name = params.positional[index]
            raise ArgumentError(
                f"{display_name(qualname)}() got multiple values for argument {name!r}"
                f" (keyword and positional [{index}]); set `.{name}` instead"
            )
        return
    if key in params.keywords or params.var_keyword:
        if key in params.keywords and key in params.positional[:num_positional]:
            raise ArgumentError(
                f"{display_name(qualname)}() got multiple values for argument {key!r}"
                f" (positional [{params.positional.index(key)}] and keyword)"
            )
        return
    if key.startswith("__") and key.endswith("__"):
        return  # konfig's own markers (`__qualname__`, ...).
    if key in params.positional:
        raise ArgumentError(
            f"{display_name(qualname)}() argument {key!r} is positional-only:"
            f" pass it as positional argument [{params.positional.index(key)}]"
        )
    raise ArgumentError(
        f"{display_name(qualname)}() got an unexpected keyword argument {key!r}"
        f"{did_you_mean(key, params.keywords)}"
        f" (accepted: {', '.join(sorted(params.keywords)) or 'none'})"
    )


def check_fields(params: Params, qualname: str, fields: dict[Any, Any]) -> None:
    """Checks every argument of a node's `fields` against `params`."""
    num_positional = 0
    while str(num_positional) in fields:
        num_positional += 1
    for key in fields:
        if type(key) is str:
            check_key(params, qualname, key, num_positional)
