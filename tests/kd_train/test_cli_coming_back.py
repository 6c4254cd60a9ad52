"""`kd-train` coming back to a run: resume by default, a finished run said, logs never overwritten without
`--force`, TensorBoard files by default, `inspect` on any config, `eval` from any directory. Real
subprocesses of the console script, real orbax checkpoints, real event files read back with TensorBoard's
own reader, a real SIGKILL.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "mlp_regression.py")
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"
ENV = {**{k: v for k, v in os.environ.items() if k != "KD_TRACEBACK"}, "JAX_PLATFORMS": "cpu"}


def kd_train(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KD_TRAIN, *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=600)


def short_run(workdir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return kd_train(
        f"--cfg={EXAMPLE}",
        "--cfg.num_train_steps=60",
        "--cfg.log_metrics_every=20",
        f"--cfg.workdir={workdir}",
        *extra,
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A finished default run (no checkpointer named in its config)."""
    workdir = tmp_path_factory.mktemp("finished") / "run"
    result = short_run(workdir)
    assert result.returncode == 0, result.stderr
    return workdir, result


def test_a_run_with_a_workdir_checkpoints_by_default(finished):
    workdir, _ = finished
    assert sorted(p.name for p in (workdir / "checkpoints").iterdir()) == ["ckpt_60"]  # the last step


def test_event_files_are_written_by_default_and_read_back(finished):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    workdir, _ = finished
    events = EventAccumulator(str(workdir / "train"))
    events.Reload()
    logged = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    assert [e.step for e in events.Scalars("losses/l2")] == [row["step"] for row in logged] == [1, 20, 40, 60]
    assert [e.value for e in events.Scalars("losses/l2")] == pytest.approx(
        [row["losses/l2"] for row in logged]
    )
    assert "losses/total" not in events.Tags()["scalars"]  # one loss is its own total


def test_the_terminal_lines_fit_100_columns_and_name_the_loss(finished):
    _, result = finished
    lines = result.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines), lines
    lines = [line for line in lines if not line.startswith(("fused steps: ", "single steps ("))]  # the measured way
    assert lines[1].startswith("step 20 | l2 ") and "step/s" in lines[1] and "losses/total" not in lines[1]
    assert lines[-1].startswith("done: 60 steps in ") and "compiling" in lines[-1] and "l2 " in lines[-1]


def test_rerunning_a_finished_run_says_so_and_changes_nothing(finished):
    workdir, _ = finished
    before = (workdir / "metrics.jsonl").read_bytes()
    result = short_run(workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"run already complete at step 60 ({workdir}): nothing to do; --force starts it over (the old "
        "files are kept under previous/)"
    ]
    assert (workdir / "metrics.jsonl").read_bytes() == before


def test_force_starts_a_finished_run_over_and_keeps_the_old_files(tmp_path):
    workdir = tmp_path / "run"
    assert short_run(workdir).returncode == 0
    before = (workdir / "metrics.jsonl").read_bytes()
    result = short_run(workdir, "--force")
    assert result.returncode == 0, result.stderr
    (kept,) = (workdir / "previous").iterdir()
    assert result.stdout.splitlines()[0] == f"--force: the earlier run's files moved to {kept}; starting over"
    assert (kept / "metrics.jsonl").read_bytes() == before and (kept / "checkpoints" / "ckpt_60").is_dir()
    assert "resuming" not in result.stdout and (workdir / "DONE").exists()


def test_logs_without_a_checkpoint_are_never_overwritten_without_force(tmp_path):
    workdir = tmp_path / "run"
    assert short_run(workdir, "--cfg.checkpointer=None").returncode == 0
    assert not (workdir / "checkpoints").exists()
    before = (workdir / "metrics.jsonl").read_bytes()
    refused = short_run(workdir, "--cfg.checkpointer=None")
    assert refused.returncode == 2
    assert "holds the logs of a run (metrics.jsonl up to step 60) but no checkpoint" in refused.stderr
    assert "--force" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert (workdir / "metrics.jsonl").read_bytes() == before
    forced = short_run(workdir, "--cfg.checkpointer=None", "--force")
    assert forced.returncode == 0, forced.stderr
    (kept,) = (workdir / "previous").iterdir()
    assert (kept / "metrics.jsonl").read_bytes() == before


def _logged_steps(workdir: Path) -> list[int]:
    path = workdir / "metrics.jsonl"
    text = path.read_text() if path.exists() else ""
    return [json.loads(line)["step"] for line in text.splitlines() if line.endswith("}")]


def test_a_killed_run_resumes_from_its_default_checkpoint_and_says_so(tmp_path):
    workdir = tmp_path / "run"
    command = [
        KD_TRAIN,
        f"--cfg={EXAMPLE}",
        f"--cfg.workdir={workdir}",
        "--cfg.num_train_steps=1000000",
        "--cfg.log_metrics_every=1000",
    ]  # fmt: skip  (the default checkpointer saves every 10,000 steps here)
    process = subprocess.Popen(command, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not (workdir / "checkpoints" / "ckpt_10000").is_dir():  # complete (renamed from its temporary name)
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no checkpoint of step 10000 appeared"
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    saved = sorted(int(p.name[5:]) for p in (workdir / "checkpoints").iterdir() if p.name[5:].isdigit())
    stop = saved[-1] + 2000

    result = kd_train(*command[1:], f"--cfg.stop_after_steps={stop}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"resuming from step {saved[-1]} ({workdir / 'checkpoints' / f'ckpt_{saved[-1]}'})"
    assert lines[-1].startswith(f"done: {stop} steps in ")
    steps = _logged_steps(workdir)
    assert steps == sorted(set(steps)) and steps[-1] == stop  # the rows after the checkpoint written once
    assert "Traceback" not in result.stderr and "warnings.warn" not in result.stderr


def test_an_interrupted_save_is_one_warning_line(tmp_path):
    workdir = tmp_path / "run"
    assert short_run(workdir, "--cfg.num_train_steps=40", "--cfg.stop_after_steps=20").returncode == 0
    (workdir / "checkpoints" / "ckpt_30.orbax-checkpoint-tmp-1234").mkdir()  # what a kill mid-save leaves
    result = short_run(workdir, "--cfg.num_train_steps=40")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("warning: Ignoring the incomplete checkpoint "), (
        warnings
    )
    assert result.stdout.splitlines()[0].startswith("resuming from step 20 ")


def test_inspect_works_on_a_config_with_a_checkpointer_and_touches_no_workdir(tmp_path):
    workdir = tmp_path / "never"
    result = kd_train("inspect", "--cfg=examples/digits_autoencoder.py", f"--cfg.workdir={workdir}")
    assert result.returncode == 0, result.stderr
    assert "Total" in result.stdout and "1 devices" not in result.stdout
    assert not workdir.exists()


def test_eval_works_from_any_directory(tmp_path):
    workdir = tmp_path / "run"
    trained = kd_train(
        "--cfg=examples/digits.py",  # relative, from the repository, as the README runs it
        "--cfg.num_train_steps=20",
        "--cfg.log_metrics_every=10",
        f"--cfg.workdir={workdir}",
    )
    assert trained.returncode == 0, trained.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = kd_train("eval", f"--workdir={workdir}", "--poll_seconds=0", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert "checkpoint(s) evaluated (steps 20)" in result.stdout
    assert (workdir / "eval_metrics.jsonl").read_text().strip()
