"""SIGKILL a real training process at random steps and in the middle of checkpoint writes, rerun the same
command each time: the run ends with the parameters of an uninterrupted run, bit for bit, and logs that hold
each logged step exactly once (JSONL and TensorBoard), with the same values.

The config (resumable/config.py) exercises what a resume must restore: shuffled data resumed mid-epoch,
dropout's random numbers, batch norm statistics, adam's moments, a schedule, an evaluator.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import kd
import numpy as np
from run_logs import logged_step, rows, saved_steps
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

CONFIG = Path(__file__).resolve().parent / "resumable" / "config.py"
ROOT = Path(__file__).resolve().parents[2]
NUM_STEPS, LOG_EVERY, EVAL_EVERY = 480, 10, 40
KILLS = 6  # half at random steps, half while a checkpoint is being written
_TMP_MARK = ".orbax-checkpoint-tmp"


def _command(workdir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "kd",
        f"--cfg={CONFIG}",
        f"--cfg.workdir={workdir}",
        f"--cfg.num_train_steps={NUM_STEPS}",
    ]


def _start(workdir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    return subprocess.Popen(
        _command(workdir), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def _writing(workdir: Path) -> bool:
    try:
        return any(_TMP_MARK in name for name in os.listdir(workdir / "checkpoints"))
    except FileNotFoundError:
        return False


def _kill(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGKILL)
    _, stderr = process.communicate(timeout=60)
    return stderr


def _kill_at_step(workdir: Path, target: int) -> tuple[str, str]:
    """Runs until the log reaches `target`, then SIGKILL: `(what happened, stderr)`."""
    process = _start(workdir)
    deadline = time.monotonic() + 120
    # Also once a checkpoint is complete: killed before its first, a run leaves logs and nothing to resume,
    # and the rerun refuses to overwrite them (as it should).
    while (logged_step(workdir) < target or not saved_steps(workdir)) and process.poll() is None:
        assert time.monotonic() < deadline, "the run never reached the step"
        time.sleep(0.002)
    if process.poll() is not None:
        return "finished before the kill", process.communicate()[1]
    return f"killed at step ~{logged_step(workdir)}", _kill(process)


def _kill_while_writing(workdir: Path) -> tuple[str, str]:
    """Runs until a checkpoint save is in flight, then SIGKILL."""
    process = _start(workdir)
    deadline = time.monotonic() + 120
    while not (_writing(workdir) and saved_steps(workdir)) and process.poll() is None:
        assert time.monotonic() < deadline, "no checkpoint was ever written"
    if process.poll() is not None:
        return "finished before the kill", process.communicate()[1]
    stderr = _kill(process)
    landed = "mid-write" if _writing(workdir) else "just after a write"
    return f"killed {landed} near step {logged_step(workdir)}", stderr


def _final_state(workdir: Path):
    ckpt = kd.ckpts.Checkpointer(workdir=workdir, save_interval_steps=1)
    try:
        assert ckpt.latest_step == NUM_STEPS
        return ckpt.restore_raw(step=NUM_STEPS)
    finally:
        ckpt.close()


def _values(rows: list[dict], key: str) -> list[tuple[int, float]]:
    return [(r["step"], r[key]) for r in rows if key in r]


def _tensorboard(folder: Path, tag: str) -> list[tuple[int, float]]:
    events = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    events.Reload()
    return [(e.step, e.value) for e in events.Scalars(tag)]


def test_killed_anywhere_and_rerun_the_run_ends_as_if_never_interrupted(tmp_path):
    straight, interrupted = tmp_path / "straight", tmp_path / "interrupted"
    subprocess.run(_command(straight), cwd=ROOT, env={**os.environ, "JAX_PLATFORMS": "cpu"}, check=True,
                   capture_output=True, timeout=300)  # fmt: skip

    seed = int(os.environ.get("KD_KILL_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    history: list[str] = []
    warnings_seen: list[str] = []
    for kill in range(KILLS):
        if kill % 2:
            what, stderr = _kill_while_writing(interrupted)
        else:
            done = logged_step(interrupted)
            what, stderr = _kill_at_step(
                interrupted, rng.randint(done + 1, done + 1 + (NUM_STEPS - done) // 2)
            )
        history.append(what)
        warnings_seen += [line for line in stderr.splitlines() if line.startswith("warning: ")]
    last = subprocess.run(_command(interrupted), cwd=ROOT, env={**os.environ, "JAX_PLATFORMS": "cpu"},
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    warnings_seen += [line for line in last.stderr.splitlines() if line.startswith("warning: ")]
    story = f"(KD_KILL_SEED={seed}) " + "; ".join(history)
    assert last.returncode == 0, f"{story}\n{last.stderr}"
    assert sum(h.startswith("killed") for h in history) >= KILLS - 1, story
    mid_write = sum("mid-write" in h for h in history)
    assert mid_write >= 1, f"no kill landed while a checkpoint was being written: {story}"
    assert len([w for w in warnings_seen if "incomplete checkpoint" in w]) >= mid_write, story

    # The parameters, batch statistics and optimizer state of both runs are the same bits.
    expected, actual = _final_state(straight), _final_state(interrupted)
    assert jax.tree.structure(expected) == jax.tree.structure(actual)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e), err_msg=story)

    # Each logged step once, with the uninterrupted run's values (losses, schedule, evaluations).
    logged, straight_logged = rows(interrupted), rows(straight)
    train_steps = [1, *range(LOG_EVERY, NUM_STEPS + 1, LOG_EVERY)]
    assert [s for s, _ in _values(logged, "losses/l2")] == train_steps, story
    assert [s for s, _ in _values(logged, "eval/losses/l2")] == list(range(0, NUM_STEPS + 1, EVAL_EVERY)), (
        story
    )
    for key in ("losses/l2", "eval/losses/l2"):
        assert _values(logged, key) == _values(straight_logged, key), story

    # TensorBoard shows the same curve: what the killed runs wrote past their checkpoints is purged.
    curve = _tensorboard(interrupted / "train", "losses/l2")
    assert [s for s, _ in curve] == train_steps, story
    np.testing.assert_allclose([v for _, v in curve], [v for _, v in _values(logged, "losses/l2")], rtol=1e-6)
    assert [s for s, _ in _tensorboard(interrupted / "eval", "losses/l2")] == list(
        range(0, NUM_STEPS + 1, EVAL_EVERY)
    )
    assert (interrupted / "DONE").exists()
    print(story)
