"""The shared layering tool `tests/import_graph.py`, run on a tiny package written into `tmp_path`.

The package `toy` has one of each kind of import the tool must tell apart: a top-level cycle (`a` <-> `b`),
a cycle hidden by an import inside a function (`c` <-> `d`), a `# late import:` marked back-edge (`f` -> `e`),
imports under `if TYPE_CHECKING:` (`g` -> `h`), relative imports, and a subpackage (`toy.sub`).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ..import_graph import ImportGraph, import_graph

TOY = {
    "__init__.py": """
        from . import a
        from .b import VALUE
    """,
    "a.py": """
        import os

        import toy.b
    """,
    "b.py": """
        from toy import a

        VALUE = 1
    """,
    "c.py": """
        from . import d
    """,
    "d.py": """
        def helper():
            from .c import thing

            return thing
    """,
    "e.py": """
        from . import f
    """,
    "f.py": """
        def helper():
            from . import e  # late import: e imports f at its top

            return e
    """,
    "g.py": """
        import typing

        TYPE_CHECKING = False
        if TYPE_CHECKING:
            from .h import Thing
        else:
            from . import e
        if typing.TYPE_CHECKING:
            from . import h
    """,
    "h.py": """
        from .g import anything
    """,
    "sub/__init__.py": """
        from . import leaf
        from .leaf import X
    """,
    "sub/leaf.py": """
        import json
        from json import dumps

        from .. import e
        from ..c import thing

        X = 1
    """,
}


def write_package(root: Path, name: str, files: dict[str, str]) -> Path:
    """Writes `files` (path -> source, dedented, first newline dropped) as the package `root/name`."""
    package = root / name
    for relative, source in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return package


@pytest.fixture
def toy(tmp_path: Path) -> ImportGraph:
    return import_graph(write_package(tmp_path, "toy", TOY), "toy")


def test_every_module_and_subpackage_is_a_node_under_its_dotted_name(toy: ImportGraph) -> None:
    assert sorted(toy.edges) == [
        "toy",
        "toy.a",
        "toy.b",
        "toy.c",
        "toy.d",
        "toy.e",
        "toy.f",
        "toy.g",
        "toy.h",
        "toy.sub",
        "toy.sub.leaf",
    ]


def test_edges_name_the_modules_each_module_imports(toy: ImportGraph) -> None:
    assert toy.edges == {
        "toy": {"toy.a", "toy.b"},
        "toy.a": {"toy.b"},
        "toy.b": {"toy.a"},
        "toy.c": {"toy.d"},
        "toy.d": {"toy.c"},
        "toy.e": {"toy.f"},
        "toy.f": set(),
        "toy.g": {"toy.e"},
        "toy.h": {"toy.g"},
        "toy.sub": {"toy.sub.leaf"},
        "toy.sub.leaf": {"toy.c", "toy.e"},
    }


def test_cycles_are_the_top_level_one_and_the_one_hidden_in_a_function(toy: ImportGraph) -> None:
    assert sorted(toy.cycles()) == [["toy.a", "toy.b"], ["toy.c", "toy.d"]]


def test_an_import_inside_a_function_is_an_edge_and_a_late_import(toy: ImportGraph) -> None:
    assert "toy.c" in toy.edges["toy.d"]
    assert toy.late_imports == [("toy.d", "toy.c", 2)]


def test_a_marked_back_edge_is_left_out_of_the_graph_and_of_the_late_imports(toy: ImportGraph) -> None:
    assert toy.marked_back_edges == [("toy.f", "toy.e", 2)]
    assert "toy.e" not in toy.edges["toy.f"]
    assert ["toy.e", "toy.f"] not in toy.cycles()


def test_imports_under_type_checking_are_left_out_of_the_graph(toy: ImportGraph) -> None:
    assert toy.type_only_imports == [("toy.g", "toy.h", 5), ("toy.g", "toy.h", 9)]
    assert "toy.h" not in toy.edges["toy.g"]
    assert ["toy.g", "toy.h"] not in toy.cycles()


def test_the_else_branch_of_type_checking_is_a_real_import(toy: ImportGraph) -> None:
    assert "toy.e" in toy.edges["toy.g"]


def test_relative_imports_resolve_to_the_module_they_load(toy: ImportGraph) -> None:
    assert toy.edges["toy"] == {"toy.a", "toy.b"}  # `from . import a`, `from .b import VALUE`
    assert toy.edges["toy.c"] == {"toy.d"}  # `from . import d` in a plain module


def test_relative_imports_in_a_subpackage_resolve_against_it(toy: ImportGraph) -> None:
    assert toy.edges["toy.sub"] == {"toy.sub.leaf"}  # `from . import leaf` in sub/__init__.py
    assert toy.edges["toy.sub.leaf"] == {"toy.e", "toy.c"}  # `from .. import e`, `from ..c import thing`


def test_absolute_imports_of_the_package_are_edges(toy: ImportGraph) -> None:
    assert toy.edges["toy.a"] == {"toy.b"}  # `import toy.b`
    assert toy.edges["toy.b"] == {"toy.a"}  # `from toy import a`


def test_a_package_with_one_way_imports_has_no_cycle(tmp_path: Path) -> None:
    files = {"__init__.py": "from . import top\n", "top.py": "from . import base\n", "base.py": "import os\n"}
    graph = import_graph(write_package(tmp_path, "layered", files), "layered")
    assert graph.cycles() == []
    assert graph.edges == {"layered": {"layered.top"}, "layered.top": {"layered.base"}, "layered.base": set()}


def test_importing_a_module_of_a_subpackage_depends_on_the_subpackage_init(tmp_path: Path) -> None:
    # A real circular import: `import pkg.a` fails (sub/__init__ reads `a.VALUE` before `a` has set it).
    files = {
        "__init__.py": "",
        "a.py": "from pkg.sub import leaf\n\nVALUE = 1\n",
        "sub/__init__.py": "from .. import a\n\nX = a.VALUE\n",
        "sub/leaf.py": "Y = 2\n",
    }
    graph = import_graph(write_package(tmp_path, "pkg", files), "pkg")
    assert graph.cycles() == [["pkg.a", "pkg.sub"]]


def test_a_mark_without_a_reason_or_at_the_top_of_a_module_hides_nothing(tmp_path: Path) -> None:
    package = tmp_path / "marks"
    package.mkdir()
    (package / "__init__.py").write_text('"""marks."""\n')
    (package / "a.py").write_text('"""a."""\nfrom . import b  # late import: at the top this hides a cycle\n')
    (package / "b.py").write_text(
        '"""b."""\n\n\ndef f():\n    from . import a  # late import:\n    return a\n'
    )
    graph = import_graph(package, "marks")
    assert graph.marked_back_edges == []
    assert graph.cycles() == [["marks.a", "marks.b"]]
