"""The grain example (examples/digits_grain.py: a weighted mixture, random crops, transforms per example)
SIGKILLed at random steps and rerun ends with the parameters of an uninterrupted run, bit for bit: the
mixture's order, each example's augmentation and grain's iterator position all come back from the checkpoint.
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

ROOT = Path(__file__).resolve().parents[2]
NUM_STEPS, LOG_EVERY, SAVE_EVERY = 240, 10, 40


def _command(workdir: Path) -> list[str]:
    return [
        sys.executable, "-m", "kd", "--cfg=examples/digits_grain.py", f"--cfg.workdir={workdir}",
        f"--cfg.num_train_steps={NUM_STEPS}", f"--cfg.log_metrics_every={LOG_EVERY}",
        f"--cfg.checkpointer.save_interval_steps={SAVE_EVERY}", "--cfg.evals.test.run.n=120",
    ]  # fmt: skip


def _env() -> dict[str, str]:
    return {**os.environ, "JAX_PLATFORMS": "cpu"}


def _final_state(workdir: Path):
    ckpt = kd.ckpts.Checkpointer(workdir=workdir, save_interval_steps=1)
    try:
        assert ckpt.latest_step == NUM_STEPS
        return ckpt.restore_raw(step=NUM_STEPS)
    finally:
        ckpt.close()


def test_the_grain_example_killed_and_rerun_ends_as_if_never_interrupted(tmp_path):
    straight, interrupted = tmp_path / "straight", tmp_path / "interrupted"
    subprocess.run(_command(straight), cwd=ROOT, env=_env(), check=True, capture_output=True, timeout=600)

    seed = int(os.environ.get("KD_KILL_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    history = []
    for _ in range(2):
        done, saved_before = logged_step(interrupted), saved_steps(interrupted)
        target = rng.randint(done + 1, done + 2 * SAVE_EVERY)
        process = subprocess.Popen(
            _command(interrupted), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 300
        # Killed at the random step, once this run has saved a checkpoint of its own (it resumes from one).
        while (
            logged_step(interrupted) < target or saved_steps(interrupted)[-1:] == saved_before[-1:]
        ) and process.poll() is None:
            assert time.monotonic() < deadline, "the run never reached the step"
            time.sleep(0.005)
        assert process.poll() is None, process.communicate()[1].decode()
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
        history.append(logged_step(interrupted))
    story = f"(KD_KILL_SEED={seed}) killed at logged steps {history}"
    last = subprocess.run(
        _command(interrupted), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600
    )
    assert last.returncode == 0, f"{story}\n{last.stderr}"
    assert "resum" in last.stderr + last.stdout, story  # it did continue from a checkpoint

    expected, actual = _final_state(straight), _final_state(interrupted)
    assert jax.tree.structure(expected) == jax.tree.structure(actual), story
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e), err_msg=story)

    logged = {r["step"]: r["losses/xent"] for r in rows(interrupted) if "losses/xent" in r}
    straight_logged = {r["step"]: r["losses/xent"] for r in rows(straight) if "losses/xent" in r}
    assert logged == straight_logged, story
    assert sorted(logged) == [1, *range(LOG_EVERY, NUM_STEPS + 1, LOG_EVERY)], story
    # It learns: the held-out digits after 240 steps (chance is 0.1).
    final_eval = [r for r in rows(straight) if "test/metrics/accuracy" in r][-1]
    assert final_eval["step"] == NUM_STEPS and final_eval["test/metrics/accuracy"] > 0.9, final_eval
