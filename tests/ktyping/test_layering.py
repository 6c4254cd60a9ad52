"""ktyping's modules are layered: imports go one way, read from the source (`tests/import_graph.py`)."""

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

SOURCE = Path(__file__).resolve().parents[2] / "packages" / "ktyping" / "src" / "ktyping"

# Bottom to top: a module imports only modules listed before it. CONTRIBUTING.md shows this map
# (`python tests/layer_map.py --write`). `lazy`: not loaded by `import ktyping`: the parser and the `Spec` it
# builds, its search and codegen (first spec parsed), error reporting (first error or repr) and the dataclass
# wrapper (first decorated dataclass); the late imports that load them save import time.
LAYERS = LayerMap(
    "ktyping",
    (
        Layer(
            ("_errors", "_config", "_dtypes"),
            "exceptions; settings (checks on and off); dtype families by name",
        ),
        Layer(
            ("_spec_tree", "_dtype_like"),
            "the spec language's tree: expressions, dims, assignments; DType, Axes (Kauldron's annotations)",
        ),
        Layer(
            ("_dim_search", "_codegen"), "matching a shape against dims; straight-line code for plain specs"
        ),
        Layer(
            ("_spec", "_parser", "_spec_cache"),
            "Spec (the tree's root, its search, its matcher); text -> Spec; each spec string parsed once (the"
            " parser loads _spec, _dim_search, _codegen)",
        ),
        Layer(
            ("_format", "_dims", "_dim_values", "_scope"),
            "printing values and dim assignments; dims by name; Kauldron's DimValues (its candidate dims); the"
            " active scope",
        ),
        Layer(
            ("_array_types", "_families", "_describe"),
            "ArrayMeta, Shape; Float, Int, ...; printing annotations",
        ),
        Layer(("_compile",), "annotation -> check; PyTree; dataclass field checks"),
        Layer(("_explain",), "why a value fails (error path only: the one marked back-edge, from _compile)"),
        Layer(
            ("_dataclasses", "_wrappers", "_in_scope"),
            "@typechecked on dataclasses, functions, classes; check_type / isinstance / dim / shape",
        ),
        Layer(("_blocks",), "with typechecked(): blocks"),
        Layer(("_decorator",), "typechecked: a function wrapper, or a block"),
        Layer(
            (
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
                "array_type_meta",
            ),
            "Kauldron's module paths over ktyping's own objects (typeguard_checkers imports typeguard; only it)",
        ),
        Layer(
            ("static", ""),
            'annotations static type checkers accept (Float[np.ndarray, "b n"]); the public API',
        ),
    ),
    lazy=frozenset(
        {"_parser", "_spec", "_dim_search", "_codegen", "_format", "_describe", "_explain", "_dataclasses"}
    ),
)
# The one import that goes up, on the error path: a failing dataclass field is explained by `_explain`,
# which reruns the checks `_compile` makes.
BACK_EDGE = ("ktyping._compile", "ktyping._explain")


def test_import_graph_has_no_cycle() -> None:
    cycles = import_graph(SOURCE, "ktyping").cycles()
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in cycles)


def test_every_module_imports_only_modules_below_it() -> None:
    graph = import_graph(SOURCE, "ktyping")
    problems = unplaced(set(graph.edges), LAYERS.order(), "LAYERS (tests/ktyping/test_layering.py)")
    assert not problems, "\n".join(problems)
    assert not upward_imports(graph.edges, LAYERS.order())


def test_the_bottom_layer_imports_nothing_from_ktyping() -> None:
    graph = import_graph(SOURCE, "ktyping")
    bottom = LAYERS.layers[0].modules
    assert {module: graph.edges[f"ktyping.{module}"] for module in bottom} == {m: set() for m in bottom}


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
    assert not loaded & LAYERS.lazy_modules()


def test_every_module_docstring_says_what_it_is_for() -> None:
    assert not modules_without_purpose(SOURCE)


def test_contributing_shows_this_map() -> None:
    stale = stale_in_contributing(LAYERS)
    assert not stale, "\n".join(stale)
