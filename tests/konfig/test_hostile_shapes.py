"""Hostile shapes: inputs small to write whose naive handling takes super-linear time or memory.

Sets of items that all hash alike, configs whose nodes are each shared twice by the next (2**40
paths through 40 nodes), and configs nested 100,000 deep. Each case ends in konfig's own error or a
correct result, in time and memory linear in its size. Time is bounded by a subprocess timeout and
by counting work, memory by a 2 GB `RLIMIT_AS` in the child (which imports konfig only), never by
measuring durations.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import konfig
import pytest
from konfig import _diff

P = 2**61 - 1  # hash(k * P + c) == c for every int k: Python does not randomise int hashes


def _run_child(body: str, timeout: float = 60) -> list[str]:
    """Runs `body` in a fresh interpreter under a 2 GB address-space limit; its stdout lines."""
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))\n"
        "import konfig\n" + textwrap.dedent(body)
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "jax" not in run.stdout
    return run.stdout.splitlines()


# --- sets and frozensets whose items hash alike -----------------------------------------------


@pytest.mark.parametrize("marker", ["__frozenset__", "__set__"])
def test_set_marker_of_items_hashing_alike_is_refused_without_building_it(marker):
    # 60,000 ints of hash 7: 1.5 MB of JSON that took 31 s to load as a set.
    lines = _run_child(
        f"""
        import json
        text = json.dumps({{"x": {{"{marker}": [k * {P} + 7 for k in range(60_000)]}}}})
        try:
            konfig.from_json(text)
            print("loaded")
        except konfig.JsonFormatError as e:
            print("refused:", e)
        """
    )
    assert lines[0].startswith(
        "refused: At cfg.x: a `" + marker + "` marker holds more than 64 different items"
    )
    assert "60,000 items in all" in lines[0]


def test_many_small_sets_of_items_hashing_alike_load_in_bounded_time():
    # Sets of up to 256 items are not checked: each costs at most 256**2 / 2 comparisons to build.
    lines = _run_child(
        f"""
        import json
        sets = [{{"__set__": [k * {P} + c for k in range(256)]}} for c in range(200)]
        cfg = konfig.from_json(json.dumps({{"x": sets}}))
        print(len(cfg.x), {{len(s) for s in cfg.x}})
        """
    )
    assert lines == ["200 {256}"]


def test_set_items_hashing_alike_are_grouped_in_one_pass():
    from konfig import _json_decode

    compared = []

    class Counting(int):
        def __eq__(self, other):
            compared.append(1)
            return int.__eq__(self, other)

        __hash__ = int.__hash__

    items = [Counting(k * P + 7) for k in range(10_000)]
    with pytest.raises(_json_decode._Malformed, match="more than 64 different items"):
        _json_decode._check_hash_collisions(items, "__set__", {"__set__": items})
    # Refused at the 65th item, after at most 64 comparisons each: not 10,000**2 / 2.
    assert len(compared) <= 65 * 64


def test_set_marker_with_many_equal_items_and_a_few_hashing_alike_loads():
    items = [7] * 60_000 + [k * P + 7 for k in range(64)] + list(range(10_000))
    loaded = konfig.from_json(json.dumps({"x": {"__frozenset__": items}})).x
    assert loaded == frozenset(items) and len(loaded) == 64 + 10_000 - 1


def test_equal_items_of_different_types_in_a_set_marker_are_one_item():
    loaded = konfig.from_json(json.dumps({"x": {"__set__": [1, 1.0, True] * 100 + list(range(100))}})).x
    assert loaded == set(range(100))


def test_set_built_in_python_round_trips_through_json():
    cfg = konfig.ConfigDict(s={k * P + 7 for k in range(64)} | set(range(1000)))
    assert konfig.from_json(cfg.to_json()) == cfg


def test_raw_keys_hashing_alike_are_refused():
    text = json.dumps({f"__raw__={k * P + 7}": k for k in range(60_000)})
    with pytest.raises(
        konfig.JsonFormatError, match=r"At cfg: more than 8 of its `__raw__=` keys have the same hash"
    ):
        konfig.from_json(text)


# --- diff of configs sharing nodes ------------------------------------------------------------


def _shared_twice_json(levels: int, leaf: int) -> str:
    """JSON of `levels` nodes, each holding the one below twice (Kauldron's `__id__`s): 2**levels paths."""
    node = f'{{"v": {leaf}, "__id__": 0}}'
    for i in range(1, levels + 1):
        node = f'{{"l": {node}, "r": {{"__id__": {i - 1}}}, "__id__": {i}}}'
    return node


def test_diff_of_configs_whose_nodes_are_each_shared_twice_is_linear():
    # Two 1.7 KB configs of 40 nodes: 38 s, 5.9 GB and a MemoryError when each change was listed
    # at each of its 2**40 paths.
    assert len(_shared_twice_json(40, 1)) < 1800
    lines = _run_child(
        f"""
        a = konfig.from_json({_shared_twice_json(40, 1)!r})
        b = konfig.from_json({_shared_twice_json(40, 2)!r})
        d = konfig.diff(a, b)
        print(len(d.changed), len(d), a == b)
        print(str(d).splitlines()[-1])
        """
    )
    changed, entries, equal = lines[0].split()
    assert 1 <= int(changed) <= _diff.REPEAT_LIMIT and int(entries) <= _diff.REPEAT_LIMIT + 40
    assert equal == "False"
    assert (
        lines[1].startswith("= cfg.r: shared with cfg.l, whose ") and "change(s) are listed there" in lines[1]
    )


def test_diff_compares_each_pair_of_shared_nodes_once(monkeypatch):
    walked = []
    walk = _diff._Differ.walk

    def counting_walk(self, a, b, keys):
        walked.append(1)
        return walk(self, a, b, keys)

    monkeypatch.setattr(_diff._Differ, "walk", counting_walk)
    a = konfig.from_json(_shared_twice_json(16, 1))
    b = konfig.from_json(_shared_twice_json(16, 2))
    d = konfig.diff(a, b)
    assert len(walked) <= 2 * 17 + 1  # each node's pair walked once, the repeat of it only looked up
    assert len(d) <= _diff.REPEAT_LIMIT + 16 < 2**16  # not one change per path


def test_shared_node_change_is_listed_at_each_path_while_repeats_are_few():
    node_a, node_b = konfig.ConfigDict(f=1), konfig.ConfigDict(f=2)
    d = konfig.diff(konfig.ConfigDict(p=node_a, q=node_a), konfig.ConfigDict(p=node_b, q=node_b))
    assert d.changed == ["cfg.p.f", "cfg.q.f"]
    assert [c.kind for c in d] == ["changed", "changed"]


def test_shared_node_past_the_repeat_limit_is_one_entry_naming_its_first_path(monkeypatch):
    monkeypatch.setattr(_diff, "REPEAT_LIMIT", 1)
    node_a, node_b = konfig.ConfigDict(f=1, g=1), konfig.ConfigDict(f=2, g=2)
    d = konfig.diff(konfig.ConfigDict(p=node_a, q=node_a), konfig.ConfigDict(p=node_b, q=node_b))
    assert d.changed == ["cfg.p.f", "cfg.p.g"]
    assert [(c.kind, c.path) for c in d][-1] == ("shared", "cfg.q")
    assert str(d).splitlines()[-1] == "= cfg.q: shared with cfg.p, whose 2 change(s) are listed there"


def test_identical_shared_subtrees_are_not_walked(monkeypatch):
    walked = []
    walk = _diff._Differ.walk
    monkeypatch.setattr(_diff._Differ, "walk", lambda self, a, b, k: walked.append(1) or walk(self, a, b, k))
    shared = konfig.from_json(_shared_twice_json(40, 1))
    assert not konfig.diff(konfig.ConfigDict(x=shared, y=1), konfig.ConfigDict(x=shared, y=1))
    assert len(walked) == 3  # the roots, then `x` (the same object) and `y`


# --- configs nested 100,000 deep ----------------------------------------------------------------

_DEEP_CHILD = """
import copy, pickle
from konfig._config_dict import iter_leaves
N = {n}
shape = {shape!r}

def build():
    if shape == "nodes":  # ConfigDict(x=ConfigDict(x=...))
        c = konfig.ConfigDict()
        for _ in range(N):
            c = konfig.ConfigDict(x=c)
        return c
    if shape == "nodes_in_lists":  # ConfigDict(x=[ConfigDict(x=[...])])
        c = konfig.ConfigDict()
        for _ in range(N):
            c = konfig.ConfigDict(x=[c])
        return c
    cfg = konfig.ConfigDict(x=[])  # a plain list grown in place: [[[...]]]
    inner = cfg.x
    for _ in range(N):
        inner.append([])
        inner = inner[-1]
    return cfg

def depth(value):
    n = 0
    while True:
        if isinstance(value, konfig.ConfigDict) and "x" in value:
            value = value._fields["x"]
        elif isinstance(value, list) and value:
            value = value[0]
        else:
            return n
        n += 1

cfg, other = build(), build()
plain_list = []
for _ in range(N):
    plain_list = [plain_list]

operations = {{
    "repr": lambda: repr(cfg),
    "to_json": lambda: cfg.to_json(),
    "to_json_indented": lambda: cfg.to_json(indent=1),
    "to_dict": lambda: cfg.to_dict(),
    "eq": lambda: cfg == other,
    "diff": lambda: konfig.diff(cfg, other),
    "iter_leaves": lambda: list(iter_leaves(cfg)),
    "leaves": lambda: list(cfg.leaves()),
    "pickle": lambda: pickle.loads(pickle.dumps(cfg)),
    "deepcopy": lambda: copy.deepcopy(cfg),
    "ref_copy": lambda: konfig.ref_copy(cfg),
    "config_of_a_deep_list": lambda: konfig.ConfigDict(x=plain_list),
}}
for name, operation in operations.items():
    try:
        result = operation()
    except MemoryError:
        print(name, "MemoryError")
    except Exception as e:
        print(name, type(e).__module__ + "." + type(e).__name__, str(e)[:300].replace("\\n", " "))
    else:
        if name in ("leaves", "iter_leaves"):
            print(name, "ok", len(result), len(result[0][0]))
        else:
            print(name, "ok", depth(result) if name in ("pickle", "deepcopy") else type(result).__name__)
"""

# Levels of each shape (the 100,000 for nodes; fewer elsewhere, still far past what a path
# per level fits in 2 GB): its depth (levels of containers) and its one leaf's path (number of keys).
_LEVELS = {"nodes": 100_000, "nodes_in_lists": 40_000, "list_grown_in_place": 40_000}
_DEPTH = {"nodes": 100_001, "nodes_in_lists": 80_001, "list_grown_in_place": 40_002}
_LEAF_KEYS = {"nodes": 100_000, "nodes_in_lists": 80_000, "list_grown_in_place": 40_001}


@pytest.fixture(scope="module", params=list(_DEPTH))
def deep(request):
    lines = _run_child(_DEEP_CHILD.format(shape=request.param, n=_LEVELS[request.param]), timeout=120)
    return request.param, {line.split()[0]: line.split(" ", 1)[1] for line in lines}


def _refused(outcome: str, error: str, subject: str, depth: int) -> bool:
    """Whether `outcome` is konfig's `error` naming the depth and a shortened deepest path."""
    prefix = f"konfig._errors.{error} {subject} is nested {depth} levels deep (deepest at cfg."
    return outcome.startswith(prefix) and "more keys)…" in outcome


def test_deep_config_repr_is_refused_with_its_depth_and_path(deep):
    shape, out = deep
    assert _refused(out["repr"], "NestingError", "This config (printed by repr)", _DEPTH[shape])


def test_deep_config_to_json_is_refused_with_its_depth(deep):
    shape, out = deep
    for name in ("to_json", "to_json_indented"):
        assert _refused(out[name], "ConfigValueError", "This config (written to JSON)", _DEPTH[shape])


def test_deep_config_to_dict_is_refused_with_its_depth(deep):
    shape, out = deep
    assert _refused(out["to_dict"], "NestingError", "The config given to `to_dict()`", _DEPTH[shape])


def test_deep_configs_compared_with_eq_are_refused(deep):
    shape, out = deep
    assert _refused(out["eq"], "NestingError", "A config compared with `==`", _DEPTH[shape])


def test_deep_configs_given_to_diff_are_refused(deep):
    shape, out = deep
    assert _refused(out["diff"], "NestingError", "A config given to konfig.diff", _DEPTH[shape])


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (  # the path of a reference's root, found by a walk of the whole config (which is 300,000 deep)
            """
            cfg = konfig.ConfigDict(a=konfig.ConfigDict(b=1))
            cfg.r = cfg.a.ref.b
            cfg.deep = deep = konfig.ConfigDict()
            for _ in range(300_000):
                deep.x = deep = konfig.ConfigDict()
            operation = lambda: repr(cfg)
            """,
            "konfig._errors.NestingError This config (printed by repr) is nested 300002 levels deep",
        ),
        (  # the place of a malformed marker, found by a walk of the whole JSON data
            """
            deep = {}
            for _ in range(300_000):
                deep = {"x": deep}
            operation = lambda: konfig.diff({"a": {"__tuple__": 5}, "b": deep}, {})
            """,
            "konfig._errors.JsonFormatError At cfg.a: a `__tuple__` marker holds a list of items, found 5.",
        ),
    ],
    ids=["repr_path_of_a_ref_root", "json_data_error_location"],
)
def test_path_found_beside_a_deep_part_takes_linear_time(case, expected):
    # A path per level made these walks quadratic in time (20 s at 100,000 levels, hours at 300,000).
    lines = _run_child(
        textwrap.dedent(case)
        + textwrap.dedent(
            """
            try:
                operation()
            except Exception as e:
                print(type(e).__module__ + "." + type(e).__name__, e)
            """
        ),
        timeout=60,
    )
    assert lines[0].startswith(expected)


