"""Does a safe-mode policy admit a name, a module, or an object? The matching behind `allowed=`.

A policy is a tuple of patterns (`_surfaces.expand_patterns` has already replaced bare names of packages
that declare a surface with that surface's entries):

* entries `"module:Name"` / `"module:*"` (a glob on one public name) / `"!module:..."`: names as a config
  imports them; the objects they reach are admitted *by identity* (`IdentityIndex`);
* the older module patterns, which trust a whole module by where objects are defined: `"mylib"` (mylib
  and its submodules, for a package that declares no surface), `"mylib.*"` (a glob on the dotted name),
  `"!mylib.io"` (never).

Usage: `name_admitted("kd.nn", "Vit", patterns)`, `module_admitted("kd.nn", patterns)`,
`IdentityIndex.of(patterns).admits(obj)`.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import sys
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


def is_entry(pattern: str) -> bool:
    """`"module:name"` (possibly negated): an entry of a surface, matched on names as imported."""
    return ":" in pattern


@functools.lru_cache(maxsize=4096)
def _name_regex(glob: str) -> re.Pattern[str]:
    """A one-name glob: `*` and `?` never cross a dot, and never start a name with `_`."""
    parts = []
    for segment in glob.split("."):
        regex = fnmatch.translate(segment).replace(".*", "[^.]*").replace("(?s:", "(?:")
        if not segment.startswith("_") and any(c in segment for c in "*?["):
            regex = f"(?!_){regex}"
        parts.append(regex)
    return re.compile(r"\.".join(p.removesuffix(r"\Z") for p in parts) + r"\Z")


def _entry_matches(entry: str, module: str, name: str) -> bool:
    entry_module, _, entry_name = entry.partition(":")
    if any(c in entry_module for c in "*?["):
        if not fnmatch.fnmatchcase(module, entry_module):
            return False
    elif entry_module != module:
        return False
    if not any(c in entry_name for c in "*?["):
        return entry_name == name
    return _name_regex(entry_name).match(name) is not None


def _module_pattern_matches(pattern: str, module: str, qualname: str) -> bool:
    """The older patterns: `"mylib"` a module and its submodules, `"mylib.*"` a glob on the dotted name."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(f"{module}.{qualname}" if qualname else module, pattern) or (
            fnmatch.fnmatchcase(module, pattern)
        )
    return module == pattern or module.startswith(pattern + ".")


def name_admitted(module: str, name: str, patterns: tuple[str, ...]) -> bool:
    """Is the object `module:name` (as imported, or where defined) admitted? A negation always wins."""
    admitted = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        if is_entry(body):
            matched = _entry_matches(body, module, name)
        else:
            matched = _module_pattern_matches(body, module, name)
        if matched:
            if negated:
                return False
            admitted = True
    return admitted


def module_admitted(module: str, patterns: tuple[str, ...]) -> bool:
    """May safe mode import `module` and walk through it? Yes where an entry names something in it or
    below it, or an older module pattern covers it; never under a negated module pattern."""
    admitted = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        if is_entry(body):
            if negated:
                continue  # `!kd.xm:*` refuses names, not the walk through a module
            entry_module = body.partition(":")[0]
            if any(c in entry_module for c in "*?["):
                matched = fnmatch.fnmatchcase(module, entry_module) or entry_module.startswith(module + ".")
            else:
                matched = entry_module == module or entry_module.startswith(module + ".")
        else:
            matched = _module_pattern_matches(body, module, "")
        if matched:
            if negated:
                return False
            admitted = True
    return admitted


def target_admitted(qualname: str, patterns: tuple[str, ...]) -> bool:
    """Before importing: could `"module:Attr.sub"` be admitted, under any reading of where its module
    part ends (`"kd:nn.Vit"` and `"kd.nn.Vit"` are `kd.nn:Vit`; `"kd.nn.VitEncoder:from_variant_str"` is
    `kd.nn:VitEncoder.from_variant_str`)? `Guard.import_target` checks the walked name again."""
    module, _, attrs = qualname.partition(":")
    parts = [*module.split("."), *(attrs.split(".") if attrs else [])]
    if not attrs and module_admitted(module, patterns):
        return True  # a module itself (`"optax"`)
    for split in range(1, len(parts)):
        if name_admitted(".".join(parts[:split]), ".".join(parts[split:]), patterns):
            return True
    return False


