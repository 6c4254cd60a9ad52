"""`kd-train eval` / `kd.evals.evaluate_checkpoints`: a run's evaluators on each of its checkpoints, in a
process of its own, after the training or alongside it (real subprocesses, real orbax checkpoints)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import kd
import konfig
import pytest
import train_fixtures as lib
from kd.cli._plot import read_metrics
from kd.evals import EVAL_METRICS_FILE, evaluate_checkpoints

ROOT = Path(__file__).resolve().parents[2]
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"

# Training data whose batch `hold_at` waits for the file `gate`: a training run that pauses until the test
# lets it go on, so an evaluation provably runs while the training is still running. A module beside the
# config file, as a user's would be (`kd-train eval` finds it as the training did).
DATA_MODULE = """
import dataclasses, itertools, os, time

import jax
import numpy as np


@dataclasses.dataclass(frozen=True, kw_only=True)
class Gated:
    batch_size: int = 8
    seed: int = 0
    gate: str | None = None
    hold_at: int = 0

    @property
    def element_spec(self):
        return {
            "x": jax.ShapeDtypeStruct((self.batch_size, 2), np.float32),
            "y": jax.ShapeDtypeStruct((self.batch_size, 1), np.float32),
        }

    def __iter__(self):
        for index in itertools.count():
            while self.gate is not None and index == self.hold_at and not os.path.exists(self.gate):
                time.sleep(0.05)
            rng = np.random.default_rng([self.seed, index % 4])
            x = rng.uniform(-1, 1, (self.batch_size, 2)).astype(np.float32)
            yield {"x": x, "y": (0.5 * x[:, :1] - x[:, 1:]).astype(np.float32)}
"""

CONFIG_MODULE = """
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 12
    cfg.log_metrics_every = 4
    data = kd.data.SyntheticRegression(num_examples=64)
    cfg.train_ds = kd.data.InMemoryPipeline(loader=data, batch_size=8)
    cfg.eval_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=64, seed=1), batch_size=8)
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x")
    cfg.optimizer = optax.adam(learning_rate=1e-2)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    cfg.checkpointer = kd.ckpts.Checkpointer(save_interval_steps=4, max_to_keep=2)
    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(4), num_batches=2)}
    return cfg
"""


def kd_train(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KD_TRAIN, *args], capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=300
    )


def _env() -> dict[str, str]:
    return {**os.environ, "JAX_PLATFORMS": "cpu"}


def _rows(workdir: Path, name: str = EVAL_METRICS_FILE) -> list[dict]:
    return [json.loads(line) for line in (workdir / name).read_text().splitlines()]


def _saved_steps(workdir: Path) -> list[int]:
    return sorted(
        int(p.name.split("_")[1]) for p in (workdir / "checkpoints").glob("ckpt_*") if "tmp" not in p.name
    )


@pytest.fixture(scope="module")
def config_file(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("eval_config")
    (folder / "eval_data.py").write_text(DATA_MODULE)
    (folder / "eval_cfg.py").write_text(CONFIG_MODULE)
    return folder / "eval_cfg.py"


@pytest.fixture(scope="module")
def evaluated_run(config_file, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A finished run (checkpoints at 4, 8, 12; the last two kept), then `kd-train eval` on it.

    The run trains in this process (its files are what `kd-train` writes: config.json, checkpoints, DONE),
    sparing a second JAX start-up; the evaluation is the command under test.
    """
    workdir = tmp_path_factory.mktemp("eval") / "run"
    cfg = konfig.build_config(str(config_file), overrides={"workdir": str(workdir)})
    konfig.resolve(cfg).train()
    return workdir, kd_train("eval", f"--workdir={workdir}")


# ---------------------------------------------------------------------------------------------- the command


