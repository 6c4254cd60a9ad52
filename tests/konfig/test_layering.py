"""konfig's modules import one way: the import graph read from the source has no cycle."""

from __future__ import annotations

import functools
from pathlib import Path

from ..import_graph import (
    ImportGraph,
    import_graph,
    loaded_by_import,
    modules_without_purpose,
    unplaced,
    upward_imports,
)
from ..layer_map import Layer, LayerMap, stale_in_contributing

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "packages" / "konfig" / "src" / "konfig"
# Bottom to top: a module imports only modules listed before it. CONTRIBUTING.md shows this map
# (`python tests/layer_map.py --write`). `lazy`: loaded on first use, not by `import konfig`: safe mode
# (`resolve(..., allowed=[...])`) and copies (`copy.deepcopy(cfg)`, `cfg | other`, which load `copy` too).
LAYERS = LayerMap(
    "konfig",
    (
        Layer(
            (
                "_keys",
                "_paths",
                "_placeholder",
                "_annotations",
                "_immutable_dict",
                "_layers_above",
                "_policy",
                "_surfaces",
                "_admission",
                "_hash_spread",
                "_leaf_types",
                "_json_format",
                "_library_caches",
            ),
            'node keys (__qualname__, __const__, "0", num_args); path text; placeholders; Kauldron\'s annotation'
            " helpers (ConfigDictLike, WithRef); ImmutableDict (what resolve(freeze=True) returns); the gateway of"
            " the one back-edge; the safe-mode policy in force (a context variable); what packages declare a"
            " config may build from them; matching names, modules and objects against a policy; the"
            " hash-flooding check; the values stored as they are (LEAF_TYPES); the JSON format's markers and"
            " constants; the caches a program lets its libraries use under safe mode",
        ),
        Layer(("_errors",), "every exception type and the helpers that word messages"),
        Layer(("_audit",), "the audit hook of a safe resolve"),
        Layer(
            ("_targets", "_signature"),
            '"module:qualname" -> object (the one walk); argument checks per qualname',
        ),
        Layer(("_node_path",), "how errors name a node (cfg.model.layers[0])"),
        Layer(
            ("_refs", "_ref_value"),
            "references (cfg.ref.a.b), their operators, ref_fn; a reference's current value",
        ),
        Layer(
            ("_config_copy", "_config_dict"),
            "copies (deepcopy, cfg | other); ConfigDict: the data model, iter_leaves, defaults",
        ),
        Layer(
            ("_equality", "_repr", "_json_encode", "_json_decode", "_ref_copy", "_capture", "_export"),
            "the walkers on the core: ==, repr, JSON data out and back in, ref_copy, konfig.imports(), export",
        ),
        Layer(
            ("_safe_policy", "_safe_budget", "_safe_operations", "_safe_precheck", "_safe_guard"),
            "safe mode's parts: what allowed= lets a resolve use; bounds and budgets; operations sized before"
            " they run; every target checked by name first; the guard that admits each import, call and result",
        ),
        Layer(
            ("_defaults", "_json_writer", "_diff", "_safe_mode", "_resolve"),
            "register_default_values; to_json's text; diff; safe mode's entry; resolve: the objects built bottom-up",
        ),
        Layer(
            ("_cli._override_paths", "_cli._py_expr", "_cli._flags", "_cli._absl", "_cli._sweep", "_cli"),
            "the command line: override paths, py:: values, --cfg flags, Kauldron's DEFINE_config_file (absl),"
            " sweeps; nothing below imports it",
        ),
        Layer(
            ("py_flag_parser", "py_flag_utils"),
            "Kauldron's module paths over the py:: reader, for code written against Kauldron",
        ),
        Layer(("",), "the public API"),
    ),
    lazy=frozenset(
        {
            "_safe_mode",
            "_safe_policy",
            "_safe_budget",
            "_safe_operations",
            "_safe_precheck",
            "_safe_guard",
            "_config_copy",
            "_audit",
            "_admission",
        }
    ),
)


@functools.cache
def _graph() -> ImportGraph:
    return import_graph(PACKAGE_DIR, "konfig")


def test_import_graph_has_no_cycle():
    cycles = _graph().cycles()
    assert cycles == [], "modules importing each other in a circle: " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_every_module_is_in_a_layer():
    problems = unplaced(set(_graph().edges), LAYERS.order(), "LAYERS (tests/konfig/test_layering.py)")
    assert problems == [], "\n".join(problems)


def test_every_module_imports_only_modules_below_it():
    assert upward_imports(_graph().edges, LAYERS.order()) == []


def test_the_one_back_edge_is_one_marked_import_statement_in_layers_above():
    # The core types' methods (`repr`, `==`, `to_json`) are implemented by the modules built on them.
    statements = sorted({(module, line) for module, _, line in _graph().marked_back_edges})
    assert len(statements) <= 1, f"more than one `# late import:` statement: {statements}"
    assert all(module == "konfig._layers_above" for module, _ in statements), statements


def test_late_imports_load_only_what_import_konfig_does_not():
    loaded = loaded_by_import("konfig")
    hiding = [
        (module, imported, line) for module, imported, line in _graph().late_imports if imported in loaded
    ]
    assert hiding == [], f"imports inside functions of modules `import konfig` loads anyway: {hiding}"


def test_import_konfig_leaves_safe_mode_and_copies_unloaded():
    assert loaded_by_import("konfig") & LAYERS.lazy_modules() == set()


# Above the command line: konfig/__init__.py and Kauldron's module paths for its `py::` reader.
_ABOVE_THE_CLI = ("konfig", "konfig.py_flag_parser", "konfig.py_flag_utils")


def test_nothing_below_the_cli_imports_it():
    below = [
        (m, t)
        for m, targets in _graph().edges.items()
        for t in targets
        if t.startswith("konfig._cli") and not m.startswith("konfig._cli") and m not in _ABOVE_THE_CLI
    ]
    assert below == []


def test_every_module_docstring_says_what_it_is_for():
    assert modules_without_purpose(PACKAGE_DIR) == []


def test_contributing_shows_this_map():
    stale = stale_in_contributing(LAYERS)
    assert stale == [], "\n".join(stale)
