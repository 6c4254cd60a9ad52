# ruff: noqa: F821 - single-name shape specs like Float["n"] are not forward references
"""The `ktyping.static` form is accepted by mypy without per-line ignores."""

import subprocess
import sys
from pathlib import Path

import ktyping
import numpy as np
import pytest
from ktyping.static import Float, Int

SAMPLE = """
import numpy as np
import ktyping
from ktyping.static import Float, Int


@ktyping.typechecked
def gather(x: Float[np.ndarray, "b n"], idx: Int[np.ndarray, "b"]) -> Float[np.ndarray, "b"]:
    out: np.ndarray = x[np.arange(len(idx)), idx]
    return out


with ktyping.typechecked():
    y: np.ndarray = gather(np.zeros((2, 3)), np.zeros(2, int))
"""


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the module: numpy's stubs are analysed once."""
    return tmp_path_factory.mktemp("mypy_cache")


def run_mypy(tmp_path: Path, cache: Path, source: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy")
    path = tmp_path / "sample.py"
    path.write_text(source)
    command = [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(cache), str(path)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_mypy_accepts_the_static_form(tmp_path: Path, mypy_cache: Path) -> None:
    result = run_mypy(tmp_path, mypy_cache, SAMPLE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_still_sees_the_array_type(tmp_path: Path, mypy_cache: Path) -> None:
    result = run_mypy(
        tmp_path, mypy_cache, SAMPLE + "\nz: str = gather(np.zeros((2, 3)), np.zeros(2, int))\n"
    )
    assert "Incompatible types in assignment" in result.stdout


def test_static_form_is_checked_at_runtime() -> None:
    @ktyping.typechecked
    def f(x: Float[np.ndarray, "b n"], i: Int[np.ndarray, "b"]) -> None:
        pass

    f(np.zeros((2, 3)), np.zeros(2, int))
    with pytest.raises(ktyping.KTypeCheckError, match="argument i"):
        f(np.zeros((2, 3)), np.zeros(3, int))


def test_static_form_checks_the_array_class() -> None:
    class NotNumpy:
        shape = (2,)
        dtype = np.dtype("float32")

    assert isinstance(NotNumpy(), ktyping.Float["n"])
    assert not isinstance(NotNumpy(), Float[np.ndarray, "n"])


def test_annotated_metadata_form_is_checked_at_runtime() -> None:
    from typing import Annotated

    @ktyping.typechecked
    def f(x: Annotated[np.ndarray, ktyping.Float["n"]], y: Annotated[np.ndarray, ktyping.Float["n"]]) -> None:
        pass

    with pytest.raises(ktyping.KTypeCheckError, match="argument y"):
        f(np.zeros(2), np.zeros(3))


def test_mypy_accepts_ktyping_itself(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(Path(ktyping.__file__).parent),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
