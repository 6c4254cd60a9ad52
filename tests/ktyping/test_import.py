"""Importing ktyping is pure standard library, and light."""

import json
import subprocess
import sys

HEAVY = [
    "numpy",
    "jax",
    "torch",
    "tensorflow",
    "typing",
    "inspect",
    "dataclasses",
    "re",
    "functools",
    "threading",
]


def modules_loaded_by_import() -> set[str]:
    code = (
        "import json, sys; before = set(sys.modules); import ktyping; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_import_loads_no_array_library_and_no_heavy_stdlib_module() -> None:
    loaded = {m.split(".")[0] for m in modules_loaded_by_import()}
    assert not loaded & set(HEAVY)


def test_import_loads_only_ktyping_modules() -> None:
    assert {m for m in modules_loaded_by_import() if not m.startswith("ktyping")} <= {"__future__", "_thread"}


def test_public_names_are_listed_in_all() -> None:
    import ktyping

    for name in ktyping.__all__:
        assert hasattr(ktyping, name), name
    assert ktyping.__version__
