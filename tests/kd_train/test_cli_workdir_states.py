"""`kd-train` recovers from every state a workdir can be left in, by itself: nothing lost, one line said.

Each test copies one tiny run stopped at step 20 of 40 (checkpoints at 10 and 20), puts its workdir in a state
(a stray `ckpt_99999`, a first save cut by SIGKILL, a newest checkpoint emptied or missing its metadata, a
truncated array file, a model of other shapes, a full disk), and runs the same command through the real
console script: the exit code, the one line, what was set aside, and that the run continues or starts over.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_cli_coming_back import EXAMPLE, kd_train
from test_cli_operational_errors import tmpfs  # noqa: F401  (the fixture: a real full disk, a tmpfs)

COMMAND = (
    f"--cfg={EXAMPLE}",
    "--cfg.num_train_steps=40",
    "--cfg.log_metrics_every=10",
    "--cfg.checkpointer=py::kd.ckpts.Checkpointer(save_interval_steps=10)",
)


def train(workdir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return kd_train(*COMMAND, f"--cfg.workdir={workdir}", *extra)


def logged(workdir: Path) -> dict[int, float]:
    """step -> the loss logged at it."""
    lines = (workdir / "metrics.jsonl").read_text().splitlines()
    return {row["step"]: row["losses/l2"] for row in map(json.loads, lines)}


def said(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """(a run stopped at step 20 of 40, an uninterrupted run of the 40 steps)."""
    folder = tmp_path_factory.mktemp("runs")
    stopped, whole = folder / "stopped", folder / "whole"
    for workdir, extra in ((stopped, ("--cfg.stop_after_steps=20",)), (whole, ())):
        result = train(workdir, *extra)
        assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (stopped / "checkpoints").iterdir()) == ["ckpt_10", "ckpt_20"]
    return stopped, whole


@pytest.fixture
def run(runs, tmp_path) -> Path:
    """A copy of the run stopped at step 20 of 40, this test's to change."""
    workdir = tmp_path / "run"
    shutil.copytree(runs[0], workdir)
    return workdir


def assert_continued_from(result: subprocess.CompletedProcess[str], run: Path, step: int) -> None:
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"resuming from step {step} ({run / 'checkpoints' / f'ckpt_{step}'})"
    assert lines[-1].startswith("done: 40 steps in ") and (run / "DONE").is_file()


def test_a_step_folder_that_is_no_checkpoint_is_set_aside_and_the_run_continues_from_the_real_one(run):
    (run / "checkpoints" / "ckpt_99999").mkdir()

    result = train(run)

    assert_continued_from(result, run, 20)
    kept = run / "checkpoints.unreadable" / "ckpt_99999"
    assert said(result) == [
        f"warning: Step 99999: The checkpoint {run / 'checkpoints' / 'ckpt_99999'} cannot be read: it holds no "
        f"saved item (an empty folder, not a complete checkpoint). It was moved to {kept}; restoring the "
        "checkpoint before it instead."
    ]
    assert kept.is_dir() and not (run / "checkpoints" / "ckpt_99999").exists()


def test_a_run_killed_during_its_first_save_starts_over_by_itself_and_keeps_its_files(run):
    checkpoints = run / "checkpoints"
    shutil.rmtree(checkpoints / "ckpt_20")
    # What orbax leaves when the process dies while writing step 10: its temporary folder, never renamed.
    partial = checkpoints / "ckpt_10.orbax-checkpoint-tmp"
    (checkpoints / "ckpt_10").rename(partial)
    (partial / "_CHECKPOINT_METADATA").unlink()
    (partial / "commit_success.txt").unlink()
    rows = (run / "metrics.jsonl").read_text().splitlines(keepends=True)[:2]  # steps 1 and 10
    (run / "metrics.jsonl").write_text("".join(rows))

    result = train(run)

    assert result.returncode == 0, result.stderr
    (kept,) = (run / "previous").iterdir()
    assert result.stdout.splitlines()[0] == (
        "no checkpoint of the earlier run survived (it logged up to step 10, then stopped before its first save "
        f"completed): its files moved to {kept}; starting over"
    )
    assert said(result) == []
    assert (kept / "metrics.jsonl").read_text() == "".join(rows)
    assert (kept / "checkpoints" / partial.name / "state").is_dir()  # the partial save, kept as it was
    assert "resuming" not in result.stdout and (run / "DONE").is_file()
    assert sorted(logged(run)) == [1, 10, 20, 30, 40]


