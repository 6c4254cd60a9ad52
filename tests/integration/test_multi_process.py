"""Two real processes on localhost train one run together (`jax.distributed` over loopback, gloo between
the CPU processes): they resume a one-device run's checkpoint, checkpoint it into the shared workdir, and a
single process with another device count finishes it, every logged loss that of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STEPS = 30
ARGS = [
    "--cfg=examples/mlp_regression.py",
    f"--cfg.num_train_steps={STEPS}",
    "--cfg.log_metrics_every=5",
    "--cfg.checkpointer=py::kd.ckpts.Checkpointer(save_interval_steps=10)",
]


def _env(devices: int) -> dict[str, str]:
    return {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _losses(workdir: Path) -> dict[int, float]:
    rows = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    steps = [row["step"] for row in rows]
    assert len(steps) == len(set(steps)), f"a step was logged twice: {steps}"
    return {row["step"]: row["losses/l2"] for row in rows}


def _train(workdir: Path, *extra: str, devices: int = 1) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kd", *ARGS, f"--cfg.workdir={workdir}", *extra],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=_env(devices),
        timeout=300,
    )


def _two_processes(workdir: Path, *extra: str) -> list[tuple[str, str]]:
    port = _free_port()
    hosts = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kd",
                *ARGS,
                f"--cfg.workdir={workdir}",
                *extra,
                f"--coordinator_address=127.0.0.1:{port}",
                "--num_processes=2",
                f"--process_id={i}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=_env(2),
        )
        for i in range(2)
    ]
    outputs = []
    try:
        for host in hosts:
            outputs.append(host.communicate(timeout=240))
    finally:
        for host in hosts:
            host.kill()
    for host, (_, err) in zip(hosts, outputs, strict=True):
        assert host.returncode == 0, err[-3000:]
    return outputs


def test_two_processes_resume_a_run_checkpoint_it_and_one_process_finishes_it(tmp_path):
    reference = _train(tmp_path / "reference")
    assert reference.returncode == 0, reference.stderr[-3000:]
    expected = _losses(tmp_path / "reference")

    workdir = tmp_path / "run"
    first = _train(workdir, "--cfg.stop_after_steps=10")  # one process, one device
    assert first.returncode == 0, first.stderr[-3000:]
    checkpoints = workdir / "checkpoints"
    # A save that a killed job left half-written: the hosts must agree to ignore it and one removes it.
    shutil.copytree(checkpoints / "ckpt_10", checkpoints / "ckpt_20.orbax-checkpoint-tmp-1")

    (out0, err0), (out1, err1) = _two_processes(workdir, "--cfg.stop_after_steps=20")
    assert "Ignoring the incomplete checkpoint" in err0 and "Ignoring the incomplete checkpoint" in err1
    assert "step 20 |" in out0 and "done: 20 steps" in out0  # process 0 logs ...
    assert "step 20 |" not in out1 and "done:" not in out1  # ... and only process 0
    assert sorted(p.name for p in checkpoints.iterdir()) == ["ckpt_10", "ckpt_20"]
    together = _losses(workdir)
    assert sorted(together) == [1, 5, 10, 15, 20]  # 15 and 20 from 2 hosts x 2 devices, half a batch each
    for step, loss in together.items():
        assert loss == pytest.approx(expected[step], rel=1e-4, abs=1e-6), step

    last = _train(workdir, devices=1)  # one process again: the checkpoint of four devices laid out anew
    assert last.returncode == 0, last.stderr[-3000:]
    final = _losses(workdir)
    assert sorted(final) == [1, 5, 10, 15, 20, 25, 30]
    for step in (25, 30):
        assert final[step] == pytest.approx(expected[step], rel=1e-4, abs=1e-6), step
