"""kontext's modules are layered: imports go one way, read from the source (``tests/import_graph.py``)."""

from __future__ import annotations

from pathlib import Path

from ..import_graph import (
    import_graph,
    loaded_by_import,
    modules_without_purpose,
    unplaced,
    upward_imports,
)
from ..layer_map import Layer, LayerMap, stale_in_contributing

SOURCE = Path(__file__).resolve().parents[2] / "packages" / "kontext" / "src" / "kontext"

# Bottom to top: a module imports only modules listed before it. CONTRIBUTING.md shows this map
# (`python tests/layer_map.py --write`). `lazy`: loaded on first use of their names (`kontext.__getattr__`):
# they need `typing`, which `import kontext` avoids.
LAYERS = LayerMap(
    "kontext",
    (
        Layer(("_errors",), "the exceptions, each refining the builtin callers already catch"),
        Layer(("_parser", "_children"), "path text <-> parts; one level of a tree"),
        Layer(
            ("_lookup", "_glob"),
            "following a path and explaining a miss; matching a glob, writing at the matches",
        ),
        Layer(("_paths",), "the path types: Path, GlobPath (parsed, hashable, ordered)"),
        Layer(
            ("_by_path", "_flatten", "_keys", "_path_builder"),
            "get/set/filter by path; flatten; keys (kontext.Key fields -> values); typed path builders",
        ),
        Layer(
            ("path_parser", "path_builder", "type_utils"),
            "Kauldron's module paths, for code written against Kauldron",
        ),
        Layer(("",), "the public API"),
    ),
    lazy=frozenset({"_keys", "_path_builder"}),
)


def test_import_graph_has_no_cycle() -> None:
    cycles = import_graph(SOURCE, "kontext").cycles()
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in cycles)


def test_every_module_imports_only_modules_below_it() -> None:
    graph = import_graph(SOURCE, "kontext")
    problems = unplaced(set(graph.edges), LAYERS.order(), "LAYERS (tests/kontext/test_layering.py)")
    assert not problems, "\n".join(problems)
    assert not upward_imports(graph.edges, LAYERS.order())


def test_no_import_is_marked_as_a_back_edge() -> None:
    assert import_graph(SOURCE, "kontext").marked_back_edges == []


def test_no_late_import_loads_a_module_that_import_kontext_already_loads() -> None:
    loaded = loaded_by_import("kontext")
    hiding = [late for late in import_graph(SOURCE, "kontext").late_imports if late[1] in loaded]
    assert not hiding, f"imports inside functions that save nothing, (module, imported, line): {hiding}"


def test_import_kontext_leaves_keys_and_path_builders_unloaded() -> None:
    loaded = loaded_by_import("kontext")
    assert "kontext._paths" in loaded
    assert not loaded & LAYERS.lazy_modules()


def test_every_module_docstring_says_what_it_is_for() -> None:
    assert not modules_without_purpose(SOURCE)


def test_contributing_shows_this_map() -> None:
    stale = stale_in_contributing(LAYERS)
    assert not stale, "\n".join(stale)
