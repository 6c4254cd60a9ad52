"""Argument validation against a target's signature, cached per qualname.

`inspect.signature` is slow (tens of microseconds), so each target is
inspected once and reduced to a small `Params` record. Checking a node is
then a few set lookups.
"""

from __future__ import annotations

from ._errors import ArgumentError, did_you_mean
from ._keys import is_positional_key
from ._targets import find_imported_callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import inspect
    from collections.abc import Container
    from typing import Any


class Params:
    """What a callable accepts, reduced for fast checks."""

    __slots__ = ("inherited_init", "keywords", "max_positional", "positional", "var_keyword")

    def __init__(self, signature: inspect.Signature, target: Any = None) -> None:
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
        self.inherited_init = InheritedInit.of(target)


class InheritedInit:
    """A class that is no dataclass itself, though a base is: its own fields are not arguments.

    `class MyAcc(Metric): logits: Key = REQUIRED` without `@dataclasses.dataclass` keeps the
    `__init__` that the dataclass `Metric` generated, which knows nothing of `logits`.
    """

    __slots__ = ("base", "cls", "declared", "decorator")

    def __init__(self, cls: type, base: type, declared: frozenset[str]) -> None:
        self.cls = cls.__qualname__
        self.base = base.__qualname__
        self.declared = declared
        options = []
        if getattr(getattr(base, "__dataclass_params__", None), "frozen", False):
            options.append("frozen=True")  # A non-frozen dataclass cannot inherit a frozen one.
        import dataclasses

        # The fields proper (a `ClassVar` is listed in `__dataclass_fields__` too, with no `kw_only`).
        fields = [f for f in dataclasses.fields(base) if getattr(f, "init", True)]
        if all(getattr(f, "kw_only", False) is True for f in fields):
            options.append("kw_only=True")
        self.decorator = (
            f"@dataclasses.dataclass({', '.join(options)})" if options else "@dataclasses.dataclass"
        )

    @staticmethod
    def of(target: Any) -> InheritedInit | None:
        if not isinstance(target, type) or "__dataclass_fields__" in vars(target):
            return None
        if getattr(target, "__dataclass_fields__", None) is None:
            return None
        declared: set[str] = set()
        for cls in target.__mro__:
            own = vars(cls)
            if "__dataclass_fields__" in own:
                if "__init__" not in own:
                    return None  # `@dataclass(init=False)`: the `__init__` is written by hand.
                return InheritedInit(target, cls, frozenset(declared)) if declared else None
            if "__init__" in own:
                return None  # A hand-written `__init__` decides what it takes.
            declared.update(own.get("__annotations__", ()))
            declared.update(
                name
                for name, value in own.items()
                if not name.startswith("__")
                and not callable(value)
                and not isinstance(value, (property, classmethod, staticmethod))
            )
        return None

    def explain(self, key: str, accepted: str) -> str | None:
        """Why `key` is refused, if the class declares it; else None."""
        if key not in self.declared:
            return None
        takes = f"takes only {accepted}" if accepted else "takes no arguments"
        return (
            f": `{self.cls}` declares `{key}` but is not a dataclass itself, so it keeps the "
            f"`__init__` of its dataclass base `{self.base}`, which {takes}. "
            f"Declare `{self.cls}` with `{self.decorator}` like `{self.base}`"
        )


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
        target = find_imported_callable(qualname)
        if target is None:
            return None  # Not cached: the module may be imported later.
    import inspect

    try:
        params: Params | None = Params(inspect.signature(target), target)
    except (TypeError, ValueError):
        params = None
    _CACHE[qualname] = params
    return params


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
    accepted = ", ".join(sorted(params.keywords))
    inherited = params.inherited_init
    explained = inherited.explain(key, accepted) if inherited is not None else None
    if explained is not None:
        raise ArgumentError(
            f"{display_name(qualname)}() got an unexpected keyword argument {key!r}{explained}"
        )
    raise ArgumentError(
        f"{display_name(qualname)}() got an unexpected keyword argument {key!r}"
        f"{did_you_mean(key, params.keywords)}"
        f" (accepted: {accepted or 'none'})"
    )


def check_fields(params: Params, qualname: str, fields: dict[Any, Any]) -> None:
    """Checks every argument of a node's `fields` against `params`."""
    num_positional = 0
    while str(num_positional) in fields:
        num_positional += 1
    for key in fields:
        if type(key) is str:
            check_key(params, qualname, key, num_positional)
