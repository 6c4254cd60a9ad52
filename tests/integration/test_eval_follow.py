"""`kd-train eval --follow` beside a real `kd-train` training process: the evaluator takes each checkpoint
as the training writes it (asynchronous orbax saves, their temporary folders in flight while it polls),
its `StandaloneLastCheckpoint` evaluator the final one once the run is done, and the values are those of
an evaluation of the same checkpoint in this process.

The training's data waits, at one batch, for the evaluator's row of the first checkpoint: a checkpoint
provably evaluated while the training was running, with no timing in the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import konfig
import pytest

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"
NUM_STEPS, SAVE_EVERY = 24, 4
STEPS = list(range(SAVE_EVERY, NUM_STEPS + 1, SAVE_EVERY))  # 4, 8, ..., 24

# A module beside the config, as a user's would be (`kd-train eval` finds it as the training did).
DATA_MODULE = """
import dataclasses, itertools, json, os, time

import jax
import numpy as np


def _rows(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.endswith("}\\n")]
    except FileNotFoundError:
        return []


@dataclasses.dataclass(frozen=True, kw_only=True)
class WaitsForTheEvaluator:
    \"\"\"Regression batches, `seconds_per_batch` each; batch `hold_at` is given only once `eval_file` has
    a row of step `eval_step`, and the rows seen then go to `seen_file`.\"\"\"

    batch_size: int = 8
    seconds_per_batch: float = 0.0
    eval_file: str | None = None
    eval_step: int = 0
    hold_at: int = 0
    seen_file: str | None = None

    @property
    def element_spec(self):
        return {
            "x": jax.ShapeDtypeStruct((self.batch_size, 2), np.float32),
            "y": jax.ShapeDtypeStruct((self.batch_size, 1), np.float32),
        }

    def __iter__(self):
        for index in itertools.count():
            if self.eval_file is not None and index == self.hold_at:
                while not any(row.get("step") == self.eval_step for row in _rows(self.eval_file)):
                    time.sleep(0.05)
                with open(self.seen_file, "w") as f:
                    json.dump(_rows(self.eval_file), f)
            time.sleep(self.seconds_per_batch)
            rng = np.random.default_rng([0, index % 4])
            x = rng.uniform(-1, 1, (self.batch_size, 2)).astype(np.float32)
            yield {"x": x, "y": (0.5 * x[:, :1] - x[:, 1:]).astype(np.float32)}
"""

CONFIG_MODULE = f"""
import konfig

with konfig.imports():
    import follow_data
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = {NUM_STEPS}
    cfg.log_metrics_every = {SAVE_EVERY}
    # Batch 8 (step 9, the save of step 4 long started) waits for the evaluator's row of step 4.
    cfg.train_ds = follow_data.WaitsForTheEvaluator(seconds_per_batch=0.05, eval_step={SAVE_EVERY}, hold_at=8)
    cfg.eval_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=64, seed=1), batch_size=8)
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x")
    cfg.optimizer = optax.adam(learning_rate=1e-2)
    cfg.train_losses = {{"l2": kd.losses.L2(preds="preds", targets="batch.y")}}
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps={SAVE_EVERY}, max_to_keep=None)
    cfg.evals = {{
        "every": kd.evals.Evaluator(run=kd.evals.StandaloneEveryCheckpoint(), num_batches=2),
        "last": kd.evals.Evaluator(run=kd.evals.StandaloneLastCheckpoint(), num_batches=2),
    }}
    return cfg
