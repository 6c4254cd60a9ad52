"""konfig's modules import one way: the import graph read from the source has no cycle."""

from __future__ import annotations

import pathlib

import konfig

from ..import_graph import (
    import_graph,
    layer_order,
    loaded_by_import,
    modules_without_purpose,
    upward_imports,
)

PACKAGE_DIR = pathlib.Path(konfig.__file__).parent
GRAPH = import_graph(PACKAGE_DIR, "konfig")
# Bottom to top: a module imports only modules listed before it (CONTRIBUTING.md has the same map).
LAYERS = (
    (
        "_keys",
        "_paths",
        "_placeholder",
        "_annotations",
        "_immutable_dict",
        "_layers_above",
        "_policy",
        "_surfaces",  # what packages declare a config may build from them
        "_admission",  # matching names, modules and objects against a policy
        "_hash_spread",
        "_leaf_types",
        "_json_format",
        "_library_caches",  # the caches a program lets its libraries use under safe mode
    ),
    ("_errors",),  # every exception type and the helpers that word messages
    ("_audit",),  # the audit hook of a safe resolve
    ("_targets", "_signature"),  # "module:qualname" -> object (the one walk); argument checks per qualname
    ("_node_path",),  # how errors name a node
    ("_refs", "_ref_value"),  # references; a reference's current value
    ("_config_copy", "_config_dict"),  # the data model and its copies
    ("_equality", "_repr", "_json_encode", "_json_decode", "_ref_copy", "_capture", "_export"),  # walkers
    (
        "_safe_policy",
        "_safe_budget",
        "_safe_operations",
        "_safe_precheck",
        "_safe_guard",
    ),  # safe mode's parts: what it may use, its budget, bounded operations, the check by name, the guard
    ("_defaults", "_json_writer", "_diff", "_safe_mode", "_resolve"),
    (
        "_cli._override_paths",
        "_cli._py_expr",
        "_cli._flags",
        "_cli._absl",
        "_cli._sweep",
        "_cli",
    ),  # the command line
    ("py_flag_parser", "py_flag_utils"),  # Kauldron's module paths, for code written against Kauldron
    ("",),  # konfig/__init__.py: the public API
)
ORDER = layer_order("konfig", LAYERS)
# Loaded on first use, not by `import konfig`: safe mode (`resolve(..., allowed=[...])`) and copies
# (`copy.deepcopy(cfg)`, `cfg | other`, which load `copy` too).
LAZY_MODULES = {
    "konfig._safe_mode",
    "konfig._safe_policy",
    "konfig._safe_budget",
    "konfig._safe_operations",
    "konfig._safe_precheck",
    "konfig._safe_guard",
    "konfig._config_copy",
    "konfig._audit",
    "konfig._admission",
}


def test_import_graph_has_no_cycle():
    cycles = GRAPH.cycles()
    assert cycles == [], "modules importing each other in a circle: " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_every_module_imports_only_modules_below_it():
    assert sorted(GRAPH.edges) == sorted(ORDER), "a new module must be placed in LAYERS"
    assert upward_imports(GRAPH, ORDER) == []


def test_the_one_back_edge_is_one_marked_import_statement_in_layers_above():
    # The core types' methods (`repr`, `==`, `to_json`) are implemented by the modules built on them.
    statements = sorted({(module, line) for module, _, line in GRAPH.marked_back_edges})
    assert len(statements) <= 1, f"more than one `# late import:` statement: {statements}"
    assert all(module == "konfig._layers_above" for module, _ in statements), statements


def test_late_imports_load_only_what_import_konfig_does_not():
    loaded = loaded_by_import("konfig")
    hiding = [(module, imported, line) for module, imported, line in GRAPH.late_imports if imported in loaded]
    assert hiding == [], f"imports inside functions of modules `import konfig` loads anyway: {hiding}"


def test_import_konfig_leaves_safe_mode_and_copies_unloaded():
    assert loaded_by_import("konfig") & LAZY_MODULES == set()


# Above the command line: konfig/__init__.py and Kauldron's module paths for its `py::` reader.
_ABOVE_THE_CLI = ("konfig", "konfig.py_flag_parser", "konfig.py_flag_utils")


def test_nothing_below_the_cli_imports_it():
    below = [
        (m, t)
        for m, targets in GRAPH.edges.items()
        for t in targets
        if t.startswith("konfig._cli") and not m.startswith("konfig._cli") and m not in _ABOVE_THE_CLI
    ]
    assert below == []


def test_every_module_docstring_says_what_it_is_for():
    assert modules_without_purpose(PACKAGE_DIR) == []
