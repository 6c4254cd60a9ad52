"""Without grain installed, kd.data still imports and GrainPipeline says which extra to install."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from kd import data

_WITHOUT_GRAIN = """
import sys
sys.modules["grain"] = None  # `import grain` now raises ImportError, as when it is not installed
import numpy as np
from kd import data
pipeline = data.InMemoryPipeline(loader=lambda: {"x": np.zeros((4, 1))}, batch_size=2, seed=0)
assert next(iter(pipeline))["x"].shape == (2, 1)
try:
    len(data.GrainPipeline(source=[1, 2, 3], batch_size=1, seed=0))
except ImportError as e:
    print(e)
"""


def test_kd_data_imports_and_works_without_grain():
    completed = subprocess.run(
        [sys.executable, "-c", _WITHOUT_GRAIN], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "pip install 'kd-train[grain]'" in completed.stdout


def test_grain_pipeline_without_grain_raises_an_import_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "grain", None)
    pipeline = data.GrainPipeline(source=[{"x": np.zeros(1)}], batch_size=1, seed=0)
    with pytest.raises(ImportError, match=r"pip install 'kd-train\[grain\]'"):
        iter(pipeline)