"""


def _env() -> dict[str, str]:
    return {**os.environ, "JAX_PLATFORMS": "cpu"}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _wait_for(condition, limit: float = 300.0) -> None:
    """Polls `condition` (a safety limit against a hang, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def followed_run(tmp_path_factory) -> dict:
    """A training process and, beside it, `kd-train eval --follow` on its workdir; both run to the end."""
    folder = tmp_path_factory.mktemp("follow")
    (folder / "follow_data.py").write_text(DATA_MODULE)
    (folder / "follow_cfg.py").write_text(CONFIG_MODULE)
    workdir, seen = folder / "run", folder / "seen_by_training.json"
    training = subprocess.Popen(
        [
            KD_TRAIN,
            f"--cfg={folder / 'follow_cfg.py'}",
            f"--cfg.workdir={workdir}",
            f"--cfg.train_ds.eval_file={workdir / 'eval_metrics.jsonl'}",
            f"--cfg.train_ds.seen_file={seen}",
        ],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    evaluation = None
    try:
        # run.json (written after config.json) names the config file, whose folder holds follow_data.
        _wait_for(lambda: (workdir / "run.json").exists() or training.poll() is not None)
        evaluation = subprocess.Popen(
            [
                KD_TRAIN,
                "eval",
                f"--workdir={workdir}",
                "--follow",
                "--poll_seconds=0.2",
                "--timeout_seconds=300",
            ],
            cwd=ROOT,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _, training_err = training.communicate(timeout=600)
        out, err = evaluation.communicate(timeout=600)
    finally:
        for process in (training, evaluation):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    return {
        "folder": folder,
        "workdir": workdir,
        "seen": seen,
        "training": (training.returncode, training_err),
        "evaluation": (evaluation.returncode, out, err),
    }


def test_training_and_the_following_evaluator_both_finish_with_exit_0(followed_run):
    code, err = followed_run["training"]
    assert code == 0, err
    code, out, err = followed_run["evaluation"]
    assert code == 0, err
    assert f"{len(STEPS)} checkpoint(s) evaluated (steps {', '.join(map(str, STEPS))})" in out


def test_each_checkpoint_is_evaluated_once_and_the_last_one_by_the_last_checkpoint_evaluator(followed_run):
    rows = _rows(followed_run["workdir"] / "eval_metrics.jsonl")
    every = [row["step"] for row in rows if "every/losses/l2" in row]
    last = [row["step"] for row in rows if "last/losses/l2" in row]
    folders = (followed_run["workdir"] / "checkpoints").glob("ckpt_*")
    saved = sorted(int(p.name.split("_")[1]) for p in folders if "tmp" not in p.name)
    assert every == saved == STEPS
    assert last == [NUM_STEPS]


def test_a_checkpoint_was_evaluated_while_the_training_was_still_running(followed_run):
    # The training could not pass batch 8, so could not finish, before the evaluator wrote the row of step 4.
    seen_by_training = [row["step"] for row in json.loads(followed_run["seen"].read_text())]
    assert SAVE_EVERY in seen_by_training
    assert NUM_STEPS not in seen_by_training and (followed_run["workdir"] / "DONE").exists()


def test_the_values_equal_an_evaluation_of_the_same_checkpoint_in_this_process(followed_run, monkeypatch):
    monkeypatch.syspath_prepend(str(followed_run["folder"]))  # follow_data, as the training imported it
    workdir = followed_run["workdir"]
    trainer = konfig.resolve(konfig.from_json((workdir / "config.json").read_text()))
    rows = _rows(workdir / "eval_metrics.jsonl")
    with contextlib.closing(trainer.checkpointer):  # closed: an open Checkpointer keeps orbax's logs quiet
        _compare_each_checkpoint(trainer, rows)


def _compare_each_checkpoint(trainer, rows):
    for name, step in [*(("every", s) for s in STEPS), ("last", NUM_STEPS)]:
        restored, _ = trainer.checkpointer.restore(trainer.state_specs, step=step)
        expected = trainer.evals[name].evaluate(restored, step)
        (row,) = [r for r in rows if r["step"] == step and f"{name}/losses/l2" in r]
        got = {key: row[key] for key in row if key.startswith(f"{name}/")}
        assert got == {f"{name}/{k}": pytest.approx(float(v), rel=1e-6) for k, v in expected.items()}
