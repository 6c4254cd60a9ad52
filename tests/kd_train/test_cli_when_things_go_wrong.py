"""`kd-train` when the user's code is wrong: real subprocesses, the user's own files in a folder of theirs.

A crash in user code (a model, a data loader, the config file) is shown as where in the run it happened and
the user's frames, in a few lines; `--traceback=full` (or `KD_TRACEBACK=full`) shows every frame; a config
that does not parse names its file and line; a NaN stop and the small slips are one paragraph.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"

BAD_MODEL = """\
from flax import linen as nn


class Bad(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(16)(x)
        x = x.reshape((x.shape[0], 100))  # the bug: 16 features are not 100
        return nn.Dense(1)(x)
"""

BAD_DATA = """\
import numpy as np


def batches():
    for step in range(1000):
        if step == 6:
            raise RuntimeError("corrupt record 6 in shard 0")  # the bug
        yield {"x": np.ones((8, 3), np.float32), "y": np.zeros((8, 1), np.float32)}
"""

CONFIG = """\
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn
    from {module} import {name}


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 20
    cfg.log_metrics_every = 10
    cfg.train_ds = {train_ds}
    cfg.model = kd.nn.ExternalModule(model={model}, keys="batch.x")
    cfg.optimizer = optax.adam(1e-3)
    cfg.train_losses = {{"l2": kd.losses.L2(preds="preds", targets="batch.y")}}
    return cfg
"""
SYNTHETIC = "kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=256), batch_size=64)"


def kd_train(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if k != "KD_TRACEBACK"}
    environment = {**inherited, "JAX_PLATFORMS": "cpu", **env}
    return subprocess.run(
        [KD_TRAIN, *args], capture_output=True, text=True, cwd=cwd, env=environment, timeout=600
    )


@pytest.fixture(scope="module")
def user_code(tmp_path_factory) -> Path:
    """A user's folder outside the repository: their model, their data, their configs."""
    folder = tmp_path_factory.mktemp("my_project")
    (folder / "my_models.py").write_text(BAD_MODEL)
    (folder / "my_data.py").write_text(BAD_DATA)
    (folder / "bad_model.py").write_text(
        CONFIG.format(module="my_models", name="Bad", train_ds=SYNTHETIC, model="Bad()")
    )
    (folder / "bad_data.py").write_text(
        CONFIG.format(
            module="my_data",
            name="batches",
            train_ds="kd.data.FromIterable(iterable=batches())",
            model="nn.Dense(features=1)",
        )
    )
    (folder / "syntax.py").write_text("import konfig\n\n\ndef get_config():\n    cfg = = 3\n")
    (folder / "name_error.py").write_text(
        "import konfig\n\n\ndef get_config():\n    return undefined_name + 1\n"
    )
    return folder


@pytest.fixture(scope="module")
def bad_model_run(user_code) -> subprocess.CompletedProcess[str]:
    return kd_train(f"--cfg={user_code / 'bad_model.py'}", cwd=user_code)


def test_a_bug_in_the_users_model_shows_their_file_and_line_in_a_few_lines(user_code, bad_model_run):
    result = bad_model_run
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) <= 15, result.stderr
    assert lines[0].startswith("error while tracing the model and the train step (Trainer.check): ")
    assert "cannot reshape array of shape (64, 16)" in lines[0]
    at = lines.index(f'  File "{user_code / "my_models.py"}", line 8, in __call__')
    assert lines[at + 1].strip() == "x = x.reshape((x.shape[0], 100))  # the bug: 16 features are not 100"
    assert "site-packages" not in result.stderr and "kd-train/src" not in result.stderr
    assert "--traceback=full" in lines[-1]


def test_traceback_full_shows_every_frame(user_code, bad_model_run):
    for result in (
        kd_train(f"--cfg={user_code / 'bad_model.py'}", "--traceback=full", cwd=user_code),
        kd_train(f"--cfg={user_code / 'bad_model.py'}", cwd=user_code, KD_TRACEBACK="full"),
    ):
        assert result.returncode == 1
        assert "Traceback (most recent call last)" in result.stderr
        assert str(user_code / "my_models.py") in result.stderr
        assert len(result.stderr.splitlines()) > len(bad_model_run.stderr.splitlines()) + 10
        assert os.path.join("kd", "train", "_trainer.py") in result.stderr  # the library's frames too


def test_a_crash_in_the_users_data_names_the_steps_and_their_line(user_code):
    result = kd_train(f"--cfg={user_code / 'bad_data.py'}", "--cfg.steps_per_call=1", cwd=user_code)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) <= 15, result.stderr
    assert lines[0] == "error while training, step 7: RuntimeError: corrupt record 6 in shard 0"
    assert f'  File "{user_code / "my_data.py"}", line 7, in batches' in lines


def test_a_config_that_does_not_parse_names_its_file_line_and_text(user_code):
    result = kd_train(f"--cfg={user_code / 'syntax.py'}", cwd=user_code)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {user_code / 'syntax.py'}, line 5: invalid syntax",
        "    cfg = = 3",
        "          ^",
    ]


def test_an_error_in_get_config_shows_the_config_files_line(user_code):
    result = kd_train(f"--cfg={user_code / 'name_error.py'}", cwd=user_code)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"error while loading the config {user_code / 'name_error.py'}: NameError: name 'undefined_name' "
        "is not defined"
    )
    assert f'  File "{user_code / "name_error.py"}", line 5, in get_config' in lines
    assert len(lines) <= 10


def test_a_nan_loss_stops_with_one_paragraph(tmp_path):
    result = kd_train(
        f"--cfg={ROOT / 'examples' / 'mlp_regression.py'}",
        "--cfg.optimizer=py::optax.sgd(1e30)",
        "--cfg.num_train_steps=50",
        "--cfg.log_metrics_every=10",
        f"--cfg.workdir={tmp_path / 'run'}",
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the loss is not finite" in errors[0] and "on_nonfinite_loss" in errors[0]


def test_the_small_slips_get_one_line_that_says_what_to_type():
    cases = {
        ("examples/digits.py",): "'examples/digits.py' is not a command; to train that config: "
        "kd-train --cfg=examples/digits.py",
        ("inspct", "--cfg=examples/digits.py"): "unknown command 'inspct'; did you mean 'inspect'?",
        ("--cfg=examples/mlp_regression.py", "--workdir=/tmp/x"): "--cfg.workdir=/tmp/x",
    }
    for args, expected in cases.items():
        result = kd_train(*args)
        assert result.returncode == 2, result.stderr
        assert expected in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
