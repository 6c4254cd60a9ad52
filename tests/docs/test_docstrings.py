"""Every public name has a docstring: the API reference (docs/api/) is generated from them.

The public names are each package's and each kd namespace's `__all__` (docs/_ext/kd_apigen.py's
`NAMESPACES`, the pages the site has). A class, function or module defined under that name needs a
docstring of its own (a class does not inherit one from its base). A constant, or an alias (`AxisName =
Hashable`), needs an attribute docstring (a string right after its assignment, which autodoc shows) in
its package's source, or its namespace's docstring naming it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import itertools
import pathlib
import sys
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _apigen() -> types.ModuleType:
    """docs/_ext/kd_apigen.py, the generator of the API pages (its list of namespaces is the site's)."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # kd_apigen imports kd_docstrings beside it
    try:
        spec = importlib.util.spec_from_file_location("kd_apigen", ROOT / "docs" / "_ext" / "kd_apigen.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))


APIGEN = _apigen()
NAMESPACES = APIGEN.NAMESPACES
# Constants whose docstrings land with a change to their module under way elsewhere (kd/kauldron_alias.py is
# being edited in parallel); `test_known_missing_are_still_missing` drops an entry once it has one.
KNOWN_MISSING: dict[str, set[str]] = {}


def own_docstring(obj: object) -> str:
    """The object's own docstring: a class's `__doc__` only if set in its body, not its base's."""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        # A dataclass without a docstring gets its signature as one: that is not documentation.
        if doc and doc.startswith(f"{obj.__name__}("):
            return ""
        return (doc or "").strip()
    return (getattr(obj, "__doc__", None) or "").strip()


def _needs_docstring(obj: object, name: str) -> bool:
    """A module, class or function of that name (an alias of another object counts as a constant)."""
    if not (inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj)):
        return False
    return inspect.ismodule(obj) or own_docstring(obj) != "" or getattr(obj, "__name__", name) == name


@functools.cache
def attribute_docstrings(package: str) -> frozenset[str]:
    """The names assigned at the top of a module of `package` and followed by a string (their docstring)."""
    folder = pathlib.Path(importlib.import_module(package).__file__).parent
    names = set()
    for path in folder.rglob("*.py"):
        body = ast.parse(path.read_text()).body
        for stmt, after in itertools.pairwise(body):
            documented = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            if documented and isinstance(after.value.value, str):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
                names.update(target.id for target in targets if isinstance(target, ast.Name))
    return frozenset(names)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_name_has_a_docstring(namespace: str) -> None:
    module = importlib.import_module(namespace)
    assert (module.__doc__ or "").strip(), f"{namespace} has no module docstring"
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if _needs_docstring(obj, name):
            if not own_docstring(obj):
                missing.append(name)
        elif name not in module.__doc__ and name not in attribute_docstrings(namespace.split(".")[0]):
            missing.append(f"{name} (a constant or alias without a docstring)")
    missing = [entry for entry in missing if entry.split(" ")[0] not in KNOWN_MISSING.get(namespace, ())]
    assert missing == [], f"{namespace}: public names without a docstring: {missing}"


def test_known_missing_are_still_missing() -> None:
    for namespace, names in KNOWN_MISSING.items():
        module = importlib.import_module(namespace)
        documented = attribute_docstrings(namespace.split(".")[0]) | set(module.__doc__.split())
        assert not names & documented, (
            f"{namespace}: {names & documented} now documented: drop from KNOWN_MISSING"
        )


def test_every_namespace_has_a_page_in_the_reference() -> None:
    index = (ROOT / "docs" / "api" / "index.md").read_text()
    assert [namespace for namespace in NAMESPACES if f"generated/{namespace}\n" not in index] == []


def test_a_class_without_a_docstring_is_found() -> None:
    """The check is not vacuous: a subclass does not count its base's docstring, nor a dataclass's signature."""
    import dataclasses

    class Base:
        """Documented."""

    class Child(Base):
        pass

    @dataclasses.dataclass
    class Data:
        x: int

    assert own_docstring(Base) and not own_docstring(Child) and not own_docstring(Data)
