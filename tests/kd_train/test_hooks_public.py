"""`kd.train.Hook` and `Trainer.hooks`: when each method is called and with what, a hook that stops the run,
values a hook logs, its state across a resume, the config and `kd-train inspect` showing the hooks."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import kd
import pytest
import train_fixtures as lib
from kd import konfig

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "mlp_regression.py")
KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"


@dataclasses.dataclass
class Recorder(kd.train.Hook):
    """Records each call: `("start", step)`, `("step", step, sorted value names)`, `("end", step)`."""

    calls: list = dataclasses.field(default_factory=list)

    def on_train_start(self, trainer, state):
        self.calls.append(("start", int(state.step)))

    def after_step(self, step, state, values):
        assert int(state.step) == step
        self.calls.append(("step", step, sorted(name for name in values if not name.startswith("perf/"))))

    def on_train_end(self, trainer, state):
        self.calls.append(("end", int(state.step)))


@dataclasses.dataclass
class StopAt(kd.train.Hook):
    """Stops the run at `step`."""

    step: int = 4

    def after_step(self, step, state, values):
        if step >= self.step:
            return f"asked to stop at step {self.step}"
        return None


@dataclasses.dataclass
class CountSteps(kd.train.Hook):
    """Counts the steps where losses were logged, kept across a resume; logs the count as `count/logged`."""

    count: int = 0

    def on_train_start(self, trainer, state):
        self.count = 0

    def after_step(self, step, state, values):
        if "losses/l2" in values:
            self.count += 1
            self.log("count/logged", self.count)

    def state_dict(self):
        return {"count": self.count}

    def load_state_dict(self, saved):
        self.count = saved["count"]


def test_a_hook_is_called_at_the_start_after_each_call_and_at_the_end():
    recorder = Recorder()
    lib.make_trainer(num_train_steps=6, log_metrics_every=2, hooks=[recorder]).train()
    assert recorder.calls == [
        ("start", 0),
        ("step", 1, ["losses/l2"]),
        ("step", 2, ["losses/l2"]),
        ("step", 4, ["losses/l2"]),
        ("step", 6, ["losses/l2"]),
        ("end", 6),
    ]


def test_after_step_gets_the_evaluators_values_keyed_as_in_metrics_jsonl(tmp_path):
    recorder = Recorder()
    evaluator = kd.evals.Evaluator(
        ds=lib.Regression(num_batches=1, num_epochs=1), run=kd.evals.EveryNSteps(2)
    )
    lib.make_trainer(
        workdir=str(tmp_path), num_train_steps=2, log_metrics_every=2, evals={"val": evaluator},
        hooks=[recorder], writer=None,
    ).train()  # fmt: skip
    assert recorder.calls[1:4] == [("step", 0, ["val/losses/l2"]), ("step", 1, ["losses/l2"]),
                                   ("step", 2, ["losses/l2", "val/losses/l2"])]  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert {name for row in rows if row["step"] == 2 for name in row} >= {"losses/l2", "val/losses/l2"}


def test_a_hook_that_returns_a_reason_stops_the_run_and_its_step_is_saved(tmp_path, capsys):
    trainer = lib.make_trainer(
        workdir=str(tmp_path), num_train_steps=10, log_metrics_every=2, hooks=[StopAt(step=4)],
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=100),
    )  # fmt: skip
    state, _ = trainer.train()
    assert int(state.step) == 4
    assert trainer.checkpointer.all_steps() == (4,)  # the hooks run before the checkpoint: the stop is saved
    assert (trainer.stopped_early.step, trainer.stopped_early.hook) == (4, "StopAt")
    assert "early stopping at step 4: asked to stop at step 4" in capsys.readouterr().out.splitlines()
    assert json.loads((tmp_path / "DONE").read_text())["early_stop"] == {
        "step": 4,
        "reason": "asked to stop at step 4",
        "hook": "StopAt",
    }


def test_a_hook_after_the_one_that_stops_still_sees_that_step():
    recorder = Recorder()
    lib.make_trainer(num_train_steps=10, log_metrics_every=2, hooks=[StopAt(step=2), recorder]).train()
    assert recorder.calls[-2:] == [("step", 2, ["losses/l2"]), ("end", 2)]


def test_a_run_that_ends_normally_has_no_early_stop():
    trainer = lib.make_trainer(hooks=[Recorder()])
    trainer.train()
    assert trainer.stopped_early is None


def test_what_a_hook_logs_is_written_at_that_step_and_seen_by_the_hooks_after_it():
    recorder = Recorder()
    trainer = lib.make_trainer(num_train_steps=4, log_metrics_every=2, hooks=[CountSteps(), recorder])
    trainer.train()
    assert trainer.writer.scalars["count/logged"] == [(1, 1), (2, 2), (4, 3)]
    assert recorder.calls[1] == ("step", 1, ["count/logged", "losses/l2"])


def test_a_hooks_state_comes_back_on_resume(tmp_path):
    def trainer(**fields):
        return lib.make_trainer(
            workdir=str(tmp_path), num_train_steps=8, log_metrics_every=2, hooks=[CountSteps()],
            checkpointer=kd.ckpts.Checkpointer(save_interval_steps=100), **fields,
        )  # fmt: skip

    trainer(stop_after_steps=4).train()  # logged at 1, 2, 4
    resumed = trainer()
    resumed.train()  # 6, 8
    assert resumed.hooks[0].count == 5
    assert resumed.checkpointer.info(8)["hooks"] == {"CountSteps": {"count": 5}}


def test_two_hooks_of_one_class_keep_their_states_apart():
    assert kd.train._hook.hook_keys([CountSteps(), StopAt(), CountSteps()]) == [
        "CountSteps",
        "StopAt",
        "CountSteps#2",
    ]


def test_after_step_returning_anything_else_than_a_reason_is_an_error():
    @dataclasses.dataclass
    class ReturnsNumber(kd.train.Hook):
        def after_step(self, step, state, values):
            return 1.0

    with pytest.raises(TypeError, match=r"hook ReturnsNumber: after_step returned 1.0; expected None"):
        lib.make_trainer(hooks=[ReturnsNumber()]).train()


def test_hooks_that_are_not_hooks_are_config_errors():
    with pytest.raises(kd.train.ConfigError, match=r"hooks\[0\]: expected a kd.train.Hook .*got 'stop'"):
        lib.make_trainer(hooks=["stop"])
    with pytest.raises(
        kd.train.ConfigError, match=r"hooks: expected a list of kd.train.Hook \(a list: hooks=\[...\]\)"
    ):
        lib.make_trainer(hooks=StopAt())


def test_hooks_set_in_a_config_are_plain_values_of_config_json():
    with konfig.imports():
        import kd as kd_cfg
        import train_fixtures as lib_cfg
    cfg = kd_cfg.train.Trainer(
        train_ds=lib_cfg.Regression(),
        model=lib_cfg.Mlp(),
        optimizer=konfig.ConfigDict({"__qualname__": "optax:adam", "learning_rate": 1e-2}),
        train_losses={"l2": lib_cfg.MSE()},
        num_train_steps=2,
        writer=kd_cfg.writers.InMemoryWriter(),
    )
    cfg.hooks = [kd_cfg.train.EarlyStopping(monitor="losses/l2", patience=5)]
    hook = json.loads(konfig.to_json(cfg))["hooks"][0]
    assert hook == {"__qualname__": "kd.train:EarlyStopping", "monitor": "losses/l2", "patience": 5}
    trainer = konfig.resolve(cfg)
    assert trainer.hooks == (kd.train.EarlyStopping(monitor="losses/l2", patience=5),)
    state, _ = trainer.train()
    assert int(state.step) == 2


def test_kd_train_inspect_lists_the_hooks_with_their_settings():
    hooks = "--cfg.hooks=py::[kd.train.EarlyStopping(monitor='val/losses/l2')]"
    result = subprocess.run(
        [KD_TRAIN, "inspect", f"--cfg={EXAMPLE}", hooks],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "JAX_PLATFORMS": "cpu"}, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("hooks"))
    assert line.split(None, 1)[1] == (
        "EarlyStopping(monitor='val/losses/l2', mode='min', patience=3, min_delta=0.0, baseline=None, "
        "start_from_step=0) (run in this order after the evaluators, before the checkpoint)"
    )
