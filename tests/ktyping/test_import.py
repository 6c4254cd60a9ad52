"""Importing ktyping is pure standard library."""

import subprocess
import sys

HEAVY = ("numpy", "jax", "torch", "tensorflow", "typing", "inspect", "dataclasses", "re")


def test_import_loads_no_array_library_and_no_heavy_stdlib_module() -> None:
    code = f"import sys, ktyping; print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"
    env_free = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(env_free.stdout))
    assert not loaded & {"numpy", "jax", "torch", "tensorflow"}
    assert not loaded & {"inspect", "dataclasses"}


def test_public_names_are_listed_in_all() -> None:
    import ktyping

    for name in ktyping.__all__:
        assert hasattr(ktyping, name), name
    assert ktyping.__version__
