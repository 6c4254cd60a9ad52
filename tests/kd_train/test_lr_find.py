"""`kd.train.lr_find` / `kd-train lr-find`: the learning-rate range test on a tiny regression (real training steps,
one real `kd-train lr-find` subprocess next to a real trained run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import kd
import konfig
import numpy as np
import optax
import pytest
from flax import linen as nn
from kd.train import learning_rate_source

KD_TRAIN = shutil.which("kd-train", path=os.path.dirname(sys.executable)) or "kd-train"

CONFIG = """
import konfig

with konfig.imports():
    import kd
    import optax
    from flax import linen as nn


def get_config():
    cfg = kd.train.Trainer()
    cfg.num_train_steps = 4
    cfg.log_metrics_every = 2
    cfg.train_ds = kd.data.InMemoryPipeline(loader=kd.data.SyntheticRegression(num_examples=512), batch_size=64)
    cfg.model = kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x")
    cfg.optimizer = optax.adam(learning_rate=3e-3)
    cfg.train_losses = {"l2": kd.losses.L2(preds="preds", targets="batch.y")}
    return cfg
"""


def _trainer(**fields) -> kd.train.Trainer:
    defaults = dict(
        train_ds=kd.data.InMemoryPipeline(
            loader=kd.data.SyntheticRegression(num_examples=512), batch_size=64
        ),
        model=kd.nn.ExternalModule(model=nn.Dense(features=1), keys="batch.x"),
        optimizer=optax.adam(1e-2),
        train_losses={"l2": kd.losses.L2(preds="preds", targets="batch.y")},
        num_train_steps=4,
    )
    return kd.train.Trainer(**{**defaults, **fields})


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    path = tmp_path_factory.mktemp("lr_find") / "config.py"
    path.write_text(CONFIG)
    return str(path)


def test_each_step_records_its_learning_rate_and_loss_and_the_suggestion_is_in_the_range(config):
    trainer = konfig.resolve(konfig.build_config(config))
    result = kd.train.lr_find(trainer, min_lr=1e-4, max_lr=1.0, num_steps=30)
    assert len(result.lrs) == len(result.losses) == len(result.smoothed) > 20
    np.testing.assert_allclose(result.lrs[:2], [1e-4, 1e-4 * 1e4 ** (1 / 29)])
    assert np.all(np.isfinite(result.losses[:20]))
    assert 1e-4 <= result.suggestion <= 1.0
    assert result.imposed == "updates scaled by the test's learning rate / cfg.optimizer.learning_rate"
    assert result.suggestion_line() == (
        f"suggested learning rate: {result.suggestion:.1e} (steepest descent of the smoothed loss)"
    )
    assert json.loads(result.to_json())["suggestion"] == result.suggestion


def test_scaling_the_updates_trains_as_setting_an_injected_learning_rate():
    # adam's updates are linear in its learning rate: scaled by test lr / schedules' lr, they equal those of
    # optax.inject_hyperparams(optax.adam) with the test's learning rate set at each step.
    schedule = optax.linear_schedule(1e-3, 1e-2, 10)  # the config's own changes: the scale follows it
    scaled = kd.train.lr_find(
        _trainer(optimizer=optax.adam(schedule), schedules={"learning_rate": schedule}),
        num_steps=12,
        max_lr=0.1,
    )
    injected = kd.train.lr_find(
        _trainer(optimizer=optax.inject_hyperparams(optax.adam)(learning_rate=1e-2)), num_steps=12, max_lr=0.1
    )
    by_base_lr = kd.train.lr_find(
        _trainer(optimizer=optax.adam(1e-2)), num_steps=12, max_lr=0.1, base_lr=1e-2
    )
    assert scaled.imposed.endswith("/ schedules['learning_rate']")
    assert injected.imposed == "the test's learning rate set in optax.inject_hyperparams' state"
    np.testing.assert_allclose(scaled.losses, injected.losses, rtol=1e-5)
    np.testing.assert_allclose(by_base_lr.losses, injected.losses, rtol=1e-5)


def test_a_diverging_loss_stops_the_test_early_and_says_where():
    result = kd.train.lr_find(
        _trainer(optimizer=optax.sgd(0.1)), min_lr=1e-3, max_lr=1e4, num_steps=60, base_lr=0.1
    )
    assert len(result.losses) < 60
    assert result.stopped.startswith(f"stopped at step {len(result.losses)} (learning rate ")
    assert "diverged" in result.stopped
    assert result.suggestion is None or result.suggestion < result.lrs[-1]


def test_an_optimizer_whose_learning_rate_cannot_be_found_is_refused_naming_base_lr():
    trainer = _trainer(schedules={"lr": optax.constant_schedule(1e-2)})  # built in Python: no config to read
    with pytest.raises(kd.train.ConfigError) as raised:
        kd.train.lr_find(trainer, num_steps=10)
    message = str(raised.value)
    assert "was not made with optax.inject_hyperparams" in message
    assert "Trainer.schedules has no 'learning_rate' (it has ['lr'])" in message
    assert "did you mean to name schedules['lr'] 'learning_rate'?" in message
    assert "kd-train lr-find --base-lr=" in message and "base_lr=" in message


def test_a_bad_range_names_its_flag():
    with pytest.raises(ValueError, match=r"max_lr \(--max\): expected a learning rate above min_lr=0.1"):
        kd.train.lr_find(_trainer(), min_lr=0.1, max_lr=0.01, base_lr=1e-2)


def test_the_command_prints_the_table_and_suggestion_and_leaves_the_runs_files_alone(config, tmp_path):
    workdir = str(tmp_path / "run")
    konfig.resolve(konfig.build_config(config, overrides=[("workdir", workdir)])).train()

    def files() -> dict[str, float]:
        return {
            os.path.join(folder, name): os.stat(os.path.join(folder, name)).st_mtime_ns
            for folder, _, names in os.walk(workdir)
            for name in names
        }

    before = files()
    out = subprocess.run(
        [KD_TRAIN, "lr-find", f"--cfg={config}", f"--cfg.workdir={workdir}", "--min=1e-4", "--steps=25"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("lr-find: ") and "cfg.optimizer.learning_rate" in lines[0]
    assert lines[1].split() == ["step", "learning", "rate", "loss", "smoothed"]
    assert lines[2].split()[:2] == ["1", "1.0e-04"]
    assert any(line.startswith("suggested learning rate: ") for line in lines)
    after = files()
    added = sorted(os.path.basename(p) for p in set(after) - set(before))
    assert added in (["lr_find.json"], ["lr_find.json", "lr_find.png"])
    assert {p: t for p, t in after.items() if p in before} == before  # checkpoints and logs untouched
    assert len(json.loads(open(os.path.join(workdir, "lr_find.json")).read())["lrs"]) <= 25


def test_the_learning_rate_is_read_from_the_optimizers_config_where_it_is_written():
    with konfig.imports():
        import kd as kd_config
        import optax as optax_config
        from flax import linen as nn_config

    def source(optimizer) -> str | None:
        cfg = kd_config.train.Trainer()
        cfg.train_ds = kd_config.data.InMemoryPipeline(
            loader=kd_config.data.SyntheticRegression(num_examples=64), batch_size=8
        )
        cfg.model = kd_config.nn.ExternalModule(model=nn_config.Dense(features=1), keys="batch.x")
        cfg.train_losses = {"l2": kd_config.losses.L2(preds="preds", targets="batch.y")}
        cfg.num_train_steps = 10
        cfg.optimizer = optimizer
        return learning_rate_source(konfig.resolve(cfg))

    assert source(optax_config.adam(3e-3)) == "cfg.optimizer[0]"  # positional: adam's first parameter
    cosine = optax_config.cosine_decay_schedule(1e-2, decay_steps=10)
    chained = optax_config.chain(optax_config.clip(1.0), optax_config.adamw(learning_rate=cosine))
    assert source(chained) == "cfg.optimizer[1].learning_rate"
    two = optax_config.chain(optax_config.sgd(1e-2), optax_config.adam(learning_rate=1e-3))
    assert source(two) is None  # two rates: neither is taken