class IdentityIndex:
    """The objects a policy's entries name, by identity: `jax.nn:*` admits the very `jax.nn.relu`.

    Built from modules already imported (nothing is imported to build it), and built again when one of
    them has grown or a named module has been imported since (lazy namespaces). Objects named by a
    negated entry are never in it.

    Usage: `IdentityIndex.of(patterns).admits(jax.nn.relu)`.
    """

    _CACHE: ClassVar[dict[tuple[str, ...], IdentityIndex]] = {}

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.entries = [p for p in patterns if is_entry(p.lstrip("!"))]
        self.signature: tuple[tuple[int, int], ...] | None = None
        self.objects: dict[int, Any] = {}
        self.functions: dict[int, Any] = {}  # underlying functions of named methods (bound anew each read)

    @classmethod
    def of(cls, patterns: tuple[str, ...]) -> IdentityIndex:
        index = cls._CACHE.get(patterns)
        if index is None:
            if len(cls._CACHE) > 32:
                cls._CACHE.clear()
            index = cls._CACHE[patterns] = cls(patterns)
        return index

    def admits(self, obj: Any) -> bool:
        if not self.entries:
            return False
        self._refresh()
        if id(obj) in self.objects:
            return True
        func = getattr(obj, "__func__", None) if isinstance(obj, types.MethodType) else None
        return func is not None and id(func) in self.functions

    def _modules(self) -> list[tuple[str, types.ModuleType | None]]:
        return [(e, sys.modules.get(e.lstrip("!").partition(":")[0])) for e in self.entries]

    def _refresh(self) -> None:
        modules = self._modules()
        signature = tuple((id(m), len(vars(m)) if m is not None else -1) for _, m in modules)
        if signature == self.signature:
            return
        admitted: dict[int, Any] = {}
        refused: dict[int, Any] = {}
        functions: dict[int, Any] = {}
        for entry, module in modules:
            if module is None:
                continue
            target = refused if entry.startswith("!") else admitted
            for obj in _named_objects(module, entry.lstrip("!").partition(":")[2]):
                target[id(obj)] = obj
                func = getattr(obj, "__func__", None) if isinstance(obj, types.MethodType) else None
                if func is not None and target is admitted:
                    functions[id(func)] = func
        for key in refused:
            admitted.pop(key, None)
            functions.pop(key, None)
        self.objects, self.functions, self.signature = admitted, functions, signature


def _named_objects(module: types.ModuleType, name: str) -> list[Any]:
    """What `module:name` names: for a glob, every public non-module value of `vars(module)` it matches;
    for a dotted name, the object reached by reading each attribute (`Class.method`)."""
    if any(c in name for c in "*?["):
        regex = _name_regex(name)
        return [
            value
            for key, value in list(vars(module).items())
            if type(key) is str and regex.match(key) and not isinstance(value, types.ModuleType)
        ]
    obj: Any = module
    for attr in name.split("."):
        try:
            obj = vars(obj)[attr] if isinstance(obj, types.ModuleType) and attr in vars(obj) else getattr(obj, attr)
        except Exception:
            return []
    return [] if isinstance(obj, types.ModuleType) else [obj]


def enclosing_function(fn: types.FunctionType) -> Any:
    """The function (or class) a closure was made in (`optax.linear_schedule` for the schedule it returns),
    found by its module and qualname without running code; None where it cannot be found."""
    qualname = fn.__qualname__
    if "<locals>" not in qualname:
        return None
    outer = qualname.partition(".<locals>")[0]
    obj: Any = sys.modules.get(fn.__module__) if type(fn.__module__) is str else None
    for attr in outer.split("."):
        if obj is None:
            return None
        try:
            obj = vars(obj).get(attr)
        except TypeError:
            return None
    return obj