def test_deep_config_leaves_are_walked_iteratively(deep):
    shape, out = deep
    assert out["iter_leaves"] == f"ok 1 {_LEAF_KEYS[shape]}"
    assert out["leaves"].startswith("ok 1 ")


def test_deep_config_pickle_is_refused_before_pickle_fails(deep):
    shape, out = deep
    if shape == "list_grown_in_place":
        # A plain list is pickled by pickle alone, which refuses at once with its own error.
        assert out["pickle"].startswith("builtins.RecursionError maximum recursion depth exceeded")
        return
    assert out["pickle"].startswith(
        "konfig._errors.NestingError A config given to pickle is nested deeper than pickle can follow "
        "within Python's recursion limit (1000): the node where it stopped still nests "
    )


def test_deep_config_deepcopy_works_at_any_depth(deep):
    shape, out = deep
    assert out["deepcopy"] == f"ok {_DEPTH[shape] - 1}"


def test_deep_config_ref_copy_is_refused_or_copies_the_top(deep):
    shape, out = deep
    if shape == "nodes":
        assert _refused(out["ref_copy"], "NestingError", "The config given to ref_copy", _DEPTH[shape])
    else:  # a list is a leaf of ref_copy (one reference to it)
        assert out["ref_copy"] == "ok ConfigDict"


