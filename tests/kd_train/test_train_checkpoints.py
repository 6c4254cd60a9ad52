"""What the Trainer saves with each checkpoint and makes of it on restart: the best checkpoint by an eval
metric, run info (seed, training time), the final state, logs that continue at the restored step."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import jax
import kd
import numpy as np
import pytest
import train_fixtures as lib


def _trainer(tmp_path: Path, **fields):
    defaults = dict(
        workdir=str(tmp_path),
        num_train_steps=8,
        eval_ds=lib.Regression(num_epochs=1, seed=5),
        evals={"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(2))},
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2, max_to_keep=1),
        writer=kd.writers.JsonlWriter(),
    )
    return lib.make_trainer(**{**defaults, **fields})


def _rows(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]


def test_the_best_checkpoint_by_an_eval_metric_is_kept_beside_the_latest(tmp_path):
    checkpointer = kd.ckpts.Checkpointer(
        save_interval_steps=2, max_to_keep=1, best_metric_path="eval/losses/l2", best_mode="max"
    )
    _trainer(tmp_path, checkpointer=checkpointer, optimizer=__import__("optax").sgd(0.05)).train()

    evals = {r["step"]: r["eval/losses/l2"] for r in _rows(tmp_path) if "eval/losses/l2" in r}
    worst_saved = max((s for s in evals if s > 0), key=evals.get)  # "max" keeps the highest loss
    with kd.ckpts.Checkpointer(
        workdir=str(tmp_path), save_interval_steps=2, best_metric_path="eval/losses/l2"
    ) as ckpt:
        assert ckpt.all_steps() == tuple(sorted({worst_saved, 8}))
        assert ckpt.info(8)["metrics"]["eval/losses/l2"] == pytest.approx(evals[8])


def test_each_checkpoint_holds_the_seed_and_the_training_time_so_far(tmp_path):
    _trainer(tmp_path, seed=7).train()

    with kd.ckpts.Checkpointer(workdir=str(tmp_path), save_interval_steps=2) as ckpt:
        info = ckpt.info(8)
    assert info["seed"] == 7
    assert info["train_seconds"] > 0


def test_the_training_time_continues_across_a_restart(tmp_path):
    _trainer(tmp_path, stop_after_steps=4, log_metrics_every=4).train()
    with kd.ckpts.Checkpointer(workdir=str(tmp_path), save_interval_steps=2) as ckpt:
        saved = ckpt.info(4)["train_seconds"]

    _trainer(tmp_path, log_metrics_every=4).train()

    after = [r["perf/train_seconds"] for r in _rows(tmp_path) if r["step"] == 8 and "perf/train_seconds" in r]
    assert after and after[0] > saved


def test_the_final_state_is_checkpointed(tmp_path):
    state, _ = _trainer(tmp_path, num_train_steps=7).train()

    with kd.ckpts.Checkpointer(workdir=str(tmp_path), save_interval_steps=2) as ckpt:
        assert ckpt.latest_step == 7
        restored, _ = ckpt.restore(state, step=7)
    for a, b in zip(jax.tree.leaves(restored), jax.tree.leaves(state), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_restart_continues_the_log_without_duplicates(tmp_path):
    _trainer(tmp_path, stop_after_steps=5, log_metrics_every=1).train()  # checkpoints 4 and 5 (forced)
    (tmp_path / "checkpoints" / "ckpt_5").rename(tmp_path / "ckpt_5_gone")  # as if killed before saving 5

    _trainer(tmp_path, log_metrics_every=1).train()

    train_steps = [r["step"] for r in _rows(tmp_path) if "losses/l2" in r]
    eval_steps = [r["step"] for r in _rows(tmp_path) if "eval/losses/l2" in r]
    assert train_steps == list(range(1, 9))
    assert eval_steps == [0, 2, 4, 6, 8]


def test_resuming_with_another_seed_warns(tmp_path):
    _trainer(tmp_path, stop_after_steps=4).train()

    with pytest.warns(UserWarning, match=r"Trainer\.seed is 1 but the checkpoint of step 4 .* seed 0"):
        _trainer(tmp_path, seed=1).train()


def test_resuming_with_the_same_seed_does_not_warn(tmp_path):
    _trainer(tmp_path, stop_after_steps=4).train()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _trainer(tmp_path).train()


def test_init_transform_is_not_applied_to_a_restored_state(tmp_path):
    calls = []

    def transform(state):
        calls.append(int(state.step))
        return state

    _trainer(tmp_path, stop_after_steps=4, init_transform=transform).train()
    _trainer(tmp_path, init_transform=transform).train()

    assert calls == [0]


def test_a_truncated_newest_checkpoint_makes_the_rerun_resume_from_the_previous_one(tmp_path):
    straight, _ = _trainer(tmp_path / "straight").train()
    _trainer(
        tmp_path / "run", stop_after_steps=6, checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2)
    ).train()
    newest = tmp_path / "run" / "checkpoints" / "ckpt_6"
    largest = max((p for p in newest.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    largest.write_bytes(largest.read_bytes()[: largest.stat().st_size // 2])

    with pytest.warns(kd.ckpts.CheckpointWarning, match="ckpt_6 cannot be read"):
        resumed, _ = _trainer(
            tmp_path / "run", checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2)
        ).train()

    for a, b in zip(jax.tree.leaves(resumed), jax.tree.leaves(straight), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    train_steps = [r["step"] for r in _rows(tmp_path / "run") if "losses/l2" in r]
    assert train_steps == [1, 8]  # log_metrics_every=100: the first and the last step
