"""`@typechecked` on functions, methods, generators, coroutines and classes: the wrappers,
and the plan each function's checks follow, one scope per call.

    >>> from ktyping import Shape
    >>> @decorate
    ... class Layer:
    ...     def __call__(self, x: Shape["b n"]) -> Shape["b"]:
    ...         return x[:1]
    >>> Layer()((2, 3))
    (2,)

The first call builds a plan (resolved hints, compiled checks, parameter positions) that
later calls reuse: a call costs one version comparison, then per annotated argument one
positional or keyword lookup and the compiled check. `decorate` hands dataclasses to
`_dataclasses` and every other class's methods to the function wrappers; `with
typechecked():` blocks are `_blocks`.
"""

from __future__ import annotations

import sys

from . import _scope
from ._compile import compile_annotation, is_trivial, resolve_hints
from ._config import VERSION, enabled_for, get_config
from ._errors import JaxtypingAnnotationError, KTypeCheckError
from ._scope import Scope, Source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ._array_types import Check

__all__ = ["decorate", "enclosing_locals"]


_EMPTY: Any = object()
_CO_GENERATOR = 0x20
_CO_COROUTINE = 0x80


# ----------------------------------------------------------------------------- plans


class _FunctionPlan:
    """Everything a checked call needs, computed once per function."""

    frame = None  # a block's plan owns a frame instead of a function's code

    __slots__ = (
        "_signature",
        "code",
        "enabled",
        "fn",
        "globals",
        "hints",
        "jaxtyping_names",
        "params",
        "ret_check",
        "var_keyword",
        "var_positional",
        "variadic",
        "version",
        "what",
        "yield_check",
    )

    def __init__(self, fn: Callable[..., Any], localns: dict[str, Any] | None = None) -> None:
        import inspect

        self.fn = fn
        source = _annotated_function(fn)
        # The code the scope belongs to (`get_current_scope` compares the caller's frame with it).
        self.code = getattr(source, "__code__", None)
        self.globals = getattr(source, "__globals__", {})
        self._signature = inspect.signature(fn)
        self.hints = hints = resolve_hints(source, localns)
        self.jaxtyping_names = _jaxtyping_annotated(hints)
        params = []
        self.var_positional: Check | None = None
        self.var_keyword: Check | None = None
        index = 0
        for p in self._signature.parameters.values():
            hint = hints.get(p.name, _EMPTY)
            check = None if hint is _EMPTY else compile_annotation(hint)
            if check is not None and is_trivial(check):
                check = None
            if p.kind is p.VAR_POSITIONAL:
                self.var_positional = check
                continue
            if p.kind is p.VAR_KEYWORD:
                self.var_keyword = check
                continue
            position = index if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) else None
            keyword = None if p.kind is p.POSITIONAL_ONLY else p.name
            if position is not None:
                index += 1
            if check is not None:
                params.append((position, keyword, check, p.name))
        self.params = tuple(params)
        self.variadic = self.var_positional is not None or self.var_keyword is not None
        ret = hints.get("return", _EMPTY)
        self.ret_check: Check | None = None
        self.yield_check: Check | None = None
        if ret is not _EMPTY:
            if _code_flags(fn) & _CO_GENERATOR:
                self.yield_check, ret = _generator_parts(ret)
            if ret is not _EMPTY:
                check = compile_annotation(ret)
                self.ret_check = None if is_trivial(check) else check
        self.version = -1
        self.enabled = True
        self.what = "function"  # or "property:", "property:setter of ": how messages name it

    def refresh(self) -> None:
        # The version is read first and stored last, so a concurrent call never pairs the
        # new version with a stale `enabled`.
        # A report that raises leaves the version stale, so every call raises it again.
        version = VERSION[0]
        module = getattr(self.fn, "__module__", None)
        self.enabled = enabled = enabled_for(module)
        if enabled and self.jaxtyping_names:
            _report_jaxtyping(self, get_config(module).jaxtyping_annotations)
        self.version = version

    def bind(self, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError:  # a call Python will reject: bind what can be bound, for the error
            try:
                return dict(self._signature.bind_partial(*args, **kwargs).arguments)
            except TypeError:
                return dict(kwargs)
        bound.apply_defaults()
        return bound.arguments

    # -- errors (slow path) --------------------------------------------------------------

    def source(self) -> Source:
        fn = _annotated_function(self.fn)
        code = getattr(fn, "__code__", None)
        name = getattr(fn, "__name__", None) or repr(fn)
        what = self.what.partition(":")[0]
        module = getattr(fn, "__module__", None) or "<unknown>"
        if code is None:
            return Source(f"{what} {name!r}", "<unknown>", 0, module)
        return Source(f"{what} {name!r}", code.co_filename, code.co_firstlineno, module)

    def origin(self) -> str:
        fn = _annotated_function(self.fn)
        code = getattr(fn, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code else "<unknown>"
        name = getattr(fn, "__qualname__", None) or repr(fn)
        if self.what != "function":  # `property 'bar' (setter of Foo.bar)`
            kind, _, role = self.what.partition(":")
            return f"{kind} {getattr(fn, '__name__', name)!r} ({role}{name}) at {where}"
        return f"function {name!r} at {where}"

    def fail(
        self, failing: str, value: Any, annotation: Any, cands: list, scope: Scope, item: str = ""
    ) -> KTypeCheckError:
        """The error for `failing` (an argument name, "return" or "yield"), to be raised.

        `item` locates the value inside a `*args` / `**kwargs` argument (`[1]`, `['w']`).
        """
        from ._describe import describe
        from ._explain import explain
        from ._format import candidates_block, compact

        what = {"return": "return value", "yield": "yielded value"}.get(failing, f"argument {failing}{item}")
        lines = [
            f"{what} = {compact(value)} {explain(annotation, value, cands, scope)}",
            f"  (required by {describe(annotation)})",
            "",
            f"Origin: {self.origin()}",
            "",
            "Arguments:",
        ]
        arguments = scope.arguments or {}
        for name, p in self._signature.parameters.items():
            marker = ">" if name == failing else " "
            hint = self.hints.get(name, _EMPTY)
            ann = "" if hint is _EMPTY else f": {describe(hint)}"
            shown = compact(arguments[name]) if name in arguments else "<missing>"
            if p.kind is p.VAR_POSITIONAL:
                name = "*" + name
            elif p.kind is p.VAR_KEYWORD:
                name = "**" + name
            lines.append(f"{marker} {name}{ann} = {shown}")
        ret = self.hints.get("return", _EMPTY)
        if ret is not _EMPTY:
            marker = "> " if failing == "return" else ""
            lines += ["", f"{marker}Return: {describe(ret)}"]
        block = candidates_block(cands)
        lines += ["", block]
        error = KTypeCheckError("\n".join(lines))
        error.candidates_block = block
        return error


def _jaxtyping_annotated(hints: dict[str, Any]) -> tuple[str, ...]:
    """The names in `hints` ("return" too) whose annotation uses a jaxtyping type, when the caller
    has imported jaxtyping (it is never imported here)."""
    jaxtyping = sys.modules.get("jaxtyping")
    bases = tuple(
        b for b in (getattr(jaxtyping, "AbstractArray", None), getattr(jaxtyping, "PyTree", None)) if b
    )
    if not bases:
        return ()
    return tuple(name for name, hint in hints.items() if _uses_jaxtyping(hint, bases, 0))


def _uses_jaxtyping(tp: Any, bases: tuple[type, ...], depth: int) -> bool:
    import typing

    try:
        if isinstance(tp, type) and issubclass(tp, bases):
            return True
    except TypeError:  # a class whose metaclass refuses the check
        return False
    if depth > 20:  # a self-referencing alias
        return False
    return any(_uses_jaxtyping(arg, bases, depth + 1) for arg in typing.get_args(tp))


def _report_jaxtyping(plan: _FunctionPlan, policy: str) -> None:
    """Acts on `Config.jaxtyping_annotations` for a function annotated with jaxtyping types."""
    if policy == "ignore":
        return
    names = ", ".join(plan.jaxtyping_names)
    message = (
        f"{plan.origin()} mixes jaxtyping annotations ({names}) into a ktyping check: their dims are "
        "not shared with the function's other annotations. Annotate with ktyping's types (Float[...], "
        "PyTree[...]), or set ktyping.Config(jaxtyping_annotations=...) to 'warn', 'log_info' or 'ignore'."
    )
    if policy == "error":
        raise JaxtypingAnnotationError(message)
    if policy == "warn":
        import warnings

        warnings.warn(message, stacklevel=5)  # the checked function's caller
        return
    import logging

    logging.getLogger("ktyping").info(message)


def _generator_parts(ret: Any) -> tuple[Any, Any]:
    """`Generator[Y, S, R]` -> (check for Y, R); `Iterator[Y]` / `Iterable[Y]` -> (check, none)."""
    import collections.abc as cabc
    import typing

    origin = typing.get_origin(ret)
    args = typing.get_args(ret)
    if origin in (cabc.Generator,) and args:
        check = compile_annotation(args[0])
        return (None if is_trivial(check) else check), (args[2] if len(args) > 2 else _EMPTY)
    if origin in (cabc.Iterator, cabc.Iterable) and args:
        check = compile_annotation(args[0])
        return (None if is_trivial(check) else check), _EMPTY
    return None, _EMPTY


def _code_flags(fn: Any) -> int:
    """`co_flags` of a Python function; 0 for other callables (`jax.jit(f)`, partials)."""
    return getattr(getattr(fn, "__code__", None), "co_flags", 0)


def _unwrap(fn: Any) -> Any:
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


def _annotated_function(fn: Any) -> Any:
    """The Python function whose annotations describe calls of `fn`: through `__wrapped__`,
    `functools.partial` and the `__call__` of callable objects."""
    import functools

    while True:
        fn = _unwrap(fn)
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        if hasattr(fn, "__code__") or isinstance(fn, type):
            return fn
        call = next((vars(k)["__call__"] for k in type(fn).__mro__ if "__call__" in vars(k)), None)
        if not hasattr(call, "__code__"):  # a builtin, or not callable
            return fn
        fn = call


def _plan_for(box: list, fn: Callable[..., Any]) -> _FunctionPlan:
    plan = box[0]
    if plan is None:
        plan = box[0] = _FunctionPlan(fn, box[1])
        plan.what = box[2]
    plan.refresh()
    return plan


def _check_arguments(plan: _FunctionPlan, args: tuple, kwargs: dict[str, Any]) -> Scope:
    scope = Scope(plan, args, kwargs)
    cands = scope.cands
    nargs = len(args)
    for position, keyword, check, name in plan.params:
        if position is not None and position < nargs:
            value = args[position]
        elif keyword in kwargs:
            value = kwargs[keyword]
        else:
            continue  # omitted: the default is the author's choice, not checked
        new = check(value, cands, scope)
        if not new:
            raise plan.fail(name, value, plan.hints[name], cands, scope)
        cands = new
    if plan.variadic:
        cands = _check_variadic(plan, args, kwargs, cands, scope)
    scope.cands = cands
    return scope


def _check_variadic(
    plan: _FunctionPlan, args: tuple, kwargs: dict[str, Any], cands: list, scope: Scope
) -> list:
    params = plan._signature.parameters
    names = list(params)
    if plan.var_positional is not None:
        name = next(n for n in names if params[n].kind is params[n].VAR_POSITIONAL)
        start = sum(1 for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        for i, value in enumerate(args[start:]):
            new = plan.var_positional(value, cands, scope)
            if not new:
                raise plan.fail(name, value, plan.hints[name], cands, scope, f"[{i}]")
            cands = new
    if plan.var_keyword is not None:
        name = next(n for n in names if params[n].kind is params[n].VAR_KEYWORD)
        for key, value in kwargs.items():
            if key in params and params[key].kind is not params[key].VAR_KEYWORD:
                continue
            new = plan.var_keyword(value, cands, scope)
            if not new:
                raise plan.fail(name, value, plan.hints[name], cands, scope, f"[{key!r}]")
            cands = new
    return cands


def _wrap_function(
    fn: Callable[..., Any], localns: dict[str, Any] | None = None, what: str = "function"
) -> Callable[..., Any]:
    import functools

    if getattr(fn, "__ktyping_wrapped__", False):
        return fn
    # [plan (built on the first call), names for string hints, what errors call it]
    box: list[Any] = [None, localns, what]
    version = VERSION
    flags = _code_flags(fn)
    active = _scope.SCOPE

    if flags & _CO_GENERATOR:
        wrapper = _generator_wrapper(fn, box)
    elif flags & _CO_COROUTINE:
        wrapper = _coroutine_wrapper(fn, box)
    else:

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            plan = box[0]
            if plan is None or plan.version != version[0]:
                plan = _plan_for(box, fn)
            if not plan.enabled:
                return fn(*args, **kwargs)
            scope = _check_arguments(plan, args, kwargs)
            token = active.set(scope)
            try:
                result = fn(*args, **kwargs)
            finally:
                active.reset(token)
            ret = plan.ret_check
            if ret is not None and not ret(result, scope.cands, scope):
                raise plan.fail("return", result, plan.hints["return"], scope.cands, scope)
            return result

    functools.update_wrapper(wrapper, fn)
    wrapper.__ktyping_wrapped__ = True  # type: ignore[attr-defined]
    return wrapper


def _generator_wrapper(fn: Callable[..., Any], box: list) -> Callable[..., Any]:
    def generator_wrapper(*args: Any, **kwargs: Any) -> Any:
        plan = _plan_for(box, fn)
        if not plan.enabled:
            return (yield from fn(*args, **kwargs))
        scope = _check_arguments(plan, args, kwargs)
        result = yield from _run_in_scope(fn(*args, **kwargs), scope, plan)
        if plan.ret_check is not None and not plan.ret_check(result, scope.cands, scope):
            raise plan.fail("return", result, _generator_hint(plan, 2), scope.cands, scope)
        return result

    return generator_wrapper


def _run_in_scope(steps: Any, scope: Scope, plan: _FunctionPlan) -> Any:
    """Drives a generator or coroutine with `scope` active only while its own code runs.

    A suspended generator or coroutine leaves no scope active, so interleaved ones
    (asyncio tasks, zipped generators) and ones resumed in another thread each see their
    own dims. The scope active when it suspends (its own, or a `with typechecked():`
    block it is inside) is active again when it resumes. Yielded values are checked when
    the plan has a yield check.
    """
    send: Any = steps.send
    arg: Any = None
    yield_check = plan.yield_check
    active = _scope.SCOPE
    inner: Scope | None = scope
    blocks = _scope.BLOCKS_USED
    while True:
        token = active.set(inner)
        try:
            item = send(arg)
        except StopIteration as stop:
            return stop.value
        finally:
            if blocks[0]:  # else no block can have been left open: skip a slow `get`
                inner = active.get()
            active.reset(token)
        if yield_check is not None:
            new = yield_check(item, scope.cands, scope)
            if not new:
                raise plan.fail("yield", item, _generator_hint(plan, 0), scope.cands, scope)
            scope.cands = new
        try:
            arg = yield item
            send = steps.send
        except GeneratorExit:
            steps.close()
            raise
        except BaseException as e:
            send, arg = steps.throw, e


def _generator_hint(plan: _FunctionPlan, index: int) -> Any:
    """The yield (0) or return (2) type of a `Generator[Y, S, R]` hint."""
    import typing

    return typing.get_args(plan.hints["return"])[index]


class _InScope:
    """Awaiting it runs a coroutine through `_run_in_scope`."""

    __slots__ = ("coroutine", "plan", "scope")

    def __init__(self, coroutine: Any, scope: Scope, plan: _FunctionPlan) -> None:
        self.coroutine = coroutine
        self.scope = scope
        self.plan = plan

    def __await__(self) -> Any:
        return _run_in_scope(self.coroutine, self.scope, self.plan)


def _coroutine_wrapper(fn: Callable[..., Any], box: list) -> Callable[..., Any]:
    async def coroutine_wrapper(*args: Any, **kwargs: Any) -> Any:
        plan = _plan_for(box, fn)
        if not plan.enabled:
            return await fn(*args, **kwargs)
        scope = _check_arguments(plan, args, kwargs)
        result = await _InScope(fn(*args, **kwargs), scope, plan)
        if plan.ret_check is not None and not plan.ret_check(result, scope.cands, scope):
            raise plan.fail("return", result, plan.hints["return"], scope.cands, scope)
        return result

    return coroutine_wrapper


# ----------------------------------------------------------------------------- classes


def _wrap_class(cls: type, localns: dict[str, Any] | None) -> type:
    """Non-dataclass classes: every function, classmethod, staticmethod and property."""
    for name, member in list(vars(cls).items()):
        if isinstance(member, (classmethod, staticmethod, property)) or (
            callable(member) and hasattr(member, "__code__")
        ):
            setattr(cls, name, decorate(member, localns))
    return cls


def _has_string_hints(obj: Any) -> bool:
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        return any(_has_string_hints(f) for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
    if isinstance(obj, type):
        members = list(vars(obj).values())
        hints = vars(obj).get("__annotations__", {})
        return any(isinstance(h, str) for h in hints.values()) or any(
            _has_string_hints(m)
            for m in members
            if isinstance(m, (classmethod, staticmethod, property)) or callable(m)
        )
    hints = getattr(obj, "__annotations__", None)
    return isinstance(hints, dict) and any(isinstance(h, str) for h in hints.values())


def enclosing_locals(obj: Any, depth: int) -> dict[str, Any] | None:
    """The locals of the function that decorates `obj`, when its hints are strings.

    Under `from __future__ import annotations` a hint such as `"Batch"` may name a class
    local to the enclosing function, which `typing.get_type_hints` cannot see.
    """
    if not _has_string_hints(obj):
        return None
    frame = sys._getframe(depth + 1)
    if frame.f_locals is frame.f_globals:
        return None
    return dict(frame.f_locals)


def decorate(obj: Any, localns: dict[str, Any] | None = None) -> Any:
    """`@typechecked` on `obj`; `localns` holds the names of the decorating function, for string hints."""
    if isinstance(obj, classmethod):
        return classmethod(_wrap_function(obj.__func__, localns))
    if isinstance(obj, staticmethod):
        return staticmethod(_wrap_function(obj.__func__, localns))
    if isinstance(obj, property):
        return property(
            None if obj.fget is None else _wrap_function(obj.fget, localns, "property:"),
            None if obj.fset is None else _wrap_function(obj.fset, localns, "property:setter of "),
            None if obj.fdel is None else _wrap_function(obj.fdel, localns, "property:deleter of "),
            obj.__doc__,
        )
    if isinstance(obj, type):
        if "__dataclass_fields__" in vars(obj):
            from ._dataclasses import wrap_dataclass  # loaded with the first decorated dataclass

            return wrap_dataclass(obj, localns)
        if hasattr(obj, "__required_keys__"):  # TypedDict: already scoped where used
            return obj
        return _wrap_class(obj, localns)
    if callable(obj):
        return _wrap_function(obj, localns)
    raise TypeError(f"@typechecked cannot decorate {obj!r} (a {type(obj).__qualname__})")
