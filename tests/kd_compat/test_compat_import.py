"""What kd_compat imports, checked in fresh interpreters (this process has JAX and etils loaded)."""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import kd_compat
import pytest

KD_COMPAT_SRC = Path(kd_compat.__file__).parent.parent
HEAVY = ("jax", "etils", "etils.enp.array_spec", "numpy", "importlib.metadata")


def _run(code, *, python_flags=(), pythonpath=None):
    """Runs `code` in a new interpreter and returns what it printed as JSON."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(path) for path in pythonpath)
    completed = subprocess.run(
        [sys.executable, *python_flags, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def _loaded_after(statement):
    return _run(
        f"import json, sys\n{statement}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )


def test_import_kd_compat_imports_neither_jax_nor_etils():
    assert _loaded_after("import kd_compat") == []


def test_apply_imports_etils_only_when_affected_and_never_jax(etils_affected):
    loaded = _loaded_after("import kd_compat; kd_compat.apply()")
    assert "jax" not in loaded
    expected = ["etils", "etils.enp.array_spec"] if etils_affected else []
    assert [m for m in loaded if m.startswith("etils")] == expected


def test_status_does_not_import_jax_or_etils():
    loaded = _loaded_after("import kd_compat; kd_compat.status()")
    assert [m for m in loaded if m.startswith(("jax", "etils"))] == []


@pytest.fixture
def without_jax(tmp_path):
    """This environment's site-packages minus JAX: a folder of links to everything but jax and jaxlib."""
    site_packages = Path(sysconfig.get_paths()["purelib"])
    for entry in site_packages.iterdir():
        if entry.name != "jax" and not entry.name.lower().startswith(("jax-", "jaxlib")):
            (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


_REPORT = """
import json, sys, kd_compat
patch = kd_compat.apply()["etils_jax_prng"]
loaded = [m for m in ("jax", "etils") if m in sys.modules]
print(json.dumps({"needed": patch.needed, "applied": patch.applied, "reason": patch.reason, "loaded": loaded}))
"""


def test_without_etils_the_patch_is_not_needed():
    # -S: no site-packages, so only kd_compat's sources are on the path and no etils is installed.
    report = _run(_REPORT, python_flags=["-S"], pythonpath=[KD_COMPAT_SRC])
    assert report == {"needed": False, "applied": False, "reason": "etils is not installed", "loaded": []}


def test_without_jax_the_patch_is_not_needed(without_jax, etils_affected):
    report = _run(_REPORT, python_flags=["-S"], pythonpath=[KD_COMPAT_SRC, without_jax])
    assert (report["needed"], report["applied"], report["loaded"]) == (False, False, [])
    if etils_affected:
        assert report["reason"].endswith(
            "is affected, but JAX is not installed, so etils never reaches into it"
        )
    else:
        assert "is not affected" in report["reason"]


def test_without_jax_affected_etils_array_specs_work_unpatched(without_jax):
    code = "import json, numpy as np\nfrom etils import enp\nprint(json.dumps(repr(enp.ArraySpec((2,), np.float32))))"
    assert _run(code, python_flags=["-S"], pythonpath=[KD_COMPAT_SRC, without_jax]) == "f32[2]"
