"""kontext: wire components by string key paths (``"batch.image"``, ``"params.**.kernel"``).

Pure standard library. JAX pytrees and key paths are understood when JAX is already imported.

Usage::

    loss = MyLoss(preds="preds.logits", labels="batch.label")
    kwargs = kontext.resolve_from_keyed_obj(context, loss, func=loss.get_values)
"""

from ._by_path import filter_by_path as filter_by_path
from ._by_path import get_by_path as get_by_path
from ._by_path import set_by_path as set_by_path
from ._errors import GlobPathError as GlobPathError
from ._errors import KeySignatureError as KeySignatureError
from ._errors import PathIndexError as PathIndexError
from ._errors import PathMutationError as PathMutationError
from ._errors import PathNotFoundError as PathNotFoundError
from ._errors import PathSyntaxError as PathSyntaxError
from ._errors import RequiredKeyError as RequiredKeyError
from ._errors import UnresolvedKeysError as UnresolvedKeysError
from ._flatten import flatten_with_path as flatten_with_path
from ._parser import Wildcard as Wildcard
from ._paths import AbstractPath as AbstractPath
from ._paths import GlobPath as GlobPath
from ._paths import Path as Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._keys import REQUIRED as REQUIRED
    from ._keys import Context as Context
    from ._keys import Key as Key
    from ._keys import KeyTree as KeyTree
    from ._keys import get_keypaths as get_keypaths
    from ._keys import is_key_annotated as is_key_annotated
    from ._keys import resolve_from_keyed_obj as resolve_from_keyed_obj
    from ._keys import resolve_from_keypaths as resolve_from_keypaths
    from ._path_builder import PathBuilder as PathBuilder
    from ._path_builder import path_builder_from as path_builder_from
del TYPE_CHECKING

# Keys and path builders need `typing` (Annotated, get_type_hints): loaded on first use so that
# `import kontext` stays cheap for code that only reads paths.
_LAZY = {
    "REQUIRED": "_keys",
    "Context": "_keys",
    "Key": "_keys",
    "KeyTree": "_keys",
    "get_keypaths": "_keys",
    "is_key_annotated": "_keys",
    "resolve_from_keyed_obj": "_keys",
    "resolve_from_keypaths": "_keys",
    "PathBuilder": "_path_builder",
    "path_builder_from": "_path_builder",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kontext' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"kontext.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "REQUIRED",
    "AbstractPath",
    "Context",
    "GlobPath",
    "GlobPathError",
    "Key",
    "KeySignatureError",
    "KeyTree",
    "Path",
    "PathBuilder",
    "PathIndexError",
    "PathMutationError",
    "PathNotFoundError",
    "PathSyntaxError",
    "RequiredKeyError",
    "UnresolvedKeysError",
    "Wildcard",
    "filter_by_path",
    "flatten_with_path",
    "get_by_path",
    "get_keypaths",
    "is_key_annotated",
    "path_builder_from",
    "resolve_from_keyed_obj",
    "resolve_from_keypaths",
    "set_by_path",
]
