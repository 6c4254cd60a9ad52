"""A NaN loss stops the run before it reaches a log or a checkpoint, or its update is skipped, as configured."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib


def _poisoned(*steps: int) -> lib.PoisonedRegression:
    """Data whose batch for each of `steps` (1-based training steps) has NaN targets."""
    return lib.PoisonedRegression(poisoned=tuple(s - 1 for s in steps))


def _assert_trees_equal(a, b) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_nan_loss_stops_naming_the_step_and_the_loss():
    trainer = lib.make_trainer(train_ds=_poisoned(3), num_train_steps=6, log_metrics_every=2)

    with pytest.raises(
        kd.train.NonFiniteLossError, match=r"step 3: the loss is not finite \(l2 = nan"
    ) as info:
        trainer.train()

    assert info.value.step == 3
    assert np.isnan(info.value.losses["l2"])
    assert isinstance(info.value, FloatingPointError)


def test_no_value_computed_from_the_nan_is_logged():
    writer = kd.writers.InMemoryWriter()
    trainer = lib.make_trainer(train_ds=_poisoned(3), num_train_steps=6, log_metrics_every=2, writer=writer)

    with pytest.raises(kd.train.NonFiniteLossError):
        trainer.train()

    assert [step for step, _ in writer.scalars["losses/l2"]] == [1, 2]


def test_the_last_good_checkpoint_stays_the_latest(tmp_path: Path):
    trainer = lib.make_trainer(
        train_ds=_poisoned(7),
        num_train_steps=12,
        workdir=str(tmp_path),
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2),
    )

    with pytest.raises(kd.train.NonFiniteLossError, match=r"last checkpoint \(step 6\) is intact"):
        trainer.train()

    checkpointer = kd.ckpts.Checkpointer(workdir=str(tmp_path), save_interval_steps=2)
    try:
        assert checkpointer.all_steps()[-1] == 6
        restored, _ = checkpointer.restore(trainer.state_specs, step=6)
    finally:
        checkpointer.close()
    assert all(np.isfinite(np.asarray(leaf)).all() for leaf in jax.tree.leaves(restored.params))
    assert not (tmp_path / "DONE").exists()


def test_skip_leaves_the_state_as_it_was_for_that_step():
    skipping = lib.make_trainer(train_ds=_poisoned(2), num_train_steps=2, on_nonfinite_loss="skip")
    one_step = lib.make_trainer(num_train_steps=1)

    state, _ = skipping.train()
    expected, _ = one_step.train()

    assert int(state.step) == 2  # the step is counted, the data moved on
    _assert_trees_equal((state.params, state.opt_state), (expected.params, expected.opt_state))


def test_skip_trains_on_and_reports_the_skipped_updates(capsys):
    writer = kd.writers.InMemoryWriter()
    trainer = lib.make_trainer(
        train_ds=_poisoned(2, 3),
        num_train_steps=6,
        on_nonfinite_loss="skip",
        log_metrics_every=3,
        writer=writer,
    )

    state, logged = trainer.train()

    assert all(np.isfinite(np.asarray(leaf)).all() for leaf in jax.tree.leaves(state.params))
    assert logged["perf/skipped_updates"] == 2
    assert np.isfinite(logged["losses/l2"])
    assert "skipped 2 update(s) whose loss was not finite (step 2, 3" in capsys.readouterr().err


def test_the_skipped_count_survives_a_restart(tmp_path: Path):
    fields = dict(
        train_ds=_poisoned(2),
        num_train_steps=6,
        on_nonfinite_loss="skip",
        workdir=str(tmp_path),
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=3),
        writer=kd.writers.JsonlWriter(),
    )
    lib.make_trainer(stop_after_steps=3, **fields).train()
    _, logged = lib.make_trainer(**fields).train()

    assert logged["perf/skipped_updates"] == 1
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 6]


def test_an_unknown_policy_is_a_config_error_naming_the_field():
    with pytest.raises(
        kd.train.ConfigError, match=r"on_nonfinite_loss: expected 'stop' or 'skip', got 'ignore'"
    ):
        lib.make_trainer(on_nonfinite_loss="ignore")


@pytest.mark.parametrize("nan_at", [None, 3, 100])
def test_the_accelerator_path_asks_the_device_and_reads_the_losses_only_for_a_nan(nan_at, monkeypatch):
    # On an accelerator the check asks the device whether the pending losses are all finite (one program, one
    # bool read) and reads them one by one only when one is not. The same path, run on CPU arrays here.
    from kd.train import _nonfinite

    _nonfinite._losses_all_finite.clear_cache()  # other runs in this process may have used it (on a TPU)
    reads = []
    monkeypatch.setattr(_nonfinite, "_to_host", lambda tree: reads.append(tree) or jax.device_get(tree))
    watch = _nonfinite.NonFiniteWatch(policy="stop", last_checkpoint=lambda: None)
    watch.reduce_on_device = True
    for step in range(1, 101):  # a hundred updates: the watch checks itself at its limit
        value = float("nan") if step == nan_at else float(step)
        state = kd.metrics.AverageState(total=jax.numpy.float32(value), count=jax.numpy.float32(1))
        if step == 100 and nan_at is not None:
            with pytest.raises(kd.train.NonFiniteLossError, match=rf"step {nan_at}: the loss is not finite"):
                watch.add(step, {"l2": state})
        else:
            watch.add(step, {"l2": state})
    watch.add(101, {"l2": kd.metrics.AverageState(total=jax.numpy.float32(1.0), count=jax.numpy.float32(1))})
    watch.check()  # one pending update: padded to the same program's input

    assert len(reads) == (0 if nan_at is None else 1)
    assert _nonfinite._losses_all_finite._cache_size() == 1


def test_the_accelerator_path_reads_a_fused_calls_losses_on_the_host():
    from kd.train import _nonfinite

    watch = _nonfinite.NonFiniteWatch(policy="stop", last_checkpoint=lambda: None)
    watch.reduce_on_device = True
    stacked = {"l2": kd.metrics.AverageState(total=jax.numpy.array([1.0, float("inf")]), count=jax.numpy.ones(2))}
    watch.add(1, {"l2": kd.metrics.AverageState(total=jax.numpy.float32(1.0), count=jax.numpy.float32(1))})
    watch.add_fused(2, 2, stacked)
    with pytest.raises(kd.train.NonFiniteLossError, match=r"step 3: the loss is not finite \(l2 = inf"):
        watch.check()
