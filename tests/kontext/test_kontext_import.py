"""``import kontext`` stays light: standard library only, and only what the core needs."""

from __future__ import annotations

import inspect
import subprocess
import sys

import kontext
import pytest

HEAVY = ("jax", "jaxlib", "numpy", "flax", "etils", "lark", "ml_collections", "konfig")


def _new_modules_after(code: str) -> list[str]:
    script = (
        f"import sys\nbefore = set(sys.modules)\n{code}\nprint(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return proc.stdout.split()


def test_import_loads_no_third_party_module() -> None:
    loaded = _new_modules_after("import kontext")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]


def test_import_defers_typing_and_other_slow_stdlib_modules() -> None:
    loaded = _new_modules_after("import kontext")
    assert not {"typing", "inspect", "dataclasses", "difflib", "ast", "re"} & set(loaded)


def test_using_paths_globs_and_keys_never_imports_jax() -> None:
    code = (
        "import kontext\n"
        "tree = {'a': [{'b': 1}], 'c': {'d': 2}}\n"
        "kontext.flatten_with_path(tree); kontext.get_by_path(tree, 'a[0].b')\n"
        "kontext.set_by_path(tree, '**.d', 3); kontext.filter_by_path(tree, 'c.*')\n"
        "kontext.resolve_from_keypaths(tree, {'x': 'c.d'})\n"
        "try:\n    kontext.get_by_path(tree, 'a[0].c')\nexcept KeyError:\n    pass"
    )
    loaded = _new_modules_after(code)
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]


def test_keys_load_on_first_access() -> None:
    loaded = _new_modules_after("import kontext\nkontext.Key")
    assert "kontext._keys" in loaded
    assert "kontext._path_builder" not in loaded


def test_every_public_name_is_listed_and_importable() -> None:
    for name in kontext.__all__:
        assert getattr(kontext, name) is not None
    # Submodules (Kauldron's module paths, ``kontext.path_parser``, once imported) are not names of the API.
    public = {n for n in dir(kontext) if not n.startswith("_") and not inspect.ismodule(getattr(kontext, n))}
    assert public == set(kontext.__all__)


def test_kauldron_public_names_are_all_available() -> None:
    kauldron_names = {
        "get_keypaths",
        "is_key_annotated",
        "Key",
        "KeyTree",
        "REQUIRED",
        "resolve_from_keyed_obj",
        "resolve_from_keypaths",
        "filter_by_path",
        "GlobPath",
        "set_by_path",
        "path_builder_from",
        "Context",
        "flatten_with_path",
        "get_by_path",
        "Path",
    }
    assert kauldron_names <= set(kontext.__all__)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        kontext.no_such_name  # noqa: B018


def test_version_is_a_string() -> None:
    assert isinstance(kontext.__version__, str)
