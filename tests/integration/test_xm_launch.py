"""`kd-train launch --local` of a config whose `cfg.xm_job` (Kauldron's `kxm.Job`) asks for two processes:
both start, join by jax.distributed on localhost and train one run into one workdir.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The two-process test's model (tests/integration/test_multi_process.py), with Kauldron's job lines.
CONFIG = f"""
import konfig

with konfig.imports():
    from kd import kxm
    from kd.xm import xm


def get_config():
    cfg = konfig.load_config_module({str(REPO / "examples" / "mlp_regression.py")!r}).get_config()
    cfg.num_train_steps = 10
    cfg.log_metrics_every = 5
    cfg.xm_job = kxm.Job(platform="cpu", requirements=xm.JobRequirements(replicas=2))
    return cfg
"""


def test_launch_local_trains_one_run_with_the_two_processes_of_its_job(tmp_path):
    source = tmp_path / "two_processes.py"
    source.write_text(CONFIG)
    workdir = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "kd", "launch", f"--cfg={source}", f"--cfg.workdir={workdir}", "--local"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "launch: 2 process(es) on this machine (coordinator 127.0.0.1:" in result.stdout
    run = json.loads((workdir / "run.json").read_text())
    assert run["process_count"] == 2 and len(run["devices"]) == 2  # one device of each process
    assert "--num_processes=2" in run["argv"] and "--process_id=0" in run["argv"]
    steps = [json.loads(line)["step"] for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 5, 10]
    assert result.stdout.count("done: 10 steps") == 1  # process 0 alone reports
    assert (workdir / "DONE").exists()
