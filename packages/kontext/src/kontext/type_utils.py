"""Kauldron's module path ``kontext.type_utils``: which fields of a class are annotated with a token.

Usage: ``type_utils.get_annotated(Loss, kontext.Key) == ["preds", "targets"]`` (the fields whose annotation
holds ``Annotated[..., token]`` anywhere: inside ``Optional``, unions, ``dict[str, list[...]]``).
"""

from __future__ import annotations

import typing
from typing import Any


def get_annotated(cls: Any, annotated_token: Any) -> list[str]:
    """The names of ``cls``'s annotated fields (in declaration order, base classes first) whose annotation
    holds ``Annotated[..., annotated_token]`` at any depth. ``annotated_token`` is the token itself or an
    alias ``Annotated[T, token]`` (then any of its tokens counts)."""
    tokens = _tokens(annotated_token)
    hints = typing.get_type_hints(cls, include_extras=True)
    return [name for name, hint in hints.items() if _holds(hint, tokens)]


def _tokens(annotated_token: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotated_token) is typing.Annotated:
        return tuple(annotated_token.__metadata__)
    return (annotated_token,)


def _holds(hint: Any, tokens: tuple[Any, ...]) -> bool:
    if typing.get_origin(hint) is typing.Annotated:
        if any(meta is token for meta in hint.__metadata__ for token in tokens):
            return True
        return _holds(hint.__origin__, tokens)
    return any(_holds(arg, tokens) for arg in typing.get_args(hint))


__all__ = ["get_annotated"]
