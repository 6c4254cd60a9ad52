"""Generated configs: safe resolve never runs, returns or lets through an object outside the allow-list.

The configs mix call nodes, constants and references (attribute reads, item reads, calls) over a
vocabulary of targets and attribute names, many of which lead from `allowed_lib` to `forbidden_lib`.
Three properties, each independent of how the guard decides:
  * no function of `forbidden_lib` ever runs (it records every call);
  * every object the guard lets through (`Guard.admit`, instrumented here) is, by an oracle written
    in this test, a plain value or something whose module is `allowed_lib`;
  * the result holds no module, class or function from outside `allowed_lib`, except what an
    allowed callable itself returned (`give_run`: allowed callables are trusted).
"""

from __future__ import annotations

import functools
import types

import allowed_lib
import forbidden_lib
import konfig
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from konfig import _safe_mode
from konfig._refs import OpRef, PathRef

TARGETS = [
    "allowed_lib:add",
    "allowed_lib:Box",
    "allowed_lib:give_run",
    "allowed_lib:run_alias",
    "allowed_lib:EvilAlias",
    "allowed_lib:partial_run",
    "allowed_lib:thing",
    "allowed_lib:sub",
    "allowed_lib:sub.run",
    "allowed_lib:Box.evil",
    "allowed_lib:Box.__init__",
    "allowed_lib:functools.partial",
    "allowed_lib:partial_add",
    "allowed_lib:give_runs",
    "allowed_lib:Nested",
    "allowed_lib:Later",
    "allowed_lib:resolve_named",
    "allowed_lib:import_by_name",
    "allowed_lib",
    "forbidden_lib:run",
    "forbidden_lib:Evil",
    "builtins:eval",
    "json:codecs",
]
ATTRS = [
    "inner",
    "method",
    "double",
    "evil",
    "label",
    "value",
    "upper",
    "format",
    "format_map",
    "sub",
    "run",
    "func",
    "args",
    "__class__",
    "__globals__",
    "__init__",
    "mro",
    "gi_frame",
    "thing",
    "SECRET",
    "sort",
    "build",
    "numbers",
]
SAFE_LEAVES = st.one_of(
    st.integers(-5, 5),
    st.sampled_from(["a", "{0}", "{0.__class__}", "%s", "", "forbidden_lib:run", "allowed_lib:sub.run"]),
    st.none(),
    st.just([3, 1, 2]),
)


def configs():
    def extend(children):
        return st.one_of(
            st.builds(
                lambda t, args: {"__qualname__": t, **{str(i): a for i, a in enumerate(args)}},
                st.sampled_from(TARGETS),
                st.lists(children, max_size=2),
            ),
            st.builds(lambda t: {"__const__": t}, st.sampled_from(TARGETS)),
            st.builds(lambda obj, name: ("getattr", obj, name), children, st.sampled_from(ATTRS)),
            st.builds(lambda obj, key: ("getitem", obj, key), children, st.sampled_from(["token", 0, "a"])),
            st.builds(lambda fn, args: ("call", fn, args), children, st.lists(children, max_size=2)),
            # a callable passed as an argument: `x.sort(key=f)`, `Nested(sub=...)`
            st.builds(lambda fn, key: ("callkey", fn, key), children, children),
            st.builds(lambda sub: {"__qualname__": "allowed_lib:Nested", "sub": sub}, children),
            st.builds(lambda sub: {"__qualname__": "allowed_lib:Later", "sub": sub}, children),
            st.builds(lambda i: ("ref", i), st.integers(0, 3)),
        )

    return st.lists(st.recursive(SAFE_LEAVES, extend, max_leaves=8), min_size=1, max_size=4)


def build(items):
    """A ConfigDict with fields f0..fn from the generated items (tuples become references)."""
    cfg = konfig.ConfigDict()

    def convert(item):
        if type(item) is tuple:
            kind = item[0]
            if kind == "ref":
                return PathRef(cfg, (f"f{item[1] % len(items)}",))
            if kind == "call":
                return OpRef("call", (convert(item[1]), *[convert(a) for a in item[2]]))
            if kind == "callkey":
                return OpRef("call", (convert(item[1]),), {"key": convert(item[2])})
            return OpRef(kind, (convert(item[1]), item[2]))
        if type(item) is dict:
            return {k: convert(v) for k, v in item.items()}
        return item

    for i, item in enumerate(items):
        cfg._fields[f"f{i}"] = convert(item)  # raw: skip signature checks, as JSON loading does
    return cfg