def test_eval_of_a_finished_run_evaluates_each_kept_checkpoint_once_and_exits_0(evaluated_run):
    workdir, result = evaluated_run
    assert result.returncode == 0, result.stderr
    assert [row["step"] for row in _rows(workdir)] == _saved_steps(workdir) == [8, 12]
    assert "step 8 | val/l2 " in result.stdout and "2 checkpoint(s) evaluated (steps 8, 12)" in result.stdout


def test_eval_values_equal_the_evaluation_the_training_ran_at_the_same_steps(evaluated_run):
    workdir, _ = evaluated_run
    in_training = {row["step"]: row for row in _rows(workdir, "metrics.jsonl") if "val/losses/l2" in row}
    for row in _rows(workdir):
        assert row["val/losses/l2"] == pytest.approx(in_training[row["step"]]["val/losses/l2"], rel=1e-6)


def test_eval_alongside_a_running_training_waits_for_each_checkpoint_and_stops_after_done(
    config_file, tmp_path
):
    workdir, gate = tmp_path / "run", tmp_path / "go"
    training = subprocess.Popen(
        [
            KD_TRAIN,
            f"--cfg={config_file}",
            f"--cfg.workdir={workdir}",
            "--cfg.checkpointer.max_to_keep=None",
            # Step 6's batch waits for the gate: the checkpoint of step 4 is there, and no DONE.
            f"--cfg.train_ds=py::eval_data.Gated(gate={str(gate)!r}, hold_at=5)",
        ],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    evaluation = None
    try:
        # run.json (after config.json) names the config file, whose folder holds eval_data.
        _wait_for(lambda: (workdir / "run.json").exists() or training.poll() is not None)
        evaluation = subprocess.Popen(
            [KD_TRAIN, "eval", f"--workdir={workdir}", "--poll_seconds=0.1", "--timeout_seconds=120"],
            cwd=ROOT,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_for(lambda: (workdir / EVAL_METRICS_FILE).exists() or evaluation.poll() is not None)
        # Step 4 is evaluated while the training waits at step 5: not done, and the evaluation still follows it.
        assert evaluation.poll() is None and training.poll() is None and not (workdir / "DONE").exists()
        gate.touch()
        out, err = evaluation.communicate(timeout=240)
        assert evaluation.returncode == 0, err
        assert training.wait(timeout=240) == 0, training.stderr.read()
    finally:
        for process in (training, evaluation):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert [row["step"] for row in _rows(workdir)] == _saved_steps(workdir) == [4, 8, 12]
    assert "3 checkpoint(s) evaluated (steps 4, 8, 12)" in out


def test_config_flags_override_the_runs_config_for_the_evaluation(evaluated_run, tmp_path, capsys):
    workdir = tmp_path / "run"
    shutil.copytree(evaluated_run[0], workdir)
    (workdir / EVAL_METRICS_FILE).unlink()

    code = kd.cli.main(["eval", f"--workdir={workdir}", "--evals=val", "--cfg.evals.val.num_batches=1"])

    assert code == 0, capsys.readouterr().err
    two_batches = {row["step"]: row["val/losses/l2"] for row in _rows(evaluated_run[0])}
    one_batch = {row["step"]: row["val/losses/l2"] for row in _rows(workdir)}
    assert sorted(one_batch) == sorted(two_batches) == [8, 12]
    assert all(one_batch[step] != pytest.approx(two_batches[step], rel=1e-4) for step in one_batch)


def test_eval_gives_up_with_exit_1_when_no_checkpoint_comes_and_the_run_is_not_done(
    evaluated_run, tmp_path, capsys
):
    workdir = tmp_path / "run"
    shutil.copytree(evaluated_run[0], workdir)
    (workdir / "DONE").unlink()  # as if the training had died

    # In this process (`kd.cli.main`, what the console script calls): JAX is already started here.
    code = kd.cli.main(["eval", f"--workdir={workdir}", "--poll_seconds=0.1", "--timeout_seconds=0.5"])

    err = capsys.readouterr().err
    assert code == 1
    assert "error: evaluate_checkpoints: no new checkpoint" in err and "(timeout_seconds=0.5)" in err, err


@pytest.mark.parametrize(
    ("problem", "expected"),
    [
        ("no workdir", "no such run workdir"),
        ("no config", "no config.json"),
        ("no evaluator", "has no evaluators"),
        ("unknown name", "no evaluator named 'vall' in the run's config; did you mean 'val'?"),
    ],
)
def test_eval_errors_exit_2_with_one_paragraph_and_no_traceback(problem, expected, tmp_path):
    workdir = tmp_path / "run"
    args = [f"--workdir={workdir}"]
    if problem != "no workdir":
        workdir.mkdir()
    if problem in ("no evaluator", "unknown name"):
        cfg = konfig.ConfigDict({"workdir": str(workdir), "evals": {}})
        if problem == "unknown name":
            cfg.evals = {"val": {"num_batches": 2}, "test": {"num_batches": 2}}
            args.append("--evals=vall")
        (workdir / "config.json").write_text(konfig.to_json(cfg))

    result = kd_train("eval", *args)

    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_plot_reads_eval_metrics_beside_metrics(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(
        '{"step": 1, "losses/total": 0.5}\n{"step": 4, "val/loss": 0.4}\n'
    )
    (tmp_path / EVAL_METRICS_FILE).write_text('{"step": 8, "val/loss": 0.3}\n')
    curves = read_metrics(tmp_path)
    assert curves == {"losses/total": ([1], [0.5]), "val/loss": ([4, 8], [0.4, 0.3])}


# ---------------------------------------------------------------------------------------------- the library


def _trainer(workdir: Path, **fields) -> kd.train.Trainer:
    """6 steps with checkpoints at 2, 4 and 6 (all kept), an evaluator `val` that never runs in training."""
    return lib.make_trainer(
        workdir=str(workdir),
        num_train_steps=6,
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2, max_to_keep=None),
        evals={"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(100), ds=lib.Regression(num_epochs=1))},
        **fields,
    )


@pytest.fixture(scope="module")
def finished_folder(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("finished") / "run"
    _trainer(workdir).train()
    return workdir


@pytest.fixture
def finished(finished_folder, tmp_path) -> kd.train.Trainer:
    """A Trainer on a copy of the finished run (a test may delete or add files)."""
    workdir = tmp_path / "run"
    shutil.copytree(finished_folder, workdir)
    return _trainer(workdir)


class DeletesACheckpoint(kd.writers.InMemoryWriter):
    """Deletes the checkpoint of `step` once the values of `after` are written (as `max_to_keep` would)."""

    def __init__(self, workdir: str, *, after: int, step: int) -> None:
        super().__init__()
        self.folder, self.after = Path(workdir) / "checkpoints" / f"ckpt_{step}", after

    def write_scalars(self, step, scalars):
        super().write_scalars(step, scalars)
        if step == self.after:
            shutil.rmtree(self.folder)


def test_values_equal_the_evaluator_on_the_restored_state(finished):
    values = evaluate_checkpoints(finished, writer=kd.writers.InMemoryWriter())
    assert sorted(values) == [2, 4, 6]
    restored, _ = finished.checkpointer.restore(finished.state_specs, step=4)
    expected = finished.evals["val"].evaluate(restored, 4)
    assert values[4] == {f"val/{k}": pytest.approx(float(v), rel=1e-6) for k, v in expected.items()}


def test_a_checkpoint_deleted_after_it_was_listed_is_skipped_with_a_note(finished, capsys):
    # Listed with 2 and 6; deleted once step 2 is written, so it is gone when its turn comes.
    writer = DeletesACheckpoint(finished.workdir, after=2, step=4)

    values = evaluate_checkpoints(finished, writer=writer)

    assert sorted(values) == [2, 6] and [s for s, _ in writer.scalars["val/losses/l2"]] == [2, 6]
    assert "step 4: its checkpoint was deleted" in capsys.readouterr().err


def test_a_rerun_evaluates_only_the_steps_missing_from_eval_metrics(finished, capsys):
    path = Path(finished.workdir) / EVAL_METRICS_FILE
    assert sorted(evaluate_checkpoints(finished)) == [2, 4, 6]
    first_row = path.read_text().splitlines()[0]
    path.write_text(first_row + "\n")  # as if stopped after step 2

    assert sorted(evaluate_checkpoints(finished)) == [4, 6]

    assert [row["step"] for row in _rows(Path(finished.workdir))] == [2, 4, 6]
    assert path.read_text().splitlines()[0] == first_row
    assert "1 checkpoint(s) already evaluated" in capsys.readouterr().err


def test_values_go_to_the_runs_tensorboard_writer_too(finished):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    workdir = Path(finished.workdir)
    tensorboard = kd.writers.MultiWriter(writers=[kd.writers.TensorBoardWriter()])
    evaluate_checkpoints(_trainer(workdir, writer=tensorboard))

    events = EventAccumulator(str(workdir / "val"), size_guidance={"scalars": 0})
    events.Reload()
    assert [e.step for e in events.Scalars("losses/l2")] == [2, 4, 6]
    assert [row["step"] for row in _rows(workdir)] == [2, 4, 6]


def test_without_done_and_without_new_checkpoints_it_times_out_after_evaluating_what_is_there(finished):
    (Path(finished.workdir) / "DONE").unlink()  # as if the training had died after its last checkpoint
    writer = kd.writers.InMemoryWriter()
    with pytest.raises(
        TimeoutError, match=r"no new checkpoint .* \(timeout_seconds=0.2\) and the run has no DONE"
    ):
        evaluate_checkpoints(finished, writer=writer, poll_seconds=0.05, timeout_seconds=0.2)
    assert [s for s, _ in writer.scalars["val/losses/l2"]] == [2, 4, 6]


def test_an_unknown_evaluator_name_is_a_config_error_naming_the_closest(finished):
    with pytest.raises(kd.train.ConfigError, match=r"no evaluator named 'vall'; did you mean 'val'\?"):
        evaluate_checkpoints(finished, evals=["vall"])


def test_a_trainer_without_a_checkpointer_is_a_config_error(tmp_path):
    trainer = lib.make_trainer(workdir=str(tmp_path), evals={"val": kd.evals.Evaluator()}, checkpointer=None)
    with pytest.raises(kd.train.ConfigError, match=r"NoopCheckpointer, which keeps no checkpoints"):
        evaluate_checkpoints(trainer)


def _wait_for(condition, limit: float = 240.0) -> None:
    """Polls `condition` (a safety limit, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)


def test_the_evaluator_never_touches_the_runs_checkpoints(finished):
    # A save the training job has in flight, and a retention policy that would delete old checkpoints.
    in_flight = Path(finished.workdir) / "checkpoints" / "ckpt_8.orbax-checkpoint-tmp-1234"
    in_flight.mkdir()
    (in_flight / "partial").write_bytes(b"...")
    strict = dataclasses.replace(
        finished, checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2, max_to_keep=1)
    )

    assert sorted(evaluate_checkpoints(strict, writer=kd.writers.InMemoryWriter())) == [2, 4, 6]

    assert (in_flight / "partial").read_bytes() == b"..."
    assert sorted(
        p.name for p in (Path(finished.workdir) / "checkpoints").iterdir() if "tmp" not in p.name
    ) == [
        "ckpt_2",
        "ckpt_4",
        "ckpt_6",
    ]


def test_the_evaluator_waits_for_a_run_that_has_no_checkpoint_folder_yet(tmp_path):
    trainer = _trainer(tmp_path / "run")
    (tmp_path / "run").mkdir()

    with pytest.raises(TimeoutError, match="no new checkpoint"):
        evaluate_checkpoints(
            trainer, poll_seconds=0.05, timeout_seconds=0.2, writer=kd.writers.InMemoryWriter()
        )
