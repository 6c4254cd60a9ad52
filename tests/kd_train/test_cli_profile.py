"""`kd-train --profile`: the run is traced and still writes its config.json (which resume and eval read)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


def test_profile_keeps_the_config_json(tmp_path) -> None:
    workdir = tmp_path / "run"
    proc = subprocess.run(
        [KD_TRAIN, f"--cfg={ROOT / 'examples' / 'mlp_regression.py'}", "--cfg.num_train_steps=5",
         f"--cfg.workdir={workdir}", "--profile"],
        capture_output=True, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"}, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    saved = json.loads((workdir / "config.json").read_text())
    assert saved["num_train_steps"] == 5 and saved["__qualname__"] == "kd.train:Trainer"
