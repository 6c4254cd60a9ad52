"""`Trainer.predict` / `kd-train predict`: a trained run's outputs, from its latest checkpoint (a real run trained
once, real orbax checkpoints read back, one real `kd-train predict` subprocess)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import kd
import kd.cli
import konfig
import numpy as np
import pytest
from flax import linen as nn

KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"

CONFIG = """
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 6
    cfg.log_metrics_every = 3
    cfg.train_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=64), batch_size=8)
    cfg.eval_ds = kd.data.InMemoryPipeline(
        loader=kd.data.SyntheticRegression(num_examples=20, seed=1), batch_size=8, num_epochs=1
    )
    cfg.evals = {"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(1000))}
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x")
    cfg.optimizer = optax.adam(learning_rate=0.1)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    return cfg
"""


def _trainer(config: str, workdir: str | None) -> kd.train.Trainer:
    return konfig.resolve(konfig.build_config(config, overrides=[("workdir", workdir)]))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """`(config file, workdir, trainer)`: the config trained once (6 steps, its last checkpointed)."""
    folder = tmp_path_factory.mktemp("predict")
    config = folder / "config.py"
    config.write_text(CONFIG)
    workdir = str(folder / "run")
    trainer = _trainer(str(config), workdir)
    trainer.train()
    return str(config), workdir, trainer


def _checkpointed_params(workdir: str, trainer: kd.train.Trainer):
    """The params of the latest checkpoint, read by a Checkpointer of the test's own."""
    reader = kd.ckpts.Checkpointer(workdir=workdir, save_interval_steps=1, read_only=True)
    try:
        state, _ = reader.restore_latest(trainer.sharding.state_template(trainer.state_specs))
    finally:
        reader.close()
    return state


def test_predict_of_a_batch_is_the_model_applied_to_the_latest_checkpoints_params(run):
    _, workdir, trainer = run
    before = sorted(os.listdir(os.path.join(workdir, "checkpoints")))
    batch = next(iter(trainer.eval_ds))
    preds = trainer.predict(batch)
    state = _checkpointed_params(workdir, trainer)
    by_hand = nn.Dense(features=1).apply({"params": state.params["model"]}, batch["x"])
    assert int(state.step) == 6
    assert isinstance(preds, np.ndarray)
    np.testing.assert_allclose(preds, np.asarray(by_hand), rtol=1e-6, atol=1e-6)
    assert sorted(os.listdir(os.path.join(workdir, "checkpoints"))) == before  # read-only: nothing changed


def test_predict_of_a_dataset_concatenates_every_batchs_outputs_on_the_first_axis(run):
    _, _, trainer = run
    batches = list(trainer.eval_ds)
    preds = trainer.predict(trainer.eval_ds)
    assert preds.shape == (sum(len(b["x"]) for b in batches), 1)
    np.testing.assert_array_equal(preds, np.concatenate([trainer.predict(b) for b in batches]))


def test_endless_data_needs_num_batches_which_limits_the_batches(run):
    _, _, trainer = run
    with pytest.raises(kd.train.ConfigError, match=r"endless \(num_epochs=None\).*num_batches="):
        trainer.predict(trainer.train_ds)
    assert trainer.predict(trainer.train_ds, num_batches=2).shape == (16, 1)


def test_a_given_state_is_used_instead_of_a_checkpoint(run):
    config, _, _ = run
    fresh = _trainer(config, None)  # no workdir: only the given state can be used
    state = fresh.init_state()
    batch = next(iter(fresh.eval_ds))
    by_hand = nn.Dense(features=1).apply({"params": state.params["model"]}, batch["x"])
    np.testing.assert_allclose(fresh.predict(batch, state=state), np.asarray(by_hand), rtol=1e-6, atol=1e-6)


def test_a_workdir_without_a_checkpoint_is_an_error_naming_the_folder_and_how_to_train_it(run, tmp_path):
    config, _, _ = run
    empty = _trainer(config, str(tmp_path / "untrained"))
    with pytest.raises(kd.train.ConfigError) as raised:
        empty.predict(next(iter(empty.eval_ds)))
    message = str(raised.value)
    assert f"{tmp_path / 'untrained' / 'checkpoints'} holds no checkpoint" in message
    assert "kd-train --cfg=CONFIG --cfg.workdir=" in message and "state=" in message
    assert not (tmp_path / "untrained" / "checkpoints").exists()  # looking created nothing
    with pytest.raises(kd.train.ConfigError, match=r"Trainer\.workdir is not set"):
        _trainer(config, None).predict(next(iter(empty.eval_ds)))


def test_an_unknown_ds_name_exits_2_naming_the_closest(run, capsys):
    config, workdir, _ = run
    code = kd.cli.main(["predict", f"--cfg={config}", f"--cfg.workdir={workdir}", "--ds=vall"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--ds: no evaluator named 'vall'" in err and "did you mean 'val'?" in err


def test_the_command_writes_the_outputs_to_an_npz_and_says_what_it_wrote(run, tmp_path):
    config, workdir, trainer = run
    out = subprocess.run(
        [KD_TRAIN, "predict", f"--cfg={config}", f"--cfg.workdir={workdir}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    expected = trainer.predict(trainer.eval_ds)  # the first evaluator's data, as --ds defaults to
    path = os.path.join(workdir, "predictions", "val_step6.npz")
    n = len(expected)
    assert (
        out.stdout.strip().splitlines()[-1]
        == f"wrote {n} examples' outputs (preds: float32[{n},1]) of step 6 to {path}"
    )
    with np.load(path) as saved:
        assert list(saved) == ["preds"]
        np.testing.assert_allclose(saved["preds"], expected, rtol=1e-6, atol=1e-6)
