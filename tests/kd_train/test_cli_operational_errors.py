"""`kd-train` stops on what the machine refuses (disk full, a read-only or unwritable workdir, too few file
descriptors) and on values that break a computation with one paragraph saying what to do: exit 1 for the
machine, 2 for the config, no traceback, and what was saved stays usable. Real subprocesses, real mounts."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "mlp_regression.py")
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"
CHECKPOINTS = "--cfg.checkpointer=py::kd.ckpts.Checkpointer(save_interval_steps=20)"


def kd_train(
    *args: str, cwd: Path = ROOT, open_files: tuple[int, int] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [KD_TRAIN, f"--cfg={EXAMPLE}", *args]
    if open_files is not None:
        # The limit is set by a small launcher that then execs kd-train (a `preexec_fn` would fork this
        # multithreaded JAX process).
        launcher = "import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, {}); os.execv(sys.argv[1], sys.argv[1:])"
        command = [sys.executable, "-c", launcher.format(open_files), *command]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=600,
    )


def assert_one_paragraph(result: subprocess.CompletedProcess[str], code: int, *expected: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 5, result.stderr
    for text in expected:
        assert text in result.stderr, result.stderr


@pytest.fixture
def tmpfs(tmp_path):
    """`mount(options)`: a fresh tmpfs at tmp_path/mnt (this suite runs as root); unmounted afterwards."""
    point = tmp_path / "mnt"
    point.mkdir()
    mounted = []

    def mount(options: str) -> Path:
        command = ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)]
        if mounted:
            command = ["mount", "-o", f"remount,{options}", str(point)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:  # the suite runs as root (CI, the README's command in a container)
            raise AssertionError(f"mounting a real full disk (a tmpfs) needs root: {done.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    if mounted:
        subprocess.run(["umount", str(point)], check=True)


# ------------------------------------------------------------------------------- values that break a computation


def test_a_size_of_0_in_the_model_names_its_config_path():
    result = kd_train("--cfg.model.model.layers[0].features=0", "--cfg.num_train_steps=2")
    assert_one_paragraph(
        result, 2, "cfg.model.model.layers[0].features = 0", "ZeroDivisionError", "initializing the model"
    )


def test_an_arithmetic_error_in_the_user_s_model_shows_its_file_and_line(tmp_path):
    # No field of the config explains it (none is 0): the user's own line is where to look.
    (tmp_path / "bad_models.py").write_text(
        "from flax import linen as nn\n"
        "class BadMLP(nn.Module):\n"
        "    width: int = 4\n"
        "    @nn.compact\n"
        "    def __call__(self, x):\n"
        "        groups = self.width // (self.width - 4)\n"
        "        return nn.Dense(groups)(x)\n"
    )
    (tmp_path / "conf.py").write_text(
        "import konfig\n"
        "with konfig.imports():\n"
        "    import bad_models\n"
        "    import kd\n"
        "    import optax\n"
        "def get_config():\n"
        "    import sys; sys.path.insert(0, " + repr(str(ROOT / "examples")) + ")\n"
        "    import mlp_regression\n"
        "    cfg = mlp_regression.get_config()\n"
        "    cfg.model = kd.nn.ExternalModule(model=bad_models.BadMLP(), keys='batch.x')\n"
        "    return cfg\n"
    )
    result = subprocess.run(
        [KD_TRAIN, f"--cfg={tmp_path / 'conf.py'}", "--cfg.num_train_steps=2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=600,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 6, result.stderr
    assert "ZeroDivisionError" in result.stderr and "BadMLP" in result.stderr, result.stderr
    assert f'File "{tmp_path / "bad_models.py"}", line 6, in __call__' in result.stderr, result.stderr
    assert "groups = self.width // (self.width - 4)" in result.stderr


def test_a_seed_too_large_for_jax_names_cfg_seed():
    result = kd_train(f"--cfg.seed={2**70}", "--cfg.num_train_steps=2")
    assert_one_paragraph(result, 2, f"cfg.seed = {2**70}", "OverflowError", "64-bit")


# ------------------------------------------------------------------------------------------------ the disk


def test_disk_full_stops_with_one_paragraph_and_the_saved_checkpoints_resume(tmpfs):
    folder = tmpfs("size=200k")  # a few checkpoints of the example's MLP
    workdir = folder / "run"
    args = ("--cfg.num_train_steps=300", CHECKPOINTS, f"--cfg.workdir={workdir}")

    full = kd_train(*args)

    assert_one_paragraph(
        full, 1, "no space left on device", "--cfg.workdir", "checkpoints up to step 20 are intact"
    )
    tmpfs("size=50m")  # space freed: the same command continues the run from its last checkpoint
    resumed = kd_train(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert (workdir / "DONE").is_file() and resumed.stdout.splitlines()[-1].startswith("done: 300 steps")


def test_a_read_only_workdir_is_refused_before_training(tmpfs):
    workdir = tmpfs("ro,size=1m") / "run"
    result = kd_train("--cfg.num_train_steps=2", f"--cfg.workdir={workdir}")
    assert_one_paragraph(result, 1, "read-only file system", "choose a writable --cfg.workdir")
    assert not result.stdout  # nothing started


def test_a_workdir_where_no_folder_can_be_made_is_refused():
    result = kd_train("--cfg.num_train_steps=2", "--cfg.workdir=/proc/kd-run")
    assert_one_paragraph(result, 1, "--cfg.workdir=/proc/kd-run: cannot write there")


@pytest.mark.parametrize("under", [False, True], ids=["a file", "under a file"])
def test_a_workdir_that_is_a_file_is_a_config_error(under, tmp_path):
    file = tmp_path / "passwd"
    file.write_text("root:x:0:0\n")
    workdir = file / "run" if under else file
    result = kd_train("--cfg.num_train_steps=2", f"--cfg.workdir={workdir}")
    assert_one_paragraph(result, 2, f"--cfg.workdir={workdir}", "not a folder")
    assert file.read_text() == "root:x:0:0\n"


def test_an_empty_workdir_is_refused_and_nothing_is_written_in_the_current_directory(tmp_path):
    result = kd_train("--cfg.num_train_steps=2", "--cfg.workdir=", cwd=tmp_path)
    assert_one_paragraph(result, 2, "--cfg.workdir= is empty")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------ file descriptors


def test_too_few_file_descriptors_is_refused_with_what_to_do(tmp_path):
    result = kd_train("--cfg.num_train_steps=2", f"--cfg.workdir={tmp_path / 'run'}", open_files=(30, 30))
    assert_one_paragraph(result, 1, "too few file descriptors", "may open 30 files", "ulimit -n")


def test_a_low_soft_limit_of_open_files_is_raised_and_the_run_trains(tmp_path):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if (
        hard != resource.RLIM_INFINITY and hard < 256
    ):  # nothing to raise the soft limit to: the run is refused
        result = kd_train(
            "--cfg.num_train_steps=2", f"--cfg.workdir={tmp_path / 'run'}", open_files=(30, hard)
        )
        assert_one_paragraph(result, 1, "too few file descriptors", "ulimit -n")
        return
    result = kd_train(
        "--cfg.num_train_steps=40", CHECKPOINTS, f"--cfg.workdir={tmp_path / 'run'}", open_files=(30, hard)
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run" / "checkpoints" / "ckpt_40").is_dir()


def test_a_metric_whose_get_state_returns_an_array_is_named_before_compiling(tmp_path):
    # A newcomer's slip: `get_state` returning the value, not a state. Caught as the Trainer traces the step.
    (tmp_path / "my_metrics.py").write_text(
        "import dataclasses\n"
        "import jax.numpy as jnp\n"
        "import kd, kontext\n"
        "@dataclasses.dataclass(frozen=True, kw_only=True)\n"
        "class MeanGap(kd.metrics.Metric):\n"
        "    preds: kontext.Key = kontext.REQUIRED\n"
        "    targets: kontext.Key = kontext.REQUIRED\n"
        "    def get_state(self, preds, targets):\n"
        "        return jnp.abs(preds - targets).mean()\n"
    )
    (tmp_path / "conf.py").write_text(
        "import konfig\n"
        "with konfig.imports():\n"
        "    import my_metrics\n"
        "def get_config():\n"
        "    import sys; sys.path.insert(0, " + repr(str(ROOT / "examples")) + ")\n"
        "    import mlp_regression\n"
        "    cfg = mlp_regression.get_config()\n"
        "    cfg.train_metrics = {'gap': my_metrics.MeanGap(preds='preds', targets='batch.y')}\n"
        "    return cfg\n"
    )
    result = subprocess.run(
        [KD_TRAIN, f"--cfg={tmp_path / 'conf.py'}", "--cfg.num_train_steps=2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=600,
    )
    assert_one_paragraph(
        result, 2, "train_metrics['gap'] (MeanGap): get_state returned an array (float32[])", "kd.metrics.State"
    )
    assert "compiled" not in result.stdout  # found by tracing, before any compile
