"""Exception types raised by konfig.

Each refines the builtin a caller would naturally catch, so
`except ValueError` still works around `konfig.resolve(...)`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class ConfigValueError(TypeError):
    """A value that is not configurable was put into a `ConfigDict`.

    Usage: `cfg.model = MyModel()` (a live object) raises this; capture the
    import with `konfig.imports()` and write `cfg.model = MyModel()` there.
    """


class ArgumentError(TypeError):
    """A node got an argument its target's signature does not accept."""


class TargetNotFoundError(ImportError):
    """A captured import or attribute does not exist (typo, missing module)."""


class RelativeImportError(ImportError):
    """A relative import was used inside `konfig.imports()`."""


class CapturedSubclassError(TypeError):
    """A class tried to subclass a captured (fake) class."""


class RefControlFlowError(TypeError):
    """A lazy reference was used where Python needs a concrete bool."""


class ResolveError(ValueError):
    """Building the objects of a config failed; names the failing path."""


class MissingValueError(ResolveError):
    """Required values (`konfig.required(...)`) are unset at resolve time."""


class CycleError(ResolveError):
    """A config node (or reference) depends on itself."""


class DisallowedTargetError(ResolveError):
    """Safe mode refused targets outside the `allowed=[...]` list."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Returns `"; did you mean 'x'?"` for the closest candidate, else `""`."""
    import difflib

    matches = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=3)
    if not matches:
        return ""
    return "; did you mean " + " or ".join(repr(m) for m in matches) + "?"