def oracle_allows(obj) -> bool:
    """Independent of the guard: is this object plain data, or does it belong to `allowed_lib`?"""
    if isinstance(obj, (int, float, str, bytes, type(None), list, tuple, dict)):
        return True
    if isinstance(obj, types.ModuleType):
        return obj.__name__ == "allowed_lib"
    if isinstance(obj, (types.FunctionType, type)):
        return obj.__module__ == "allowed_lib" or obj in (int, str, list, dict, tuple)
    if isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
        owner = obj.__self__
        if isinstance(owner, (str, bytes, list, tuple, dict, int)):
            return obj.__name__ not in ("format", "format_map")
        owner_allowed = type(owner).__module__ == "allowed_lib" or (
            isinstance(owner, type) and owner.__module__ == "allowed_lib"
        )
        function = getattr(obj, "__func__", None)  # a Python method runs its function
        return owner_allowed and (function is None or oracle_allows(function))
    if isinstance(obj, functools.partial):  # runs its function, and may call the callables it holds
        return oracle_allows(obj.func) and all(
            oracle_allows(a) for a in (*obj.args, *obj.keywords.values()) if callable(a)
        )
    if callable(obj):
        return type(obj).__module__ == "allowed_lib"
    return True  # other data (instances read as attributes) may be read, not called


def result_objects(value, seen=None):
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    yield value
    if isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from result_objects(v, seen)
    elif isinstance(value, (allowed_lib.Nested, allowed_lib.Box)):
        yield from result_objects(vars(value), seen)
    elif isinstance(value, konfig.ImmutableDict) or type(value) is dict:
        for v in value.values():
            yield from result_objects(v, seen)


@pytest.fixture
def admitted(monkeypatch):
    """Every object the guard let through (imported, read, about to be called or returned)."""
    log: list[object] = []
    original = _safe_mode.Guard.admit

    def recording_admit(self, obj):
        result = original(self, obj)  # raises when refused
        if id(obj) not in self.exact:
            log.append(obj)
        return result

    monkeypatch.setattr(_safe_mode.Guard, "admit", recording_admit)
    return log


@settings(max_examples=500, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=configs(), freeze=st.booleans())
def test_safe_resolve_never_reaches_an_object_outside_the_allow_list(items, freeze, admitted):
    forbidden_lib.CALLS.clear()
    admitted.clear()
    cfg = build(items)
    try:
        result = konfig.resolve(cfg, allowed=["allowed_lib"], freeze=freeze)
    except (konfig.ResolveError, konfig.TargetNotFoundError):
        result = None
    for later in [obj for obj in result_objects(result) if isinstance(obj, allowed_lib.Later)]:
        try:  # a sub-config handed over unresolved, resolved after the safe resolve returned
            later.build()
        except (konfig.ResolveError, konfig.TargetNotFoundError):
            pass
    assert forbidden_lib.CALLS == []
    for obj in admitted:
        assert oracle_allows(obj), f"the guard let {obj!r} through"
    if result is not None:
        for obj in result_objects(result):  # what allowed callables return is judged too
            assert oracle_allows(obj), f"resolve returned {obj!r}"


@pytest.mark.parametrize("freeze", [False, True])
def test_a_container_a_reference_call_returns_is_judged_as_a_call_nodes_is(freeze):
    # Found by the property above: `give_runs()` as a call node was refused for the forbidden function in
    # the dict it returns, but the same call made by a reference returned that dict.
    cfg = build([("call", {"__const__": "allowed_lib:give_runs"}, [])])
    with pytest.raises(konfig.ResolveError, match=r"safe mode refused 'forbidden_lib:run'"):
        konfig.resolve(cfg, allowed=["allowed_lib"], freeze=freeze)
    assert forbidden_lib.CALLS == []


def test_the_generated_configs_reach_the_guard_and_are_sometimes_refused(admitted):
    # The property above is only as strong as its inputs: check they exercise both outcomes.
    outcomes = set()
    for target in TARGETS:
        try:
            konfig.resolve(build([{"__const__": target}]), allowed=["allowed_lib"])
            outcomes.add("resolved")
        except konfig.DisallowedTargetError:
            outcomes.add("refused")
    assert outcomes == {"resolved", "refused"} and admitted
