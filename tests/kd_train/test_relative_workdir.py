"""`kd-train --cfg.workdir=runs/a`: a relative workdir (orbax takes only absolute checkpoint paths)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


def test_a_relative_workdir_checkpoints_under_the_current_directory(tmp_path) -> None:
    config = ROOT / "examples" / "mlp_regression.py"
    args = [KD_TRAIN, f"--cfg={config}", "--cfg.num_train_steps=20", "--cfg.workdir=runs/a"]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        args, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "runs" / "a" / "checkpoints" / "ckpt_20").is_dir()
    again = subprocess.run(
        args, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600, check=False
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert (
        "already complete at step 20" in again.stdout + again.stderr
    )  # found its checkpoint by the relative path
