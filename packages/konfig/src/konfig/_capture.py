"""`with konfig.imports():` turns imports and calls into config nodes.

Inside the block, `import` statements of the *current thread or asyncio task*
in the module that runs the block return proxies (code called from the block,
such as a library function importing lazily, imports normally; another task
or thread importing while the block awaits gets the real module: the capture
state is a `contextvars.ContextVar`, so a task created inside the block
inherits it, as with `decimal` contexts):
attribute access on a proxy yields a proxy, calling one yields a call node
`ConfigDict({"__qualname__": "module:Attr", "0": ..., **kwargs})` and storing
an uncalled proxy in a config yields `{"__const__": "module:Attr"}`.

Modules are really imported (outside capture) so that typos fail at once,
unless their prefix is lazy (`imports(lazy=True)`,
`set_lazy_imported_modules([...])`); lazy targets are imported by
`konfig.resolve`.
"""

from __future__ import annotations

import builtins
import importlib
import sys
import types
from _thread import allocate_lock

from . import _config_dict
from ._errors import (
    CapturedSubclassError,
    RelativeImportError,
    TargetNotFoundError,
    did_you_mean,
    module_getattr,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextvars
    from collections.abc import Callable
    from typing import Any

_LAZY = object()  # `_Proxy._obj` of a target that was not imported.
_MISSING = object()

# `(lazy, scope)` while this thread's / task's code captures imports, else None: `scope`
# is the globals of the module running the block (only its import statements are captured).
# Made by the first `konfig.imports()` (the import hook only runs after it), so that
# `import konfig` does not import `contextvars`.
_state: contextvars.ContextVar[tuple[bool, dict[str, Any]] | None] = None  # type: ignore[assignment]
_install_lock = allocate_lock()
_install_count = 0
_original_import: Any = None

# Global lazy-import setting: (prefixes, except prefixes).
_lazy_setting: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
# Module names seen in import statements: tells modules from attributes in lazy mode.
_known_modules: set[str] = set()
_module_proxies: dict[tuple[str, bool], _Proxy] = {}


class _Capture:
    __slots__ = ("_lazy", "_tokens")

    def __init__(self, lazy: bool) -> None:
        self._lazy = lazy
        self._tokens: list[contextvars.Token[Any]] = []  # one per (nested) `with` of this object

    def __enter__(self) -> None:
        if _state is None:
            _make_state()
        previous = _state.get()
        _install()
        # Only import statements of the module running the block are captured:
        # library code called inside the block keeps importing normally.
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_globals.get("__name__") == "contextlib":
            frame = frame.f_back  # Entered through `ExitStack.enter_context` and the like.
        lazy = self._lazy or (previous is not None and previous[0])
        self._tokens.append(_state.set((lazy, frame.f_globals)))

    def __exit__(self, *exc_info: Any) -> None:
        token = self._tokens.pop()
        try:
            _state.reset(token)
        except ValueError:  # Left in another context than it was entered in.
            _state.set(token.old_value if token.old_value is not token.MISSING else None)
        _uninstall()


def _make_state() -> None:
    global _state
    import contextvars

    with _install_lock:
        if _state is None:
            _state = contextvars.ContextVar("konfig_capture", default=None)


def imports(*, lazy: bool = False) -> _Capture:
    """Captures imports and calls of this block (this thread's or asyncio task's) as config nodes.

    Usage:
        with konfig.imports():
            import optax
            from flax import linen as nn
        cfg.optimizer = optax.adam(learning_rate=0.1)  # a ConfigDict

    Args:
        lazy: import nothing now; targets are imported by `konfig.resolve`.
    """
    return _Capture(lazy)


class _LazySetting:
    """Returned by `set_lazy_imported_modules`; usable as a context manager."""

    __slots__ = ("_previous",)

    def __init__(self, previous: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
        self._previous = previous

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: Any) -> None:
        global _lazy_setting
        _lazy_setting = self._previous

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`@konfig.set_lazy_imported_modules([...])` (as Kauldron's): the setting holds while `fn` runs.

        The decorator line itself leaves the setting as it was.
        """
        import functools

        global _lazy_setting
        setting, _lazy_setting = _lazy_setting, self._previous

        @functools.wraps(fn)
        def with_setting(*args: Any, **kwargs: Any) -> Any:
            global _lazy_setting
            previous, _lazy_setting = _lazy_setting, setting
            try:
                return fn(*args, **kwargs)
            finally:
                _lazy_setting = previous

        return with_setting


def set_lazy_imported_modules(
    lazy_import: list[str] | tuple[str, ...] = ("*",), *, except_: list[str] | tuple[str, ...] = ()
) -> _LazySetting:
    """Defers importing these module prefixes to resolve time.

    Usage: `konfig.set_lazy_imported_modules(["xmanager"])`, or
    `with konfig.set_lazy_imported_modules(["xmanager"]): ...` to restore the
    previous setting afterwards, or `@konfig.set_lazy_imported_modules(["*"])` on a function
    (the setting holds while it runs). `"*"` makes everything lazy; `except_` wins.
    """
    global _lazy_setting
    if isinstance(lazy_import, str) or isinstance(except_, str):
        raise TypeError("set_lazy_imported_modules expects lists of module names, not a str")
    previous = _lazy_setting
    _lazy_setting = (tuple(lazy_import), tuple(except_))
    return _LazySetting(previous)


def _matches(name: str, prefixes: tuple[str, ...]) -> bool:
    for prefix in prefixes:
        if prefix == "*" or name == prefix or name.startswith(prefix + "."):
            return True
    return False


def _is_lazy(name: str) -> bool:
    state = _state.get()
    if state is not None and state[0]:
        return True
    lazy, except_ = _lazy_setting
    return bool(lazy) and _matches(name, lazy) and not _matches(name, except_)


def _install() -> None:
    global _install_count, _original_import
    with _install_lock:
        if _install_count == 0:
            _original_import = builtins.__import__
            builtins.__import__ = _capturing_import  # type: ignore[assignment]
        _install_count += 1


def _uninstall() -> None:
    global _install_count
    with _install_lock:
        _install_count -= 1
        if _install_count == 0 and builtins.__import__ is _capturing_import:
            builtins.__import__ = _original_import


def _capturing_import(
    name: str,
    globals: dict[str, Any] | None = None,
    locals: Any = None,
    fromlist: Any = (),
    level: int = 0,
) -> Any:
    state = _state.get()
    if state is None or globals is not state[1]:
        return _original_import(name, globals, locals, fromlist, level)
    if level:
        raise _relative_import_error(name, globals, fromlist, level)
    lazy = _is_lazy(name)
    if not lazy:
        _real_import(name)
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        _known_modules.add(".".join(parts[:i]))
    if fromlist:
        module = _module_proxy(name, lazy)
        for attr in fromlist:
            if attr == "*":
                raise ImportError(
                    f"`from {name} import *` cannot be captured by konfig.imports(); import names explicitly"
                )
            getattr(module, attr)  # Fails now on a typo.
        return module
    return _module_proxy(parts[0], lazy)


def _relative_import_error(name: str, globals: Any, fromlist: Any, level: int) -> RelativeImportError:
    package = (globals or {}).get("__package__") or ""
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    absolute = ".".join(p for p in (base, name) if p)
    names = ", ".join(fromlist or ()) or "..."
    dots = "." * level
    return RelativeImportError(
        f"Relative import `from {dots}{name} import {names}` is not supported inside"
        f" konfig.imports(): configs are data that name targets absolutely. Write"
        f" `from {absolute or '<package>'} import {names}` instead (or move the relative"
        " import outside the `with konfig.imports():` block)."
    )


def _real_import(name: str) -> types.ModuleType:
    token = _state.set(None)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise _module_not_found(name, e) from e
    finally:
        _state.reset(token)


def _module_not_found(name: str, error: ModuleNotFoundError) -> TargetNotFoundError:
    missing = error.name or name
    parent, _, leaf = missing.rpartition(".")
    candidates: list[str] = []
    try:
        import pkgutil

        if parent and parent in sys.modules:
            path = getattr(sys.modules[parent], "__path__", None)
            candidates = [m.name for m in pkgutil.iter_modules(path)] if path else []
        elif not parent:
            candidates = [m.name for m in pkgutil.iter_modules()]
            candidates += [m for m in sys.modules if "." not in m]
    except Exception:  # Suggestions are best effort.
        candidates = []
    return TargetNotFoundError(
        f"konfig.imports(): cannot import {name!r}: {error}{did_you_mean(leaf, candidates)}."
        " If the module is only available where the config is resolved, defer it with"
        f" `konfig.imports(lazy=True)` or `konfig.set_lazy_imported_modules([{missing.split('.')[0]!r}])`.",
        name=name,
    )


def _module_proxy(name: str, lazy: bool) -> _Proxy:
    key = (name, lazy)
    proxy = _module_proxies.get(key)
    if proxy is None:
        obj = _LAZY if lazy else sys.modules.get(name, _LAZY)
        if obj is _LAZY and not lazy:
            obj = _real_import(name)
        proxy = _Proxy(name, "", obj)
        _module_proxies[key] = proxy
    return proxy


class _Proxy:
    """A captured module, class, function or constant (not yet called)."""

    __slots__ = ("_konfig_attrs", "_konfig_children", "_konfig_module", "_konfig_obj")

    def __init__(self, module: str, attrs: str, obj: Any) -> None:
        self._konfig_module = module
        self._konfig_attrs = attrs
        self._konfig_obj = obj
        self._konfig_children: dict[str, _Proxy] = {}

    @property
    def _konfig_qualname(self) -> str:
        if self._konfig_attrs:
            return f"{self._konfig_module}:{self._konfig_attrs}"
        return self._konfig_module

    def __getattr__(self, name: str) -> _Proxy:
        if (name[:2] == "__" and name[-2:] == "__") or name.startswith("_konfig_"):
            raise AttributeError(name)
        try:
            return self._konfig_children[name]
        except KeyError:
            pass
        child = self._konfig_child(name)
        self._konfig_children[name] = child
        return child

    def _konfig_child(self, name: str) -> _Proxy:
        module, attrs, obj = self._konfig_module, self._konfig_attrs, self._konfig_obj
        if not attrs:  # `self` is a module
            submodule = f"{module}.{name}"
            if obj is _LAZY:
                if submodule in _known_modules:
                    return _Proxy(submodule, "", _LAZY)
                return _Proxy(module, name, _LAZY)
            if name in getattr(obj, "__konfig_deferred__", ()):
                # A value the module computes on first use (its `__getattr__`), e.g. one that needs devices:
                # captured by name, computed when the config is resolved.
                return _Proxy(module, name, _LAZY)
            value, refusal = module_getattr(obj, name, _MISSING)
            if value is _MISSING or (
                isinstance(value, types.ModuleType) and sys.modules.get(submodule) is not value
            ):
                try:
                    value = _real_import(submodule)
                except TargetNotFoundError as e:
                    cause = e.__cause__
                    missing = getattr(cause, "name", None)
                    if missing and missing != submodule and not submodule.startswith(missing + "."):
                        # The submodule exists; something it imports does not: say so, not "no submodule".
                        raise TargetNotFoundError(
                            f"{submodule} exists but cannot be imported: {cause} (a dependency of it is "
                            "missing; install it, or defer the import with `konfig.imports(lazy=True)`)",
                            name=submodule,
                        ) from cause
                    if value is not _MISSING:
                        return _Proxy(value.__name__, "", value)
                    if refusal:  # The module's own explanation (e.g. "not ported; use ...").
                        raise TargetNotFoundError(f"{submodule}: {refusal}", name=submodule) from None
                    public = [n for n in dir(obj) if not n.startswith("_") and n != name]
                    raise TargetNotFoundError(
                        f"module {module!r} has no attribute or submodule {name!r}"
                        f"{did_you_mean(name, public)}",
                        name=submodule,
                    ) from e.__cause__
            if isinstance(value, types.ModuleType):
                is_submodule = sys.modules.get(submodule) is value
                return _Proxy(submodule if is_submodule else value.__name__, "", value)
            return _Proxy(module, name, value)
        if obj is _LAZY:
            return _Proxy(module, f"{attrs}.{name}", _LAZY)
        value = getattr(obj, name, _MISSING)
        if value is _MISSING:
            public = [n for n in dir(obj) if not n.startswith("_")]
            raise TargetNotFoundError(
                f"{module}.{attrs} has no attribute {name!r}{did_you_mean(name, public)}",
                name=module,
            )
        return _Proxy(module, f"{attrs}.{name}", value)

    def __call__(self, *args: Any, **kwargs: Any) -> _config_dict.ConfigDict:
        obj = self._konfig_obj
        if not self._konfig_attrs:
            raise TypeError(f"Captured module {self._konfig_module!r} is not callable")
        if obj is not _LAZY and not callable(obj):
            raise TypeError(
                f"{self._konfig_qualname.replace(':', '.')} is not callable (its"
                f" type is {type(obj).__name__}); use it without a call to store it as a constant"
            )
        fields: dict[Any, Any] = {_config_dict.QUALNAME: self._konfig_qualname}
        for i, arg in enumerate(args):
            fields[str(i)] = arg
        if kwargs:
            if _config_dict.QUALNAME in kwargs or _config_dict.CONST in kwargs:
                raise _config_dict.ArgumentError(
                    f"{self._konfig_qualname.replace(':', '.')}(): `__qualname__` and `__const__`"
                    " are konfig's node markers and cannot be passed as keyword arguments"
                )
            fields.update(kwargs)
        frame = sys._getframe(1)
        return _config_dict.build_node(
            fields, (frame.f_code.co_filename, frame.f_lineno), None if obj is _LAZY else obj
        )

    def _konfig_as_const(self) -> _config_dict.ConfigDict:
        return _config_dict.ConfigDict._raw({_config_dict.CONST: self._konfig_qualname}, None)

    def __or__(self, other: Any) -> _config_dict.ConfigDict:
        return _config_dict.make_node(_config_dict.UNION_QUALNAME, self, other)

    def __ror__(self, other: Any) -> _config_dict.ConfigDict:
        return _config_dict.make_node(_config_dict.UNION_QUALNAME, other, self)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        qualname = self._konfig_qualname
        module, _, attrs = qualname.partition(":")
        raise CapturedSubclassError(
            f"Cannot subclass {qualname.replace(':', '.')!r}: inside `konfig.imports()` it is"
            " a captured placeholder, not the real class. Define the subclass in a regular"
            f" module (`from {module} import {attrs.split('.')[0] or module}` outside the"
            " block) and capture that module instead."
        )

    def __repr__(self) -> str:
        return f"<konfig captured {self._konfig_qualname.replace(':', '.')}>"


_CO_OPTIMIZED = 0x1  # `inspect.CO_OPTIMIZED`: a function's frame, whose locals live outside `f_locals`

# Names `konfig.mock_modules()` leaves alone, as Kauldron's does (`ecolab` for notebooks).
_NOT_MOCKED = frozenset({"konfig", "ecolab"})


class _MockModules:
    """Returned by `mock_modules`: a context manager, or a decorator for a function."""

    __slots__ = ("_entered",)

    def __init__(self) -> None:
        self._entered: list[list[tuple[Any, dict[str, Any]]]] = []  # per `with`: (frame or namespace, mocks)

    def __enter__(self) -> None:
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_globals.get("__name__") == "contextlib":
            frame = frame.f_back  # Entered through `ExitStack.enter_context` and the like.
        mocked = [(frame.f_globals, _mock_namespace(frame.f_globals))]
        if frame.f_locals is not frame.f_globals:  # A function (or class body) runs the block.
            mocked.append((frame, _mock_frame_locals(frame)))
        self._entered.append(mocked)

    def __exit__(self, *exc_info: Any) -> None:
        for where, mocks in reversed(self._entered.pop()):
            if isinstance(where, dict):
                _restore(where, mocks)
            else:
                _restore_frame_locals(where, mocks)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`@konfig.mock_modules()`: the modules of `fn`'s module are mocked while `fn` runs."""
        import functools

        @functools.wraps(fn)
        def with_mocked_modules(*args: Any, **kwargs: Any) -> Any:
            namespace = fn.__globals__
            mocks = _mock_namespace(namespace)
            try:
                return fn(*args, **kwargs)
            finally:
                _restore(namespace, mocks)

        return with_mocked_modules


def mock_modules() -> _MockModules:
    """Within the block, the modules bound to names of the calling code are captured, as in `konfig.imports()`.

    For notebooks and tests (as Kauldron's): the modules stay real outside the block, so the same
    names build objects before and after it and config nodes inside it. Every name of the caller's
    globals and locals bound to a module is mocked, but `konfig` and `ecolab`; names are restored on
    exit (unless the block rebound them).

    Usage:
        import optax
        with konfig.mock_modules():
            cfg.optimizer = optax.adam(learning_rate=1e-5)  # a ConfigDict
        optimizer = optax.adam(learning_rate=1e-5)  # the real optimizer
    """
    return _MockModules()


def _mock_namespace(namespace: Any) -> dict[str, Any]:
    """Binds a module proxy to each name of `namespace` bound to a module; returns `{name: (module, proxy)}`."""
    mocks: dict[str, Any] = {}
    konfig_module = sys.modules.get(__package__ or "konfig")
    for name, value in list(namespace.items()):
        if name in _NOT_MOCKED or value is konfig_module or not isinstance(value, types.ModuleType):
            continue
        module_name = _module_name(value)
        if module_name is None:
            continue
        proxy = _module_proxy(module_name, False)
        mocks[name] = (value, proxy)
        namespace[name] = proxy
    return mocks


def _module_name(module: types.ModuleType) -> str | None:
    """The name `module` is imported by, read without triggering a lazy module's import."""
    name = vars(module).get("__name__")
    if type(name) is not str:
        name = getattr(module, "__name__", None)
    return name if type(name) is str and sys.modules.get(name) is module else None


def _restore(namespace: Any, mocks: dict[str, Any]) -> None:
    for name, (module, proxy) in mocks.items():
        if namespace.get(name) is proxy:
            namespace[name] = module


def _mock_frame_locals(frame: types.FrameType) -> dict[str, Any]:
    f_locals = frame.f_locals  # Python >= 3.13: writes go through; before, a copy written back below.
    mocks = _mock_namespace(f_locals)
    if mocks:
        _write_back_locals(frame)
    return mocks


def _restore_frame_locals(frame: types.FrameType, mocks: dict[str, Any]) -> None:
    _restore(frame.f_locals, mocks)
    if mocks:
        _write_back_locals(frame)


def _write_back_locals(frame: types.FrameType) -> None:
    """Before Python 3.13 a function's `frame.f_locals` is a copy: write its changes to the frame."""
    if sys.version_info >= (3, 13) or not frame.f_code.co_flags & _CO_OPTIMIZED:
        return  # Writes go through; a class body's (or `exec`'s) locals are the dict itself.
    import ctypes

    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
