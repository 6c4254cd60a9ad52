"""`kd.train.EarlyStopping`: the step it stops at (plateau, modes, min_delta, baseline, patience), its state
across a resume, a stopped run being complete (Python and `kd-train`), a monitored name the run does not log."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import kd
import optax
import pytest
import train_fixtures as lib
from kd.train import _run_record

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "mlp_regression.py")
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


def plateau_trainer(**fields) -> kd.train.Trainer:
    """Trains on one batch at a learning rate of 0.01 until step 10, then 0: every value from step 11 on is
    exactly the same. `val` (its own 2 batches) runs every 4 steps: 0.097, 0.045, 0.024, then 0.0199 from step
    12 on."""
    defaults = dict(
        train_ds=lib.Regression(num_batches=1),
        optimizer=optax.adam(optax.piecewise_constant_schedule(0.01, {10: 0.0})),
        num_train_steps=40,
        log_metrics_every=2,
        evals={
            "val": kd.evals.Evaluator(
                ds=lib.Regression(num_batches=2, num_epochs=1, seed=1), run=kd.evals.EveryNSteps(4)
            )
        },
        writer=kd.writers.InMemoryWriter(),
    )
    return lib.make_trainer(**{**defaults, **fields})


@dataclasses.dataclass
class Feed(kd.train.Hook):
    """Logs `values[step - 1]` as `feed/value` at each step up to `len(values)` (with log_metrics_every=1 the
    k-th check of an EarlyStopping after it is at step k)."""

    values: tuple[float, ...] = ()

    def after_step(self, step, state, values):
        if 1 <= step <= len(self.values):
            self.log("feed/value", self.values[step - 1])


def stop_step(values: tuple[float, ...], **settings) -> int:
    """The step a run stops at when an EarlyStopping(**settings) watches `values`, fed one per step."""
    trainer = lib.make_trainer(
        num_train_steps=len(values),
        log_metrics_every=1,
        steps_per_call=1,
        hooks=[Feed(values=values), kd.train.EarlyStopping(monitor="feed/value", **settings)],
    )
    state, _ = trainer.train()
    return int(state.step)


# ------------------------------------------------------------------------------------------- where it stops


def test_a_plateaued_eval_loss_stops_the_run_after_patience_checks(capsys):
    stopping = kd.train.EarlyStopping(monitor="val/losses/l2", patience=3)
    trainer = plateau_trainer(hooks=[stopping])
    state, _ = trainer.train()
    # val improves at steps 4, 8, 12; 16, 20 and 24 are the three checks without improvement.
    assert int(state.step) == 24
    assert (stopping.best_step, stopping.wait) == (12, 3)
    assert trainer.stopped_early.step == 24
    out = capsys.readouterr().out
    assert (
        f"early stopping at step 24: val/losses/l2 did not improve by min_delta=0 for 3 checks (best "
        f"{stopping.best:.4g} at step 12)"
    ) in out.splitlines()


def test_each_check_logs_the_best_value_and_the_wait():
    trainer = plateau_trainer(hooks=[kd.train.EarlyStopping(monitor="val/losses/l2", patience=3)])
    trainer.train()
    scalars = trainer.writer.scalars
    assert [(step, wait) for step, wait in scalars["early_stopping/wait"]] == [
        (0, 0), (4, 0), (8, 0), (12, 0), (16, 1), (20, 2), (24, 3)
    ]  # fmt: skip
    val = dict(scalars["val/losses/l2"])
    assert scalars["early_stopping/best"][-1] == (24, val[12])


def test_a_training_loss_is_checked_at_each_logging_step():
    state, _ = plateau_trainer(hooks=[kd.train.EarlyStopping(monitor="losses/l2", patience=3)]).train()
    assert int(state.step) == 18  # best at 12 (the parameters of step 10), then 14, 16, 18


def test_min_mode_waits_for_a_lower_value():
    assert stop_step((3.0, 2.0, 2.5, 1.0, 1.5, 1.5, 9.0, 9.0), mode="min", patience=2) == 6


def test_max_mode_waits_for_a_higher_value():
    assert stop_step((1.0, 2.0, 1.5, 3.0, 2.0, 2.5, 0.0, 0.0), mode="max", patience=2) == 6


def test_an_improvement_smaller_than_min_delta_is_no_improvement():
    values = (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65)
    assert stop_step(values, patience=2, min_delta=0.0) == 8  # improves every time: runs to the end
    assert stop_step(values, patience=2, min_delta=0.1) == 3  # 0.05 per check is not more than 0.1


def test_patience_is_the_number_of_checks_without_improvement():
    flat = (1.0,) * 10
    assert stop_step(flat, patience=1) == 2
    assert stop_step(flat, patience=4) == 5
    assert stop_step(flat, patience=0) == 2  # as Keras: the first check without improvement


def test_a_baseline_not_beaten_within_patience_checks_stops_the_run():
    improving = (0.9, 0.8, 0.7, 0.6, 0.55, 0.52, 0.51, 0.505)
    assert stop_step(improving, patience=3) == 8  # without a baseline it improves to the end
    assert stop_step(improving, patience=3, baseline=0.5) == 3  # never below 0.5: three checks in a row
    assert stop_step((0.9, 0.4, 0.45, 0.45, 0.45, 0.45), patience=3, baseline=0.5) == 5  # beaten at check 2


def test_checks_before_start_from_step_are_left_out():
    flat = (1.0,) * 10
    assert stop_step(flat, patience=2, start_from_step=5) == 7  # checks at 5 (the first), 6, 7


def test_the_settings_are_checked_when_built():
    with pytest.raises(kd.train.ConfigError, match=r"mode='minimum': expected 'min'.*patience=-1"):
        kd.train.EarlyStopping(mode="minimum", patience=-1)
    with pytest.raises(kd.train.ConfigError, match=r"min_delta=-0.1"):
        kd.train.EarlyStopping(min_delta=-0.1)


# ---------------------------------------------------------------------------------------- a name not logged


def test_a_training_value_not_logged_is_an_error_at_the_first_logging_step():
    trainer = plateau_trainer(hooks=[kd.train.EarlyStopping(monitor="losses/l3")])
    with pytest.raises(
        kd.train.ConfigError, match=r"monitor='losses/l3'.*none at step 1.*did you mean 'losses/l2'"
    ):
        trainer.train()


def test_an_evaluator_value_not_logged_is_an_error_when_the_evaluator_first_runs():
    trainer = plateau_trainer(hooks=[kd.train.EarlyStopping(monitor="val/losses/l1")])
    with pytest.raises(
        kd.train.ConfigError, match=r"'val/losses/l1'.*none at step 0.*did you mean 'val/losses/l2'"
    ):
        trainer.train()


def test_an_evaluator_name_the_run_lacks_is_an_error_with_the_close_names():
    trainer = plateau_trainer(hooks=[kd.train.EarlyStopping(monitor="vall/losses/l2")])
    with pytest.raises(kd.train.ConfigError) as raised:
        trainer.train()
    message = str(raised.value)
    assert "'vall/losses/l2'" in message and "did you mean 'val/losses/l2'" in message
    assert "The run's evaluators: val." in message


# ------------------------------------------------------------------------------------- resume, completeness


def _checkpointed(workdir: Path, **fields) -> kd.train.Trainer:
    return plateau_trainer(
        workdir=str(workdir),
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=4, max_to_keep=10),
        writer=kd.writers.InMemoryWriter(),
        hooks=[kd.train.EarlyStopping(monitor="val/losses/l2", patience=3)],
        **fields,
    )


def test_a_resumed_run_stops_where_an_uninterrupted_one_does(tmp_path):
    whole, _ = _checkpointed(tmp_path / "whole").train()
    first, _ = _checkpointed(
        tmp_path / "parts", stop_after_steps=18
    ).train()  # one check (16) without improving
    assert int(first.step) == 18
    resumed = _checkpointed(tmp_path / "parts")
    state, _ = resumed.train()
    # The best (step 12) and the wait came back from the checkpoint of step 18: a fresh count would stop at 32.
    assert int(state.step) == int(whole.step) == 24
    assert resumed.hooks[0].best_step == 12


def test_the_early_stop_is_saved_and_recorded_in_done(tmp_path):
    trainer = _checkpointed(tmp_path)
    trainer.train()
    assert trainer.checkpointer.latest_step == 24
    info = trainer.checkpointer.info(24)
    assert info["hooks"]["EarlyStopping[val/losses/l2]"] == {
        "best": pytest.approx(0.0199, abs=1e-4),
        "best_step": 12,
        "wait": 3,
    }
    assert info["early_stop"]["hook"] == "EarlyStopping[val/losses/l2]"
    done = json.loads((tmp_path / "DONE").read_text())
    assert done["step"] == 24
    assert done["early_stop"]["reason"].startswith(
        "val/losses/l2 did not improve by min_delta=0 for 3 checks"
    )
    assert _run_record.stopped_early(tmp_path, step=24, hooks=trainer.hooks)


def test_a_run_stopped_early_is_complete_for_the_next_train(tmp_path, capsys):
    _checkpointed(tmp_path).train()
    capsys.readouterr()
    again = _checkpointed(tmp_path)
    state, _ = again.train()
    assert int(state.step) == 24  # nothing trained
    assert again.stopped_early.step == 24
    assert again.checkpointer.all_steps()[-1] == 24
    assert "run already complete: early stopping at step 24: val/losses/l2" in capsys.readouterr().out
    assert json.loads((tmp_path / "DONE").read_text())["early_stop"]["step"] == 24


def test_without_the_hook_that_stopped_it_the_run_goes_on(tmp_path):
    _checkpointed(tmp_path).train()
    assert not _run_record.stopped_early(tmp_path, step=24, hooks=())
    state, _ = dataclasses.replace(_checkpointed(tmp_path), hooks=()).train()
    assert int(state.step) == 40
    assert "early_stop" not in json.loads((tmp_path / "DONE").read_text())


# ------------------------------------------------------------------------------------------------- kd-train


def kd_train(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    return subprocess.run([KD_TRAIN, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


# A loss never beats a baseline of 0: the run stops at its second check (step 10 of 40).
STOPPING_RUN = (
    f"--cfg={EXAMPLE}",
    "--cfg.num_train_steps=40",
    "--cfg.log_metrics_every=10",
    '--cfg.hooks=py::[kd.train.EarlyStopping(monitor="losses/l2", patience=2, baseline=0.0)]',
)


@pytest.fixture(scope="module")
def stopped_twice(
    tmp_path_factory,
) -> tuple[Path, subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """`kd-train` of a run that stops early, then the same command again."""
    workdir = tmp_path_factory.mktemp("early") / "run"
    first = kd_train(*STOPPING_RUN, f"--cfg.workdir={workdir}")
    (workdir / "metrics_after_first.jsonl").write_bytes((workdir / "metrics.jsonl").read_bytes())
    second = kd_train(*STOPPING_RUN, f"--cfg.workdir={workdir}")
    return workdir, first, second


def test_kd_train_stops_the_run_early_and_records_it(stopped_twice):
    workdir, first, _ = stopped_twice
    assert (
        "early stopping at step 10: losses/l2 did not beat the baseline 0 by min_delta=0 in 2 checks"
        in first.stdout
    )
    assert sorted(os.listdir(workdir / "checkpoints")) == ["ckpt_10"]
    assert json.loads((workdir / "DONE").read_text())["early_stop"]["step"] == 10


def test_a_second_kd_train_does_not_train_the_stopped_run_further(stopped_twice):
    workdir, _, second = stopped_twice
    assert sorted(os.listdir(workdir / "checkpoints")) == ["ckpt_10"]
    assert (workdir / "metrics.jsonl").read_bytes() == (workdir / "metrics_after_first.jsonl").read_bytes()
    assert "step 20" not in second.stdout


def test_kd_train_says_a_run_stopped_early_is_complete(stopped_twice):
    workdir, first, second = stopped_twice
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1].startswith("done: 10 steps in ")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith(f"run already complete at step 10 ({workdir}): nothing to do")


def test_kd_train_names_a_monitored_value_the_run_does_not_log_in_one_paragraph():
    result = kd_train(
        f"--cfg={EXAMPLE}",
        "--cfg.num_train_steps=20",
        "--cfg.log_metrics_every=10",
        '--cfg.hooks=py::[kd.train.EarlyStopping(monitor="losses/l3")]',
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    assert "losses/l3" in result.stderr and "losses/l2" in result.stderr  # the name, and the close one