def test_deep_list_given_to_a_config_is_refused_with_its_depth(deep):
    shape, out = deep
    depth = _LEVELS[shape] + 2  # the node, the list given to it, and its N lists
    assert _refused(out["config_of_a_deep_list"], "NestingError", "The value given to ConfigDict(...)", depth)


# --- moderately deep configs: as before --------------------------------------------------------


def test_config_nested_within_the_recursion_limit_still_works_everywhere():
    import copy
    import pickle

    def build():
        c = konfig.ConfigDict(v=1)
        for _ in range(150):
            c = konfig.ConfigDict(x=[c])
        return c

    cfg = build()
    assert konfig.from_json(cfg.to_json()) == cfg == build()
    assert pickle.loads(pickle.dumps(cfg)) == cfg == copy.deepcopy(cfg)
    assert not konfig.diff(cfg, build())
    [(path, value)] = list(cfg.leaves())
    assert path == "cfg" + ".x[0]" * 150 + ".v" and value == 1
    assert repr(cfg).count("'x': ") == 150 and len(cfg.to_dict()) == 1


def test_nesting_error_path_is_found_in_linear_memory():
    from konfig._errors import deepest_path

    c = konfig.ConfigDict()
    for _ in range(50_000):
        c = konfig.ConfigDict(x=[c])
    depth, path, cycle = deepest_path(c)
    assert (depth, len(path), cycle) == (100_001, 100_000, None)
    assert path[:2] == ("x", 0)
