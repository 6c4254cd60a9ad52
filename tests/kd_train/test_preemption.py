"""SIGTERM, as schedulers preempt: the run finishes its step, checkpoints, says so, exits 143; rerun continues."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "mlp_regression.py")


def start(workdir: Path, *, checkpointer: bool = True) -> subprocess.Popen[str]:
    command = [
        sys.executable, "-m", "kd", f"--cfg={EXAMPLE}", f"--cfg.workdir={workdir}",
        "--cfg.num_train_steps=10000000", "--cfg.log_metrics_every=100",
    ]  # fmt: skip
    command.append(
        "--cfg.checkpointer=py::kd.ckpts.Checkpointer(save_interval_steps=10000000)"
        if checkpointer
        else "--cfg.checkpointer=None"  # opted out of the default checkpointer
    )
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def logged_steps(workdir: Path) -> list[int]:
    path = workdir / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["step"] for line in path.read_text().splitlines() if line.endswith("}")]


def preempt_after(
    process: subprocess.Popen[str], workdir: Path, step: int, signum: int = signal.SIGTERM
) -> tuple[int, str]:
    deadline = time.monotonic() + 300
    while max(logged_steps(workdir), default=0) < step:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never reached the step"
        time.sleep(0.2)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=300)
    process.stdout_text = stdout  # type: ignore[attr-defined]  # for the tests that read it
    return process.returncode, stderr


def test_sigterm_checkpoints_the_current_step_and_the_rerun_continues_from_it(tmp_path):
    code, stderr = preempt_after(start(tmp_path), tmp_path, 300)
    assert code == 143, stderr
    line = next(x for x in stderr.splitlines() if x.startswith("preempted (SIGTERM) at step "))
    stopped = int(line.split()[4])
    assert stopped >= 300 and "run the same command again" in line
    assert (tmp_path / "checkpoints").is_dir() and not (tmp_path / "DONE").exists()
    before = logged_steps(tmp_path)

    code, _ = preempt_after(start(tmp_path), tmp_path, max(before) + 200)
    assert code == 143
    after = logged_steps(tmp_path)[len(before) :]
    assert after and min(after) > stopped  # resumed from the checkpoint, not from step 0
    assert len(set(after)) == len(after)


def test_sigterm_without_a_checkpointer_says_that_nothing_was_saved(tmp_path):
    code, stderr = preempt_after(start(tmp_path, checkpointer=False), tmp_path, 200)
    assert code == 143, stderr
    line = next(x for x in stderr.splitlines() if x.startswith("preempted (SIGTERM) at step "))
    assert "nothing was saved" in line and "checkpointed" not in line, line
    assert not (tmp_path / "checkpoints").exists()


def test_ctrl_c_checkpoints_the_current_step_says_so_in_one_line_and_exits_130(tmp_path):
    code, stderr = preempt_after(start(tmp_path), tmp_path, 300, signal.SIGINT)
    assert code == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted (Ctrl-C) at step "), stderr
    stopped = int(lines[0].split()[4])
    assert "the state is checkpointed" in lines[0] and stopped >= 300
    assert (tmp_path / "checkpoints").is_dir() and not (tmp_path / "DONE").exists()
    before = logged_steps(tmp_path)

    rerun = start(tmp_path)
    code, _ = preempt_after(rerun, tmp_path, max(before) + 100)
    assert code == 143
    after = logged_steps(tmp_path)[len(before) :]
    assert after and min(after) > stopped  # resumed from the Ctrl-C's checkpoint
    assert (
        f"resuming from step {stopped} ({tmp_path / 'checkpoints' / f'ckpt_{stopped}'})" in rerun.stdout_text
    )


def test_a_second_ctrl_c_stops_at_once_in_one_line(tmp_path):
    process = start(tmp_path)
    deadline = time.monotonic() + 300
    while max(logged_steps(tmp_path), default=0) < 200:
        assert process.poll() is None and time.monotonic() < deadline, "the run never reached step 200"
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGINT)  # before the first one's call has ended
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted (Ctrl-C)"), stderr
    assert "Traceback" not in stderr
