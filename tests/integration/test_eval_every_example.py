"""`kd-train eval` works on an unedited run of every example with no extra flag: the run is this user's own
(its run.json is signed), so its recorded imports, the modules beside the config among them
(`digits_data`, `digits_models`), and the config's folder are trusted as they were for training, in
konfig's safe mode (declared surfaces, the audit hook). The same run handed to another user (another
signing key) is foreign: the example's own modules are left out and said so, until that user trusts them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"

# Each example, shortened: 2 steps, evaluated on 1 batch (the ViT as Ti/16: the policy, not its size, is tested).
EXAMPLES = {
    "mlp_regression": [],
    "digits": ["--cfg.evals.test.num_batches=1"],
    "nnx_digits": ["--cfg.evals.test.num_batches=1"],
    "digits_grain": ["--cfg.evals.test.num_batches=1"],
    "digits_vit": [
        "--cfg.evals.test.num_batches=1",
        '--cfg.model.encoder=py::kd.nn.VitEncoder.from_variant_str("Ti/16")',
    ],
    "digits_autoencoder": ["--cfg.evals.eval.num_batches=1"],
}


def kd_train(*args: str, key: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KD_TRAIN, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "JAX_PLATFORMS": "cpu", "KD_RUN_KEY_FILE": str(key), **env},
        timeout=600,
    )


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("keys") / "run_key"  # made by the first run


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_eval_of_an_unedited_run_of_each_example_needs_no_flag(example, key, tmp_path):
    workdir = tmp_path / "run"
    trained = kd_train(
        f"--cfg=examples/{example}.py", f"--cfg.workdir={workdir}", "--cfg.num_train_steps=2", *EXAMPLES[example], key=key
    )
    assert trained.returncode == 0, trained.stdout[-2000:] + trained.stderr[-3000:]
    if example == "mlp_regression":  # no evaluators: what eval would resolve, inspect resolves the same way
        result = kd_train("inspect", f"--cfg={workdir / 'config.json'}", key=key)
    else:
        result = kd_train("eval", f"--workdir={workdir}", "--no-follow", key=key)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "in safe mode" in result.stdout and "this user's own run (signed)" in result.stdout, result.stdout


def test_the_same_run_for_another_user_is_foreign_until_they_trust_its_modules(key, tmp_path):
    workdir = tmp_path / "run"
    trained = kd_train(
        "--cfg=examples/digits.py", f"--cfg.workdir={workdir}", "--cfg.num_train_steps=2",
        "--cfg.evals.test.num_batches=1", key=key,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    other_key = tmp_path / "other_user_key"

    foreign = kd_train("eval", f"--workdir={workdir}", "--no-follow", key=other_key)

    assert foreign.returncode == 2, foreign.stdout[-2000:] + foreign.stderr[-2000:]
    assert "not signed by this user's kd-train" in foreign.stdout
    assert "left out: digits_data, digits_models (trust one with --allowed=NAME)" in foreign.stdout
    assert "digits_data" in foreign.stderr and "Traceback" not in foreign.stderr, foreign.stderr

    trusted = kd_train(
        "eval", f"--workdir={workdir}", "--no-follow", "--allowed=digits_data,digits_models",
        key=other_key, PYTHONPATH=str(REPO / "examples"),
    )
    assert trusted.returncode == 0, trusted.stdout[-2000:] + trusted.stderr[-3000:]
