"""Kauldron's evaluator semantics: `Evaluator.name` from its key, the standalone run strategies (never run
inside training; `kd-train eval` takes each checkpoint, or the last one once the run is done)."""

from __future__ import annotations

import dataclasses

import jax
import kd
import kontext
import numpy as np
import train_fixtures as lib
from flax import linen as nn
from kd.evals._standalone import evaluate_checkpoints


def test_an_evaluator_takes_its_key_as_name_and_keeps_a_given_one():
    trainer = lib.make_trainer(
        eval_ds=lib.Regression(num_epochs=1, seed=5),
        evals={"val": kd.evals.Evaluator(), "test": kd.evals.Evaluator(name="held_out")},
    )
    assert trainer.evals["val"].name == "val" and trainer.evals["test"].name == "held_out"


def test_kauldrons_spelling_of_the_run_strategies():
    every = kd.evals.EveryNSteps(100, skip_first=True)
    assert [every.should_eval_in_train(s) for s in (0, 100, 150, 200)] == [False, True, False, True]
    assert not kd.evals.StandaloneEveryCheckpoint().should_eval_in_train(100)
    assert not kd.evals.StandaloneLastCheckpoint(job_group="sep").should_run(8, last_step=8)
    # Kauldron's job fields (its tiny_vit_advanced config) describe the evaluator's job
    run = kd.evals.StandaloneEveryCheckpoint(
        platform="a100=1", requirements=kd.xm.JobRequirements(ram=8 * 1024**3), env_vars={"A": "1"}
    )
    assert run.platform == "a100=1" and not run.should_eval_in_train(100) and run.wants(5, done=False, last_step=5)


def test_standalone_evaluators_never_run_in_training_and_eval_takes_their_checkpoints(tmp_path):
    writer = kd.writers.InMemoryWriter()
    trainer = lib.make_trainer(
        workdir=str(tmp_path),
        num_train_steps=8,
        writer=writer,
        eval_ds=lib.Regression(num_epochs=1, seed=5),
        checkpointer=kd.ckpts.Checkpointer(save_interval_steps=2, max_to_keep=None),
        evals={
            "every": kd.evals.Evaluator(run=kd.evals.StandaloneEveryCheckpoint()),
            "last": kd.evals.Evaluator(run=kd.evals.StandaloneLastCheckpoint()),
        },
    )
    trainer.train()
    assert not [name for name in writer.scalars if name.startswith(("every/", "last/"))]  # not in training

    results = evaluate_checkpoints(trainer, poll_seconds=0, writer=kd.writers.InMemoryWriter())
    assert sorted(results) == [2, 4, 6, 8]
    assert [sorted(k.split("/")[0] for k in results[s]) == ["every"] for s in (2, 4, 6)] == [True] * 3
    assert {k.split("/")[0] for k in results[8]} == {"every", "last"}  # the last one, once the run is done


class _AlwaysBatchStats(nn.Module):
    """Updates its batch statistics in every pass, evaluation included (Kauldron's train test)."""

    x: kontext.Key = "batch.x"

    @nn.compact
    def __call__(self, x):
        x = nn.BatchNorm(use_running_average=False)(nn.Dense(4)(x))
        return nn.Dense(1)(x)


def test_an_evaluation_may_update_collections_and_the_updates_are_dropped():
    trainer = lib.make_trainer(
        model=_AlwaysBatchStats(),
        eval_ds=lib.Regression(num_epochs=1, seed=5),
        evals={"val": kd.evals.Evaluator(run=kd.evals.EveryNSteps(2))},
    )
    state, _ = trainer.train()  # evaluates at steps 0, 2 and 4
    before = jax.tree.map(np.asarray, state.collections)
    values = trainer.evals["val"].evaluate(state=state, step=4)
    assert np.isfinite(values["losses/l2"])
    after = jax.tree.map(np.asarray, state.collections)
    jax.tree.map(np.testing.assert_array_equal, before, after)


def test_an_evaluator_writes_to_its_own_writer_and_defaults_to_the_trainers():
    run_writer, own = kd.writers.InMemoryWriter(), kd.writers.InMemoryWriter()
    trainer = lib.make_trainer(
        writer=run_writer,
        eval_ds=lib.Regression(num_epochs=1, seed=5),
        evals={"val": kd.evals.Evaluator(), "mine": kd.evals.Evaluator(writer=own)},
    )
    assert trainer.evals["val"].writer is run_writer and trainer.evals["mine"].writer is own

    trainer.train()

    assert any(k.startswith("val/") for k in run_writer.scalars)
    assert not any(k.startswith("mine/") for k in run_writer.scalars)
    assert sorted(own.scalars) == ["mine/losses/l2"] and [s for s, _ in own.scalars["mine/losses/l2"]] == [
        0,
        4,
    ]

    silent = kd.writers.NoopWriter()
    replaced = dataclasses.replace(trainer, writer=silent)  # Kauldron's config_util test: the writer follows
    assert replaced.evals["val"].writer is silent and replaced.evals["mine"].writer is own
