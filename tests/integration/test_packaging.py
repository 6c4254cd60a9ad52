"""The monorepo's packaging contract: five wheels, light packages stand alone.

Each light package (konfig, kontext, ktyping) is built into a wheel, installed ALONE into a
fresh virtual environment, imported there without pulling any heavy library into
``sys.modules``, and its own test folder is run against that installed wheel.
"""

from __future__ import annotations

import email.parser
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from uv_run import run, uv

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("jax", "jaxlib", "numpy", "flax", "optax", "etils", "orbax", "torch", "tensorflow")

# distribution name -> (folder under packages/, import name)
PACKAGES = {
    "kd-konfig": ("konfig", "konfig"),
    "kd-kontext": ("kontext", "kontext"),
    "kd-ktyping": ("ktyping", "ktyping"),
    "kd-compat": ("kd-compat", "kd_compat"),
    "kd-train": ("kd-train", "kd"),
}
LIGHT = ["kd-konfig", "kd-kontext", "kd-ktyping"]


@pytest.fixture(scope="session")
def dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Builds a wheel and an sdist of every package with its own build backend (hatchling)."""
    out = tmp_path_factory.mktemp("dist")
    for folder, _ in PACKAGES.values():
        run(
            [
                uv(),
                "build",
                "--quiet",
                "--sdist",
                "--wheel",
                "--out-dir",
                str(out),
                str(REPO / "packages" / folder),
            ]
        )
    return out


def _wheel(dist_dir: Path, dist: str) -> Path:
    (wheel,) = dist_dir.glob(dist.replace("-", "_") + "-*.whl")
    return wheel


def _metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(zf.read(name).decode())


def _source_version(dist: str) -> str:
    folder, module = PACKAGES[dist]
    init = REPO / "packages" / folder / "src" / module / "__init__.py"
    for line in init.read_text().splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    raise AssertionError(f"{init} has no __version__ line")


@pytest.mark.parametrize("dist", list(PACKAGES))
def test_each_package_builds_a_wheel_and_an_sdist_with_its_own_version(dist_dir: Path, dist: str) -> None:
    wheel = _wheel(dist_dir, dist)
    sdists = list(dist_dir.glob(dist.replace("-", "_") + "-*.tar.gz"))
    assert len(sdists) == 1
    meta = _metadata(wheel)
    assert meta["Name"] == dist
    assert meta["Version"] == _source_version(dist)
    _folder, module = PACKAGES[dist]
    with zipfile.ZipFile(wheel) as zf:
        assert f"{module}/py.typed" in zf.namelist()


@pytest.mark.parametrize("dist", LIGHT)
def test_light_package_wheel_declares_no_dependency(dist_dir: Path, dist: str) -> None:
    assert _metadata(_wheel(dist_dir, dist)).get_all("Requires-Dist") is None


def _requirement_names(dist_dir: Path, dist: str) -> set[str]:
    reqs = _metadata(_wheel(dist_dir, dist)).get_all("Requires-Dist") or []
    names = set()
    for req in reqs:
        if "extra ==" in req:
            continue
        name = req.split(";")[0]
        for sep in "<>=!~[ (":
            name = name.split(sep)[0]
        names.add(name.strip().lower().replace("_", "-"))
    return names


def test_kd_compat_depends_only_on_etils_and_jax(dist_dir: Path) -> None:
    assert _requirement_names(dist_dir, "kd-compat") == {"etils", "jax"}


def test_kd_train_depends_on_the_four_other_packages_and_the_jax_stack(dist_dir: Path) -> None:
    names = _requirement_names(dist_dir, "kd-train")
    assert {"kd-konfig", "kd-kontext", "kd-ktyping", "kd-compat"} <= names
    assert {"jax", "flax", "optax", "etils", "numpy", "orbax-checkpoint"} <= names


@pytest.fixture(scope="session")
def _venv_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("venvs")


def _fresh_venv(root: Path, name: str) -> Path:
    venv = root / name
    run([uv(), "venv", "--quiet", "--python", sys.executable, str(venv)])
    return venv / "bin" / "python"


def _installed(python: Path) -> set[str]:
    code = "import importlib.metadata as m, json; print(json.dumps(sorted(d.metadata['Name'] for d in m.distributions())))"
    return set(json.loads(run([str(python), "-c", code]).stdout))


@pytest.mark.parametrize("dist", LIGHT)
def test_light_package_installs_alone_imports_without_heavy_modules_and_passes_its_tests(
    dist_dir: Path, _venv_root: Path, dist: str
) -> None:
    folder, module = PACKAGES[dist]
    python = _fresh_venv(_venv_root, folder)
    run([uv(), "pip", "install", "--quiet", "--python", str(python), str(_wheel(dist_dir, dist))])
    assert _installed(python) == {dist}, "the wheel pulled in other distributions"

    check = (
        f"import sys, {module}; "
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}); "
        f"assert not heavy, heavy; "
        f"print({module}.__file__)"
    )
    where = run([str(python), "-c", check]).stdout.strip()
    assert "site-packages" in where, f"imported {module} from {where}, not from the installed wheel"

    test_tools = ["pytest", "hypothesis"] + (["numpy"] if module == "ktyping" else [])
    run([uv(), "pip", "install", "--quiet", "--python", str(python), *test_tools])
    # The package's own test folder, run against the installed wheel (not the source tree).
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/{module}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
    )
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


@pytest.mark.parametrize("module", ["konfig", "kontext", "ktyping", "kd_compat"])
def test_importing_a_light_package_in_this_environment_leaves_jax_and_numpy_unloaded(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"
    proc = run([sys.executable, "-c", code])
    assert proc.stdout.strip() == "[]"


def test_kd_reexports_the_light_packages() -> None:
    code = "import kd, konfig, kontext, ktyping; assert kd.konfig is konfig and kd.kontext is kontext and kd.ktyping is ktyping; print(kd.train.__name__)"
    assert run([sys.executable, "-c", code]).stdout.strip() == "kd.train"
