"""Importing kd runs kd_compat.apply(), so etils/JAX fixes are in place before training starts."""

import importlib.metadata
import json
import subprocess
import sys

_REPORT = """
import json, kd, kd_compat
patch = kd_compat.status()["etils_jax_prng"]
print(json.dumps({"checked": patch.checked, "needed": patch.needed, "applied": patch.applied}))
"""


def _etils_is_affected() -> bool:
    return importlib.metadata.version("etils").split(".")[:2] == ["1", "14"]


def test_import_kd_applies_kd_compat():
    # A fresh interpreter: in this one another test may already have called apply().
    completed = subprocess.run([sys.executable, "-c", _REPORT], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    affected = _etils_is_affected()
    assert json.loads(completed.stdout) == {"checked": True, "needed": affected, "applied": affected}
