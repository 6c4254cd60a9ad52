"""`trainer.train()`: exactly `num_train_steps` updates, logging on schedule, linen and NNX (through konfig)."""

from __future__ import annotations

import kd
import optax
import pytest
import train_fixtures as lib
from kd import konfig


def _losses(writer: kd.writers.InMemoryWriter) -> list[float]:
    return [value for _, value in writer.scalars["losses/l2"]]


def test_train_does_exactly_num_train_steps_updates():
    state, _ = lib.make_trainer(num_train_steps=5).train()
    assert int(state.step) == 5
    assert int(state.opt_state[0].count) == 5  # adam's own count of updates


def test_train_returns_the_last_logged_metrics():
    writer = kd.writers.InMemoryWriter()
    _, logged = lib.make_trainer(num_train_steps=5, log_metrics_every=2, writer=writer).train()
    assert set(logged) >= {"losses/l2", "perf/steps_per_sec"}
    assert "losses/total" not in logged  # one loss is its own total
    assert {name: values[-1] for name, values in writer.scalars.items()} == {
        name: (5, value) for name, value in logged.items()
    }


def test_linen_loss_goes_down():
    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(
        num_train_steps=40, log_metrics_every=10, optimizer=optax.adam(3e-2), writer=writer
    ).train()
    losses = _losses(writer)
    assert losses[-1] < 0.5 * losses[0]


def test_nnx_model_configured_through_konfig_trains_and_loss_goes_down():
    with konfig.imports():
        import kd as kd_cfg
        import optax as optax_cfg
        import train_fixtures as lib_cfg
    cfg = kd_cfg.train.Trainer()
    cfg.train_ds = lib_cfg.Regression()
    cfg.model = lib_cfg.NnxMlp(din=2, dout=1)  # no rngs: the Trainer gives them
    cfg.optimizer = optax_cfg.adam(learning_rate=3e-2)
    cfg.train_losses = {"l2": lib_cfg.MSE()}
    cfg.num_train_steps = 40
    cfg.log_metrics_every = 10
    cfg.writer = kd_cfg.writers.InMemoryWriter()
    trainer = konfig.resolve(cfg)
    assert isinstance(trainer.model, kd.train.NnxModel)
    state, _ = trainer.train()
    assert int(state.step) == 40
    losses = _losses(trainer.writer)
    assert losses[-1] < 0.5 * losses[0]


def test_stop_after_steps_stops_early():
    writer = kd.writers.InMemoryWriter()
    trainer = lib.make_trainer(num_train_steps=10, stop_after_steps=3, writer=writer)
    state, _ = trainer.train()
    assert int(state.step) == 3
    assert trainer.num_train_steps == 10
    assert max(step for step, _ in writer.scalars["losses/l2"]) <= 3


def test_num_train_steps_from_epochs_and_dataset_length():
    trainer = lib.make_trainer(train_ds=lib.Regression(num_batches=3, num_epochs=2), num_train_steps=None)
    assert trainer.num_train_steps == 6
    state, _ = trainer.train()  # the dataset holds exactly enough batches
    assert int(state.step) == 6


def test_num_train_steps_that_cannot_be_derived_is_an_error_when_training():
    trainer = lib.make_trainer(train_ds=lib.Regression(num_epochs=None), num_train_steps=None)  # built, as Kauldron
    with pytest.raises(kd.train.ConfigError, match=r"num_train_steps.*num_epochs=None"):
        trainer.train()


def test_dataset_running_out_is_an_error():
    trainer = lib.make_trainer(train_ds=lib.Regression(num_batches=2, num_epochs=1), num_train_steps=3)
    with pytest.raises(kd.train.ConfigError, match=r"train_ds ran out of batches after 2 steps"):
        trainer.train()


def test_writer_gets_scalars_at_step_one_every_n_and_the_last():
    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(num_train_steps=7, log_metrics_every=3, writer=writer).train()
    assert [step for step, _ in writer.scalars["losses/l2"]] == [1, 3, 6, 7]


def test_metrics_are_logged_with_the_losses():
    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(
        num_train_steps=3, log_metrics_every=2, writer=writer, train_metrics={"err": lib.MSE()}
    ).train()
    assert [step for step, _ in writer.scalars["metrics/err"]] == [1, 2, 3]


def test_schedules_are_logged_under_their_name():
    schedule = optax.linear_schedule(1.0, 0.0, transition_steps=4)
    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(
        num_train_steps=4, log_metrics_every=2, writer=writer, schedules={"lr": schedule}
    ).train()
    # Row `step` shows the value the update that reached it used: optax counts updates from 0.
    assert writer.scalars["schedules/lr"] == [
        (step, pytest.approx(float(schedule(step - 1)))) for step in (1, 2, 4)
    ]


def test_a_schedule_in_plain_python_is_logged_too():  # compiled schedules go in one program; this cannot
    def stepwise(step):
        return 0.1 if step < 2 else 0.01

    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(
        num_train_steps=4,
        log_metrics_every=2,
        writer=writer,
        schedules={"lr": stepwise, "linear": optax.linear_schedule(1.0, 0.0, transition_steps=4)},
    ).train()
    assert writer.scalars["schedules/lr"] == [(1, 0.1), (2, 0.1), (4, 0.01)]
    assert writer.scalars["schedules/linear"] == [(1, 1.0), (2, 0.75), (4, 0.25)]


def test_summaries_are_written_on_their_own_schedule():
    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(
        num_train_steps=4,
        log_summaries_every=3,
        writer=writer,
        train_summaries={"rows": lib.FirstRows()},
    ).train()
    assert [step for step, _ in writer.summaries["summaries/rows"]] == [1, 3, 4]
    assert writer.summaries["summaries/rows"][0][1].shape == (2, 1)


def test_evaluator_runs_on_its_schedule_and_logs_under_its_name():
    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(
        num_train_steps=4,
        writer=writer,
        eval_ds=lib.Regression(seed=5, num_batches=2, num_epochs=1),
        evals={"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(2))},
    ).train()
    assert [step for step, _ in writer.scalars["eval/losses/l2"]] == [0, 2, 4]  # step 0: before training


def test_evaluator_runs_an_nnx_model_given_as_a_class():
    writer = kd.writers.InMemoryWriter()
    lib.make_trainer(
        model=lib.NnxDropout,
        num_train_steps=2,
        writer=writer,
        eval_ds=lib.Regression(num_batches=2, num_epochs=1),
        evals={"eval": kd.evals.Evaluator(run=kd.evals.EveryNSteps(1))},
    ).train()
    assert [step for step, _ in writer.scalars["eval/losses/l2"]] == [0, 1, 2]
