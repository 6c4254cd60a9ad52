"""The import graph of a package, read from its source with `ast`: which of its modules import which.

    graph = import_graph(Path("packages/konfig/src/konfig"), "konfig")
    graph.cycles()        # [] when the imports go one way
    graph.late_imports    # the imports made inside functions, each `(module, imported, line)`

Every import of one of the package's own modules is an edge, wherever it is written: at the top of the
module or inside a function (a late import): a late import hides a dependency from the file's head but
does not remove it. Two kinds are left out: imports under `if TYPE_CHECKING:` (read by type checkers only,
never run; kept in `type_only_imports`), and an import inside a function whose lines carry the comment
`# late import:` followed by the reason: the single deliberate back-edge a layer may keep (kept in
`marked_back_edges`). A mark at the top of a module counts for nothing: it would hide an import-time cycle.

Standard library only: the light packages' isolated environments run this too.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

LATE_IMPORT_MARK = "# late import:"


@dataclasses.dataclass
class ImportGraph:
    """`edges[a]` is the set of the package's modules that module `a` imports."""

    package: str
    edges: dict[str, set[str]]
    late_imports: list[tuple[str, str, int]]  # (module, imported, line) of imports inside functions
    marked_back_edges: list[tuple[str, str, int]]  # the `# late import:` ones, left out of `edges`
    type_only_imports: list[tuple[str, str, int]]  # under `if TYPE_CHECKING:`, left out of `edges`

    def cycles(self) -> list[list[str]]:
        """Each strongly connected group of more than one module (or a module importing itself), sorted."""
        return [sorted(group) for group in _strongly_connected(self.edges) if _is_cycle(group, self.edges)]


def import_graph(package_dir: Path, package: str) -> ImportGraph:
    """The graph of `package` (its top-level folder `package_dir`, holding `__init__.py`)."""
    modules = {_module_name(path, package_dir, package): path for path in sorted(package_dir.rglob("*.py"))}
    edges: dict[str, set[str]] = {name: set() for name in modules}
    late: list[tuple[str, str, int]] = []
    marked: list[tuple[str, str, int]] = []
    type_only: list[tuple[str, str, int]] = []
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        is_package = path.name == "__init__.py"
        for node, in_function, for_types in _imports(ast.parse(source, filename=str(path))):
            for target in _targets(node, name, is_package, modules):
                if target == name and is_package:
                    continue  # `from . import x` names the package itself only as the parent of x
                if for_types:
                    type_only.append((name, target, node.lineno))
                    continue
                if in_function and _marked(lines, node):
                    marked.append((name, target, node.lineno))
                    continue
                edges[name].add(target)
                if in_function:
                    late.append((name, target, node.lineno))
    return ImportGraph(
        package=package, edges=edges, late_imports=late, marked_back_edges=marked, type_only_imports=type_only
    )


def _marked(lines: list[str], node: ast.stmt) -> bool:
    """Whether an import's lines carry `# late import: <reason>` (with a reason)."""
    text = "\n".join(lines[node.lineno - 1 : (node.end_lineno or node.lineno)])
    _, mark, reason = text.partition(LATE_IMPORT_MARK)
    return bool(mark) and bool(reason.split("\n")[0].strip())


def _module_name(path: Path, package_dir: Path, package: str) -> str:
    parts = [package, *path.relative_to(package_dir).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import statement, with whether it sits inside a function and whether under `if TYPE_CHECKING:`."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool, bool]] = []

    def visit(node: ast.AST, in_function: bool, for_types: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, in_function, for_types))
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    visit(ast.Module(body=[statement], type_ignores=[]), inner, True)
                for statement in child.orelse:
                    visit(ast.Module(body=[statement], type_ignores=[]), inner, for_types)
                continue
            visit(child, inner, for_types)

    visit(tree, False, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING`."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: dict[str, Path]
) -> list[str]:
    """The package's modules that `node` loads, by their dotted names."""
    if isinstance(node, ast.Import):
        found = [
            _owning_module(alias.name, modules) for alias in node.names if _owning_module(alias.name, modules)
        ]
        return _with_parent_packages(found, module, modules)
    if node.level:  # relative: `.` is this module's package
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    targets = []
    owner = _owning_module(source, modules)
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        if submodule in modules:  # `from pkg import _x`: the submodule _x
            targets.append(submodule)
        elif owner:
            targets.append(owner)
    return _with_parent_packages(targets, module, modules)


def _with_parent_packages(targets: list[str], module: str, modules: dict[str, Path]) -> list[str]:
    """`targets`, each after the packages above it that loading it runs too, less those above `module`.

    Importing `pkg.sub.leaf` runs `pkg/sub/__init__.py` first; the packages above `module` (and `module`
    itself) are already being imported when `module` runs, so they are no dependency of it.
    """
    parts = module.split(".")
    running = {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
    out = []
    for target in targets:
        names = target.split(".")
        parents = (".".join(names[:end]) for end in range(1, len(names)))
        out += [parent for parent in parents if parent in modules and parent not in running]
        out.append(target)
    return list(dict.fromkeys(out))


def _owning_module(dotted: str, modules: dict[str, Path]) -> str:
    """The longest prefix of `dotted` that is one of the package's modules ('' when none is)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return ""


def _strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[set[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    groups.append(group)
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return groups


def _is_cycle(group: set[str], edges: dict[str, set[str]]) -> bool:
    if len(group) > 1:
        return True
    (only,) = group
    return only in edges.get(only, set())


# ---------------------------------------------------------------------------------------------- checks
# What each package's tests/<package>/test_layering.py asserts with the graph.


def upward_imports(edges: dict[str, set[str]], order: list[str]) -> list[str]:
    """`"a imports b"` for each edge between modules of `order` (bottom to top) that does not go down it."""
    position = {module: index for index, module in enumerate(order)}
    return [
        f"{module} imports {target}"
        for module, targets in sorted(edges.items())
        for target in sorted(targets)
        if module in position and target in position and position[target] >= position[module]
    ]


def unplaced(modules: set[str], order: list[str], where: str) -> list[str]:
    """A line for each of `modules` that `order` leaves out, and each module of `order` that is not there."""
    return [f"{module} is in no layer of {where}: place it" for module in sorted(modules - set(order))] + [
        f"{module} is listed in {where} but is no module" for module in order if module not in modules
    ]


def inside(graph: ImportGraph, package: str) -> dict[str, set[str]]:
    """The edges between `package` (`kd.train`) and its submodules, each module's imports of the others."""
    members = {module for module in graph.edges if module == package or module.startswith(package + ".")}
    return {module: graph.edges[module] & members for module in members}


def loaded_by_import(package: str) -> set[str]:
    """The package's modules that `import <package>` loads, in a fresh interpreter."""
    import subprocess
    import sys

    script = (
        f"import sys, {package}\nprint(' '.join(m for m in sys.modules if m.split('.')[0] == {package!r}))"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(proc.stdout.split())


def modules_without_purpose(package_dir: Path) -> list[str]:
    """The modules whose docstring's first line is missing or empty."""
    missing = []
    for path in sorted(package_dir.rglob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not docstring or not docstring.splitlines()[0].strip():
            missing.append(str(path.relative_to(package_dir)))
    return missing
