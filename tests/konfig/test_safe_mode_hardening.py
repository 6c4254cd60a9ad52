"""Safe mode's second round of attacks: nested resolves, callables passed as arguments, work bounded
before it is done, codecs that import, and the guard's own errors.

Code execution cases assert that `forbidden_lib` recorded nothing; memory cases run in a fresh
interpreter (konfig only) under a 2 GB address-space limit and must end in konfig's own error.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import threading

import allowed_lib
import forbidden_lib
import konfig
import pytest
from konfig._refs import OpRef, PathRef

HERE = pathlib.Path(__file__).parent


@pytest.fixture(autouse=True)
def no_forbidden_calls():
    forbidden_lib.CALLS.clear()
    yield
    assert forbidden_lib.CALLS == [], f"forbidden code ran: {forbidden_lib.CALLS}"


def refused(cfg, allowed=("allowed_lib",), match=None):
    with pytest.raises(konfig.DisallowedTargetError, match=match) as info:
        konfig.resolve(cfg, allowed=list(allowed))
    return str(info.value)


# --- one policy for a whole resolve -------------------------------------------------------------


def test_an_excluded_sub_config_is_checked_by_name_before_anything_runs():
    cfg = {"__qualname__": "allowed_lib:Nested", "sub": {"__qualname__": "forbidden_lib:run", "0": "id > F"}}
    assert "nothing was imported or called:\n  forbidden_lib:run  (at cfg.sub)" in refused(cfg)


def test_a_sub_config_resolved_by_an_allowed_target_inherits_the_policy():
    cfg = {
        "__qualname__": "allowed_lib:Nested",
        "sub": {"__qualname__": "allowed_lib:sub.run", "0": "id > F"},
    }
    assert "'forbidden_lib'" in refused(cfg)


def test_a_config_an_allowed_function_builds_and_resolves_itself_inherits_the_policy():
    cfg = {"x": {"__qualname__": "allowed_lib:resolve_named", "0": "forbidden_lib:run"}}
    assert "forbidden_lib:run" in refused(cfg)
    assert konfig.resolve(cfg)["x"] == "ran"  # outside safe mode it runs
    forbidden_lib.CALLS.clear()


def test_a_nested_resolve_cannot_widen_the_policy():
    cfg = {
        "__qualname__": "allowed_lib:Nested",
        "sub": {"__qualname__": "allowed_lib:sub.run"},
        "allowed": ["forbidden_lib", "allowed_lib"],
    }
    assert "refused 'forbidden_lib'" in refused(cfg)
    cfg = {
        "x": {
            "__qualname__": "allowed_lib:resolve_named",
            "0": "forbidden_lib:run",
            "allowed": ["forbidden_lib"],
        }
    }
    assert "outside allowed=['forbidden_lib'] and the policy in force (['allowed_lib'])" in refused(cfg)


def test_a_nested_resolve_within_the_policy_works():
    cfg = {"__qualname__": "allowed_lib:Nested", "sub": {"__qualname__": "allowed_lib:add", "0": 2, "1": 3}}
    assert konfig.resolve(cfg, allowed=["allowed_lib"]).value == 5


def test_a_sub_config_handed_over_unresolved_keeps_the_policy_later_and_in_another_thread():
    later = konfig.resolve(
        {"__qualname__": "allowed_lib:Later", "sub": {"x": {"__qualname__": "allowed_lib:sub.run"}}},
        allowed=["allowed_lib"],
    )
    with pytest.raises(konfig.DisallowedTargetError, match="forbidden_lib"):
        later.build()
    errors = []

    def build_in_thread():
        try:
            later.build()
        except konfig.DisallowedTargetError as e:
            errors.append(e)

    thread = threading.Thread(target=build_in_thread)
    thread.start()
    thread.join()
    assert len(errors) == 1
    # Outside safe mode the same class resolves what it is given.
    assert (
        konfig.resolve(
            {"__qualname__": "allowed_lib:Later", "sub": {"__qualname__": "allowed_lib:add", "0": 1}}
        ).build()
        == 1
    )


def test_the_policy_ends_with_the_resolve_that_set_it():
    konfig.resolve({"__qualname__": "allowed_lib:add"}, allowed=["allowed_lib"])
    assert konfig.resolve({"__qualname__": "forbidden_lib:run"}) == "ran"
    forbidden_lib.CALLS.clear()


def test_a_library_importing_by_name_goes_through_the_policy():
    cfg = {"__qualname__": "allowed_lib:import_by_name", "0": "forbidden_lib:run"}
    refused(cfg, match="forbidden_lib")
    assert konfig.resolve(cfg) is forbidden_lib.run  # outside safe mode it imports anything


def test_a_pattern_after_an_exclamation_mark_refuses_what_another_allows():
    cfg = {"f": {"__qualname__": "allowed_lib:add", "0": 1}, "g": {"__const__": "allowed_lib:Box"}}
    refused(cfg, allowed=("allowed_lib", "!allowed_lib:add"), match="allowed_lib:add")
    assert konfig.resolve(
        {"g": {"__const__": "allowed_lib:Box"}}, allowed=["allowed_lib", "!allowed_lib:add"]
    )["g"]
    # objects are judged by their own module: a denied module's function reached through another is refused
    refused(
        {"f": {"__const__": "allowed_lib:run_alias"}},
        allowed=("allowed_lib", "forbidden_lib", "!forbidden_lib"),
    )


# --- callables checked where they are used ------------------------------------------------------


def test_what_an_allowed_callable_returns_is_admitted_before_use():
    refused({"f": {"__qualname__": "allowed_lib:give_run"}}, match="'forbidden_lib:run'")


def test_a_callable_read_from_a_returned_container_is_refused_as_a_sort_key():
    cfg = konfig.ConfigDict(d={"__qualname__": "allowed_lib:give_runs"}, numbers=[3, 1, 2])
    cfg.x = OpRef("call", (PathRef(cfg, ("numbers", "sort")),), {"key": PathRef(cfg, ("d", "run"))})
    with pytest.raises(konfig.DisallowedTargetError, match="'forbidden_lib:run'"):
        konfig.resolve(cfg, allowed=["allowed_lib"], freeze=False)


def test_a_sort_key_that_is_an_allowed_function_works():
    cfg = konfig.ConfigDict(numbers=[3, -1, 2], key={"__const__": "allowed_lib:add"})
    cfg.x = OpRef("call", (PathRef(cfg, ("numbers", "sort")),), {"key": PathRef(cfg, ("key",))})
    out = konfig.resolve(cfg, allowed=["allowed_lib"], freeze=False)
    assert out["numbers"] == [-1, 2, 3]


def test_a_forbidden_callable_passed_to_an_allowed_one_is_refused():
    # allowed_lib.add would call nothing, but the argument itself is a forbidden callable
    cfg = {"__qualname__": "allowed_lib:add", "0": {"__const__": "allowed_lib:run_alias"}}
    refused(cfg, match="forbidden_lib:run")


def test_a_partial_is_judged_by_the_function_it_calls():
    assert (
        konfig.resolve({"p": {"__const__": "allowed_lib:partial_add"}}, allowed=["allowed_lib"])["p"](2) == 3
    )
    refused({"p": {"__const__": "allowed_lib:partial_run"}}, match="'forbidden_lib:run'")
    # Allowing functools does not let a partial of a forbidden function through.
    cfg = {
        "__qualname__": "functools:partial",
        "0": {"__qualname__": "allowed_lib:give_run"},
        "1": "id > F",
    }
    refused(cfg, allowed=("allowed_lib", "functools"), match="'forbidden_lib:run'")


def test_a_bound_method_is_judged_by_its_function_and_its_owner():
    cfg = konfig.ConfigDict(box={"__qualname__": "allowed_lib:Box"})
    cfg.x = OpRef("call", (PathRef(cfg, ("box", "evil")),))  # Box.evil is forbidden_lib.run
    refused(cfg, match="'forbidden_lib:run'")
    cfg = konfig.ConfigDict(box={"__qualname__": "allowed_lib:Box", "0": 4})
    cfg.x = OpRef("call", (PathRef(cfg, ("box", "double")),))
    assert konfig.resolve(cfg, allowed=["allowed_lib"])["x"] == 8


def test_a_callable_object_claiming_to_wrap_an_allowed_function_is_judged_by_its_type():
    wrapper = forbidden_lib.Wrapper(allowed_lib.add)
    cfg = konfig.ConfigDict()
    cfg.x = OpRef("call", (wrapper, 1))  # ref_fn(wrapper, 1)
    refused(cfg, match="forbidden_lib:Wrapper")


def test_the_kd_style_import_helper_attack_is_refused():
    # A library function handing out objects by name, called from a reference with a sort key.
    cfg = konfig.ConfigDict(numbers=[3, 1, 2])
    cfg.key = {"__qualname__": "allowed_lib:import_by_name", "0": "forbidden_lib:run"}
    cfg.x = OpRef("call", (PathRef(cfg, ("numbers", "sort")),), {"key": PathRef(cfg, ("key",))})
    with pytest.raises(konfig.DisallowedTargetError, match="forbidden_lib"):
        konfig.resolve(cfg, allowed=["allowed_lib"], freeze=False)


# --- bounds before the work, konfig's own errors ------------------------------------------------


def run_limited(body: str) -> subprocess.CompletedProcess[str]:
    """Runs `body` in a fresh interpreter (konfig only) limited to 2 GB of address space."""
    script = textwrap.dedent(
        """
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))
        import konfig
        from konfig._refs import OpRef, PathRef
        try:
        {body}
        except konfig.ResolveError as e:
            print("KONFIG", type(e).__name__, str(e)[:300])
        except MemoryError:
            print("MEMORY")
        else:
            print("RESOLVED")
        """
    ).format(body=textwrap.indent(textwrap.dedent(body), "    "))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        (  # 10**10 characters
            """
            cfg = konfig.ConfigDict(a="x" * 100_000, b="y" * 100_000)
            cfg.c = OpRef("call", (PathRef(cfg, ("a", "join")), PathRef(cfg, ("b",))))
            konfig.resolve(cfg, allowed=[])
            """,
            "str.join",
        ),
        (
            """
            cfg = konfig.ConfigDict(a="a" * 1_000_000, table={97: "b" * 10_000})
            cfg.c = OpRef("call", (PathRef(cfg, ("a", "translate")), PathRef(cfg, ("table",))))
            konfig.resolve(cfg, allowed=[], freeze=False)
            """,
            "str.translate",
        ),
        (
            """
            cfg = konfig.ConfigDict(one="a", fmt="%s" * 1000)
            cfg.big = PathRef(cfg, ("one",)) * 10_000_000
            cfg.args = [PathRef(cfg, ("big",))] * 1000
            cfg.c = PathRef(cfg, ("fmt",)) % PathRef(cfg, ("args",))
            konfig.resolve(cfg, allowed=[])
            """,
            "%-format",
        ),
        (
            """
            cfg = konfig.ConfigDict(fmt="%9999999s" * 1000, x=1)
            cfg.c = PathRef(cfg, ("fmt",)) % PathRef(cfg, ("x",))
            konfig.resolve(cfg, allowed=[])
            """,
            "%-format",
        ),
        (  # 100 results of 10M characters each: within the per-result limit, past the resolve's budget
            """
            cfg = konfig.ConfigDict(one="a")
            for i in range(100):
                cfg[f"s{i}"] = PathRef(cfg, ("one",)) * 10_000_000
            konfig.resolve(cfg, allowed=[])
            """,
            "this resolve creates would pass",
        ),
        (
            """
            cfg = konfig.ConfigDict(a="a" * 9_000_000)
            cfg.c = OpRef("call", (PathRef(cfg, ("a", "replace")), "a", "bb"))
            konfig.resolve(cfg, allowed=[])
            """,
            "str.replace",
        ),
        (
            """
            cfg = konfig.ConfigDict(items=[], r=range(10**20))
            cfg.c = OpRef("call", (PathRef(cfg, ("items", "extend")), PathRef(cfg, ("r",))))
            konfig.resolve(cfg, allowed=[], freeze=False)
            """,
            "extend",
        ),
        (
            """
            cfg = konfig.ConfigDict(a=[1] * 1000)
            cfg.c = PathRef(cfg, ("a",)) * 10**8
            konfig.resolve(cfg, allowed=[], freeze=False)
            """,
            "list * 100000000",
        ),
        (  # 7 results of 10M four-byte characters: 280 MB, though only 70M characters
            """
            cfg = konfig.ConfigDict(one="\\U0001F600")
            for i in range(7):
                cfg[f"s{i}"] = PathRef(cfg, ("one",)) * 10_000_000
            konfig.resolve(cfg, allowed=[])
            """,
            "this resolve creates would pass",
        ),
    ],
    ids=[
        "join",
        "translate",
        "percent-values",
        "percent-widths",
        "budget",
        "replace",
        "extend-range",
        "mul",
        "wide-characters",
    ],
)
def test_operations_on_plain_values_are_refused_before_they_run(body, phrase):
    result = run_limited(body)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("KONFIG DisallowedTargetError"), result.stdout + result.stderr
    assert phrase in result.stdout


def test_many_reads_of_a_big_text_are_refused_by_the_work_budget():
    # ~95 KB of JSON: one 10M-character text, then 1,800 calls of its `count` (45 s of scanning for "ab";
    # "b" is scanned faster, the work counted is the same).
    doc = {
        "__konfig_version__": 1,
        "one": "a",
        "big": {"__op__": "mul", "args": [{"__ref__": ["one"]}, 10**7]},
    }
    for i in range(1800):
        doc[f"c{i}"] = {"__op__": "call", "args": [{"__ref__": ["big", "count"]}, "b"]}
    cfg = konfig.from_json(json.dumps(doc, separators=(",", ":")))
    message = refused(cfg, allowed=(), match="would read more than 1,024 MB of plain values in all")
    assert "str.count()" in message
    counted = int(message.partition("In cfg.c")[2].partition(" ")[0])  # the call refused, by its index
    assert counted < 120  # ~1 GB of reading: about a hundred full reads of the 10 MB text ran


@pytest.mark.parametrize(
    ("pair", "kind"),
    [(lambda below: (below, below), "tuple"), (lambda below: {"x": below, "y": below}, "ImmutableDict")],
)
def test_comparing_shared_plain_values_counts_every_path_without_walking_them(pair, kind):
    # Two distinct nests, each level twice the one below (resolved once, so shared): `==` reads 2**30 of them.
    cfg = konfig.ConfigDict(a0=(1,), b0=(1,))
    for i in range(1, 31):
        for side in "ab":
            cfg[f"{side}{i}"] = pair(PathRef(cfg, (f"{side}{i - 1}",)))
    cfg.same = PathRef(cfg, ("a30",)) == PathRef(cfg, ("b30",))
    refused(cfg, match=rf"{kind} == {kind}: .* would read more than 1,024 MB")
    from konfig._safe_budget import read_size

    nest: tuple = (1,)
    for _ in range(60):  # 2**60 paths, measured in 60 steps
        nest = (nest, nest)
    assert read_size((nest,), 10**9) > 10**9


def test_a_plain_method_that_reads_nothing_of_its_owner_is_not_charged_for_it():
    from konfig import _safe_mode

    guard = _safe_mode.Guard(())
    big = {i: i for i in range(100_000)}
    guard.admit_call(big.get, [5], {})
    assert guard.budget.worked < 100  # the key only, not the 100,000 entries
    guard.admit_call(big.copy, [], {})
    assert guard.budget.worked > 100_000 * 2 * 28


def test_operations_within_the_bounds_still_work():
    cfg = konfig.ConfigDict(sep=", ", words=["a", "b"], s="a-b", table={97: "xy"}, fmt="%s=%d", n=3)
    cfg.joined = OpRef("call", (PathRef(cfg, ("sep", "join")), PathRef(cfg, ("words",))))
    cfg.replaced = OpRef("call", (PathRef(cfg, ("s", "replace")), "-", "+"))
    cfg.translated = OpRef("call", (PathRef(cfg, ("s", "translate")), PathRef(cfg, ("table",))))
    cfg.formatted = PathRef(cfg, ("fmt",)) % ("n", PathRef(cfg, ("n",)))
    cfg.extended = OpRef("call", (PathRef(cfg, ("words", "copy")),))
    out = konfig.resolve(cfg, allowed=[], freeze=False)
    assert (out["joined"], out["replaced"], out["translated"], out["formatted"]) == (
        "a, b",
        "a+b",
        "xy-b",
        "n=3",
    )
    assert out["extended"] == ["a", "b"]


def test_a_hash_flooding_set_is_refused_in_linear_time():
    # 60,000 distinct ints that all hash to 1: a set of them takes half a minute to build.
    colliding = [k * (2**61 - 1) + 1 for k in range(1, 60_001)]
    cfg = konfig.ConfigDict(empty=frozenset(), items=colliding)
    cfg.s = OpRef("call", (PathRef(cfg, ("empty", "union")), PathRef(cfg, ("items",))))
    with pytest.raises(konfig.DisallowedTargetError, match="more than 64 distinct values share the hash of"):
        konfig.resolve(cfg, allowed=[])


def test_a_codec_that_would_import_a_module_is_refused():
    result = run_limited(
        """
        import sys
        cfg = konfig.ConfigDict(b=b"xn--bcher-kva.example")
        cfg.c = OpRef("call", (PathRef(cfg, ("b", "decode")), "idna"))
        try:
            konfig.resolve(cfg, allowed=[])
        finally:
            print("IMPORTED", sorted(m for m in ("encodings.idna", "stringprep", "unicodedata") if m in sys.modules))
        """
    )
    assert "IMPORTED []" in result.stdout, result.stdout + result.stderr
    assert "KONFIG DisallowedTargetError" in result.stdout and "codec 'idna'" in result.stdout
    cfg = konfig.ConfigDict(b=b"abc")
    cfg.c = OpRef("call", (PathRef(cfg, ("b", "decode")), "utf-8"))
    assert konfig.resolve(cfg, allowed=[])["c"] == "abc"


def test_an_error_of_the_guard_itself_is_konfigs_own(monkeypatch):
    from konfig import _safe_mode

    def broken(*args):
        raise OverflowError("cannot measure")

    monkeypatch.setattr(_safe_mode.Guard, "admit_op", broken)
    cfg = konfig.ConfigDict(a=1)
    cfg.b = PathRef(cfg, ("a",)) + 1
    with pytest.raises(konfig.DisallowedTargetError, match=r"could not check an operand \(OverflowError"):
        konfig.resolve(cfg, allowed=[])


# --- deep configs: linear walks, konfig's own error ---------------------------------------------


def test_a_100000_deep_config_is_refused_by_safe_resolve_in_linear_time():
    result = run_limited(
        """
        import time
        cfg = konfig.ConfigDict()
        for _ in range(100_000):
            cfg = konfig.ConfigDict(x=cfg)
        konfig.resolve(cfg, allowed=[])
        """
    )
    assert result.stdout.startswith("KONFIG ResolveError"), result.stdout + result.stderr
    assert "nests 100000 levels deep" in result.stdout


def test_a_deep_config_with_a_required_value_names_it_shortened():
    cfg = konfig.ConfigDict(v=konfig.required(int))
    for _ in range(200):
        cfg = konfig.ConfigDict(x=cfg)
    top = konfig.ConfigDict(deep=cfg, shallow=konfig.required(int))
    with pytest.raises(konfig.MissingValueError) as info:
        konfig.resolve(top)
    message = str(info.value)
    assert "cfg.shallow (int)" in message and "more keys" in message and len(message) < 400


# --- a JSON config from the issue ---------------------------------------------------------------


def test_the_issues_json_attack_through_a_partial_resolve_is_refused(tmp_path):
    canary = tmp_path / "F"
    data = {
        "__qualname__": "allowed_lib:Nested",
        "sub": {"__qualname__": "allowed_lib:sub.run", "0": f"id > {canary}"},
    }
    cfg = konfig.from_json(json.dumps(data))
    refused(cfg)
    assert not canary.exists()
