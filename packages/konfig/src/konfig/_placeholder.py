"""`konfig.placeholder` and `konfig.required`: fields without a value yet.

    >>> placeholder(int, default=3), required(str)
    (konfig.placeholder(int, default=3), konfig.required(str))

Both make a `Placeholder`, which `konfig.resolve` turns into its default or refuses when required.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Placeholder:
    """A field to be filled later (CLI, sweep, code).

    Resolves to `default`; a `required` one left unset makes `konfig.resolve`
    raise `MissingValueError` naming every such path.
    """

    __slots__ = ("default", "required", "type")

    def __init__(self, field_type: Any = object, default: Any = None, required: bool = False) -> None:
        self.type = field_type
        self.default = default
        self.required = required

    def __eq__(self, other: object) -> bool:
        if type(other) is not Placeholder:
            return NotImplemented
        return (self.type, self.default, self.required) == (other.type, other.default, other.required)

    def __hash__(self) -> int:
        return hash((Placeholder, self.type, self.required))

    def __repr__(self) -> str:
        name = getattr(self.type, "__qualname__", None) or repr(self.type)
        if self.required:
            return f"konfig.required({name})"
        if self.default is None:
            return f"konfig.placeholder({name})"
        return f"konfig.placeholder({name}, default={self.default!r})"

    def __reduce__(self) -> Any:
        return (Placeholder, (self.type, self.default, self.required))


def placeholder(field_type: Any = object, *, default: Any = None, required: bool = False) -> Any:
    """A field with no value yet; resolves to `default` (None) unless set.

    Usage: `cfg.workdir = konfig.placeholder(str)`.
    """
    return Placeholder(field_type, default, required)


def required(field_type: Any = object) -> Any:
    """A field that must be set before `konfig.resolve`.

    Usage: `cfg.num_classes = konfig.required(int)`.
    """
    return Placeholder(field_type, None, True)
