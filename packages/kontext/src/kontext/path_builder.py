"""Kauldron's module path ``kontext.path_builder``: path builders rooted at their class's name.

Usage::

    class Batch(path_builder.AnnotatedPathBuilder):
        image: Any
    str(Batch().image)                                       # "Batch.image"; Batch().label: AttributeError
    str(path_builder.DynamicPathBuilder().a[0]["k"])         # "DynamicPathBuilder.a[0]['k']"

kontext's own API is ``kontext.path_builder_from("batch", Batch)``; this module is for code written against
Kauldron, whose builders keep attribute (``.k``) and item (``['k']``) access apart in their text.
"""

from __future__ import annotations

import typing
from typing import Any


class _Builder:
    """A path under construction: the root's name, then ``(".", name)`` / ``("[]", key)`` steps."""

    def __init__(self, *, _root: str | None = None, _steps: tuple[tuple[str, Any], ...] = ()) -> None:
        object.__setattr__(self, "_kd_root", type(self).__name__ if _root is None else _root)
        object.__setattr__(self, "_kd_steps", _steps)

    def _child(self, cls: type[_Builder], step: tuple[str, Any]) -> Any:
        return cls(_root=self._kd_root, _steps=(*self._kd_steps, step))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"path builders are read-only: cannot set {name!r} on {self}")

    def __str__(self) -> str:
        text = self._kd_root
        for kind, key in self._kd_steps:
            text += f".{key}" if kind == "." else f"[{key!r}]"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class DynamicPathBuilder(_Builder):
    """Any attribute or item extends the path."""

    def __getattr__(self, name: str) -> DynamicPathBuilder:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._child(DynamicPathBuilder, (".", name))

    def __getitem__(self, key: Any) -> DynamicPathBuilder:
        return self._child(DynamicPathBuilder, ("[]", key))


class AnnotatedPathBuilder(_Builder):
    """Subclass it with annotated fields: only those extend the path, and a field typed as another
    ``AnnotatedPathBuilder`` continues with that class's fields (any other type: any attribute)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        hints = typing.get_type_hints(type(self))
        hints = {k: v for k, v in hints.items() if not k.startswith("_")}
        if name not in hints:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r} (path {self}); its fields: {', '.join(hints)}"
            )
        field = hints[name]
        cls = field if isinstance(field, type) and issubclass(field, _Builder) else DynamicPathBuilder
        return self._child(cls, (".", name))


__all__ = ["AnnotatedPathBuilder", "DynamicPathBuilder"]
