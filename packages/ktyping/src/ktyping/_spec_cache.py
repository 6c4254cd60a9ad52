"""`parse_spec`: each shape spec string parsed once, by a parser loaded on first use.

    >>> parse_spec("b n") is parse_spec("b n")
    True

`_parser` is imported by the first call, not by `import ktyping`: programs that never
subscript an annotation do not load it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._spec import Spec

__all__ = ["parse_spec"]


def parse_spec(source: str) -> Spec:
    """Parses (and caches) a shape spec string; raises `ShapeSpecSyntaxError`.

    The parser is imported on first use: importing ktyping does not compile it.
    """
    try:
        return _SPEC_CACHE[source]
    except KeyError:
        pass
    from ._parser import parse

    if len(_SPEC_CACHE) >= _SPEC_CACHE_SIZE:  # specs built with f-strings could grow it forever
        _SPEC_CACHE.clear()
    spec = _SPEC_CACHE[source] = parse(source)
    return spec


_SPEC_CACHE: dict[str, Spec] = {}
_SPEC_CACHE_SIZE = 4096
