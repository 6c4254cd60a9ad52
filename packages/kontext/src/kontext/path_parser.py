"""Kauldron's module path ``kontext.path_parser``: a path's text split into its parts, as a list.

Usage: ``path_parser.parse_parts("a[3][1:2].bbb.*.a") == ["a", 3, slice(1, 2), "bbb", Wildcard.STAR, "a"]``.
kontext's own API is ``kontext.Path("...").parts`` (a tuple); this module is for code written against Kauldron.
"""

from __future__ import annotations

from ._parser import Wildcard as Wildcard
from ._parser import parse_parts as _parse_parts


def parse_parts(path: str) -> list[object]:
    """The parts of ``path`` (names as ``str``, indices as ``int``, slices, ``Wildcard.STAR`` / ``DOUBLE_STAR``),
    in a list as Kauldron's ``path_parser.parse_parts`` gives them; a bad path raises ``PathSyntaxError``."""
    return list(_parse_parts(path))


__all__ = ["Wildcard", "parse_parts"]