@pytest.mark.parametrize("damage", ["state/_METADATA deleted", "folder emptied"])
def test_a_newest_checkpoint_that_cannot_be_read_is_set_aside_and_the_run_continues_from_the_one_before(
    run, damage
):
    newest = run / "checkpoints" / "ckpt_20"
    if damage == "state/_METADATA deleted":
        (newest / "state" / "_METADATA").unlink()
        why = "its file state/_METADATA (the saved tree's description) is missing"
    else:
        for entry in newest.iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        why = "it holds no saved item (an empty folder, not a complete checkpoint)"

    result = train(run)

    assert_continued_from(result, run, 10)
    kept = run / "checkpoints.unreadable" / "ckpt_20"
    assert said(result) == [
        f"warning: Step 20: The checkpoint {newest} cannot be read: {why}. It was moved to {kept}; restoring "
        "the checkpoint before it instead."
    ]
    assert kept.is_dir()


def test_a_truncated_array_file_is_one_line_and_the_run_continues_bit_identically(run, runs):
    arrays = sorted((run / "checkpoints" / "ckpt_20" / "state").glob("ocdbt.process_0/d/*"))
    largest = max(arrays, key=lambda p: p.stat().st_size)
    data = largest.read_bytes()
    largest.write_bytes(data[: len(data) // 3])

    result = train(run)

    assert_continued_from(result, run, 10)
    (line,) = said(result)
    kept = run / "checkpoints.unreadable" / "ckpt_20"
    assert line.startswith(
        f"warning: Step 20: The checkpoint {run / 'checkpoints' / 'ckpt_20'} cannot be read"
    )
    assert line.endswith(f"It was moved to {kept}; restoring the checkpoint before it instead.")
    assert kept.is_dir() and "Traceback" not in result.stderr
    assert logged(run) == logged(runs[1])  # the same losses, bit for bit, as the run never interrupted


def test_force_with_a_model_of_other_shapes_is_one_paragraph_naming_the_parameter(run):
    before = sorted(p.name for p in (run / "checkpoints").iterdir())

    result = train(run, "--cfg.model.model.layers[0].features=16", "--force")

    assert result.returncode == 2, result.stderr
    (line,) = said(result)
    assert line.startswith(f"error: the run in {run} cannot continue with this config: ")
    assert (
        "'params.model.layers_0.bias' has shape (16,) float32 in this config's model but (32,) float32 in the "
        "checkpoint" in line
    )
    assert "another --cfg.workdir" in line and "Traceback" not in result.stderr
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == before  # nothing set aside or lost
    assert not (run / "checkpoints.unreadable").exists()


def test_disk_full_names_the_last_logged_step_and_the_same_command_continues(tmpfs):  # noqa: F811
    workdir = tmpfs("size=200k") / "run"  # room for the first checkpoints of the example's MLP only
    args = (
        f"--cfg={EXAMPLE}",
        "--cfg.num_train_steps=300",
        "--cfg.log_metrics_every=10",
        "--cfg.checkpointer=py::kd.ckpts.Checkpointer(save_interval_steps=20)",
        f"--cfg.workdir={workdir}",
    )

    full = kd_train(*args)

    assert full.returncode == 1, full.stderr
    (line,) = said(full)
    last = max(logged(workdir))
    assert last >= 20 and f"The run stopped after step {last}; " in line, line
    assert "no space left on device" in line and "checkpoints up to step 20 are intact" in line
    tmpfs("size=50m")  # space freed: the same command continues the run
    resumed = kd_train(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines()[-1].startswith("done: 300 steps") and (workdir / "DONE").is_file()
