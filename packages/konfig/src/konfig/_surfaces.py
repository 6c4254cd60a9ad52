"""Declared configurable surfaces: what a package lets an untrusted config build from it.

`allowed=["kd"]` in safe mode means the names kd *declares* a config may build, not every attribute
under `kd`. A package declares its surface next to its code, as an entry point of the group
`konfig.surfaces` (its name: the top-level module; its value: `"module:NAME"` of a tuple of entries)::

    [project.entry-points."konfig.surfaces"]
    mylib = "mylib._konfig_surface:SURFACE"

or at run time: `konfig.declare_surface("mylib", ["mylib.layers:*", "mylib:make_model"])`.

An entry names public objects by the module a config imports them from (not where they are defined):

* `"module:Name"`: one name; `"module:Class.method"` a classmethod or staticmethod called by name;
* `"module:*"` (or another glob on one name): every public name of `module` that is not a module (a
  `*` never crosses a dot and never matches a name starting with `_`);
* `"!module:Name"`, `"!module:*"`: never, whatever else admits it.

An object reached by such a name is admitted by identity, wherever it is defined (`jax.nn:relu` is a
`jax._src.custom_derivatives.custom_jvp`); a method of a built object is not, unless named.

Usage: `expand_patterns(["kd", "mylib.*"])  # kd's entries, then "mylib.*" unchanged`.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

GROUP = "konfig.surfaces"

# konfig's declaration for the standard library: `functools.partial` (judged by what it wraps).
FUNCTOOLS: tuple[str, ...] = ("functools:partial",)

_DECLARED: dict[str, tuple[str, ...]] = {}
_ENTRY_POINTS: dict[str, object] | None = None  # top-level module -> its (not yet loaded) entry point
_ENTRY = re.compile(r"!?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z0-9_*?\[\]]+(\.[A-Za-z0-9_]+)*")


class SurfaceError(ValueError):
    """A surface declaration that is not a list of `"module:name"` entries of its own package."""


def declare_surface(package: str, entries: Iterable[str]) -> None:
    """Declares (or replaces) what a config in safe mode may build from the top-level `package`.

    Usage: `konfig.declare_surface("mylib", ["mylib.layers:*", "mylib:make_model", "!mylib.layers:save"])`;
    then `konfig.resolve(cfg, allowed=["mylib"])` admits exactly those.
    """
    if type(package) is not str or not package.isidentifier():
        raise SurfaceError(f"declare_surface: expected a top-level module name, found {package!r}")
    _DECLARED[package] = check_entries(package, entries)


def check_entries(package: str, entries: Iterable[str]) -> tuple[str, ...]:
    """The entries as a tuple, each checked to be a `"module:name"` of `package` (else SurfaceError)."""
    if isinstance(entries, str):
        raise SurfaceError(f"the surface of {package!r}: expected a list of entries, found the str {entries!r}")
    checked = []
    for entry in entries:
        if type(entry) is not str or not _ENTRY.fullmatch(entry):
            raise SurfaceError(
                f"the surface of {package!r}: expected entries like 'module:Name', 'module:*' or "
                f"'!module:Name', found {entry!r}"
            )
        module = entry.lstrip("!").partition(":")[0]
        if module != package and not module.startswith(package + "."):
            raise SurfaceError(
                f"the surface of {package!r}: the entry {entry!r} names the module {module!r}, outside "
                f"{package!r} (a package declares only its own names)"
            )
        if any(segment.startswith("__") for segment in entry.lstrip("!").replace(":", ".").split(".")):
            raise SurfaceError(f"the surface of {package!r}: the entry {entry!r} names a dunder attribute")
        checked.append(entry)
    return tuple(checked)


def declared_surface(package: str) -> tuple[str, ...] | None:
    """The entries `package` (a top-level module name) declares, or None where it declares none.

    Usage: `declared_surface("kd")  # ("kd.losses:*", ..., "!kd.xm:*")`.
    """
    found = _DECLARED.get(package)
    if found is not None:
        return found
    entry_point = _entry_points().get(package)
    if entry_point is None:
        return None
    try:
        entries = entry_point.load()  # type: ignore[attr-defined]
    except Exception as e:  # a broken declaration admits nothing rather than everything
        raise SurfaceError(
            f"the konfig surface of {package!r} ({entry_point.value}) cannot be loaded: "  # type: ignore[attr-defined]
            f"{type(e).__name__}: {e}"
        ) from e
    _DECLARED[package] = found = check_entries(package, entries)
    return found


def declared_packages() -> list[str]:
    """Every top-level module with a declared surface (installed entry points and `declare_surface`)."""
    return sorted(set(_DECLARED) | set(_entry_points()))


def _entry_points() -> dict[str, object]:
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        from importlib.metadata import entry_points

        _ENTRY_POINTS = {ep.name: ep for ep in entry_points(group=GROUP)}
    return _ENTRY_POINTS


def is_bare_module(pattern: str) -> bool:
    """`"kd"`, `"kd.nn"`: a module name (no `:`, no glob, no `!`), which a declared surface narrows."""
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", pattern))


def expand_patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    """`allowed=` with every bare module name of a package that declares a surface replaced by that
    surface's entries (for `"kd.nn"`, those of kd's entries inside `kd.nn`); other patterns as given.

    Usage: `expand_patterns(["kd", "!kd.nn:Vit"])  # (kd's entries..., "!kd.nn:Vit")`.
    """
    out: list[str] = []
    for pattern in patterns:
        surface = declared_surface(pattern.partition(".")[0]) if is_bare_module(pattern) else None
        if surface is None:
            out.append(pattern)
            continue
        out.extend(
            entry
            for entry in surface
            if (module := entry.lstrip("!").partition(":")[0]) == pattern or module.startswith(pattern + ".")
            or entry.startswith("!")
        )
    return tuple(dict.fromkeys(out))
