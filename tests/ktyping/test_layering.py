"""ktyping's modules are layered: imports go one way, read from the source (`tests/import_graph.py`)."""

from __future__ import annotations

from pathlib import Path

from ..import_graph import (
    import_graph,
    layer_order,
    loaded_by_import,
    modules_without_purpose,
    upward_imports,
)

SOURCE = Path(__file__).resolve().parents[2] / "packages" / "ktyping" / "src" / "ktyping"

# Bottom to top: a module imports only modules listed before it (CONTRIBUTING.md has the same map).
LAYERS = (
    ("_errors", "_config", "_dtypes"),  # exceptions; settings; dtype families by name
    ("_spec_tree", "_dtype_like"),  # the spec language's tree: expressions, dims, assignments; DType, Axes
    ("_dim_search", "_codegen"),  # matching a shape against dims; straight-line code for plain specs
    ("_spec", "_parser", "_spec_cache"),  # Spec; text -> Spec; parse_spec, once per string
    (
        "_format",
        "_dims",
        "_dim_values",
        "_scope",
    ),  # printing values and dim assignments; dims by name; Kauldron's DimValues; Scope, the active scope
    ("_array_types", "_families", "_describe"),  # ArrayMeta, Shape; Float, Int, ...; printing annotations
    ("_compile",),  # annotation -> check, PyTree, decorated dataclasses' field checks
    ("_explain",),  # why a value fails its annotation
    ("_dataclasses", "_wrappers", "_in_scope"),  # @typechecked on dataclasses, functions; check_type, dim
    ("_blocks",),  # `with typechecked():` blocks
    ("_decorator",),  # typechecked: a function wrapper, or a block
    (
        "static",
        "array_type_meta",
        "errors",
        "internal_typing",
        "config",
        "utils",
        "frame_utils",
        "pytree",
        "shape_spec",
        "shape_spec_parser",
        "shape_tools",
        "array_types",
        "decorator",
        "scope",
        "dim_view",
        "typeguard_checkers",
        "",
    ),  # ktyping.static, Kauldron's module paths (array_type_meta, errors, ...), __init__.py: the public API
)
ORDER = layer_order("ktyping", LAYERS)
# The one import that goes up, on the error path: a failing dataclass field is explained by `_explain`,
# which reruns the checks `_compile` makes.
BACK_EDGE = ("ktyping._compile", "ktyping._explain")
# Not loaded by `import ktyping`: the parser and the `Spec` it builds, its search and codegen (first spec
# parsed), error reporting (first error or repr) and the dataclass wrapper (first decorated dataclass).
# The late imports that load them save import time.
LAZY = {
    "ktyping._parser",
    "ktyping._spec",
    "ktyping._dim_search",
    "ktyping._codegen",
    "ktyping._format",
    "ktyping._describe",
    "ktyping._explain",
    "ktyping._dataclasses",
}


def test_import_graph_has_no_cycle() -> None:
    cycles = import_graph(SOURCE, "ktyping").cycles()
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in cycles)


def test_every_module_imports_only_modules_below_it() -> None:
    graph = import_graph(SOURCE, "ktyping")
    assert sorted(graph.edges) == sorted(ORDER), "a new module must be placed in LAYERS"
    assert not upward_imports(graph, ORDER)


def test_the_bottom_layer_imports_nothing_from_ktyping() -> None:
    graph = import_graph(SOURCE, "ktyping")
    assert {module: graph.edges[f"ktyping.{module}"] for module in LAYERS[0]} == {m: set() for m in LAYERS[0]}


def test_the_only_marked_back_edge_is_explaining_a_dataclass_field() -> None:
    marked = import_graph(SOURCE, "ktyping").marked_back_edges
    assert [(module, target) for module, target, _ in marked] == [BACK_EDGE]


def test_no_late_import_loads_a_module_that_import_ktyping_already_loads() -> None:
    loaded = loaded_by_import("ktyping")
    hiding = [late for late in import_graph(SOURCE, "ktyping").late_imports if late[1] in loaded]
    assert not hiding, f"imports inside functions that save nothing, (module, imported, line): {hiding}"


def test_import_ktyping_leaves_the_parser_error_reporting_and_dataclass_wrapper_unloaded() -> None:
    loaded = loaded_by_import("ktyping")
    assert {"ktyping._decorator", "ktyping._in_scope", "ktyping._compile"} <= loaded
    assert not loaded & LAZY


def test_every_module_docstring_says_what_it_is_for() -> None:
    assert not modules_without_purpose(SOURCE)
