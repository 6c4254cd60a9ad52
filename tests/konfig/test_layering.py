"""konfig's modules import one way: the import graph read from the source has no cycle."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import konfig

from ..import_graph import import_graph

PACKAGE_DIR = pathlib.Path(konfig.__file__).parent
GRAPH = import_graph(PACKAGE_DIR, "konfig")
# Loaded on first use, not by `import konfig`: safe mode (`resolve(..., allowed=[...])`).
LAZY_MODULES = {"konfig._safe_mode"}


def _loaded_by_import_konfig() -> set[str]:
    code = "import sys, konfig; print(' '.join(m for m in sys.modules if m.split('.')[0] == 'konfig'))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return set(out.stdout.split())


def test_import_graph_has_no_cycle():
    cycles = GRAPH.cycles()
    assert cycles == [], "modules importing each other in a circle: " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_one_back_edge_is_one_marked_import_statement_in_layers_above():
    # The core types' methods (`repr`, `==`, `to_json`) are implemented by the modules built on them.
    statements = sorted({(module, line) for module, _, line in GRAPH.marked_back_edges})
    assert len(statements) <= 1, f"more than one `# late import:` statement: {statements}"
    assert all(module == "konfig._layers_above" for module, _ in statements), statements


def test_late_imports_load_only_what_import_konfig_does_not():
    loaded = _loaded_by_import_konfig()
    hiding = [(module, imported, line) for module, imported, line in GRAPH.late_imports if imported in loaded]
    assert hiding == [], f"imports inside functions of modules `import konfig` loads anyway: {hiding}"


def test_import_konfig_leaves_safe_mode_unloaded():
    assert _loaded_by_import_konfig() & LAZY_MODULES == set()


def test_nothing_below_the_cli_imports_it():
    below = [
        (m, t)
        for m, targets in GRAPH.edges.items()
        for t in targets
        if t.startswith("konfig._cli") and not m.startswith("konfig._cli") and m != "konfig"
    ]
    assert below == []


def test_every_module_docstring_says_what_it_is_for():
    undocumented = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not docstring or not docstring.splitlines()[0].strip():
            undocumented.append(str(path.relative_to(PACKAGE_DIR)))
    assert undocumented == []
