"""kontext's modules are layered: imports go one way, read from the source (``tests/import_graph.py``)."""

from __future__ import annotations

from pathlib import Path

from ..import_graph import (
    import_graph,
    layer_order,
    loaded_by_import,
    modules_without_purpose,
    upward_imports,
)

SOURCE = Path(__file__).resolve().parents[2] / "packages" / "kontext" / "src" / "kontext"

# Bottom to top: a module imports only modules listed before it (CONTRIBUTING.md has the same map).
LAYERS = (
    ("_errors",),  # the exceptions
    ("_parser", "_children"),  # path text <-> parts; one level of a tree
    ("_lookup", "_glob"),  # walking a tree: following a path (and why it failed); matching a glob, writing
    ("_paths",),  # the path types (Path, GlobPath), reading any path into parts
    ("_by_path", "_flatten", "_keys", "_path_builder"),  # the operations
    ("path_parser", "path_builder", "type_utils"),  # Kauldron's module paths, for code written against it
    ("",),  # kontext/__init__.py: the public API
)
ORDER = layer_order("kontext", LAYERS)
# Loaded on first use of their names (``kontext.__getattr__``): they need `typing`, which `import kontext` avoids.
LAZY = ("kontext._keys", "kontext._path_builder")


def test_import_graph_has_no_cycle() -> None:
    cycles = import_graph(SOURCE, "kontext").cycles()
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in cycles)


def test_every_module_imports_only_modules_below_it() -> None:
    graph = import_graph(SOURCE, "kontext")
    assert sorted(graph.edges) == sorted(ORDER), "a new module must be placed in LAYERS"
    assert not upward_imports(graph, ORDER)


def test_no_import_is_marked_as_a_back_edge() -> None:
    assert import_graph(SOURCE, "kontext").marked_back_edges == []


def test_no_late_import_loads_a_module_that_import_kontext_already_loads() -> None:
    loaded = loaded_by_import("kontext")
    hiding = [late for late in import_graph(SOURCE, "kontext").late_imports if late[1] in loaded]
    assert not hiding, f"imports inside functions that save nothing, (module, imported, line): {hiding}"


def test_import_kontext_leaves_keys_and_path_builders_unloaded() -> None:
    loaded = loaded_by_import("kontext")
    assert "kontext._paths" in loaded
    assert not loaded & set(LAZY)


def test_every_module_docstring_says_what_it_is_for() -> None:
    assert not modules_without_purpose(SOURCE)
